"""The incremental Checker finds, event by event, what checking the whole stream finds."""

from __future__ import annotations

import json

import pytest

import agui_lens
from conftest import FIXTURES, fixture_id

# JSONL fixtures whose every line is one JSON object: fed one at a time, they are the same
# stream (a Checker numbers events as lines, so blank lines or non-JSON lines would shift
# the numbering, and a dict cannot hold a repeated key).
def _whole_lines(path):
    lines = path.read_text(encoding="utf-8", errors="strict").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    try:
        return all(isinstance(json.loads(line), dict) for line in lines) and lines
    except ValueError:
        return False


def _jsonl():
    out = []
    for d in ("valid", "invalid"):
        for p in sorted((FIXTURES / d).rglob("*.jsonl")):
            try:
                if _whole_lines(p):
                    out.append(p)
            except UnicodeDecodeError:
                pass
    return out


JSONL = _jsonl()


def view(diagnostics):
    return [(d.rule, d.severity, d.line, d.event_index, d.message, d.help) for d in diagnostics]


def test_most_fixtures_take_part():
    assert len(JSONL) >= 40


@pytest.mark.parametrize("path", JSONL, ids=fixture_id)
def test_feeding_lines_finds_what_check_finds(path):
    whole = agui_lens.check(path)
    checker = agui_lens.Checker(name=str(path))
    fed = []
    for line in _whole_lines(path):
        fed.extend(checker.feed(line))
    fed.extend(checker.finish())
    assert view(fed) == view(whole.diagnostics)
    assert view(checker.diagnostics) == view(whole.diagnostics)
    assert checker.counts["errors"] == len(whole.errors)
    assert checker.ok == whole.ok


@pytest.mark.parametrize("path", JSONL, ids=fixture_id)
def test_feeding_dicts_finds_what_checking_the_dicts_finds(path):
    events = [json.loads(line) for line in _whole_lines(path)]
    checker = agui_lens.Checker()
    for event in events:
        checker.feed(event)
    checker.finish()
    assert view(checker.diagnostics) == view(agui_lens.check(events).diagnostics)


def test_findings_come_as_the_stream_goes():
    checker = agui_lens.Checker()
    assert checker.feed({"type": "RUN_STARTED", "threadId": "t", "runId": "r", "protocolVersion": "1.0"}) == []
    found = checker.feed({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "hi"})
    assert [d.rule for d in found] == ["pairing/text-message"]
    assert found[0].line == 2 and found[0].event_index == 1
    assert [d.rule for d in checker.finish()] == ["lifecycle/unterminated-run"]
    with pytest.raises(agui_lens.AguiLensError, match="finished"):
        checker.feed({"type": "RUN_FINISHED", "threadId": "t", "runId": "r"})
    with pytest.raises(agui_lens.AguiLensError, match="already finished"):
        checker.finish()


def test_feed_all_passes_events_through():
    events = [
        {"type": "RUN_STARTED", "threadId": "t", "runId": "r", "protocolVersion": "1.0"},
        {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"},
    ]
    checker = agui_lens.Checker()
    assert list(checker.feed_all(iter(events))) == events
    assert checker.ok and checker.counts["events"] == 2


def test_rules_and_input_apply_to_the_checker():
    # A STATE_DELTA with no state to apply to warns (state/no-baseline); the RunAgentInput's
    # state is that baseline, as for a live call; `rules` makes the warning an error.
    run = [
        {"type": "RUN_STARTED", "threadId": "t", "runId": "r", "protocolVersion": "1.0"},
        {"type": "STATE_DELTA", "delta": [{"op": "replace", "path": "/counter", "value": 2}]},
        {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"},
    ]
    sent = {"threadId": "t", "runId": "r", "state": {"counter": 1}, "messages": [], "tools": [],
            "context": [], "forwardedProps": {}}
    deny = {"state/no-baseline": "deny"}
    without = agui_lens.check(run)
    assert without.ok
    assert {d.rule for d in without.warnings} == {"state/no-baseline"}
    denied = agui_lens.check(run, rules=deny)
    assert not denied.ok
    assert {d.rule for d in denied.errors} == {"state/no-baseline"}
    with_input = agui_lens.check(run, input=sent, rules=deny)
    assert with_input.ok and with_input.diagnostics == [], str(with_input)
    for input, expected in ((None, denied), (sent, with_input)):
        checker = agui_lens.Checker(input=input, rules=deny)
        for e in run:
            checker.feed(e)
        checker.finish()
        assert view(checker.diagnostics) == view(expected.diagnostics)


def test_a_broken_input_is_reported():
    run = [
        {"type": "RUN_STARTED", "threadId": "t", "runId": "r", "protocolVersion": "1.0"},
        {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"},
    ]
    sent = {"threadId": "t", "runId": 5, "messages": "none"}
    report = agui_lens.check(run, input=sent)
    assert {d.rule for d in report.errors} == {"request/input-schema"}
    checker = agui_lens.Checker(input=sent)
    for e in run:
        checker.feed(e)
    checker.finish()
    assert view(checker.diagnostics) == view(report.diagnostics)


def test_each_item_of_a_list_is_one_frame_as_the_checker_reads_it():
    # An empty item, one of blanks, one holding two events: each is one frame that is no
    # event, for check() of the list as for a Checker fed the items, and a finding's
    # event_index is the item's place in the list.
    start = {"type": "RUN_STARTED", "threadId": "t", "runId": "r", "protocolVersion": "1.0"}
    end = {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}
    two = '{"type":"CUSTOM","name":"x","value":1}\n{"type":"CUSTOM","name":"y","value":2}'
    for odd in ("", "   ", two):
        items = [start, odd, end]
        report = agui_lens.check(items)
        checker = agui_lens.Checker()
        for item in items:
            checker.feed(item)
        checker.finish()
        assert not report.ok, (odd, str(report))
        assert [d.rule for d in report.errors] == ["framing/invalid-json"], (odd, str(report))
        assert report.errors[0].event_index == 1, odd
        assert report.counts["events"] == 2, odd
        assert view(report.diagnostics) == view(checker.diagnostics), odd
    # A pretty-printed event is still one event.
    pretty = json.dumps({"type": "CUSTOM", "name": "x", "value": 1}, indent=2)
    assert agui_lens.check([start, pretty, end]).ok


def test_bytes_that_are_no_utf8_and_lone_surrogates_are_reported_as_in_a_file(tmp_path):
    # Given as items, as fed to a Checker, and as a file the command line reads: the same
    # findings, none mended in silence (U+FFFD) and none raised (UnicodeEncodeError). Half a
    # surrogate pair, as json.dumps escapes it, is JSON (a warning); as raw text, no UTF-8.
    start = {"type": "RUN_STARTED", "threadId": "t", "runId": "r", "protocolVersion": "1.0"}
    end = {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}
    for odd, rule in (
        (b'{"type":"CUSTOM","name":"\xff","value":1}', "framing/invalid-utf8"),
        ({"type": "CUSTOM", "name": "\ud800", "value": 1}, "framing/lone-surrogate"),
        ('{"type":"CUSTOM","name":"\ud800","value":1}', "framing/invalid-utf8"),
    ):
        items = [start, odd, end]
        report = agui_lens.check(items)
        found = report.errors + report.warnings
        assert [d.rule for d in found] == [rule], (odd, str(report))
        assert found[0].event_index == 1
        checker = agui_lens.Checker()
        for item in items:
            checker.feed(item)
        checker.finish()
        assert view(checker.diagnostics) == view(report.diagnostics), odd
        # The same line in a file, as it would be written out.
        path = tmp_path / "odd.jsonl"
        path.write_bytes(b"\n".join(agui_lens._frame(item) for item in items) + b"\n")
        again = agui_lens.check(path)
        assert [d.rule for d in again.errors + again.warnings] == [rule], odd


def test_a_checker_is_used_from_any_thread():
    # Made on one thread, fed on another (a worker of an executor): it raised a Rust panic
    # (PanicException, which `except Exception` does not catch).
    from concurrent.futures import ThreadPoolExecutor

    start = {"type": "RUN_STARTED", "threadId": "t", "runId": "r", "protocolVersion": "1.0"}
    bad = {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "x"}
    end = {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}
    checker = agui_lens.Checker()
    with ThreadPoolExecutor(max_workers=2) as pool:
        for event in (start, bad, end):
            pool.submit(checker.feed, event).result()
        pool.submit(checker.finish).result()
    assert view(checker.diagnostics) == view(agui_lens.check([start, bad, end]).diagnostics)
    assert not checker.ok


def test_a_checker_fed_no_event_says_what_it_was_fed():
    """Fed frames that are no events, the checker says what they hold as `check` of the same
    items says it; it used to call them "the input is empty" (and, with an input, "the agent
    answered with an empty body")."""
    page = "<!doctype html><html><head><title>Sign in</title></head></html>"
    for items in ([5, None], [page], ['{"detail": "Not Found"}']):
        for input in (None, {"threadId": "t", "runId": "r", "messages": [], "tools": [],
                             "context": [], "state": {}, "forwardedProps": {}}):
            checker = agui_lens.Checker(input=input)
            for item in items:
                checker.feed(item)
            checker.finish()
            expected = agui_lens.check(items, input=input)
            assert view(checker.diagnostics) == view(expected.diagnostics), items
            assert "empty" not in " ".join(d.message for d in checker.diagnostics), items


def test_a_stream_not_finished_is_not_ok():
    # `ok` said True for a stream whose run was left open: an agent that raised inside
    # feed_all, or a loop that broke out of it, never reached finish().
    start = {"type": "RUN_STARTED", "threadId": "t", "runId": "r"}
    text = {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"}

    def agent():
        yield start
        yield text
        raise RuntimeError("the model went away")

    checker = agui_lens.Checker()
    with pytest.raises(RuntimeError):
        for _ in checker.feed_all(agent()):
            pass
    assert not checker.ok
    assert not checker.finished
    left = agui_lens.Checker()
    for _ in left.feed_all([start, text]):
        break
    assert not left.ok
    assert not left.finished
    # Finished, it says what check() says of the same events.
    left.finish()
    assert left.finished and left.ok == agui_lens.check([start, text]).ok is False
    whole = agui_lens.Checker()
    for _ in whole.feed_all([start, {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}]):
        pass
    assert whole.finished and whole.ok
