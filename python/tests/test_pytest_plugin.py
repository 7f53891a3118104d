"""The pytest plugin: assert_agui and an ASGI agent run in process, against the real
pydantic-ai peer app (crates/agui-lens/tests/peers/pydantic-ai/server.py)."""

from __future__ import annotations

import importlib.util
import json

import pytest

import agui_lens
from agui_lens.testing import AguiAssertionError, RunResult
from conftest import FIXTURES, ROOT

PEER = ROOT / "crates" / "agui-lens" / "tests" / "peers" / "pydantic-ai"


@pytest.fixture(scope="module")
def peer_app():
    spec = importlib.util.spec_from_file_location("pydantic_ai_peer", PEER / "server.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.app


def sent(name: str) -> dict:
    return json.loads((PEER / name).read_text())


def test_the_plugin_is_registered(pytestconfig):
    assert pytestconfig.pluginmanager.hasplugin("agui_lens")


def test_a_clean_run_passes(peer_app, agui_run, assert_agui):
    result = agui_run(peer_app, sent("input.json"))
    assert isinstance(result, RunResult)
    assert result.status_code == 200
    assert result.content_type.startswith("text/event-stream")
    assert result.events[0]["type"] == "RUN_STARTED"
    assert len(result.events) > 20
    report = assert_agui(result)
    assert report.ok and report.counts["events"] == len(result.events)
    # The same events, checked again as dicts, and their fold: the state the tools set.
    assert_agui(result.events, input=sent("input.json"))
    folded = agui_lens.fold(result.events)
    # The peer runs its tools in parallel: whether set_counter's STATE_SNAPSHOT already holds
    # the item add_item appends depends on which ran first, so the state a client ends with is
    # worked out here from the events the server sent: the last snapshot, then each append.
    last = max(i for i, e in enumerate(result.events) if e["type"] == "STATE_SNAPSHOT")
    expected = json.loads(json.dumps(result.events[last]["snapshot"]))
    for event in result.events[last + 1 :]:
        if event["type"] == "STATE_DELTA":
            for op in event["delta"]:
                assert (op["op"], op["path"]) == ("add", "/items/-")
                expected["items"].append(op["value"])
    assert folded["state"] == expected
    assert folded["state"]["counter"] == 42
    assert folded["state"]["items"][0] == "apple"


@pytest.mark.parametrize("name", ["input-text.json", "input-think.json", "input-tool-error.json"])
def test_other_scenarios_pass(peer_app, agui_run, assert_agui, name):
    assert_agui(agui_run(peer_app, sent(name)))


def test_a_broken_stream_fails_with_the_report(peer_app, agui_run, assert_agui):
    result = agui_run(peer_app, sent("input-text.json"))
    events = result.events
    # One event edited: the first content delta names a message that was never started.
    at = next(i for i, e in enumerate(events) if e["type"] == "TEXT_MESSAGE_CONTENT")
    events[at] = {**events[at], "messageId": "not-started"}
    with pytest.raises(AguiAssertionError) as raised:
        assert_agui(events)
    message = str(raised.value)
    assert message.startswith("the AG-UI stream is not valid (")
    assert "error[pairing/text-message]" in message
    assert f'<events>:{at + 1} (event {at}, TEXT_MESSAGE_CONTENT)' in message
    assert '"not-started"' in message
    # The human report as the CLI prints it follows the headline.
    assert str(raised.value.report) in message


def test_assert_agui_takes_reports_and_paths(assert_agui):
    assert assert_agui(FIXTURES / "valid" / "agui-sdk-full.jsonl").ok
    bad = agui_lens.check(FIXTURES / "invalid" / "pairing" / "text-message.jsonl")
    with pytest.raises(AssertionError, match=r"error\[pairing/"):
        assert_agui(bad)


def test_plugin_failure_seen_by_pytest(pytester):
    """A test that uses the fixture fails with the report in pytest's own output."""
    pytester.makepyfile(
        """
        def test_stream(assert_agui):
            assert_agui([{"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "x"}])
        """
    )
    result = pytester.runpytest_inprocess()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*the AG-UI stream is not valid*", "*error?pairing/text-message?*", "*--> <events>:1*"])


_TWO_EVENTS = (
    b'data: {"type":"RUN_STARTED","threadId":"t","runId":"r","protocolVersion":"1.1"}\n\n'
    b'data: {"type":"RUN_FINISHED","threadId":"t","runId":"r"}\n\n'
)


def _answering(status, content_type, body=_TWO_EVENTS):
    """An ASGI app that answers any request with `body` (a valid two-event stream unless
    given), under `status` and `content_type`."""

    async def app(scope, receive, send):
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        while (await receive()).get("more_body"):
            pass
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", content_type.encode())]})
        await send({"type": "http.response.body", "body": body})

    return app


@pytest.mark.parametrize("status, content_type, rule", [
    (500, "text/event-stream", "transport/http-status"),
    (200, "application/json", "transport/content-type"),
])
def test_an_answer_is_judged_with_its_status_and_content_type(agui_run, assert_agui,
                                                               status, content_type, rule):
    # The body alone is a clean stream: the status or the Content-Type makes it an error, as
    # `agui-lens run` finds (both passed when only the body was checked).
    sent = {"threadId": "t", "runId": "r", "messages": [], "tools": [], "context": [],
            "state": {}, "forwardedProps": {}, "protocolVersion": "1.1"}
    result = agui_run(_answering(status, content_type), sent)
    assert result.status_code == status
    assert [d.rule for d in result.report.errors] == [rule], str(result.report)
    with pytest.raises(AguiAssertionError, match=rule.replace("/", ".")):
        assert_agui(result)
    assert_agui(agui_run(_answering(200, "text/event-stream"), sent))


def test_a_refusal_is_said_with_its_status(agui_run):
    # An app that refuses the input (422, JSON) sent no stream: the error names the status and
    # the start of the body, not a browser capture the user never made, and carries the
    # status for a test that expects the refusal.
    app = _answering(422, "application/json", b'{"detail":"runId is missing"}')
    with pytest.raises(agui_lens.AguiLensError) as raised:
        agui_run(app, {"threadId": "t", "messages": []})
    message = str(raised.value)
    assert "422" in message and "runId is missing" in message, message
    assert "HAR" not in message and "capture" not in message, message
    assert raised.value.status_code == 422
    assert raised.value.body == b'{"detail":"runId is missing"}'
