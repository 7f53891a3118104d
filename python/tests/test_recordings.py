"""A recording `agui-lens run --record` made is read with what it wrote beside it, in Python as
on the command line: the request it answers (its state is where the fold starts), how it was
cut, and what only the call that recorded it found (which no rewrite may leave behind)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

import agui_lens
from agui_lens.distributed import compact_tree
from conftest import FIXTURES, cli

EVENTS = [
    {"type": "RUN_STARTED", "threadId": "t1", "runId": "r1"},
    {"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"},
    {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "par"},
    {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "tial"},
    {"type": "TEXT_MESSAGE_END", "messageId": "m1"},
    {"type": "STATE_DELTA", "delta": [{"op": "replace", "path": "/counter", "value": 6}]},
    {"type": "RUN_FINISHED", "threadId": "t1", "runId": "r1"},
]
REQUEST = {
    "threadId": "t1",
    "runId": "r1",
    "state": {"counter": 5, "items": ["pear"]},
    "messages": [{"id": "u1", "role": "user", "content": "hi"}],
    "tools": [],
    "context": [],
    "forwardedProps": {},
}


def recording(folder: Path, name: str, *, request=True, cut=False, findings=False) -> Path:
    """A stream as `run --record` leaves it, with the files it writes beside it."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("".join(json.dumps(e) + "\n" for e in EVENTS))
    size = path.stat().st_size
    if request:
        Path(f"{path}.request.txt").write_text(
            json.dumps({"recording_size": size, "request": REQUEST}) + "\n"
        )
    if cut:
        Path(f"{path}.cut.txt").write_text(
            f"stopped by SIGTERM after 7 events: the stream was recorded in part\nsize: {size}\n"
        )
    if findings:
        finding = {
            "event_index": 0,
            "event_type": "RUN_STARTED",
            "help": "echo the RunAgentInput's threadId and runId in RUN_STARTED",
            "keyword": None,
            "line": None,
            "message": "RUN_STARTED has runId \"r1\" where the input sent \"r0\"",
            "offset": None,
            "path": "http://127.0.0.1:1/",
            "pointer": None,
            "recording_size": size,
            "rule": "transport/run-id-mismatch",
            "severity": "error",
        }
        Path(f"{path}.findings.txt").write_text(json.dumps(finding) + "\n")
    return path


@pytest.mark.parametrize("beside", ["cut", "findings"])
def test_a_recording_no_rewrite_may_leave_is_skipped_as_the_command_skips_it(
    beside, tmp_path, empty_dir
):
    path = recording(tmp_path / "in", "run.jsonl", **{beside: True})
    ran = cli("compact", str(path), cwd=empty_dir)
    assert ran.returncode == 2 and ran.stdout == b""
    assert b"skipped" in ran.stderr
    done = agui_lens.compaction(path)
    assert (done.status, done.data) == ("skipped", None)
    assert done.reason in ran.stderr.decode()
    with pytest.raises(agui_lens.AguiLensError, match="skipped"):
        agui_lens.compact(path)
    # The original fails (what its call found) or cannot be judged whole (it was cut): no
    # copy of it is handed out to be checked clean.
    assert not agui_lens.check(path).ok or beside == "cut"


def test_a_recording_folds_and_compacts_from_the_state_its_request_sent(tmp_path, empty_dir):
    path = recording(tmp_path / "in", "run.jsonl")
    folded = json.loads(cli("fold", str(path), cwd=empty_dir).stdout)
    assert folded["state"] == {"counter": 6, "items": ["pear"]}
    assert agui_lens.fold(path)["state"] == folded["state"]
    ran = cli("compact", str(path), cwd=empty_dir)
    assert ran.returncode == 0, ran.stderr
    with pytest.warns(agui_lens.AguiLensWarning, match="request it answers"):
        assert agui_lens.compact(path) == ran.stdout
    # compaction() gives the request to write beside it, as `compact -o` writes it.
    out = tmp_path / "out" / "run.jsonl"
    out.parent.mkdir()
    assert cli("compact", str(path), "-o", str(out), cwd=empty_dir).returncode == 0
    done = agui_lens.compaction(path)
    assert done.status == "compacted" and done.data == out.read_bytes()
    assert done.request_file == Path(f"{out}.request.txt").read_text()


def test_the_events_of_a_recording_with_its_findings_beside_it_are_said_to_leave_them(tmp_path):
    path = recording(tmp_path, "run.jsonl", findings=True)
    with pytest.warns(agui_lens.AguiLensWarning, match="findings.txt beside it"):
        assert len(agui_lens.events(path)) == len(EVENTS)
    with pytest.warns(agui_lens.AguiLensWarning, match="was cut when it was recorded"):
        agui_lens.fold(recording(tmp_path / "cut", "run.jsonl", cut=True))


def test_a_protobuf_stream_compaction_would_grow_is_kept_as_it_was(empty_dir):
    path = FIXTURES / "proto" / "official.pb"
    ran = cli("compact", str(path), cwd=empty_dir)
    assert ran.returncode == 0 and b"kept as they were" in ran.stderr
    done = agui_lens.compaction(path)
    assert done.status == "kept"
    assert done.bytes_after == done.bytes_before
    assert done.data == path.read_bytes() == ran.stdout
    assert agui_lens.compact(path) == ran.stdout


def test_a_tree_of_recordings_mirrors_as_the_command_mirrors_it(tmp_path, empty_dir):
    pytest.importorskip("fsspec")
    tree = tmp_path / "tree"
    recording(tree, "plain.jsonl")
    recording(tree, "cut.jsonl", cut=True)
    recording(tree, "found.jsonl", findings=True)
    recording(tree / "deeper", "alone.jsonl", request=False)
    # A raw body `run --record-raw` wrote beside its events, with its own request: the bytes
    # that came, copied as they are (a walk reads no `.raw`).
    raw = tree / "plain.raw"
    raw.write_text("".join(f"data: {json.dumps(e)}\n\n" for e in EVENTS))
    Path(f"{raw}.request.txt").write_text(
        json.dumps({"recording_size": raw.stat().st_size, "request": REQUEST}) + "\n"
    )
    ran = cli("compact", str(tree), "-o", str(tmp_path / "cli"), "--mirror", cwd=empty_dir)
    assert ran.returncode == 0, ran.stderr
    rows = {row["path"]: row for row in compact_tree(str(tree), str(tmp_path / "py"))}
    assert rows["plain.jsonl"]["status"] == "compacted"
    assert rows["cut.jsonl"]["status"] == rows["found.jsonl"]["status"] == "skipped"
    assert rows["plain.raw"]["status"] == "skipped"

    def files(root: Path) -> dict:
        return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}

    assert files(tmp_path / "py") == files(tmp_path / "cli")
    # Every mirrored recording is checked as its original is.
    for name in ("plain.jsonl", "cut.jsonl", "found.jsonl", "deeper/alone.jsonl"):
        before = cli("check", str(tree / name), cwd=empty_dir)
        after = cli("check", str(tmp_path / "py" / name), cwd=empty_dir)
        assert after.returncode == before.returncode, name


def test_a_recording_on_another_filesystem_is_left_as_it_is(tmp_path):
    fsspec = pytest.importorskip("fsspec")
    fs = fsspec.filesystem("memory")
    base = f"/recordings-{tmp_path.name}"
    local = tmp_path / "tree"
    recording(local, "found.jsonl", findings=True)
    recording(local, "plain.jsonl")
    for p in local.iterdir():
        fs.pipe(f"{base}/tree/{p.name}", p.read_bytes())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rows = {r["path"]: r for r in compact_tree(f"memory://{base}/tree", f"memory://{base}/out")}
    assert rows["found.jsonl"]["status"] == rows["plain.jsonl"]["status"] == "skipped"
    for p in local.iterdir():
        assert fs.cat_file(f"{base}/out/{p.name}") == p.read_bytes()
