"""Errors are exceptions with the CLI's messages; nothing fed crashes the interpreter."""

from __future__ import annotations

import json
import random
import warnings

import pytest

import agui_lens
from conftest import FIXTURES, cli

VALID = FIXTURES / "valid" / "agui-sdk-full.jsonl"


def test_error_class():
    assert issubclass(agui_lens.AguiLensError, ValueError)


def test_errors_cross_process_boundaries(tmp_path):
    # A worker of a process pool sends its exception back pickled: it came back as a
    # PicklingError, the message lost, since the class named a module no one can import.
    import pickle

    with pytest.raises(agui_lens.AguiLensError) as raised:
        agui_lens.fold(tmp_path / "missing.jsonl")
    again = pickle.loads(pickle.dumps(raised.value))
    assert type(again) is agui_lens.AguiLensError
    assert str(again) == str(raised.value)


def test_missing_file(tmp_path, empty_dir):
    missing = tmp_path / "missing.jsonl"
    with pytest.raises(agui_lens.AguiLensError) as raised:
        agui_lens.check(missing)
    assert str(raised.value) == f"opening {missing}: No such file or directory (os error 2)"
    with pytest.raises(agui_lens.AguiLensError) as raised:
        agui_lens.fold(missing)
    ran = cli("fold", str(missing), cwd=empty_dir)
    assert ran.stderr.decode().strip() == f"error: {raised.value}"


def test_an_empty_path_names_no_file():
    for call in (agui_lens.check, agui_lens.fold, agui_lens.events):
        with pytest.raises(agui_lens.AguiLensError) as raised:
            call("")
        assert str(raised.value) == "an empty path names no file", call


def test_directory_is_no_stream(tmp_path):
    with pytest.raises(agui_lens.AguiLensError, match="is a directory"):
        agui_lens.check(tmp_path)


def test_not_a_stream(tmp_path, empty_dir):
    sidecar = tmp_path / "run.meta.json"
    sidecar.write_text('{"model": "x", "took_ms": 12}\n')
    # check reports it as a finding, as the CLI does for a file it is given...
    report = agui_lens.check(sidecar)
    assert [d.rule for d in report.errors] == ["framing/no-events"]
    assert not report.ok
    # ...and fold, which needs a stream, refuses it with the CLI's message.
    with pytest.raises(agui_lens.AguiLensError, match="holds no AG-UI events") as raised:
        agui_lens.fold(sidecar)
    ran = cli("fold", str(sidecar), cwd=empty_dir)
    assert ran.stderr.decode().strip() == f"error: {raised.value}"


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"rules": {"state/*": "loud"}}, "has level `loud`"),
        ({"rules": {"no/such-rule": "deny"}}, "no/such-rule"),
        ({"protocol": "7"}, "unknown protocol version"),
        ({"format": "xml"}, "unknown input format"),
        ({"input": "[1, 2]"}, "no JSON object"),
        ({"input": "{not json"}, "reading the RunAgentInput"),
    ],
)
def test_bad_options(kwargs, message):
    with pytest.raises(agui_lens.AguiLensError, match=message):
        agui_lens.check(VALID, **kwargs)


GARBAGE = [
    b"",
    b"\x00\xff\xfe",
    b"{",
    b"[]",
    b"null",
    b'{"type": 5}',
    b'{"type": "TEXT_MESSAGE_CONTENT"}',
    b'{"type": "STATE_DELTA", "delta": [{"op": "move", "from": "/a/-", "path": "/a/0/b"}]}',
    b'{"type": "STATE_SNAPSHOT", "snapshot": ' + b"[" * 5000 + b"]" * 5000 + b"}",
    b'{"type": "RUN_STARTED", "threadId": "t", "runId": "r", "x": 1e99999}',
    "{\"type\": \"TEXT_MESSAGE_START\", \"messageId\": \"\ud800\"}".encode("utf-8", "surrogatepass"),
]


def test_garbage_never_crashes():
    rng = random.Random(27)
    fuzz = [bytes(rng.randrange(256) for _ in range(rng.randrange(1, 64))) for _ in range(300)]
    base = [line.encode() for line in VALID.read_text().splitlines()]
    # Valid events cut at random places and spliced together.
    for _ in range(300):
        a, b = rng.choice(base), rng.choice(base)
        fuzz.append(a[: rng.randrange(len(a))] + b[rng.randrange(len(b)) :])
    checker = agui_lens.Checker()
    for item in GARBAGE + fuzz:
        found = checker.feed(item)
        assert isinstance(found, list)
        report = agui_lens.check(item + b"\n" if item else item)
        assert isinstance(str(report), str)
        json.loads(report.to_json())
    checker.finish()
    assert not checker.ok
    # Every garbage line as one stream, and as SSE.
    joined = b"\n".join(GARBAGE + fuzz)
    assert not agui_lens.check(joined).ok
    assert not agui_lens.check(joined, format="sse").ok


def test_events_never_leave_a_frame_out_in_silence(tmp_path, empty_dir):
    """A frame that cannot be read as an event (a line cut off) fails ``events`` as it fails
    ``agui-lens cat``: a list of the others is not the stream. Asked for, they are left out."""
    cut = tmp_path / "cut.jsonl"
    lines = VALID.read_text().splitlines()
    cut.write_text("\n".join(lines[:3]) + "\n" + lines[3][:20] + "\n")
    with pytest.raises(agui_lens.AguiLensError, match="1 frame of .* could not be read"):
        agui_lens.events(cut)
    kept = agui_lens.events(cut, skip_unreadable=True)
    assert kept == [json.loads(line) for line in lines[:3]]
    ran = cli("cat", str(cut), cwd=empty_dir)
    assert ran.returncode == 1
    assert [json.loads(line) for line in ran.stdout.decode().splitlines()] == kept


def test_events_say_frames_the_client_reads_as_one(empty_dir):
    """SSE frames the official client reads as one (parted by CR LF) are returned as the
    events they hold, as ``agui-lens cat`` copies them, with an ``AguiLensWarning`` where
    ``cat`` says so and exits 1: no client gets them apart. They were returned in silence."""
    edge = FIXTURES / "recordings" / "agui-sdk-sse-edge.sse"
    with pytest.warns(agui_lens.AguiLensWarning, match="sse-frames-merged"):
        got = agui_lens.events(edge)
    ran = cli("cat", str(edge), cwd=empty_dir)
    assert ran.returncode == 1
    assert b"not what a client reads" in ran.stderr
    assert [json.loads(line) for line in ran.stdout.decode().splitlines()] == got


def test_events_of_what_is_no_stream_raise(tmp_path, empty_dir):
    """``events`` of an empty file, an error page or a sidecar raises as ``agui-lens cat``
    fails on them: an empty list would say the stream had no events."""
    cases = {
        "empty.jsonl": "",
        "error.sse": "<html><body>502 Bad Gateway</body></html>\n",
        "run.meta.json": '{"model": "x", "took_ms": 12}\n',
    }
    for name, text in cases.items():
        path = tmp_path / name
        path.write_text(text)
        with pytest.raises(agui_lens.AguiLensError, match="holds no AG-UI events") as raised:
            agui_lens.events(path)
        ran = cli("cat", str(path), cwd=empty_dir)
        assert ran.returncode == 2
        assert ran.stderr.decode().strip() == f"error: {raised.value}"


def test_ctrl_c_stops_a_long_call(tmp_path):
    """Ctrl-C during a long call raises KeyboardInterrupt at once, as it stops the command
    line: the call looks at the interpreter's signals while it works (it ignored them until it
    returned, half a minute for a large diff)."""
    import signal
    import subprocess
    import sys
    import time

    lines = VALID.read_bytes().splitlines(keepends=True)
    big = tmp_path / "big.jsonl"
    with big.open("wb") as out:
        for copy in range(15000):
            out.writelines(line.replace(b'"run-', b'"run%d-' % copy) for line in lines)
    # A call on another thread is stopped too, and says so: its report would not be whole.
    script = (
        "import sys, threading, agui_lens\n"
        "got = []\n"
        "def other():\n"
        "    try:\n"
        "        agui_lens.check(sys.argv[1])\n"
        "        got.append('whole')\n"
        "    except agui_lens.AguiLensError as e:\n"
        "        got.append('stopped' if str(e).startswith('stopped') else str(e))\n"
        "thread = threading.Thread(target=other)\n"
        "thread.start()\n"
        "print('calling', flush=True)\n"
        "try:\n"
        "    agui_lens.diff(sys.argv[1], sys.argv[1])\n"
        "    print('returned', flush=True)\n"
        "except KeyboardInterrupt:\n"
        "    import time\n"
        "    print('interrupted at', time.time(), flush=True)\n"
        "    raise\n"
        "finally:\n"
        "    thread.join()\n"
        "    print('other:', got, flush=True)\n"
    )
    child = subprocess.Popen(
        [sys.executable, "-c", script, str(big)],
        # Not python/, whose source folder agui_lens/ would be imported instead of the wheel.
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert child.stdout.readline() == b"calling\n"
    time.sleep(1.0)
    child.send_signal(signal.SIGINT)
    signalled = time.time()
    out, err = child.communicate(timeout=300)
    assert b"KeyboardInterrupt" in err, err.decode()
    assert b"returned" not in out
    assert b"other: ['stopped']" in out, out.decode()
    interrupted = float(out.decode().split("interrupted at ")[1].split()[0])
    # The whole call takes far longer (about 18 s for this 51 MB file in a debug build).
    assert interrupted - signalled < 5, interrupted - signalled


def test_no_event_under_a_level_that_does_not_fail_is_no_checked_stream(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    for level in ("warn", "note"):
        report = agui_lens.check(empty, rules={"framing/no-events": level})
        assert not report.ok, level
        assert report.failure.endswith(f"{empty}: no AG-UI event in it: nothing was checked")


def test_rules_as_pairs_and_a_protocol_that_is_no_text():
    as_map = agui_lens.check(VALID, rules={"schema/*": "allow", "schema/unknown-field": "deny"})
    as_pairs = agui_lens.check(VALID, rules=[("schema/*", "allow"), ("schema/unknown-field", "deny")])
    assert as_pairs.to_json() == as_map.to_json()
    with pytest.raises(TypeError, match="mapping of rule or family to level"):
        agui_lens.check(VALID, rules=["schema/*"])
    with pytest.raises(TypeError, match='"1.1", "1.0" or "0.x", not float'):
        agui_lens.check(VALID, protocol=1.0)


def test_text_that_is_no_unicode_is_read_as_a_file_of_it_would_be(tmp_path):
    # A stream given as text holding a lone surrogate (or bytes read with surrogateescape)
    # raised a bare UnicodeEncodeError from every entry point; the same bytes in a file are
    # findings. Each call now says of the text what it says of the file.
    start = '{"type":"RUN_STARTED","threadId":"t","runId":"r"}\n'
    end = '{"type":"RUN_FINISHED","threadId":"t","runId":"r"}\n'
    texts = {
        "lone": start + '{"type":"CUSTOM","name":"x","value":"\ud800"}\n' + end,
        "escaped": (start.encode() + b'{"type":"CUSTOM","name":"x","value":"\xff"}\n'
                    + end.encode()).decode("utf-8", "surrogateescape"),
    }
    for kind, text in texts.items():
        file = tmp_path / f"{kind}.jsonl"
        file.write_bytes(text.encode("utf-8", "surrogateescape" if kind == "escaped" else "surrogatepass"))
        from_text, from_file = agui_lens.check(text), agui_lens.check(file)
        assert [d.rule for d in from_text.diagnostics] == [d.rule for d in from_file.diagnostics], kind
        assert not from_text.ok, kind
        for call in (agui_lens.fold, agui_lens.events, agui_lens.compact):
            try:
                call(text)
            except agui_lens.AguiLensError:
                pass
        assert agui_lens.compaction(text).status == agui_lens.compaction(file).status, kind
        agui_lens.diff(text, file)


def test_an_input_that_is_no_utf8_is_an_error_that_says_so():
    # `input=` as bytes that are no UTF-8 raised a bare UnicodeDecodeError.
    for input in (b'{"threadId":"t","state":{"k":"\xe9"}}', bytearray(b"\xff")):
        with pytest.raises(agui_lens.AguiLensError, match="no UTF-8 text"):
            agui_lens.check([], input=input)
        with pytest.raises(agui_lens.AguiLensError, match="no UTF-8 text"):
            agui_lens.Checker(input=input)
    assert agui_lens.check(
        [{"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
         {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}],
        input=bytearray(b'{"threadId":"t","runId":"r","messages":[],"tools":[],"context":[],'
                        b'"state":{},"forwardedProps":{}}'),
    ).ok


def test_an_input_or_a_name_holding_half_a_surrogate_pair_is_no_bare_error():
    # A lone surrogate in input= (text or a dict's value) or in name= raised a bare
    # UnicodeEncodeError.
    stream = [{"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
              {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}]
    for input in ('{"threadId":"\ud800"}', {"threadId": "\ud800"}):
        with pytest.raises(agui_lens.AguiLensError, match="surrogate pair"):
            agui_lens.check(stream, input=input)
        with pytest.raises(agui_lens.AguiLensError, match="surrogate pair"):
            agui_lens.Checker(input=input)
    named = agui_lens.check(stream, name="run\udcff.jsonl")
    assert named.ok
    assert agui_lens.fold(stream, name="x\udcff.jsonl") == agui_lens.fold(stream)
    for name in ("run\udcff.jsonl", "run\ud800.jsonl"):
        checker = agui_lens.Checker(name=name)
        checker.feed_all(stream)
    # A file whose name is no UTF-8, compared with itself.
    import os
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, os.fsdecode(b"r\xff.jsonl"))
        with open(path, "w") as out:
            out.write("".join(json.dumps(e) + "\n" for e in stream))
        assert agui_lens.diff(path, path).equal


def test_a_number_past_a_floats_range_is_said_by_events(tmp_path):
    # events() read 1e400 as inf with no word; fed back, the event was no JSON (a false red).
    path = tmp_path / "big.jsonl"
    path.write_text(
        '{"type":"RUN_STARTED","threadId":"t","runId":"r"}\n'
        '{"type":"STATE_SNAPSHOT","snapshot":{"huge":1e400,"pi":3.14}}\n'
        '{"type":"RUN_FINISHED","threadId":"t","runId":"r"}\n'
    )
    assert agui_lens.check(path).ok
    with pytest.warns(agui_lens.AguiLensWarning, match=r"1 number past a float's range \(1e\+?400\)"):
        read = agui_lens.events(path)
    assert read[1]["snapshot"]["pi"] == 3.14
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        agui_lens.events(FIXTURES / "valid" / "agui-sdk-full.jsonl")
