"""Helpers for an agent's test suite: hold a stream to the protocol with ``assert_agui``, and
run an ASGI agent in process with ``run_asgi``. The pytest plugin (``agui_lens.pytest_plugin``)
offers both as fixtures."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from typing import Any, Mapping, Optional

from . import AguiLensError, Checker, Report, check, event_json, events


class AguiAssertionError(AssertionError):
    """A stream broke the protocol; the message is the human report."""

    def __init__(self, report: Report):
        self.report = report
        errors = len(report.errors)
        head = f"the AG-UI stream is not valid ({errors} error{'s' if errors != 1 else ''}"
        head += ")" if report.failure is None else f"; {report.failure})"
        super().__init__(f"{head}\n\n{report}")


def assert_agui(events_or_report: Any, **check_kwargs: Any) -> Report:
    """Fails, with the human report as the message, when the stream has an error (or could
    not be read to its end). Takes a ``Report``, a finished ``Checker``, a ``RunResult``, or
    anything ``agui_lens.check`` takes (with its keyword arguments). Returns the report."""
    if isinstance(events_or_report, RunResult):
        report = events_or_report.report
    elif isinstance(events_or_report, Report):
        report = events_or_report
    elif isinstance(events_or_report, Checker):
        raise TypeError("give the events or their Report: a Checker keeps no human report")
    else:
        report = check(events_or_report, **check_kwargs)
    if not report.ok:
        raise AguiAssertionError(report)
    return report


def _start_of(body: bytes, limit: int = 300) -> str:
    """The start of a body on one line, as an error quotes it."""
    text = " ".join(body[: limit * 4].decode("utf-8", "replace").split())
    return text if len(text) <= limit else text[:limit] + "…"


@dataclass
class RunResult:
    """An agent's answer to one RunAgentInput, read and checked."""

    status_code: int
    content_type: str
    body: bytes
    #: The events as dicts, in the order they came.
    events: list
    #: The body checked against the RunAgentInput that was sent.
    report: Report


def run_asgi(
    app: Any,
    input: Any,
    *,
    path: str = "/",
    headers: Optional[Mapping[str, str]] = None,
    rules: Optional[Mapping[str, str]] = None,
    protocol: Optional[str] = None,
) -> RunResult:
    """POSTs ``input`` (a RunAgentInput: dict, SDK model or JSON text) to ``path`` of an ASGI
    ``app`` in this process (Starlette's ``TestClient``, which needs ``httpx``), asking for
    Server-Sent Events, and checks the answer against what was sent."""
    from starlette.testclient import TestClient

    body = event_json(input).encode("utf-8")
    sent_headers = {"Content-Type": "application/json", "Accept": "text/event-stream"}
    sent_headers.update(headers or {})
    with TestClient(app) as client:
        response = client.post(path, content=body, headers=sent_headers)
    content = response.content
    name = f"POST {path}"
    # Checked as the exchange it was, as a browser capture (HAR) of it is: the status and the
    # Content-Type are judged with the body (a 500 or a JSON answer passed as clean when only
    # the body was checked), and the body against the input sent.
    capture = {
        "log": {
            "version": "1.2",
            "creator": {"name": "agui_lens.testing.run_asgi", "version": "1"},
            "entries": [
                {
                    "request": {
                        "method": "POST",
                        "url": f"http://testserver{path}",
                        "headers": [{"name": k, "value": v} for k, v in sent_headers.items()],
                        "postData": {"mimeType": "application/json", "text": body.decode("utf-8")},
                    },
                    "response": {
                        "status": response.status_code,
                        "statusText": response.reason_phrase,
                        "headers": [{"name": k, "value": v} for k, v in response.headers.items()],
                        "content": {
                            "size": len(content),
                            "mimeType": response.headers.get("content-type", ""),
                            "text": base64.b64encode(content).decode("ascii"),
                            "encoding": "base64",
                        },
                    },
                }
            ],
        }
    }
    try:
        report = check(json.dumps(capture).encode("utf-8"), rules=rules, protocol=protocol, name=name)
    except AguiLensError:
        # No AG-UI stream came back: said as the answer it was (the capture it was checked as
        # is ours, not the caller's), with the status and body for a test that expects it.
        error = AguiLensError(
            f"{name}: the app answered {response.status_code} {response.reason_phrase} "
            f"({response.headers.get('content-type') or 'no content type'}) with no AG-UI "
            f"stream: {_start_of(content)}"
        )
        error.status_code = response.status_code
        error.body = content
        raise error from None
    try:
        # What could be read; the report says what could not.
        parsed = events(content, name=name, skip_unreadable=True)
    except Exception:
        parsed = []
    return RunResult(
        status_code=response.status_code,
        content_type=response.headers.get("content-type", ""),
        body=content,
        events=parsed,
        report=report,
    )
