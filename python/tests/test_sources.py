"""Every kind of source reads to the same findings: a path, bytes, text, compressed bytes, an
iterable of dicts or of the official SDK's event models."""

from __future__ import annotations

import gzip
import json
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
