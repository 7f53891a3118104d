"""agui-lens from Python: check, fold, compact and compare AG-UI event streams.

Every verdict comes from the Rust library agui-lens-core (the extension module
``agui_lens._agui_lens``); this module only turns Python values into what it reads and its
answers into Python objects.

A *source* is any of:

- a path (``os.PathLike``, or a ``str`` that holds no line break and does not start with
  ``{``, ``[`` or ``data:``): a capture in any format the command line reads (JSONL, JSON,
  SSE, protobuf, a HAR, gzip or zstd);
- ``bytes`` (or ``bytearray``, ``memoryview``), or a ``str`` that is not a path as above: the
  capture's content;
- an iterable of events: dicts, JSON texts, or the official SDK's pydantic models
  (``ag_ui.core``), each one event, in stream order.
"""

from __future__ import annotations

import json
import math
import os
import sys
import tempfile
import warnings
from dataclasses import dataclass
from typing import Any, Iterable, Iterator, Mapping, Optional, Union

from . import _agui_lens
from ._agui_lens import AguiLensError


class AguiLensWarning(UserWarning):
    """What the command line says on stderr and goes on: a browser capture's stream whose
    response was answered with an error status, which no client read."""

__all__ = [
    "AguiLensError",
    "AguiLensWarning",
    "Checker",
    "Compaction",
    "Diagnostic",
    "DiffResult",
    "Report",
    "check",
    "compact",
    "compaction",
    "diff",
    "event_json",
    "events",
    "fold",
]

Source = Union[str, "os.PathLike[str]", bytes, bytearray, memoryview, Iterable[Any]]

# Names the findings of sources that are no file carry, as the command line names stdin "-".
EVENTS_NAME = "<events>"
BYTES_NAME = "<bytes>"


@dataclass(frozen=True)
class Diagnostic:
    """One finding: the fields of ``agui-lens check --format json``, plus the excerpt."""

    rule: str
    severity: str
    message: str
    help: Optional[str]
    path: str
    line: Optional[int]
    offset: Optional[int]
    event_index: Optional[int]
    event_type: Optional[str]
    pointer: Optional[str]
    keyword: Optional[str]
    excerpt: Optional[str]
    subject: Optional[str] = None

    @classmethod
    def _from_record(cls, record: Mapping[str, Any]) -> "Diagnostic":
        return cls(
            rule=record["rule"],
            severity=record["severity"],
            message=record["message"],
            help=record.get("help"),
            path=record["path"],
            line=record.get("line"),
            offset=record.get("offset"),
            event_index=record.get("event_index"),
            event_type=record.get("event_type"),
            pointer=record.get("pointer"),
            keyword=record.get("keyword"),
            excerpt=record.get("excerpt"),
            subject=record.get("subject"),
        )

    def __str__(self) -> str:
        place = self.path if self.line is None else f"{self.path}:{self.line}"
        text = f"{self.severity}[{self.rule}]: {self.message} ({place})"
        if self.help:
            text += f"\n  help: {self.help}"
        return text


class Report:
    """What checking one stream found. ``str(report)`` is the command line's human report
    (without colour); ``report.to_json()`` is ``agui-lens check --format json``."""

    def __init__(self, diagnostics, counts, failure, human, json_text, remarks=()):
        self.diagnostics: list[Diagnostic] = diagnostics
        #: events, errors, warnings, notes and frames, as the command line counts them.
        self.counts: dict = counts
        #: Why the input could not be read to its end, if it could not.
        self.failure: Optional[str] = failure
        #: What the report says of the stream that is no finding (the command line's
        #: ``remark:`` lines): a run that ended in RUN_ERROR, frames left unread under an
        #: allowed rule, a file beside a recording that was left out.
        self.remarks: list[str] = list(remarks)
        self._human = human
        self._json = json_text

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "error"]

    @property
    def warnings(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "warning"]

    @property
    def notes(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "note"]

    @property
    def ok(self) -> bool:
        """No error, and the input was read to its end (what exit status 0 means)."""
        return not self.errors and self.failure is None

    def to_json(self) -> str:
        return self._json

    def __str__(self) -> str:
        return self._human

    def __bool__(self) -> bool:
        return self.ok

    def __repr__(self) -> str:
        return (
            f"<agui_lens.Report ok={self.ok} errors={len(self.errors)} "
            f"warnings={len(self.warnings)} events={self.counts.get('events')}>"
        )


def event_json(event: Any) -> str:
    """One event as the JSON text agui-lens reads: a dict as it is, an SDK model the way the
    SDK's encoder writes it (camelCase aliases, no null fields), a str as given."""
    if isinstance(event, (bytes, bytearray, memoryview)):
        return bytes(event).decode("utf-8", errors="replace")
    if isinstance(event, str):
        return event
    dump = getattr(event, "model_dump", None)
    if callable(dump):
        event = dump(mode="json", by_alias=True, exclude_none=True)
    return json.dumps(event, ensure_ascii=False, separators=(",", ":"))


def _looks_like_content(text: str) -> bool:
    if "\n" in text:
        return True
    stripped = text.lstrip("\ufeff \t\r")
    if not stripped.startswith(("{", "[", "data:")):
        return False
    # A file of that name (`[draft] run.jsonl`, `{id}.jsonl`) is that file: checked as its
    # name, it was a failing stream of one unreadable frame.
    return not os.path.lexists(text)


def _one_line(text: str) -> str:
    """A pretty-printed event put back on one line (events are numbered as lines); a text
    that is no JSON is left as it is, for the checker to report."""
    if "\n" in text or "\r" in text:
        try:
            return json.dumps(json.loads(text), ensure_ascii=False, separators=(",", ":"))
        except ValueError:
            pass
    return text


def _frame(event: Any) -> bytes:
    """One event as the bytes of one frame, on one line. Bytes that are no UTF-8 stay as they
    are and a lone surrogate stays in the text, so that both are reported as the command
    line reports them in a file, not mended or raised."""
    if isinstance(event, (bytes, bytearray, memoryview)):
        raw = bytes(event)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            return raw
        return _one_line(text).encode("utf-8")
    text = _one_line(event_json(event))
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        if isinstance(event, str):
            return text.encode("utf-8", "surrogatepass")
        # A value holding a lone surrogate, written with JSON's escapes (as JSON.stringify
        # writes it), which agui-lens reads as the command line does.
        return json.dumps(json.loads(event_json(event)), separators=(",", ":")).encode("ascii")


def _events_items(events: Iterable[Any]) -> list:
    """Each event as one frame, whatever it holds (an empty item is a frame that is no event,
    as the Checker finds when fed it)."""
    return [_frame(event) for event in events]


def _text_bytes(text: str) -> bytes:
    """A stream given as text, as the bytes a file of it holds: bytes that were no UTF-8 and
    read with ``surrogateescape`` are those bytes again; a lone surrogate is written as UTF-8
    writes no text (``surrogatepass``), so both are reported as in a file, not raised."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        pass
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass")


def _shown(name: str) -> str:
    """A name that is no Unicode (a file's, read with surrogateescape; half of a surrogate
    pair) with U+FFFD for what is not: it names an input in findings, and raised a bare
    UnicodeEncodeError where it was passed on. (Its extension stays: all a walk reads a name
    by, in ``agui_lens.distributed`` too.)"""
    try:
        return name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    except UnicodeEncodeError:
        return name.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


def _source(source: Any, name: Optional[str], entry: Optional[int] = None) -> dict:
    """The keyword arguments that tell the extension what to read."""
    if isinstance(name, str):
        name = _shown(name)
    if entry is not None:
        if isinstance(entry, bool) or not isinstance(entry, int) or entry < 0:
            raise TypeError(f"entry is a HAR entry's index (an int from 0), not {entry!r}")
        kwargs = _source(source, name)
        kwargs["entry"] = entry
        return kwargs
    if isinstance(source, os.PathLike) or (
        isinstance(source, str) and not _looks_like_content(source)
    ):
        path = os.fspath(source)
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        return {"path": path, "name": name}
    if isinstance(source, str):
        return {"data": _text_bytes(source), "name": name or BYTES_NAME}
    if isinstance(source, (bytes, bytearray, memoryview)):
        return {"data": bytes(source), "name": name or BYTES_NAME}
    if isinstance(source, Mapping) or hasattr(source, "model_dump"):
        raise TypeError(
            "a source is a path, bytes, or an iterable of events: wrap a single event in a list"
        )
    try:
        events = iter(source)
    except TypeError:
        raise TypeError(
            f"a source is a path, bytes, or an iterable of events, not {type(source).__name__}"
        ) from None
    return {"data": _events_items(events), "name": name or EVENTS_NAME, "format": "jsonl"}


def _rules(rules: Any) -> list:
    """Rule levels as (selector, level) pairs, in order: from a mapping, or from pairs
    (later ones win, as later flags do on the command line)."""
    if not rules:
        return []
    pairs = rules.items() if isinstance(rules, Mapping) else rules
    try:
        return [(str(selector), str(level)) for selector, level in pairs]
    except (TypeError, ValueError):
        raise TypeError(
            'rules is a mapping of rule or family to level, e.g. {"state/*": "deny"}, '
            "or a list of such pairs"
        ) from None


def _protocol(protocol: Any) -> Optional[str]:
    if protocol is None or isinstance(protocol, str):
        return protocol
    raise TypeError(
        f'protocol is a version as text: "1.1", "1.0" or "0.x", not {type(protocol).__name__}'
    )


def _input_json(input: Any) -> Optional[str]:
    if input is None:
        return None
    if isinstance(input, str):
        return _unicode_input(input)
    if isinstance(input, (bytes, bytearray, memoryview)):
        try:
            return bytes(input).decode("utf-8")
        except UnicodeDecodeError as err:
            raise AguiLensError(
                f"reading the RunAgentInput: it is no UTF-8 text (byte 0x{err.object[err.start]:02x} "
                f"at {err.start}), as JSON must be"
            ) from None
    return _unicode_input(event_json(input))


def _unicode_input(text: str) -> str:
    """The RunAgentInput's text, when it is Unicode: a lone surrogate (a str or a dict's value
    holding one) is said to be what no RunAgentInput may hold (it raised a bare
    UnicodeEncodeError)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as err:
        raise AguiLensError(
            f"reading the RunAgentInput: it holds half of a UTF-16 surrogate pair "
            f"(U+{ord(err.object[err.start]):04X} at {err.start}), which no JSON text sent "
            "as UTF-8 can"
        ) from None
    return text


def check(
    source: Source,
    *,
    input: Any = None,
    protocol: Optional[str] = None,
    rules: Any = None,
    format: Optional[str] = None,
    name: Optional[str] = None,
    entry: Optional[int] = None,
) -> Report:
    """Checks a stream as ``agui-lens check`` does.

    ``input`` is the RunAgentInput the stream answers (a dict, an SDK model or JSON text), as
    ``agui-lens run`` holds a live call to what it sent: its state is the baseline for deltas,
    its tools and messages what the rules know. ``protocol`` is ``--protocol`` ("1.1", "1.0",
    "0.x"); ``rules`` maps selectors (``"state/*"``, ``"lifecycle/event-after-finish"``) to
    levels (``"deny"``, ``"warn"``, ``"note"``, ``"allow"``), applied in order like
    ``--deny``/``--warn``/``--note``/``--allow`` (a list of ``(selector, level)`` pairs works
    too); ``format`` forces ``--input-format``. ``entry`` picks the stream of a browser
    capture (HAR) that holds several, as ``--entry N`` does.
    """
    kwargs = _source(source, name, entry)
    if format is not None:
        kwargs["format"] = format
    result, human, json_text = _agui_lens.check(
        input=_input_json(input), protocol=_protocol(protocol), rules=_rules(rules), **kwargs
    )
    data = json.loads(result)
    file = data["file"]
    counts = {k: file[k] for k in ("frames", "events", "errors", "warnings", "notes")}
    return Report(
        [Diagnostic._from_record(r) for r in data["diagnostics"]],
        counts,
        data["failure"],
        human,
        json_text,
        file.get("remarks", []),
    )


class Checker:
    """Checks a stream as it is produced: ``feed`` each event as it is sent, ``finish`` at its
    end. What it finds is what ``check`` finds on the whole stream, as the stream goes."""

    def __init__(
        self,
        input: Any = None,
        *,
        protocol: Optional[str] = None,
        rules: Any = None,
        name: str = EVENTS_NAME,
    ):
        self._inner = _agui_lens.Checker(
            name=_shown(name) if isinstance(name, str) else name,
            input=_input_json(input),
            protocol=_protocol(protocol),
            rules=_rules(rules),
        )
        self.diagnostics: list[Diagnostic] = []
        self.counts: Optional[dict] = None

    def feed(self, event: Any) -> list[Diagnostic]:
        """Checks the next event (a dict, an SDK model, or its JSON text); returns what it
        found now. Some findings wait for later events (whether a stream holds any event)."""
        found = self._found(self._inner.feed(_frame(event)))
        self.diagnostics.extend(found)
        return found

    def feed_all(self, events: Iterable[Any]) -> Iterator[Any]:
        """Passes every event through unchanged, checking each on the way; finishes at the
        end. For a generator that yields events (an agent's run)."""
        for event in events:
            self.feed(event)
            yield event
        self.finish()

    def finish(self) -> list[Diagnostic]:
        """Ends the stream: what only its end can tell (a run left open)."""
        found, counts = self._inner.finish()
        self.counts = json.loads(counts)
        found = self._found(found)
        self.diagnostics.extend(found)
        return found

    @staticmethod
    def _found(text: str) -> list[Diagnostic]:
        return [Diagnostic._from_record(r) for r in json.loads(text)]

    @property
    def finished(self) -> bool:
        """Whether ``finish`` has run: the stream's end has been checked."""
        return self.counts is not None

    @property
    def ok(self) -> bool:
        """Whether the stream passed: it was finished and nothing found is an error. Before
        ``finish`` it is False, as only the end tells whether a run was left open (an agent
        that raised halfway, a loop left early, never finished it)."""
        return self.finished and not any(d.severity == "error" for d in self.diagnostics)


def events(
    source: Source,
    *,
    format: Optional[str] = None,
    name: Optional[str] = None,
    skip_unreadable: bool = False,
    entry: Optional[int] = None,
) -> list:
    """The events of a stream as dicts, read as every command reads them. A source that holds
    no AG-UI event (an empty file, an error page, a sidecar) raises ``AguiLensError``, as
    ``agui-lens cat`` refuses it: it is no stream, not an empty one. So does a frame that
    cannot be read as an event (not JSON, a line cut off): the list would not be the whole
    stream. ``skip_unreadable=True`` leaves such frames out (``check`` says which they are).
    The events of a captured response answered with an error status are returned as they
    came, with an ``AguiLensWarning`` (as ``agui-lens cat`` warns): no client read them; so are
    SSE frames the official client reads as one (``framing/sse-frames-merged``, where it ends
    the stream), as the events they hold, with an ``AguiLensWarning`` (``cat`` exits 1); so
    are those of a recording with what only the call that recorded it found beside it
    (``FILE.findings.txt``), which the events alone do not carry (``cat`` exits 1). A
    browser capture's stream comes with the request that asked for it, as its first
    RUN_STARTED's ``input`` (where a stream carries a run's RunAgentInput), as ``cat`` writes
    it; ``entry`` picks one of several, as ``--entry N`` does. Numbers are Python's: one past
    a float's range (``1e400``) reads as ``inf``, with an ``AguiLensWarning``, and a long
    decimal is rounded as ``float`` rounds it (``check``/``compact``/``fold`` of the source
    itself keep every digit)."""
    kwargs = _source(source, name, entry)
    if format is not None:
        kwargs["format"] = format
    texts, unreadable, failed, merged = _agui_lens.events(**kwargs)
    if merged is not None:
        warnings.warn(merged, AguiLensWarning, stacklevel=2)
    if failed is not None:
        warnings.warn(
            f"{kwargs.get('name') or kwargs.get('path') or 'the data'}: the agent answered "
            f"{failed}: a client reads none of this stream's events (it fails on the status); "
            "they are returned as they came (agui_lens.check reports it)",
            AguiLensWarning,
            stacklevel=2,
        )
    if unreadable and not skip_unreadable:
        frames = "1 frame" if unreadable == 1 else f"{unreadable} frames"
        raise AguiLensError(
            f"{frames} of {kwargs.get('name') or kwargs.get('path') or 'the data'} could not "
            "be read as events: agui_lens.check says which; skip_unreadable=True leaves them out"
        )
    # A number past a float's range (1e400) is JSON, and Python reads it as inf, which no
    # JSON writes back: fed to check() or compact(), the event was an invalid one (a false
    # red). Said, with where to keep every digit.
    lost = []

    def number(text: str) -> float:
        value = float(text)
        if math.isinf(value):
            lost.append(text)
        return value

    read = [json.loads(text, parse_float=number) for text in texts]
    if lost:
        count = "1 number" if len(lost) == 1 else f"{len(lost)} numbers"
        warnings.warn(
            f"{kwargs.get('name') or kwargs.get('path') or 'the data'}: {count} past a float's "
            f"range ({lost[0][:40]}) read as inf, which JSON cannot hold: an event holding one "
            "is no JSON written back (check, compact and fold read the source itself, every "
            "digit kept)",
            AguiLensWarning,
            stacklevel=2,
        )
    return read


def fold(
    source: Source,
    *,
    thread: Optional[str] = None,
    format: Optional[str] = None,
    name: Optional[str] = None,
    entry: Optional[int] = None,
) -> dict:
    """What a client ends with after applying the stream: what ``agui-lens fold`` prints
    (the thread of the last run, or ``thread``). A source that holds no AG-UI event raises
    ``AguiLensError``. What ``agui-lens fold`` warns of on stderr (a capture answered with
    an error status, frames that are no events, a recording cut when it was recorded) comes
    as an ``AguiLensWarning``. A recording with the request it answers beside it
    (``FILE.request.txt``, a proxy exchange's ``request.json``) starts from the state that
    request sent, as ``agui-lens fold FILE`` does. ``entry``
    picks the stream of a browser capture (HAR) that holds several."""
    kwargs = _source(source, name, entry)
    if format is not None:
        kwargs["format"] = format
    folded, said = _agui_lens.fold(thread=thread, **kwargs)
    _warn(said)
    return json.loads(folded)


def _warn(said: list) -> None:
    """The core's warnings about what was read, as ``AguiLensWarning``s of the caller's call."""
    for message in said:
        warnings.warn(message, AguiLensWarning, stacklevel=3)


def compact(
    source: Source,
    *,
    level: str = "deltas",
    format: Optional[str] = None,
    name: Optional[str] = None,
    drop_unreadable: bool = False,
    rules: Any = None,
) -> bytes:
    """The stream rewritten smaller, as ``agui-lens compact`` writes it to stdout, verified
    the same way (it folds the same and has no new errors, else ``AguiLensError`` says how
    it differs). ``level`` is ``deltas`` or ``snapshot``. A source that holds no AG-UI event,
    or a browser capture (HAR), raises ``AguiLensError``; so does one holding frames that
    cannot be read as events (they would be lost), or chunk events the official client fails
    on (left out, the stream would no longer fail), unless ``drop_unreadable`` is true; and
    so does a recording cut when it was recorded, or with what only the call that recorded it
    found beside it (``FILE.cut.txt``, ``FILE.findings.txt``), as the command skips it. A
    recording with the request it answers beside it (``FILE.request.txt``) is compacted from
    the state that request sent; the request does not go with the bytes returned, which is
    said with an ``AguiLensWarning`` (``compaction`` gives the file to write beside them).
    ``rules`` are the rule levels the stream is checked at, as ``check`` takes them: a rule
    they make an error (``{"framing/duplicate-key": "deny"}``) may not be merged away either,
    else the compaction is refused."""
    kwargs = _source(source, name)
    if format is not None:
        kwargs["format"] = format
    data, note = _agui_lens.compact(
        level=level, drop_unreadable=drop_unreadable, rules=_rules(rules), **kwargs
    )
    if note is not None:
        warnings.warn(note, AguiLensWarning, stacklevel=2)
    return bytes(data)


@dataclass(frozen=True)
class Compaction:
    """What compacting one stream did, counted as ``agui-lens compact`` counts a file.

    ``status`` is ``compacted`` (``data`` holds the verified, smaller stream), ``kept``
    (compacting would have made it larger: ``data`` holds its events as they were read),
    ``skipped`` (no AG-UI event in it, a browser capture, or a recording cut when it was
    recorded or with what only its call found beside it: ``data`` is None) or ``refused``
    (frames that cannot be read as events would be lost, or the verification failed:
    ``data`` is None); ``reason`` says why for the last two. Bytes are counted decompressed,
    as the command counts them; a stream kept as it was counts the same on both sides.
    ``errors`` counts the errors of the stream written, by rule (verification runs every
    rule that reports errors; a compaction never has more of any rule than its original).
    ``kept_deltas`` counts the STATE_DELTAs kept as they were because no state is known before
    them (a client may hold one the history never shows). ``request_file`` is what to write
    beside ``data`` as ``NAME.request.txt`` when the input is a recording with the request it
    answers beside it (``agui-lens run --record``): that request, with the new length, as
    ``agui-lens compact`` writes it beside the file; None otherwise.
    """

    status: str
    reason: Optional[str]
    data: Optional[bytes]
    format: Optional[str]
    events_before: int
    events_after: int
    bytes_before: int
    bytes_after: int
    dropped: int
    unreadable: int
    errors: dict
    kept_deltas: int
    request_file: Optional[str] = None


def compaction(
    source: Source,
    *,
    level: str = "deltas",
    format: Optional[str] = None,
    name: Optional[str] = None,
    drop_unreadable: bool = False,
    compression: Optional[str] = None,
    rules: Any = None,
) -> Compaction:
    """Compacts a stream as ``compact`` does, but tells what became of it instead of raising
    when it holds no AG-UI event or its compaction is refused (see ``Compaction``).
    ``compression`` (``gzip``, ``zstd``, or None for plain) is how ``data`` is written; the
    input's own compression is read whatever it is. Bytes given with a ``name`` are read as
    a file of that name would be (``run.sse`` as SSE). ``data`` is what the command writes to a
    file of the input's name (``compact --in-place``): in the format it was read in, but JSON
    values in a ``.jsonl`` one per line. ``rules`` are as ``compact`` takes them."""
    kwargs = _source(source, name)
    if format is not None:
        kwargs["format"] = format
    data, report = _agui_lens.compact_report(
        level=level,
        drop_unreadable=drop_unreadable,
        compression=compression,
        rules=_rules(rules),
        **kwargs,
    )
    fields = json.loads(report)
    return Compaction(
        status=fields["status"],
        reason=fields["reason"],
        data=None if data is None else bytes(data),
        format=fields["format"],
        events_before=fields["events_before"],
        events_after=fields["events_after"],
        bytes_before=fields["bytes_before"],
        bytes_after=fields["bytes_after"],
        dropped=fields["dropped"],
        unreadable=fields["unreadable"],
        errors=fields["errors"],
        kept_deltas=fields["kept_deltas"],
        request_file=fields["request_file"],
    )


@dataclass(frozen=True)
class DiffResult:
    """Whether two streams mean the same at a level, and the command line's rendering."""

    equal: bool
    level: str
    text: str
    document: dict

    def __str__(self) -> str:
        return self.text

    def __bool__(self) -> bool:
        return self.equal


def diff(a: Source, b: Source, *, level: str = "compact", max_lines: int = 400) -> DiffResult:
    """Compares two streams by meaning, as ``agui-lens diff --level LEVEL A B`` does (ids and
    timestamps aside): ``events`` event by event, ``compact`` (the default, as the command's)
    with each message's deltas merged, however they were split, or ``fold``. ``str()`` of the
    result is what the command prints (without colour); ``.document`` its ``--format json``.
    What the command warns of on stderr comes as an ``AguiLensWarning``."""
    if (
        isinstance(max_lines, bool)
        or not isinstance(max_lines, int)
        or not 0 <= max_lines <= sys.maxsize
    ):
        raise AguiLensError(f"max_lines is how many diff lines to show: 0 or more, not {max_lines!r}")
    with tempfile.TemporaryDirectory(prefix="agui-lens-diff.") as folder:
        paths = []
        labels = []
        for side, source in (("a", a), ("b", b)):
            kwargs = _source(source, None)
            if "path" in kwargs:
                paths.append(kwargs["path"])
                labels.append(kwargs["path"])
                continue
            # Content is compared from a file, as the command compares files: named by
            # its format when it is known, else read by content.
            suffix = ".jsonl" if kwargs.get("format") == "jsonl" else ""
            path = os.path.join(folder, side + suffix)
            data = kwargs["data"]
            with open(path, "wb") as out:
                out.write(data if isinstance(data, bytes) else b"".join(d + b"\n" for d in data))
            paths.append(path)
            labels.append(kwargs["name"])
        try:
            equal, text, document, said = _agui_lens.diff(
                paths[0],
                paths[1],
                _shown(labels[0]),
                _shown(labels[1]),
                level=level,
                max_lines=max_lines,
            )
        except AguiLensError as err:
            # Said of the side's label, not of a temp file that is gone when the caller reads it.
            message = str(err)
            for path, label in zip(paths, labels):
                if path != label:
                    message = message.replace(path, label)
            raise AguiLensError(message) from None
    # A side given as content is read from a temp file, gone by now: it is said by its label.
    for path, label in zip(paths, labels):
        if path != label:
            said = [message.replace(path, label) for message in said]
    _warn(said)
    document = json.loads(document)
    return DiffResult(equal=equal, level=document["level"], text=text, document=document)
