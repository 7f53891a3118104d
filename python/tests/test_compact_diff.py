"""compact writes what `agui-lens compact FILE` writes; diff says what `agui-lens diff` says."""

from __future__ import annotations

import json

import pytest

import agui_lens
from conftest import FIXTURES, STREAMS, cli, fixture_id

VALID = sorted(p for p in STREAMS if "valid" == p.relative_to(FIXTURES).parts[0])


@pytest.mark.parametrize("level", ["deltas", "snapshot"])
@pytest.mark.parametrize("path", STREAMS, ids=fixture_id)
def test_compact_matches_cli(path, level, empty_dir):
    ran = cli("compact", "--level", level, str(path), cwd=empty_dir)
    if ran.returncode == 0 and ran.stdout:
        compacted = agui_lens.compact(path, level=level)
        assert compacted == ran.stdout
        # The same bytes, given as content.
        assert agui_lens.compact(path.read_bytes(), level=level) == ran.stdout
        # What compaction keeps, as verified: the messages and the state.
        before, after = agui_lens.fold(path), agui_lens.fold(compacted)
        assert (after["messages"], after["state"]) == (before["messages"], before["state"])
    else:
        # The CLI skips or refuses it (not a stream, a browser capture, a verification that
        # failed) and writes nothing: the package raises, naming it.
        assert ran.stdout == b""
        with pytest.raises(agui_lens.AguiLensError) as raised:
            agui_lens.compact(path, level=level)
        assert str(path) in str(raised.value)
        if b"could not be read as events" in ran.stderr:
            # Frames that are no events would be lost: both drop them only when asked.
            assert "could not be read as events" in str(raised.value)
            dropped = cli("compact", "--level", level, "--drop-unreadable", str(path), cwd=empty_dir)
            if dropped.returncode == 0 and dropped.stdout:
                assert agui_lens.compact(path, level=level, drop_unreadable=True) == dropped.stdout


@pytest.mark.parametrize("path", STREAMS, ids=fixture_id)
def test_compaction_is_compact_with_counts(path):
    """compaction() writes what compact() writes, or says why not instead of raising."""
    done = agui_lens.compaction(path)
    assert done.status in ("compacted", "kept", "skipped", "refused")
    if done.status in ("compacted", "kept"):
        assert done.data == agui_lens.compact(path)
        assert len(done.data) == done.bytes_after
        assert agui_lens.compaction(path.read_bytes(), name=str(path)).data == done.data
    else:
        assert done.data is None and done.reason
        with pytest.raises(agui_lens.AguiLensError):
            agui_lens.compact(path)


def test_compaction_counts_the_deltas_it_keeps_as_they_were():
    """A STATE_DELTA before any known state is kept as it was (a client may hold a state the
    history never shows): counted, as the command's summary counts it."""
    events = [
        {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
        {"type": "STATE_DELTA", "delta": [{"op": "replace", "path": "/n", "value": 1}]},
        {"type": "STATE_DELTA", "delta": [{"op": "replace", "path": "/n", "value": 2}]},
        {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"},
    ]
    done = agui_lens.compaction(events)
    assert done.status in ("compacted", "kept"), done.reason
    assert done.kept_deltas == 2
    known = [events[0], {"type": "STATE_SNAPSHOT", "snapshot": {"n": 0}}, *events[1:]]
    assert agui_lens.compaction(known).kept_deltas == 0


def test_compact_of_events_makes_them_smaller():
    path = FIXTURES / "valid" / "agui-sdk-full.jsonl"
    events = [json.loads(line) for line in path.read_text().splitlines()]
    compacted = agui_lens.compact(events)
    assert len(compacted) < len(path.read_bytes())
    before, after = agui_lens.fold(events), agui_lens.fold(compacted)
    assert (after["messages"], after["state"]) == (before["messages"], before["state"])
    assert agui_lens.check(compacted).ok


def test_compact_bad_level():
    with pytest.raises(agui_lens.AguiLensError, match="unknown level"):
        agui_lens.compact(FIXTURES / "valid" / "agui-sdk-full.jsonl", level="tiny")


PAIRS = [(a, b) for a, b in zip(VALID, VALID[1:]) if a.suffix == b.suffix == ".jsonl"][:6]


@pytest.mark.parametrize("level", ["events", "compact", "fold"])
@pytest.mark.parametrize("a, b", PAIRS + [(p, p) for p in VALID[:3]], ids=lambda p: p.name)
def test_diff_matches_cli(a, b, level, empty_dir):
    result = agui_lens.diff(a, b, level=level)
    human = cli("diff", "--level", level, "--color", "never", str(a), str(b), cwd=empty_dir)
    as_json = cli("diff", "--level", level, "--format", "json", str(a), str(b), cwd=empty_dir)
    assert human.returncode == (0 if result.equal else 1), human.stderr.decode()
    assert result.text == human.stdout.decode()
    assert result.document == json.loads(as_json.stdout)
    assert result.equal == (a == b or result.document["equal"])
    assert bool(result) == result.equal


def test_diff_of_content_and_events():
    path = FIXTURES / "valid" / "agui-sdk-full.jsonl"
    events = [json.loads(line) for line in path.read_text().splitlines()]
    # Other ids and a delta split in two: the same meaning at the compact level.
    renamed = json.loads(json.dumps(events).replace("run-full-1", "run-other"))
    assert agui_lens.diff(path, renamed).equal
    assert agui_lens.diff(path.read_bytes(), events, level="fold").equal
    edited = [dict(e) for e in events]
    at = next(i for i, e in enumerate(edited) if e["type"] == "TEXT_MESSAGE_CONTENT")
    edited[at]["delta"] = "something else"
    result = agui_lens.diff(events, edited, level="fold")
    assert not result.equal
    assert '+  "content": "something else",' in result.text.splitlines()
    assert result.document["first_difference"] is not None


def test_diff_compares_at_the_commands_level_by_default(tmp_path):
    """Left to its default, `diff` compares as `agui-lens diff A B` does (compacted): the same
    text split another way means the same. It compared event by event, and said it differed."""
    start = {"type": "RUN_STARTED", "threadId": "t", "runId": "r"}
    end = {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}

    def stream(*parts):
        events = [start, {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"}]
        events += [{"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": p} for p in parts]
        return events + [{"type": "TEXT_MESSAGE_END", "messageId": "m"}, end]

    whole, split = stream("hello"), stream("hel", "lo")
    result = agui_lens.diff(whole, split)
    assert result.equal, result.text
    assert result.document["level"] == "compact"
    assert not agui_lens.diff(whole, split, level="events").equal


def test_diff_says_what_a_side_given_as_content_is_not():
    path = FIXTURES / "valid" / "agui-sdk-full.jsonl"
    with pytest.raises(agui_lens.AguiLensError) as caught:
        agui_lens.diff(b"", path)
    message = str(caught.value)
    assert "<bytes>" in message and "agui-lens-diff." not in message, message


@pytest.mark.parametrize("max_lines", [-1, 2**70, 1.5, "10", True])
def test_diff_says_what_max_lines_takes(max_lines):
    path = FIXTURES / "valid" / "agui-sdk-full.jsonl"
    with pytest.raises(agui_lens.AguiLensError) as caught:
        agui_lens.diff(path, path, max_lines=max_lines)
    assert "max_lines" in str(caught.value), caught.value


def test_deltas_that_break_a_schema_are_not_merged_away(empty_dir, tmp_path):
    """Deltas with a null timestamp fail their schema; merged into one event without it, the
    copy passed where the original failed. Refused, as the command refuses it."""
    events = [{"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
              {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"}]
    events += [{"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": piece, "timestamp": None}
               for piece in ("hel", "lo ", "the", "re ", "and", " mo", "re ")]
    events += [{"type": "TEXT_MESSAGE_END", "messageId": "m"},
               {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}]
    path = tmp_path / "nulls.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    assert not agui_lens.check(path).ok
    ran = cli("compact", str(path), cwd=empty_dir)
    assert ran.returncode == 1 and ran.stdout == b""
    done = agui_lens.compaction(path)
    assert done.status == "refused" and "would hide them" in done.reason
    with pytest.raises(agui_lens.AguiLensError, match="would hide them"):
        agui_lens.compact(path)


def test_a_rule_the_caller_makes_an_error_is_not_merged_away(tmp_path):
    """A repeated key in a content delta is a warning by default; checked with it made an
    error, the stream fails, and its compaction under the same rules may not pass: merged,
    the delta took its finding with it. Without the rules it compacts as before."""
    lines = [
        '{"type":"RUN_STARTED","threadId":"t","runId":"r"}',
        '{"type":"TEXT_MESSAGE_START","messageId":"m","role":"assistant"}',
        '{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"hel","delta":"hel"}',
        '{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"lo there"}',
        '{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":" and more"}',
        '{"type":"TEXT_MESSAGE_END","messageId":"m"}',
        '{"type":"RUN_FINISHED","threadId":"t","runId":"r"}',
    ]
    path = tmp_path / "repeated.jsonl"
    path.write_text("\n".join(lines) + "\n")
    rules = {"framing/duplicate-key": "deny"}
    assert agui_lens.check(path).ok
    assert not agui_lens.check(path, rules=rules).ok
    assert agui_lens.compaction(path).status == "compacted"
    for level in ("deltas", "snapshot"):
        done = agui_lens.compaction(path, level=level, rules=rules)
        assert done.status == "refused", done
        assert "framing/duplicate-key" in done.reason
        with pytest.raises(agui_lens.AguiLensError, match="framing/duplicate-key"):
            agui_lens.compact(path, level=level, rules=rules)
    with pytest.raises(agui_lens.AguiLensError, match="no/such"):
        agui_lens.compaction(path, rules={"no/such": "deny"})


def test_events_holding_half_a_utf16_pair_are_never_dropped(tmp_path):
    # An emoji cut in two across deltas is JSON a client reads, and joins: compaction can
    # neither write such a half back nor leave the events out, asked to drop what it cannot
    # read or not (it dropped them, and the message's text with them).
    lone = FIXTURES / "invalid" / "framing" / "lone-surrogate.jsonl"
    for drop in (False, True):
        done = agui_lens.compaction(lone, drop_unreadable=drop)
        assert done.status == "refused", done
        assert "half of a UTF-16 surrogate pair" in done.reason, done
    # A stream whose only event holds one is refused, not called no stream.
    one = tmp_path / "one.jsonl"
    one.write_text('{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"\\ud83d"}\n')
    done = agui_lens.compaction(one, drop_unreadable=True)
    assert done.status == "refused", done
    assert "half of a UTF-16 surrogate pair" in done.reason, done
