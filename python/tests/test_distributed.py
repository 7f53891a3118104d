"""agui_lens.distributed: a tree of histories compacted on a real Dask cluster (two worker
processes on 127.0.0.1), file for file as `agui-lens compact` compacts the same tree."""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import subprocess
import uuid
from pathlib import Path

import pytest

import agui_lens
from conftest import FIXTURES, ROOT, STREAMS, cli

distributed = pytest.importorskip("distributed")
fsspec = pytest.importorskip("fsspec")

from agui_lens.distributed import COLUMNS, STATUSES, compact_tree, summarize  # noqa: E402

GENERATE = Path(
    os.environ.get("AGUI_LENS_GENERATE", ROOT / "target" / "debug" / "examples" / "generate")
)
# Where each row ran and how long it took: all that may differ from one run to the next.
WHERE = ("worker", "pid", "seconds")


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(
        n_workers=2,
        processes=True,
        threads_per_worker=1,
        host="127.0.0.1",
        dashboard_address=":0",
    )
    client = distributed.Client(cluster)
    yield client
    client.close()
    cluster.close()


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    """Every stream fixture, generated histories, and what a stored tree also holds."""
    root = tmp_path_factory.mktemp("histories") / "tree"
    for path in STREAMS:
        target = root / "fixtures" / path.relative_to(FIXTURES)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    assert GENERATE.exists(), "build the generator: cargo build -p agui-lens --example generate"
    for seed in range(1, 7):
        out = root / "generated" / f"seed-{seed}.jsonl"
        out.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [str(GENERATE), "--profile", "mixed", "--size", "150KB", "--seed", str(seed),
             "-o", str(out)],
            check=True, capture_output=True,
        )
    subprocess.run(
        [str(GENERATE), "--profile", "mixed", "--size", "150KB", "--seed", "9", "--format",
         "sse", "-o", str(root / "generated" / "stream.sse")],
        check=True, capture_output=True,
    )
    # Two files of one name in different folders, with different histories.
    for folder, fixture in (("a", "agui-sdk-full.jsonl"), ("b", "pydantic-ai-full.jsonl")):
        (root / folder).mkdir()
        source = FIXTURES / "valid" / fixture
        shutil.copyfile(source, root / folder / "run.jsonl")
    # A chunk stream too short for compaction to pay for expanding it: kept as it is read.
    (root / "b" / "chunks.jsonl").write_text(
        '{"type":"RUN_STARTED","threadId":"t","runId":"r"}\n'
        '{"type":"TEXT_MESSAGE_CHUNK","messageId":"m","role":"assistant","delta":"Hi"}\n'
        '{"type":"RUN_FINISHED","threadId":"t","runId":"r"}\n'
    )
    (root / "empty.jsonl").write_bytes(b"")
    (root / "a" / "run.meta.json").write_text(json.dumps({"model": "gpt", "tokens": 1234}))
    (root / "a" / "archived.jsonl.gz").write_bytes(
        gzip.compress((FIXTURES / "valid" / "agui-sdk-full.jsonl").read_bytes())
    )
    # A zstd-compressed history, as the command line writes one (by its name).
    cli("compact", str(FIXTURES / "valid" / "pydantic-ai-multiturn-3.jsonl"), "-o",
        str(root / "b" / "turns.jsonl.zst"), cwd=root.parent)
    # What a failed download leaves, named as the stream it was meant to be.
    (root / "b" / "error.jsonl").write_text('{"detail": "Internal Server Error"}\n')
    (root / "b" / "blob.jsonl").write_bytes(bytes(range(256)) * 4)
    os.symlink("a/run.jsonl", root / "link.jsonl")
    os.symlink("a", root / "folder-link")
    return root


def all_entries(root: Path) -> set:
    """Every file under root, links included, as compact_tree names them."""
    found = set()
    for folder, dirs, files in os.walk(root):
        for name in files + [d for d in dirs if os.path.islink(os.path.join(folder, d))]:
            found.add(Path(folder, name).relative_to(root).as_posix())
    return found


def human_bytes(n: int) -> str:
    """What the command line prints for a byte count (agui_lens_core::text::human_bytes)."""
    units = ["bytes", "KiB", "MiB", "GiB", "TiB"]
    value, unit = float(n), 0
    while value >= 1024 and unit + 1 < len(units):
        value /= 1024
        unit += 1
    if unit == 0:
        return f"{n} bytes"
    return f"{value:.0f} {units[unit]}" if value == int(value) else f"{value:.1f} {units[unit]}"


def cli_results(root: Path, mirror: Path) -> dict:
    """What `agui-lens compact TREE -o MIRROR/` says of each file, by relative path."""
    ran = cli("compact", str(root), "-o", str(mirror) + "/", cwd=root.parent)
    said = {}
    prefix = str(root) + "/"
    patterns = [
        ("refused", re.compile(r"^refused (?P<name>.+?): (?P<why>.*); nothing was written$")),
        ("skipped", re.compile(r"^skipped (?P<name>.+?): (?P<why>.*); left as it was$")),
        ("kept", re.compile(
            r"^(?P<name>.+?): (?P<before>\d+) events?, (?P<kept>.+?) kept as they were: "
            r"compacted, they would take .+ in \d+ events?$")),
        ("compacted", re.compile(
            r"^(?P<name>.+?): (?P<before>\d+) → (?P<after>\d+) events?, (?P<bytes_before>.+?) "
            r"→ (?P<bytes_after>.+?)(;.*)?$")),
    ]
    for line in ran.stderr.decode().splitlines():
        for status, pattern in patterns:
            m = pattern.match(line)
            if m and m["name"].startswith(prefix):
                said[m["name"][len(prefix):]] = (status, m.groupdict())
                break
    assert said, ran.stderr.decode()
    return said


def same(rows, root: str = "") -> list:
    """Rows as they must be alike from one run to the next: where and how fast each ran
    aside, and the tree's own name in the reasons (a refusal names the file)."""
    return [
        {k: (v.replace(root, "TREE") if root and k == "reason" and v else v)
         for k, v in r.items() if k not in WHERE}
        for r in rows
    ]


def mirrored(root: Path) -> dict:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def plain(data: bytes) -> bytes:
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


def meaning(path_or_bytes) -> tuple:
    folded = agui_lens.fold(path_or_bytes)
    return folded["messages"], folded["state"]


@pytest.fixture(scope="module")
def compacted(client, tree, tmp_path_factory):
    mirror = tmp_path_factory.mktemp("mirror") / "out"
    return mirror, compact_tree(str(tree), str(mirror), client=client)


def test_one_row_per_file_with_its_status(tree, compacted):
    mirror, rows = compacted
    assert [r["path"] for r in rows] == sorted(all_entries(tree))
    assert all(tuple(r) == COLUMNS and r["status"] in STATUSES for r in rows)
    by_path = {r["path"]: r for r in rows}
    expected = {
        "empty.jsonl": ("skipped", "copied"),
        "a/run.meta.json": ("skipped", "copied"),
        "b/error.jsonl": ("skipped", "copied"),
        "b/blob.jsonl": ("skipped", "copied"),
        "a/run.jsonl": ("compacted", "compacted"),
        "b/run.jsonl": ("compacted", "compacted"),
        "a/archived.jsonl.gz": ("compacted", "compacted"),
        "link.jsonl": ("compacted", "compacted"),
        "folder-link": ("skipped", None),
        "generated/stream.sse": ("compacted", "compacted"),
        "b/chunks.jsonl": ("kept", "as read"),
        "b/turns.jsonl.zst": ("compacted", "compacted"),
    }
    for path, (status, written) in expected.items():
        row = by_path[path]
        assert (row["status"], row["mirrored"]) == (status, written), row
    assert "no AG-UI events (the input is empty)" in by_path["empty.jsonl"]["reason"]
    assert by_path["folder-link"]["reason"] == "a link to a folder: not entered"
    # Every outcome but an error: the fixtures hold refusals.
    assert {r["status"] for r in rows} == {"compacted", "kept", "skipped", "refused"}
    # The compressed stream stays compressed, its bytes counted decompressed.
    archived = by_path["a/archived.jsonl.gz"]
    assert (mirror / "a/archived.jsonl.gz").read_bytes()[:2] == b"\x1f\x8b"
    assert archived["bytes_before"] > archived["size_before"]
    assert (mirror / "b/turns.jsonl.zst").read_bytes()[:4] == b"\x28\xb5\x2f\xfd"
    totals = summarize(rows)
    assert totals["files"] == len(rows)
    assert totals["bytes_after"] < totals["bytes_before"]
    # Nothing is left behind in the mirror but the files (no temp file).
    assert not [p for p in mirror.rglob("*.tmp")]


def test_workers_did_the_work(compacted):
    _, rows = compacted
    ran = [r for r in rows if r["worker"] is not None]
    assert len(ran) > 50
    assert len({r["worker"] for r in ran}) == 2, {r["worker"] for r in ran}
    pids = {r["pid"] for r in ran}
    assert len(pids) == 2 and os.getpid() not in pids


def test_mirror_means_what_the_tree_means(tree, compacted):
    mirror, rows = compacted
    checked = 0
    for row in rows:
        original, copy = tree / row["path"], mirror / row["path"]
        if row["mirrored"] in ("compacted", "as read"):
            assert meaning(copy) == meaning(original), row["path"]
            if row["format"] == "jsonl" and not row["path"].endswith(".zst"):
                # (A JSON array's brackets are not counted, as the command does not.)
                assert len(plain(copy.read_bytes())) == row["bytes_after"]
            checked += 1
        elif row["mirrored"] == "copied":
            assert copy.read_bytes() == original.read_bytes(), row["path"]
        else:
            assert not os.path.lexists(copy), row["path"]
    assert checked > 40


def test_per_file_numbers_are_the_command_lines(tree, compacted, tmp_path):
    mirror, rows = compacted
    said = cli_results(tree, tmp_path / "cli-mirror")
    by_path = {r["path"]: r for r in rows}
    assert len(said) > 60
    for path, (status, fields) in said.items():
        row = by_path[path]
        assert row["status"] == status, (path, row, fields)
        if status == "compacted":
            assert (row["events_before"], row["events_after"]) == (
                int(fields["before"]), int(fields["after"])), path
            assert human_bytes(row["bytes_before"]) == fields["bytes_before"], path
            assert human_bytes(row["bytes_after"]) == fields["bytes_after"], path
        elif status == "kept":
            assert row["events_before"] == row["events_after"] == int(fields["before"])
            assert human_bytes(row["bytes_after"]) == fields["kept"], path
        elif status == "refused":
            # The same sentence, naming the option of the API instead of the flag.
            why = fields["why"].replace("--drop-unreadable", "drop_unreadable=True")
            assert row["reason"] == why, path
        if status in ("compacted", "kept"):
            # The same stream written, compressed or not.
            cli_out = tmp_path / "cli-mirror" / path
            if path.endswith(".zst"):
                assert agui_lens.events(mirror / path) == agui_lens.events(cli_out), path
            else:
                assert plain((mirror / path).read_bytes()) == plain(cli_out.read_bytes()), path
    # What the command line walks past (no stream's name) is in the table too.
    assert set(by_path) - set(said) >= {"folder-link"}


def test_a_second_run_leaves_the_same_mirror(client, tree, compacted):
    mirror, rows = compacted
    before = mirrored(mirror)
    # Each file is left alone, not replaced by a copy of itself (new inode and time: a backup
    # of the mirror would copy all of it again).
    files = [p for p in sorted(mirror.rglob("*")) if p.is_file() and not p.is_symlink()]
    for p in files:
        os.utime(p, ns=(10**18, 10**18))
    identity = {p: (p.stat().st_ino, p.stat().st_mtime_ns) for p in files}
    # (Files sent to the workers eight to a task this time: the same work, fewer tasks.)
    again = compact_tree(str(tree), str(mirror), client=client, files_per_task=8)
    assert mirrored(mirror) == before
    assert same(again) == same(rows)
    assert {p: (p.stat().st_ino, p.stat().st_mtime_ns) for p in files} == identity


def test_the_same_code_on_memory_fsspec(tree, compacted):
    """The tree copied into memory://, compacted in this process and on a cluster whose
    workers share it (threads), gives the same rows and the same mirror."""
    _, rows = compacted
    fs = fsspec.filesystem("memory")
    base = f"/agui-lens-{uuid.uuid4().hex}"
    for path in sorted(tree.rglob("*")):
        if path.is_file() and not path.is_symlink():
            fs.pipe_file(f"{base}/tree/{path.relative_to(tree).as_posix()}", path.read_bytes())
    expected = same([r for r in rows if r["path"] not in ("link.jsonl", "folder-link")],
                    str(tree))
    url = f"memory://{base}/tree"
    local = compact_tree(url, f"memory://{base}/mirror")
    assert same(local, url) == expected
    assert {r["worker"] for r in local} == {"local"}
    mirror = {p: fs.cat_file(p) for p in fs.find(f"{base}/mirror")}
    with distributed.LocalCluster(
        n_workers=2, processes=False, threads_per_worker=1, dashboard_address=":0"
    ) as cluster, distributed.Client(cluster) as threads:
        fs.rm(f"{base}/mirror", recursive=True)
        on_cluster = compact_tree(f"memory://{base}/tree", f"memory://{base}/mirror",
                                  client=threads)
    assert same(on_cluster, url) == expected
    assert {p: fs.cat_file(p) for p in fs.find(f"{base}/mirror")} == mirror
    fs.rm(base, recursive=True)


def test_memory_fsspec_is_refused_with_process_workers(client):
    fs = fsspec.filesystem("memory")
    base = f"/agui-lens-{uuid.uuid4().hex}"
    fs.pipe_file(f"{base}/tree/run.jsonl", (FIXTURES / "valid" / "agui-sdk-full.jsonl").read_bytes())
    with pytest.raises(ValueError, match="memory:// lives in this process"):
        compact_tree(f"memory://{base}/tree", f"memory://{base}/mirror", client=client)
    fs.rm(base, recursive=True)


def test_bad_arguments_fail_before_any_work(tree, tmp_path):
    with pytest.raises(ValueError, match="inside the tree"):
        compact_tree(str(tree), str(tree / "mirror"))
    # The tree named another way: through `.`, or a link to it. Not refused, the mirror
    # wrote the compacted streams over the originals.
    link = tmp_path / "link"
    link.symlink_to(tree)
    for mirror in (f"{tree.parent}/./{tree.name}", str(link), str(link / "mirror")):
        with pytest.raises(ValueError, match="inside the tree"):
            compact_tree(str(tree), mirror)
    # A mirror that holds the tree: tree/s/run.jsonl would be mirrored onto tree/run.jsonl
    # (it was, and that stream was lost).
    with pytest.raises(ValueError, match="holds the tree"):
        compact_tree(str(tree), str(tree.parent))
    with pytest.raises(agui_lens.AguiLensError, match="unknown level"):
        compact_tree(str(tree), str(tmp_path / "m"), level="tiny")
    with pytest.raises(ValueError, match="not a folder"):
        compact_tree(str(tree / "a" / "run.jsonl"), str(tmp_path / "m"))
    assert not (tmp_path / "m").exists()


def test_an_unwritable_mirror_is_a_row_not_a_crash(tree, tmp_path):
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "a").write_text("a file where a folder is needed")
    rows = compact_tree(str(tree), str(tmp_path / "m"))
    by_path = {r["path"]: r for r in rows}
    assert by_path["a/run.jsonl"]["status"] == "error"
    assert "FileExistsError" in by_path["a/run.jsonl"]["reason"] or "NotADirectory" in (
        by_path["a/run.jsonl"]["reason"])
    assert by_path["b/run.jsonl"]["status"] == "compacted"


def test_a_file_compaction_cannot_read_is_still_mirrored(tmp_path):
    # A truncated gzip, or a browser capture of several streams: compaction fails on it, and
    # the mirror left it out, where the command line's --mirror copies it as it is.
    import gzip

    source = tmp_path / "tree"
    source.mkdir()
    whole = gzip.compress((FIXTURES / "valid" / "agui-sdk-full.jsonl").read_bytes())
    (source / "cut.jsonl.gz").write_bytes(whole[: len(whole) // 2])
    (source / "run.jsonl").write_bytes((FIXTURES / "valid" / "agui-sdk-full.jsonl").read_bytes())
    rows = {r["path"]: r for r in compact_tree(str(source), str(tmp_path / "m"))}
    assert rows["cut.jsonl.gz"]["status"] == "error", rows
    assert rows["cut.jsonl.gz"]["mirrored"] == "copied", rows
    assert (tmp_path / "m" / "cut.jsonl.gz").read_bytes() == whole[: len(whole) // 2]
    assert rows["run.jsonl"]["status"] == "compacted", rows


def test_hidden_files_are_copied_as_the_command_line_mirrors_them(tmp_path):
    # A walk passes over hidden files and folders: `compact DIR --mirror` copies them as they
    # are, and the mirror compacted them.
    source = tmp_path / "tree"
    (source / ".cache").mkdir(parents=True)
    stream = (FIXTURES / "valid" / "agui-sdk-full.jsonl").read_bytes()
    for rel in (".hidden.jsonl", ".cache/run.jsonl", "run.jsonl"):
        (source / rel).write_bytes(stream)
    rows = {r["path"]: r for r in compact_tree(str(source), str(tmp_path / "m"))}
    ran = cli("compact", str(source), "--mirror", "-o", str(tmp_path / "cli"), cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    for rel in (".hidden.jsonl", ".cache/run.jsonl"):
        assert rows[rel]["status"] == "skipped", rows
        assert (tmp_path / "m" / rel).read_bytes() == stream
        assert (tmp_path / "cli" / rel).read_bytes() == stream
    assert rows["run.jsonl"]["status"] == "compacted", rows
    assert (tmp_path / "m" / "run.jsonl").read_bytes() == (tmp_path / "cli" / "run.jsonl").read_bytes()


def test_a_temp_file_a_killed_write_left_is_not_mirrored(tmp_path):
    # A write killed before its end leaves its temp file beside its target, half written: the
    # command line's (`.NAME.XXXXXX.tmp`) or this package's (`.NAME.agui-lens-HEX.tmp`). Both
    # mirrors copied it as the user's; both leave it out, and say so.
    source = tmp_path / "tree"
    source.mkdir()
    stream = (FIXTURES / "valid" / "agui-sdk-full.jsonl").read_bytes()
    (source / "run.jsonl").write_bytes(stream)
    temps = (".run.jsonl.aB3xY9.tmp", ".run.jsonl.agui-lens-" + "0f" * 16 + ".tmp")
    for rel in temps:
        (source / rel).write_bytes(stream[: len(stream) // 2])
    (source / ".notes.tmp").write_bytes(b"the user's\n")
    rows = {r["path"]: r for r in compact_tree(str(source), str(tmp_path / "m"))}
    ran = cli("compact", str(source), "--mirror", "-o", str(tmp_path / "cli"), cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    for rel in temps:
        assert rows[rel]["status"] == "skipped", rows
        assert rows[rel]["mirrored"] is None, rows
        assert "temp file" in rows[rel]["reason"], rows
        assert not (tmp_path / "m" / rel).exists()
        assert not (tmp_path / "cli" / rel).exists()
        assert rel.encode() in ran.stderr, ran.stderr
    for mirror in ("m", "cli"):
        assert (tmp_path / mirror / ".notes.tmp").read_bytes() == b"the user's\n"


def test_the_mirror_keeps_each_files_permissions_as_the_command_line_does(tmp_path):
    # The mirror's files were written with a new file's permissions: a private recording
    # (0600) became readable by everyone, an executable lost its +x. `compact --mirror` keeps
    # them; a file replaced in the mirror keeps its own.
    source = tmp_path / "tree"
    source.mkdir()
    stream = (FIXTURES / "valid" / "agui-sdk-full.jsonl").read_bytes()
    files = {"private.jsonl": (stream, 0o600), "creds.txt": (b"token\n", 0o600),
             "replay.sh": (b"#!/bin/sh\n", 0o755), "shared.jsonl": (stream, 0o644)}
    for name, (data, mode) in files.items():
        (source / name).write_bytes(data)
        os.chmod(source / name, mode)
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "shared.jsonl").write_bytes(b"")
    os.chmod(tmp_path / "m" / "shared.jsonl", 0o640)
    rows = {r["path"]: r for r in compact_tree(str(source), str(tmp_path / "m"))}
    assert rows["private.jsonl"]["status"] == "compacted", rows
    ran = cli("compact", str(source), "--mirror", "-o", str(tmp_path / "cli"), cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    mode = lambda path: oct(path.stat().st_mode & 0o777)  # noqa: E731
    for name in ("private.jsonl", "creds.txt", "replay.sh"):
        assert mode(tmp_path / "m" / name) == mode(source / name), name
        assert mode(tmp_path / "m" / name) == mode(tmp_path / "cli" / name), name
    assert mode(tmp_path / "m" / "shared.jsonl") == oct(0o640)


def test_a_name_that_is_no_utf8_is_mirrored_as_the_command_line_mirrors_it(tmp_path):
    # Such a name raised a bare UnicodeEncodeError in the row, and the file (a stream or not)
    # was missing from the mirror.
    source = tmp_path / "tree"
    source.mkdir()
    stream = (FIXTURES / "valid" / "agui-sdk-full.jsonl").read_bytes()
    root = os.fsencode(source)
    for name, data in ((b"run\xff.jsonl", stream), (b"notes\xff.txt", b"a note\n")):
        with open(os.path.join(root, name), "wb") as file:
            file.write(data)
    rows = {r["path"]: r for r in compact_tree(str(source), str(tmp_path / "m"))}
    assert rows[os.fsdecode(b"run\xff.jsonl")]["status"] == "compacted", rows
    assert rows[os.fsdecode(b"notes\xff.txt")]["status"] == "skipped", rows
    ran = cli("compact", str(source), "--mirror", "-o", str(tmp_path / "cli"), cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    mirror, by_cli = os.fsencode(tmp_path / "m"), os.fsencode(tmp_path / "cli")
    assert sorted(os.listdir(mirror)) == sorted(os.listdir(by_cli)) == [b"notes\xff.txt", b"run\xff.jsonl"]
    for name in os.listdir(by_cli):
        with open(os.path.join(mirror, name), "rb") as a, open(os.path.join(by_cli, name), "rb") as b:
            assert a.read() == b.read(), name


def test_a_users_file_in_the_mirror_is_left_as_it_was(tmp_path):
    # A note of the user's where a stream's copy would go (compacted, or refused and copied
    # as it is) was replaced, row "compacted"; the command line refuses it.
    source = tmp_path / "tree"
    source.mkdir()
    (source / "run.jsonl").write_bytes((FIXTURES / "valid" / "agui-sdk-full.jsonl").read_bytes())
    refused = FIXTURES / "invalid" / "framing" / "invalid-json-deep-patch.jsonl"
    (source / "refused.jsonl").write_bytes(refused.read_bytes())
    # A recording cut when it was recorded (copied as it is), and one with its request
    # beside it (written anew beside its copy): neither goes over a note of the user's.
    stream = (FIXTURES / "valid" / "pydantic-ai-full.jsonl").read_bytes()
    (source / "cut.jsonl").write_bytes(stream)
    (source / "cut.jsonl.cut.txt").write_text("stopped by SIGINT after 12 events\n")
    (source / "r.jsonl").write_bytes(stream)
    request = {"threadId": "t", "runId": "r", "messages": [], "tools": [], "context": [],
               "state": {}, "forwardedProps": {}}
    (source / "r.jsonl.request.txt").write_text(
        json.dumps({"recording_size": len(stream), "request": request}))
    mirror = tmp_path / "m"
    mirror.mkdir()
    note = b"my notes, not a stream\n"
    noted = ("run.jsonl", "refused.jsonl", "cut.jsonl", "r.jsonl.request.txt")
    for name in noted:
        (mirror / name).write_bytes(note)
    rows = {r["path"]: r for r in compact_tree(str(source), str(mirror))}
    for name in noted:
        assert (mirror / name).read_bytes() == note, rows
    for name in ("run.jsonl", "refused.jsonl", "cut.jsonl", "r.jsonl"):
        assert rows[name]["status"] == "refused", rows[name]
        assert "left as it was" in rows[name]["reason"], rows[name]
        assert rows[name]["mirrored"] is None, rows[name]
    # The note gone, the mirror fills; a stream there (the run before's) is replaced.
    for name in noted:
        (mirror / name).unlink()
    for _ in range(2):
        rows = {r["path"]: r for r in compact_tree(str(source), str(mirror))}
        assert rows["run.jsonl"]["status"] == "compacted", rows
        assert rows["refused.jsonl"]["mirrored"] == "copied", rows
        assert (mirror / "refused.jsonl").read_bytes() == refused.read_bytes()


def test_a_users_file_where_a_sidecar_goes_is_left_as_it_was(tmp_path):
    # What holds no stream (a JSON sidecar, a note, an empty file) was copied over whatever
    # the mirror held at its place; it goes only where nothing is, an empty file or the same
    # bytes, as the command line's --mirror copies it.
    source = tmp_path / "tree"
    source.mkdir()
    (source / "meta.json").write_text('{"model": "x"}\n')
    (source / "notes.txt").write_text("the tree's notes\n")
    (source / "empty.jsonl").write_bytes(b"")
    mirror = tmp_path / "m"
    mirror.mkdir()
    mine = b"my notes, not a stream\n"
    names = ("meta.json", "notes.txt", "empty.jsonl")
    for name in names:
        (mirror / name).write_bytes(mine)
    rows = {r["path"]: r for r in compact_tree(str(source), str(mirror))}
    for name in names:
        assert (mirror / name).read_bytes() == mine, rows
        assert rows[name]["status"] == "refused", rows[name]
        assert "left as it was" in rows[name]["reason"], rows[name]
    for name in names:
        (mirror / name).unlink()
    for _ in range(2):
        rows = {r["path"]: r for r in compact_tree(str(source), str(mirror))}
        for name in names:
            assert (mirror / name).read_bytes() == (source / name).read_bytes(), rows


def test_nothing_is_written_through_a_link_in_the_mirror(tmp_path):
    # A folder of the mirror that is a link took the outputs of a folder of the tree, and
    # changed files outside the mirror; a file's place that is a link is left too, as the
    # command line's `-o DIR` leaves it.
    source = tmp_path / "tree"
    (source / "sub").mkdir(parents=True)
    stream = (FIXTURES / "valid" / "agui-sdk-full.jsonl").read_bytes()
    (source / "a.jsonl").write_bytes(stream)
    (source / "sub" / "b.jsonl").write_bytes(stream)
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "folder").mkdir(parents=True)
    mine = elsewhere / "mine.jsonl"
    mine.write_bytes((FIXTURES / "valid" / "pydantic-ai-full.jsonl").read_bytes())
    (elsewhere / "folder" / "b.jsonl").write_bytes(mine.read_bytes())
    mirror = tmp_path / "m"
    mirror.mkdir()
    (mirror / "a.jsonl").symlink_to(mine)
    (mirror / "sub").symlink_to(elsewhere / "folder")
    before = {p: p.read_bytes() for p in elsewhere.rglob("*") if p.is_file()}
    rows = {r["path"]: r for r in compact_tree(str(source), str(mirror))}
    for name in ("a.jsonl", "sub/b.jsonl"):
        assert rows[name]["status"] == "refused", rows[name]
        assert "is a link" in rows[name]["reason"], rows[name]
    assert {p: p.read_bytes() for p in elsewhere.rglob("*") if p.is_file()} == before


def test_a_name_with_a_line_break_is_compacted_as_a_file(tmp_path):
    # The path was handed on as text, which the package reads as a stream's own text when it
    # has a line break: the file was skipped as "no AG-UI events (it starts with "/tmp/…")".
    source = tmp_path / "tree"
    source.mkdir()
    (source / "two\nlines.jsonl").write_bytes((FIXTURES / "valid" / "agui-sdk-full.jsonl").read_bytes())
    rows = {r["path"]: r for r in compact_tree(str(source), str(tmp_path / "m"))}
    assert rows["two\nlines.jsonl"]["status"] == "compacted", rows


def test_a_pretty_printed_jsonl_is_mirrored_one_event_per_line(tmp_path):
    # JSON values one after another in a file named .jsonl: the mirror's copy is JSONL, as
    # `compact --in-place` writes it, not one JSON array that line readers cannot take.
    source = tmp_path / "tree"
    source.mkdir()
    plain = FIXTURES / "valid" / "agui-sdk-full.jsonl"
    events = [json.loads(line) for line in plain.read_text().splitlines()]
    (source / "run.jsonl").write_text("".join(json.dumps(e, indent=2) + "\n" for e in events))
    rows = {r["path"]: r for r in compact_tree(str(source), str(tmp_path / "m"))}
    assert rows["run.jsonl"]["status"] == "compacted", rows
    lines = (tmp_path / "m" / "run.jsonl").read_text().splitlines()
    assert lines and all(json.loads(line)["type"] for line in lines), lines[:3]
    assert agui_lens.fold(tmp_path / "m" / "run.jsonl") == agui_lens.fold(plain)


def test_rules_the_caller_makes_errors_hold_in_the_mirror(tmp_path):
    """A stream that fails under the caller's rules (a repeated key made an error) is refused
    and copied as it was, not compacted into one that passes."""
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "repeated.jsonl").write_text("\n".join([
        '{"type":"RUN_STARTED","threadId":"t","runId":"r"}',
        '{"type":"TEXT_MESSAGE_START","messageId":"m","role":"assistant"}',
        '{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"hel","delta":"hel"}',
        '{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"lo there"}',
        '{"type":"TEXT_MESSAGE_END","messageId":"m"}',
        '{"type":"RUN_FINISHED","threadId":"t","runId":"r"}',
    ]) + "\n")
    plain = compact_tree(str(tree), str(tmp_path / "plain"))
    assert [r["status"] for r in plain] == ["compacted"]
    rows = compact_tree(str(tree), str(tmp_path / "held"),
                        rules={"framing/duplicate-key": "deny"})
    assert [r["status"] for r in rows] == ["refused"], rows
    assert "framing/duplicate-key" in rows[0]["reason"]
    assert (tmp_path / "held" / "repeated.jsonl").read_bytes() == (
        tree / "repeated.jsonl").read_bytes()
    with pytest.raises(agui_lens.AguiLensError):
        compact_tree(str(tree), str(tmp_path / "bad"), rules={"no/such": "deny"})
