"""Every kind of source reads to the same findings: a path, bytes, text, compressed bytes, an
iterable of dicts or of the official SDK's event models."""

from __future__ import annotations

import gzip
import json
import warnings
from pathlib import Path

import pytest

import agui_lens
from conftest import FIXTURES

FULL = FIXTURES / "valid" / "agui-sdk-full.jsonl"
BROKEN = FIXTURES / "invalid" / "pairing" / "text-message.jsonl"


def findings(report):
    """What a finding says, apart from the name of the input it is in."""
    return [(d.rule, d.severity, d.line, d.event_index, d.message) for d in report.diagnostics]


def dicts(path: Path) -> list:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.mark.parametrize("path", [FULL, BROKEN], ids=["valid", "invalid"])
def test_every_source_kind_agrees_with_the_path(path):
    assert path.exists()
    by_path = agui_lens.check(path)
    assert by_path.diagnostics or path == FULL
    content = path.read_bytes()
    sources = {
        "str path": str(path),
        "bytes": content,
        "bytearray": bytearray(content),
        "str content": content.decode(),
        "gzip bytes": gzip.compress(content),
        "list of dicts": dicts(path),
        "generator of dicts": (e for e in dicts(path)),
        "JSON texts": content.decode().splitlines(),
    }
    for kind, source in sources.items():
        assert findings(agui_lens.check(source)) == findings(by_path), kind
    assert agui_lens.fold(content) == agui_lens.fold(path)
    assert agui_lens.fold(dicts(path)) == agui_lens.fold(path)


def test_findings_of_content_are_named_by_what_it_is():
    assert {d.path for d in agui_lens.check(BROKEN.read_bytes()).diagnostics} == {"<bytes>"}
    assert {d.path for d in agui_lens.check(dicts(BROKEN)).diagnostics} == {"<events>"}
    named = agui_lens.check(dicts(BROKEN), name="run-7")
    assert {d.path for d in named.diagnostics} == {"run-7"}
    assert "--> run-7:" in str(named)


def test_sse_and_json_array_content():
    events = dicts(BROKEN)
    sse = "".join(f"data: {json.dumps(e)}\n\n" for e in events)
    array = json.dumps(events, indent=2)
    # Messages that point back at an earlier line name that format's lines: only the rules
    # and events are the same.
    expected = [(d.rule, d.event_index) for d in agui_lens.check(events).diagnostics]
    assert expected
    for source in (sse, sse.encode(), array):
        got = [(d.rule, d.event_index) for d in agui_lens.check(source).diagnostics]
        assert got == expected


def sdk_models(path: Path) -> list:
    from pydantic import TypeAdapter
    from ag_ui.core import Event

    adapter = TypeAdapter(Event)
    return [adapter.validate_python(e) for e in dicts(path)]


def test_sdk_models_are_checked_as_the_sdk_encodes_them():
    models = sdk_models(FULL)
    assert type(models[0]).__module__.startswith("ag_ui.")
    assert not isinstance(models[0], dict)
    assert findings(agui_lens.check(models)) == findings(agui_lens.check(dicts(FULL)))
    assert agui_lens.fold(models) == agui_lens.fold(FULL)
    checker = agui_lens.Checker()
    for model in models:
        assert checker.feed(model) == []
    assert checker.finish() == []


def test_sdk_models_of_a_broken_stream_are_reported():
    models = sdk_models(FULL)
    # The SDK builds each event alone: a content delta for a message never started is its own
    # valid model, and only the sequence breaks the protocol.
    started = next(i for i, m in enumerate(models) if m.type == "TEXT_MESSAGE_START")
    broken = models[:started] + models[started + 1 :]
    report = agui_lens.check(broken)
    assert not report.ok
    assert "pairing/text-message" in {d.rule for d in report.errors}


def test_a_single_event_is_no_source():
    with pytest.raises(TypeError, match="wrap a single event in a list"):
        agui_lens.check({"type": "RUN_STARTED", "threadId": "t", "runId": "r"})
    with pytest.raises(TypeError):
        agui_lens.check(42)


def capture_of_two_streams(folder: Path) -> Path:
    """A browser capture (HAR) of two exchanges with an agent: a whole run, then one cut off."""
    bodies = [
        'data: {"type":"RUN_STARTED","threadId":"t","runId":"r0"}\n\n'
        'data: {"type":"RUN_FINISHED","threadId":"t","runId":"r0"}\n\n',
        'data: {"type":"RUN_STARTED","threadId":"t","runId":"r1"}\n\n',
    ]
    # Each request sends the run its stream answers (RUN_STARTED is held to it).
    def sent(run: str) -> str:
        return json.dumps({"threadId": "t", "runId": run, "messages": [], "tools": [], "context": [], "state": {}})

    entries = [
        {
            "request": {
                "method": "POST",
                "url": "http://127.0.0.1/agent",
                "headers": [],
                "postData": {"mimeType": "application/json", "text": sent(f"r{i}")},
            },
            "response": {
                "status": 200,
                "headers": [{"name": "content-type", "value": "text/event-stream"}],
                "content": {"mimeType": "text/event-stream", "text": body},
            },
        }
        for i, body in enumerate(bodies)
    ]
    path = folder / "capture.har"
    path.write_text(json.dumps({"log": {"version": "1.2", "entries": entries}}))
    return path


def test_a_stream_of_a_capture_is_named_as_findings_name_it(tmp_path, empty_dir):
    """`capture.har#1`, the name the CLI gives a capture's stream (and its error advises),
    names that stream here too, with the CLI's findings; a name no file has after a file that
    is no capture stays a missing file."""
    from conftest import cli

    capture = capture_of_two_streams(tmp_path)
    for entry in (0, 1):
        name = f"{capture}#{entry}"
        report = agui_lens.check(name)
        ran = cli("check", "--format", "json", name, cwd=empty_dir)
        assert ran.returncode in (0, 1), ran.stderr.decode()
        assert json.loads(report.to_json()) == json.loads(ran.stdout)
        assert report.ok == (ran.returncode == 0)
        assert agui_lens.events(name) == [
            json.loads(line) for line in cli("cat", name, cwd=empty_dir).stdout.decode().splitlines()
        ]
    assert not agui_lens.check(f"{capture}#1").ok
    assert agui_lens.fold(f"{capture}#0") == json.loads(cli("fold", f"{capture}#0", cwd=empty_dir).stdout)
    # The whole capture still asks which stream, and the name it advises works.
    with pytest.raises(agui_lens.AguiLensError, match="#N"):
        agui_lens.check(capture)
    # A capture has entries 0 and 1 only; a file that is no capture has no streams.
    with pytest.raises(agui_lens.AguiLensError, match="entr"):
        agui_lens.check(f"{capture}#7")
    plain = tmp_path / "run.jsonl"
    plain.write_text('{"type":"RUN_STARTED","threadId":"t","runId":"r"}\n')
    with pytest.raises(agui_lens.AguiLensError, match="No such file"):
        agui_lens.check(f"{plain}#1")


def test_entry_picks_a_stream_of_a_capture_from_a_path_or_bytes(tmp_path, empty_dir):
    """`entry=N` is `--entry N`: it picks a stream of a capture named by its path or given as
    bytes (which no `#N` can name), with the CLI's findings; the error for a capture of several
    streams names the keyword, not the command line's flag."""
    from conftest import cli

    capture = capture_of_two_streams(tmp_path)
    data = capture.read_bytes()
    for entry in (0, 1):
        ran = cli("check", "--format", "json", "--entry", str(entry), str(capture), cwd=empty_dir)
        expected = json.loads(ran.stdout)
        assert json.loads(agui_lens.check(capture, entry=entry).to_json()) == expected
        from_bytes = agui_lens.check(data, name=str(capture), entry=entry)
        assert from_bytes.ok == (ran.returncode == 0)
        assert [d.rule for d in from_bytes.diagnostics] == [
            d["rule"] for d in expected["diagnostics"]
        ]
        assert agui_lens.events(data, name="c.har", entry=entry) == agui_lens.events(
            f"{capture}#{entry}"
        )
        assert agui_lens.fold(capture, entry=entry) == agui_lens.fold(f"{capture}#{entry}")
    for source in (capture, data):
        with pytest.raises(agui_lens.AguiLensError, match="entry=N") as raised:
            agui_lens.check(source)
        assert "--entry" not in str(raised.value)
    # Bytes have no name a `#N` could follow: only the keyword is advised.
    with pytest.raises(agui_lens.AguiLensError) as raised:
        agui_lens.check(data)
    assert "#N" not in str(raised.value), str(raised.value)
    with pytest.raises(agui_lens.AguiLensError, match="entry=1") as raised:
        agui_lens.check(f"{capture}#0", entry=1)
    assert "--entry" not in str(raised.value)
    with pytest.raises(agui_lens.AguiLensError, match="entr"):
        agui_lens.check(capture, entry=7)
    for wrong in (-1, "1", True):
        with pytest.raises(TypeError, match="entry"):
            agui_lens.check(capture, entry=wrong)


def test_a_capture_given_as_bytes_is_skipped_by_compaction_as_its_file_is(tmp_path):
    # compaction() of a capture's bytes (as compact_tree reads a tree that is no local disk)
    # raised for a capture of two streams, where its file is skipped: rows told the same
    # tree apart by where it was stored.
    capture = capture_of_two_streams(tmp_path)
    data = capture.read_bytes()
    one = json.loads(data)
    one["log"]["entries"] = one["log"]["entries"][:1]
    none = json.loads(data)
    none["log"]["entries"] = []
    for kind, source in (
        ("two streams", data),
        ("compressed", gzip.compress(data)),
        ("one stream", json.dumps(one).encode()),
        ("no stream", json.dumps(none).encode()),
    ):
        done = agui_lens.compaction(source)
        assert done.status == "skipped", (kind, done)
        assert "browser capture" in done.reason, (kind, done)
        assert done.data is None
        (tmp_path / "c.har").write_bytes(source)
        assert agui_lens.compaction(tmp_path / "c.har").status == "skipped", kind


@pytest.mark.filterwarnings("ignore::agui_lens.AguiLensWarning")
def test_a_capture_answered_with_an_error_status_is_no_clean_stream(tmp_path, empty_dir):
    """A capture's stream whose response had an error status was never read by its client:
    the Python check reports it as the CLI does (`transport/http-status`)."""
    from conftest import cli

    capture = capture_of_two_streams(tmp_path)
    har = json.loads(capture.read_text())
    har["log"]["entries"][0]["response"]["status"] = 500
    har["log"]["entries"][0]["response"]["statusText"] = "Internal Server Error"
    capture.write_text(json.dumps(har))
    name = f"{capture}#0"
    report = agui_lens.check(name)
    assert not report.ok
    assert [d.rule for d in report.diagnostics if d.severity == "error"] == ["transport/http-status"]
    ran = cli("check", "--format", "json", name, cwd=empty_dir)
    assert ran.returncode == 1
    assert json.loads(report.to_json()) == json.loads(ran.stdout)
    # Nor does it mean what the same events answered 200 mean, at any level.
    answered = tmp_path / "answered.har"
    har["log"]["entries"][0]["response"]["status"] = 200
    answered.write_text(json.dumps(har))
    # Its events are those that came, said to be read by no client (as `cat` says on stderr);
    # the same events answered 200 come with no warning.
    with pytest.warns(agui_lens.AguiLensWarning, match="answered 500 Internal Server Error"):
        failed = agui_lens.events(name)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert agui_lens.events(f"{answered}#0") == failed
    for level in ("events", "compact", "fold"):
        assert agui_lens.diff(name, f"{answered}#0", level=level).equal is False, level
        assert agui_lens.diff(name, name, level=level).equal is True, level


def test_the_events_of_a_capture_check_fails_come_with_why(empty_dir):
    """A capture whose response was declared as something else than an event stream: `cat`
    says so and exits 1; `events` returns what came and warns, as it does of a failed status."""
    from conftest import cli

    path = FIXTURES / "invalid" / "transport" / "content-type.har"
    ran = cli("cat", str(path), cwd=empty_dir)
    assert ran.returncode == 1
    with pytest.warns(agui_lens.AguiLensWarning, match="Content-Type"):
        events = agui_lens.events(path)
    assert len(events) == len(ran.stdout.splitlines())


def test_fold_and_diff_warn_as_events_does(tmp_path, capfd):
    """`fold` and `diff` of a capture answered 500, or of a stream with a frame that is no
    event, say so with an ``AguiLensWarning`` as ``events`` does, and nothing on stderr (a
    notebook or a test run shows warnings; stderr of a library goes unseen)."""
    capture = capture_of_two_streams(tmp_path)
    har = json.loads(capture.read_text())
    har["log"]["entries"][0]["response"]["status"] = 500
    har["log"]["entries"][0]["response"]["statusText"] = "Internal Server Error"
    capture.write_text(json.dumps(har))
    failed = f"{capture}#0"
    with pytest.warns(agui_lens.AguiLensWarning, match="answered 500 Internal Server Error"):
        agui_lens.fold(failed)
    for level in ("events", "compact", "fold"):
        with pytest.warns(agui_lens.AguiLensWarning, match="answered 500") as said:
            agui_lens.diff(failed, failed, level=level)
        assert len(said) == 2, [str(w.message) for w in said]
    broken = tmp_path / "broken.jsonl"
    broken.write_text(
        '{"type":"RUN_STARTED","threadId":"t","runId":"r"}\n'
        "{not json\n"
        '{"type":"RUN_FINISHED","threadId":"t","runId":"r"}\n'
    )
    with pytest.warns(agui_lens.AguiLensWarning, match="1 of 3 frames could not be read"):
        agui_lens.fold(broken)
    with pytest.warns(agui_lens.AguiLensWarning, match="1 of 3 frames could not be read"):
        agui_lens.diff(broken, broken, level="fold")
    # Content is said by its label, not by the temp file it was read from.
    with pytest.warns(agui_lens.AguiLensWarning) as said:
        agui_lens.diff(broken.read_bytes(), broken)
    messages = [str(w.message) for w in said]
    assert len(messages) == 2, messages
    assert messages[0].startswith(f"{agui_lens.BYTES_NAME}: 1 of 3 frames"), messages
    assert "agui-lens-diff." not in " ".join(messages), messages
    assert capfd.readouterr().err == ""
    # A clean stream gives none.
    clean = tmp_path / "clean.jsonl"
    clean.write_text(
        '{"type":"RUN_STARTED","threadId":"t","runId":"r"}\n'
        '{"type":"RUN_FINISHED","threadId":"t","runId":"r"}\n'
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        agui_lens.fold(clean)
        agui_lens.diff(clean, clean)


def test_an_event_holding_half_a_utf16_pair_is_read_as_cat_reads_it():
    """Half a UTF-16 pair is JSON the official client reads, and a Python string holds it:
    `events` returns it as `json.loads` of the line does (it raised, as for a frame that is
    no event), and as `agui-lens cat` copies it."""
    lone = FIXTURES / "invalid" / "framing" / "lone-surrogate.jsonl"
    expected = [json.loads(line) for line in lone.read_text().splitlines()]
    assert agui_lens.events(lone) == expected
    assert any(e.get("delta") == "Done \ud83d" for e in agui_lens.events(lone))


def test_a_file_named_as_content_begins_is_that_file(tmp_path, monkeypatch):
    # A str naming a file whose name begins as content does (`[draft] run.jsonl`) was read
    # as the stream's text: one unreadable frame, a failing stream named <bytes>.
    stream = (FIXTURES / "valid" / "agui-sdk-full.jsonl").read_bytes()
    monkeypatch.chdir(tmp_path)
    for name in ("[draft] run.jsonl", "{id}.jsonl", "data: x.sse"):
        (tmp_path / name).write_bytes(stream)
        assert agui_lens.check(name).ok, name
        assert agui_lens.check(str(tmp_path / name)).ok, name
    # Content is content still.
    assert not agui_lens.check('[{"type":"RUN_STARTED","threadId":"t","runId":"r"}]').ok
