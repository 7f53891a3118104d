"""Compacting a tree of stored histories on a Dask cluster.

``compact_tree(source, mirror, client=client)`` walks ``source`` (a local folder or any
fsspec URL: ``s3://bucket/histories``, ``memory://runs``, ``file:///data``), and in the
cluster's workers reads each file's bytes through fsspec, compacts and verifies it through
``agui_lens.compaction`` (the Rust core decides everything: what is a stream, what may be
rewritten, whether the result folds the same), and writes the result to the same relative
path under ``mirror``. It returns one row (a dict) per file found; see ``compact_tree``.

Dask is imported only when a client is given, so ``agui_lens`` does not depend on it: install
it with ``pip install 'agui-lens[dask]'``. Without a client the same work runs in this
process, one file after another.
"""

from __future__ import annotations

import os
import pathlib
import posixpath
import stat
import time
import uuid
from typing import Any, Iterable, Mapping, Optional

import agui_lens
from agui_lens import _agui_lens

__all__ = ["COLUMNS", "STATUSES", "compact_tree", "summarize"]

#: What became of a file: ``compacted`` (the mirror holds its verified compacted stream),
#: ``kept`` (compacting would have made it larger: the mirror holds its events as they were
#: read), ``skipped`` (no AG-UI event in it: an empty file, a JSON sidecar, an error body, a
#: binary, a browser capture), ``refused`` (the core would not rewrite it: frames that cannot
#: be read as events would be lost, or the result did not verify), ``error`` (it could not be
#: read or the mirror could not be written).
STATUSES = ("compacted", "kept", "skipped", "refused", "error")

#: The columns of every row, in order.
COLUMNS = (
    "path",
    "status",
    "reason",
    "mirrored",
    "format",
    "events_before",
    "events_after",
    "bytes_before",
    "bytes_after",
    "size_before",
    "size_after",
    "dropped",
    "unreadable",
    "findings",
    "rules",
    "worker",
    "pid",
    "seconds",
)

# Suffixes of the compressions the core writes, as the command line picks them by name.
_COMPRESSION_BY_SUFFIX = {".gz": "gzip", ".gzip": "gzip", ".zst": "zstd", ".zstd": "zstd"}


def compact_tree(
    source: str,
    mirror: str,
    *,
    client: Any = None,
    level: str = "deltas",
    drop_unreadable: bool = False,
    copy_unchanged: bool = True,
    storage_options: Optional[Mapping[str, Any]] = None,
    mirror_storage_options: Optional[Mapping[str, Any]] = None,
    files_per_task: int = 1,
    rules: Any = None,
) -> list:
    """Compacts every file under ``source`` into the same relative path under ``mirror``.

    ``client`` is a ``dask.distributed.Client`` (``Client("tcp://scheduler:8786")`` for a
    cluster, ``Client(LocalCluster())`` for this machine): each file is read, compacted,
    verified and written by a worker, which reaches both trees through fsspec with
    ``storage_options`` (and ``mirror_storage_options``, by default the same). Without a
    client the files are done here, one after another.

    Every file found gets one row; nothing raises for one file's sake. A stream is written
    only once the core has verified its compacted form (same messages and state when folded,
    every run ended the same way, no new error of any rule); the mirror's file is replaced atomically on a local disk (a
    temp file renamed over it) and in one write elsewhere (object stores make a whole object
    visible at once). With ``copy_unchanged`` (the default) a file that is not compacted,
    skipped or refused, is copied byte for byte, so that the mirror holds every file of the
    tree; ``mirrored`` says what the mirror's file holds (``compacted``, ``as read``,
    ``copied``, or None when nothing was written). A link to a file is read as the file it
    leads to; a link to a folder is not entered (a link can lead out of the tree, or around
    in a loop) and gets a ``skipped`` row. Nothing is ever deleted from the mirror, and a
    file there is replaced only by what may go over it: a stream's output over a stream (an
    earlier run's) or an empty file, a copy of what holds no stream only over an empty file
    or the same bytes (a file with the same bytes on a local disk is left alone); anything
    else there, or a link on the way in a local mirror, is left as it was and the row is
    ``refused``.

    A row holds (see ``COLUMNS``): ``path`` (relative to ``source``, with ``/``),
    ``status`` (one of ``STATUSES``) and ``reason``; ``events_before``/``events_after`` and
    ``bytes_before``/``bytes_after`` as ``agui-lens compact`` counts them (bytes
    decompressed; a file kept as it was counts the same on both sides; None where the file
    was not read as a stream); ``size_before``/``size_after``, the stored sizes (compressed
    if the file is); ``dropped`` (chunks the official client fails on, left out with ``drop_unreadable``), ``unreadable`` (frames
    that are no events); ``findings`` (errors left in the stream written) and ``rules``
    (those errors by rule); ``worker`` and ``pid``, where it ran; ``seconds`` it took there.
    ``rules`` are the rule levels the files are checked at, as ``agui_lens.check`` takes them:
    a rule they make an error may not be merged away either (the file is refused instead).

    Rows come sorted by path; ``pandas.DataFrame(rows)`` makes a table of them.
    """
    if files_per_task < 1:
        raise ValueError("files_per_task must be 1 or more")
    # A bad level or rule fails here, not once per file.
    agui_lens.compaction([], level=level, rules=rules)
    rules = agui_lens._rules(rules)
    storage_options = dict(storage_options or {})
    mirror_storage_options = dict(
        storage_options if mirror_storage_options is None else mirror_storage_options
    )
    fs_in, root_in = _filesystem(source, storage_options)
    fs_out, root_out = _filesystem(mirror, mirror_storage_options)
    if _same_fs(fs_in, fs_out):
        out, tree = _resolved(fs_in, root_out, root_in)
        if _inside(out, tree):
            raise ValueError(
                f"the mirror {mirror} is inside the tree {source}: a second run would compact "
                "the mirror too; put it elsewhere"
            )
        if _inside(tree, out):
            # tree/s/run.jsonl would be mirrored onto tree/run.jsonl when the tree is
            # mirror/s: a file of the tree written over by another.
            raise ValueError(
                f"the mirror {mirror} holds the tree {source}: a file of the tree could be "
                "written over by another one's mirror; put it elsewhere"
            )
    found, rows = _walk(fs_in, root_in)
    jobs = [
        (path, rel, posixpath.join(root_out, rel), size)
        for path, rel, size in found
    ]
    # The largest first, so that no worker is left with a big file at the end.
    jobs.sort(key=lambda job: -job[3])
    batches = [jobs[i : i + files_per_task] for i in range(0, len(jobs), files_per_task)]
    settings = {
        "level": level,
        "drop_unreadable": drop_unreadable,
        "copy_unchanged": copy_unchanged,
        "rules": rules,
    }
    if client is None:
        for batch in batches:
            rows.extend(_compact_files(fs_in, fs_out, batch, settings))
    else:
        _check_reachable(client, fs_in, fs_out)
        futures = client.map(
            _compact_files,
            [fs_in] * len(batches),
            [fs_out] * len(batches),
            batches,
            [settings] * len(batches),
            pure=False,
        )
        for done in client.gather(futures):
            rows.extend(done)
    rows.sort(key=lambda row: row["path"])
    return rows


def summarize(rows: Iterable[Mapping[str, Any]]) -> dict:
    """Totals of ``compact_tree``'s rows: files by status, and events and bytes before and
    after over the files the mirror holds as streams (compacted or kept)."""
    totals: dict = {"files": 0, "by_status": {status: 0 for status in STATUSES}}
    for key in ("events_before", "events_after", "bytes_before", "bytes_after"):
        totals[key] = 0
    for row in rows:
        totals["files"] += 1
        totals["by_status"][row["status"]] += 1
        if row["status"] in ("compacted", "kept"):
            for key in ("events_before", "events_after", "bytes_before", "bytes_after"):
                totals[key] += row[key]
    return totals


def _filesystem(url: str, options: Mapping[str, Any]):
    import fsspec.core

    fs, root = fsspec.core.url_to_fs(os.fspath(url), **options)
    return fs, root.rstrip("/") or "/"


def _is_local(fs) -> bool:
    from fsspec.implementations.local import LocalFileSystem

    return isinstance(fs, LocalFileSystem)


def _same_fs(a, b) -> bool:
    return type(a) is type(b) and a.storage_options == b.storage_options


def _resolved(fs, *paths: str) -> list:
    """Paths as the disk finds them (`.` and links resolved) on a local filesystem: a tree
    named another way is the same tree."""
    if not _is_local(fs):
        return list(paths)
    return [os.path.realpath(p) for p in paths]


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _walk(fs, root: str):
    """Every file under ``root``: (path, relative path, stored size), and the rows of what
    is not walked (links to folders, folders that cannot be listed)."""
    files, rows = [], []
    if not fs.isdir(root):
        raise ValueError(f"{root} is not a folder")
    pending = [root]
    while pending:
        folder = pending.pop()
        try:
            entries = fs.ls(folder, detail=True)
        except Exception as err:  # noqa: BLE001 - any filesystem's failure is reported
            rows.append(_row(_relative(folder, root), "error", f"listing it failed: {err}"))
            continue
        for entry in entries:
            path = entry["name"].rstrip("/")
            if path == folder:
                continue
            rel = _relative(path, root)
            kind = entry.get("type")
            if entry.get("islink") and kind not in ("file", "directory"):
                # A local listing does not follow links: what one leads to is asked for.
                try:
                    kind = fs.info(path).get("type")
                    entry = {**entry, "size": fs.size(path)}
                except (OSError, ValueError):
                    kind = None
            if kind == "directory":
                if entry.get("islink"):
                    rows.append(_row(rel, "skipped", "a link to a folder: not entered"))
                else:
                    pending.append(path)
            elif kind == "file" and _temp_file_of_ours(posixpath.basename(path)):
                rows.append(_row(rel, "skipped", TEMP_FILE))
            elif kind == "file":
                files.append((path, rel, entry.get("size")))
            elif entry.get("islink"):
                rows.append(_row(rel, "error", "a link that leads nowhere"))
            else:
                rows.append(_row(rel, "skipped", f"not a regular file ({kind})"))
    return files, rows


TEMP_FILE = (
    "a temp file of an agui-lens write that has not ended (killed before its file was put "
    "in place, or under way now): not copied"
)


def _temp_file_of_ours(name: str) -> bool:
    """Whether ``name`` is one a write of ours gives its temp file: the command line's
    ``.NAME.XXXXXX.tmp``, or ``.NAME.agui-lens-HEX.tmp`` as :func:`_write` names it."""
    if not (name.startswith(".") and name.endswith(".tmp")):
        return False
    stem, _, random = name[1:-4].rpartition(".")
    if not stem:
        return False
    if random.startswith("agui-lens-"):
        digits = random[len("agui-lens-") :]
        return len(digits) == 32 and all(c in "0123456789abcdef" for c in digits)
    return len(random) == 6 and random.isascii() and random.isalnum()


def _relative(path: str, root: str) -> str:
    if path == root:
        return "."
    return path[len(root.rstrip("/")) + 1 :] if _inside(path, root) else path


def _row(rel: str, status: str, reason: Optional[str] = None, **fields) -> dict:
    row = dict.fromkeys(COLUMNS)
    row.update(path=rel, status=status, reason=reason, findings=0, rules={})
    row.update(fields)
    return row


def _where() -> tuple:
    try:
        from distributed import get_worker

        address = get_worker().address
    except (ImportError, ValueError):
        address = "local"
    return address, os.getpid()


def _compact_files(fs_in, fs_out, batch, settings) -> list:
    """In a worker: compacts each (source path, relative path, mirror path, size)."""
    worker, pid = _where()
    rows = []
    for path, rel, out, size in batch:
        started = time.perf_counter()
        try:
            row = _compact_file(fs_in, fs_out, path, rel, out, size, settings)
        except Exception as err:  # noqa: BLE001 - one file's failure is its row, not the job's
            row = _row(rel, "error", f"{type(err).__name__}: {err}", size_before=size)
        row.update(worker=worker, pid=pid, seconds=time.perf_counter() - started)
        rows.append(row)
    return rows


# What `agui-lens run --record` and the proxy write beside a recording: the request it
# answers, how it was cut, what only its call found.
_REQUEST_SUFFIX = ".request.txt"
_BESIDE_SUFFIXES = (".cut.txt", ".findings.txt", _REQUEST_SUFFIX)


def _recorded_beside(fs, path: str) -> Optional[str]:
    """The first file a recorder wrote beside the stream at ``path``, if any: the file
    itself for ``run --record``'s, or the exchange folder's ``cut.txt`` (the proxy's)."""
    for suffix in _BESIDE_SUFFIXES:
        if fs.isfile(path + suffix):
            return path + suffix
    folder, name = posixpath.split(path)
    if name in ("events.jsonl", "response.raw") and fs.isfile(posixpath.join(folder, "cut.txt")):
        return posixpath.join(folder, "cut.txt")
    return None


def _compact_file(fs_in, fs_out, path, rel, out, size, settings) -> dict:
    link = _link_on_the_way(fs_out, out, rel)
    if link is not None:
        # Written through, it would change a file outside the mirror (as the command line's
        # `-o DIR` leaves such a place).
        return _refused(_row(rel, "skipped", None, size_before=size), link)
    data = fs_in.cat_file(path)
    suffix = posixpath.splitext(out)[1].lower()
    local = _is_local(fs_in)
    if path.endswith(_REQUEST_SUFFIX) and fs_in.isfile(path[: -len(_REQUEST_SUFFIX)]):
        # The request a recording answers goes with it: written with its stream's row (anew
        # beside a compacted stream, with its new length; as it is beside one copied).
        return _row(
            rel,
            "skipped",
            "the request recorded beside its stream: mirrored with it",
            size_before=len(data),
        )
    hidden = any(part.startswith(".") for part in rel.split("/"))
    if hidden or not _agui_lens.walk_reads(agui_lens._shown(posixpath.basename(path))):
        # As `compact DIR --mirror`: a walk reads streams by their names, outside hidden
        # files and folders; any other file (a raw body `run --record-raw` or the proxy
        # recorded, byte for byte, whose findings name its lines) is copied as it is.
        why = "hidden, which a walk passes over" if hidden else "not a name a walk reads as a stream"
        row = _row(rel, "skipped", f"{why}: copied as it is", size_before=len(data))
        other = _other_bytes_there(fs_out, out, data) if settings["copy_unchanged"] else None
        if other is not None:
            return _refused(row, other)
        if settings["copy_unchanged"]:
            _write(fs_out, out, data, (fs_in, path), copy=True)
            _copy_request(fs_in, fs_out, path, out)
            row.update(mirrored="copied", size_after=len(data))
        return row
    beside = None if local else _recorded_beside(fs_in, path)
    if beside is not None:
        # What is beside a recording decides whether and from what state it is compacted;
        # the core reads it from a local disk only: elsewhere the file is left as it is.
        done = None
        row = _row(
            rel,
            "skipped",
            f"{beside} is beside it, which decides how it may be compacted: a recording "
            "is compacted only from a local disk",
            size_before=len(data),
        )
    else:
        done, row = _compacted(data, path, rel, suffix, local, fs_in, settings)
    # A stream (compacted, or refused and copied as it is) goes only where a stream could:
    # a file of the user's there that holds none is left as it was, as the command line
    # leaves it, and the row says so.
    # So does a copy of one (a recording skipped, cut when it was recorded), and the request
    # a recording answers goes only over a request a run or a compaction wrote.
    compacted_out = done is not None and done.data is not None
    users = _users_file(fs_out, out) if compacted_out or settings["copy_unchanged"] else None
    if not compacted_out and settings["copy_unchanged"]:
        name = posixpath.basename(path)
        if _agui_lens.what_no_stream_holds(data, agui_lens._shown(name)) is not None:
            # What holds no stream (a sidecar) goes only where nothing is, an empty file or the
            # same bytes, as the command line copies it.
            users = None
            other = _other_bytes_there(fs_out, out, data)
            if other is not None:
                return _refused(row, other)
    if users is not None:
        users = (
            f"the file at its place in the mirror holds {users}, and this would replace it "
            "with AG-UI events"
        )
    elif (done is not None and done.request_file is not None) or (
        settings["copy_unchanged"] and fs_in.isfile(path + _REQUEST_SUFFIX)
    ):
        users = _users_request(fs_out, out + _REQUEST_SUFFIX)
    if users is not None:
        row.update(
            status="refused",
            reason=f"{users}; it was left as it was (move it, or mirror elsewhere)",
            mirrored=None,
        )
        return row
    if done is None:
        # A file compaction cannot read (a truncated gzip, a capture of several streams) is
        # its row's error, and the mirror still holds it as it is, as the command line's
        # --mirror does: nothing of the tree is missing from the mirror.
        if settings["copy_unchanged"]:
            _write(fs_out, out, data, (fs_in, path), copy=True)
            row.update(mirrored="copied", size_after=len(data))
    elif done.data is not None:
        _write(fs_out, out, done.data, (fs_in, path))
        row.update(
            mirrored="compacted" if done.status == "compacted" else "as read",
            size_after=len(done.data),
        )
    elif settings["copy_unchanged"]:
        _write(fs_out, out, data, (fs_in, path), copy=True)
        row.update(mirrored="copied", size_after=len(data))
    if done is not None and done.request_file is not None:
        _write(
            fs_out,
            out + _REQUEST_SUFFIX,
            done.request_file.encode(),
            (fs_in, path + _REQUEST_SUFFIX),
        )
    elif settings["copy_unchanged"]:
        _copy_request(fs_in, fs_out, path, out)
    return row


def _held(fs, path: str) -> Optional[bytes]:
    """The bytes of the file at ``path`` when it is there and not empty; None otherwise."""
    try:
        if not fs.isfile(path) or fs.size(path) == 0:
            return None
        return fs.cat_file(path)
    except OSError:
        return None


def _link_on_the_way(fs, out: str, rel: str) -> Optional[str]:
    """What is said when ``out`` (``rel`` in the mirror), or a folder of the mirror on the way
    to it, is a link on a local disk: nothing is written through one."""
    if not _is_local(fs) or rel in ("", "."):
        return None
    root = out[: len(out) - len(rel)].rstrip("/")
    at = root
    for part in rel.split("/"):
        at = posixpath.join(at, part)
        if os.path.islink(at):
            return (
                f"{at} is a link (to {os.readlink(at)}): nothing is written through a link "
                f"in {root}"
            )
    return None


def _other_bytes_there(fs, path: str, data: bytes) -> Optional[str]:
    """What is said of the file at ``path`` when a copy of ``data``, which holds no stream,
    may not go there: it holds other bytes (a note of the user's, or an earlier mirror's copy
    of an older file, which cannot be told apart)."""
    held = _held(fs, path)
    if held is None or held == data:
        return None
    return (
        f"{path} holds other bytes, and what goes there holds no stream: a copy goes only where "
        "nothing is, an empty file or the same bytes"
    )


def _refused(row: dict, why: str) -> dict:
    row.update(
        status="refused",
        reason=f"{why}; it was left as it was (move it, or mirror elsewhere)",
        mirrored=None,
    )
    return row


def _users_file(fs, path: str) -> Optional[str]:
    """What the file at ``path`` holds when it is there, not empty, and no AG-UI stream (a
    note of the user's, say); None when a stream may be written there."""
    held = _held(fs, path)
    if held is None:
        return None
    return _agui_lens.what_no_stream_holds(held, agui_lens._shown(posixpath.basename(path)))


def _users_request(fs, path: str) -> Optional[str]:
    """What is said of the file at ``path`` when it is there and holds no request a run or a
    compaction wrote beside a recording (the command line's test of it): a file of the
    user's, which a request written there would replace."""
    held = _held(fs, path)
    if held is None or _agui_lens.request_written_by_a_run(held):
        return None
    return f"{path} holds what no `agui-lens run` wrote there, where the request it answers goes"


def _copy_request(fs_in, fs_out, path: str, out: str) -> None:
    """The request recorded beside a stream copied unchanged, copied with it."""
    if fs_in.isfile(path + _REQUEST_SUFFIX):
        request = path + _REQUEST_SUFFIX
        _write(fs_out, out + _REQUEST_SUFFIX, fs_in.cat_file(request), (fs_in, request), copy=True)


def _compacted(data, path, rel, suffix, local, fs_in, settings):
    """The compaction of one file and its row; None for the compaction when it could not be
    compacted at all (its row is an error that says why)."""
    try:
        # From a local disk the core reads the file itself, and what is beside it.
        # (A path object: a name with a line break in it is no stream's text.)
        source = pathlib.Path(path) if local else data
        done = agui_lens.compaction(
            source,
            name=None if local else fs_in.unstrip_protocol(path),
            level=settings["level"],
            drop_unreadable=settings["drop_unreadable"],
            compression=_COMPRESSION_BY_SUFFIX.get(suffix),
            rules=settings["rules"],
        )
    except agui_lens.AguiLensError as err:
        return None, _row(rel, "error", str(err), size_before=len(data))
    row = _row(
        rel,
        done.status,
        done.reason,
        format=done.format,
        size_before=len(data),
        dropped=done.dropped,
        unreadable=done.unreadable,
        findings=sum(done.errors.values()),
        rules=dict(done.errors),
    )
    if done.status != "skipped":
        row.update(
            events_before=done.events_before,
            events_after=done.events_after,
            bytes_before=done.bytes_before,
            bytes_after=done.bytes_after,
        )
    return done, row


def _write(fs, path: str, data: bytes, like=None, copy: bool = False) -> None:
    """Replaces ``path`` with ``data`` whole: through a temp file synced and renamed over it
    on a local disk, in one write elsewhere. On a local disk a file that already holds
    ``data`` (an earlier run's) is left alone, as the command line leaves it, rather than
    replaced by a copy of itself that every backup of the mirror would copy again.

    Permissions, on a local disk, are the command line's: a file replaced keeps its own; a
    new one made from ``like`` (``(fs, path)`` of the tree's file, when on a local disk) gets
    that file's, as a copy (``copy``) or within those a new file gets (a compaction): a private
    recording stays private in the mirror, an executable stays one."""
    parent = posixpath.dirname(path)
    if _is_local(fs):
        if _holds(path, data):
            return
        os.makedirs(parent, exist_ok=True)
        # At most 150 bytes of the name: with what is added, a long name must still fit.
        stem = posixpath.basename(path).encode("utf-8", "surrogateescape")[:150]
        stem = stem.decode("utf-8", errors="ignore")
        temp = os.path.join(parent, f".{stem}.agui-lens-{uuid.uuid4().hex}.tmp")
        try:
            with open(temp, "wb") as file:
                mode = _mode_for(file, path, like, copy)
                if mode is not None:
                    os.fchmod(file.fileno(), mode)
                file.write(data)
                # On the disk before it is named: a crash leaves the old file or the new one
                # whole, never a renamed empty one (as the command line does).
                file.flush()
                os.fsync(file.fileno())
            os.replace(temp, path)
        except BaseException:
            if os.path.exists(temp):
                os.unlink(temp)
            raise
        return
    if parent:
        fs.makedirs(parent, exist_ok=True)
    fs.pipe_file(path, data)


def _mode_for(temp, path: str, like, copy: bool) -> Optional[int]:
    """The permissions the file written at ``path`` through ``temp`` (open, made with those of
    a new file) is to have; None to keep the new file's (see :func:`_write`)."""
    try:
        if not os.path.islink(path):
            return stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        pass
    if like is None or not _is_local(like[0]):
        return None
    try:
        source = os.stat(like[1])
    except OSError:
        return None
    if not stat.S_ISREG(source.st_mode):
        return None
    if copy:
        return source.st_mode & 0o777
    return os.fstat(temp.fileno()).st_mode & source.st_mode & 0o777


def _holds(path: str, data: bytes) -> bool:
    """Whether the local file ``path`` (not a link) holds exactly ``data``."""
    try:
        if os.path.islink(path) or os.path.getsize(path) != len(data):
            return False
        with open(path, "rb") as file:
            return file.read() == data
    except OSError:
        return False


def _check_reachable(client, fs_in, fs_out) -> None:
    """A memory:// filesystem lives in one process: workers in others would find it empty."""
    from fsspec.implementations.memory import MemoryFileSystem

    if not any(isinstance(fs, MemoryFileSystem) for fs in (fs_in, fs_out)):
        return
    here = os.getpid()
    pids = client.run(os.getpid)
    if any(pid != here for pid in pids.values()):
        raise ValueError(
            "memory:// lives in this process and the cluster's workers run in others: use "
            "LocalCluster(processes=False), or a filesystem every worker reaches"
        )
