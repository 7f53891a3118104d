"""The Python package says what the CLI built from the same tree says, on every fixture."""

from __future__ import annotations

import json
import warnings

import pytest

import agui_lens
from conftest import STREAMS, cli, fixture_id


@pytest.mark.parametrize("path", STREAMS, ids=fixture_id)
def test_check_matches_cli(path, empty_dir):
    report = agui_lens.check(path)
    ran = cli("check", "--format", "json", str(path), cwd=empty_dir)
    assert ran.returncode in (0, 1), ran.stderr.decode()
    expected = json.loads(ran.stdout)
    assert json.loads(report.to_json()) == expected
    # The same findings as objects: rule, line, message, in the CLI's order.
    assert [(d.rule, d.severity, d.line, d.event_index, d.message, d.help) for d in report.diagnostics] == [
        (d["rule"], d["severity"], d["line"], d["event_index"], d["message"], d["help"])
        for d in expected["diagnostics"]
    ]
    assert report.ok == (ran.returncode == 0)
    # What the report says that is no finding (a run that ended in RUN_ERROR), as a list too.
    assert report.remarks == expected["files"][0].get("remarks", [])
    assert len(report.errors) == expected["summary"]["errors"]
    assert len(report.warnings) == expected["summary"]["warnings"]


@pytest.mark.parametrize("path", STREAMS, ids=fixture_id)
def test_human_report_matches_cli(path, empty_dir):
    ran = cli("check", "--color", "never", str(path), cwd=empty_dir)
    assert str(agui_lens.check(path)) == ran.stdout.decode()


@pytest.mark.parametrize("path", STREAMS, ids=fixture_id)
def test_fold_matches_cli(path, empty_dir):
    ran = cli("fold", str(path), cwd=empty_dir)
    if ran.returncode == 0:
        # What the CLI warns of on stderr comes as warnings, word for word.
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            assert agui_lens.fold(path) == json.loads(ran.stdout)
        assert [f"warning: {w.message}" for w in said] == ran.stderr.decode().splitlines()
        assert all(w.category is agui_lens.AguiLensWarning for w in said)
    else:
        # The CLI's error is the exception's message.
        with pytest.raises(agui_lens.AguiLensError) as raised:
            agui_lens.fold(path)
        assert ran.stderr.decode().strip() == f"error: {raised.value}"


RULE_FLAGS = {"--deny": "deny", "--warn": "warn", "--allow": "allow", "--note": "note"}


def rule_args(path):
    """The rule levels a fixture's `.args` sets, if that is all it sets."""
    args_file = path.with_suffix(".args")
    if not args_file.exists():
        return None
    words = args_file.read_text().split()
    pairs = list(zip(words[::2], words[1::2]))
    if not pairs or any(flag not in RULE_FLAGS for flag, _ in pairs):
        return None
    return words, {selector: RULE_FLAGS[flag] for flag, selector in pairs}


WITH_RULES = [p for p in STREAMS if rule_args(p)]


def test_some_fixtures_set_rules():
    assert WITH_RULES


@pytest.mark.parametrize("path", WITH_RULES, ids=fixture_id)
def test_rules_match_cli_flags(path, empty_dir):
    words, rules = rule_args(path)
    ran = cli("check", "--format", "json", *words, str(path), cwd=empty_dir)
    with_rules = agui_lens.check(path, rules=rules)
    assert json.loads(with_rules.to_json()) == json.loads(ran.stdout)
    # The levels change what is found.
    assert with_rules.to_json() != agui_lens.check(path).to_json()


@pytest.mark.parametrize("protocol", ["1.0", "1.1", "0.x"])
@pytest.mark.parametrize(
    "path", [p for p in STREAMS if "version" in p.parts or "thinking" in p.name], ids=fixture_id
)
def test_protocol_matches_cli_flag(path, protocol, empty_dir):
    ran = cli("check", "--format", "json", "--protocol", protocol, str(path), cwd=empty_dir)
    assert json.loads(agui_lens.check(path, protocol=protocol).to_json()) == json.loads(ran.stdout)


def test_a_recorded_exchange_checks_as_the_cli_checks_it(tmp_path, empty_dir):
    """The files of an exchange `proxy --record` recorded are checked as the CLI checks them:
    the stream as the answer to the request beside it (its state the baseline of the deltas),
    the recorded findings of the exchange itself, and a failure to reach the agent."""
    exchange = tmp_path / "rec" / "001"
    exchange.mkdir(parents=True)
    (exchange / "request.json").write_text(
        json.dumps({"threadId": "t", "runId": "r", "state": {"n": 1}, "messages": [],
                    "tools": [], "context": [], "forwardedProps": {}, "protocolVersion": "1.1"})
    )
    events = [
        {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
        {"type": "STATE_DELTA", "delta": [{"op": "replace", "path": "/n", "value": 2}]},
        {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"},
    ]
    (exchange / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    (exchange / "response.raw").write_text("".join(f"data: {json.dumps(e)}\n\n" for e in events))
    (exchange / "findings.jsonl").write_text(json.dumps({
        "rule": "transport/http-status", "severity": "error", "path": "rec/001/response.raw",
        "line": None, "offset": None, "event_index": None, "event_type": None,
        "message": "the agent answered 500 Internal Server Error", "help": None,
        "pointer": None, "keyword": None}) + "\n")
    failed = tmp_path / "rec" / "002"
    failed.mkdir()
    (failed / "request.json").write_text('{"threadId":"t","runId":"r2","messages":[]}')
    (failed / "failure.txt").write_text("exchange 2 (thread t): the upstream could not be reached: refused\n")
    for path in (exchange / "events.jsonl", exchange / "findings.jsonl", failed / "failure.txt"):
        report = agui_lens.check(path)
        ran = cli("check", "--format", "json", str(path), cwd=empty_dir)
        assert json.loads(report.to_json()) == json.loads(ran.stdout), path.name
    stream = agui_lens.check(exchange / "events.jsonl")
    assert [d.rule for d in stream.diagnostics if d.severity != "note"] == []
    assert [d.rule for d in agui_lens.check(exchange / "findings.jsonl").diagnostics] == [
        "transport/http-status"
    ]
    assert "could not be reached" in (agui_lens.check(failed / "failure.txt").failure or "")


def test_a_long_file_of_no_events_is_one_finding_as_in_the_cli(tmp_path, empty_dir):
    # Past the 32 frames held while no event has come, such findings were let out one by
    # one: a report of 40 findings was 40 errors of its own.
    finding = '{"rule":"lifecycle/unterminated-run","severity":"error","path":"x","message":"m"}\n'
    report_file = tmp_path / "report.jsonl"
    report_file.write_text(finding * 40)
    late = tmp_path / "late.jsonl"
    late.write_text("step done\n" * 40 + '{"type":"RUN_STARTED","threadId":"t","runId":"r"}\n')
    for path in (report_file, late):
        ran = cli("check", "--format", "json", str(path), cwd=empty_dir)
        assert json.loads(agui_lens.check(path).to_json()) == json.loads(ran.stdout)
    rules = [d.rule for d in agui_lens.check(report_file).diagnostics]
    assert rules == ["framing/no-events"]
    assert "(40 frames could not be read as events)" in agui_lens.check(report_file).diagnostics[0].message
    late_rules = [d.rule for d in agui_lens.check(late).diagnostics]
    assert late_rules.count("framing/invalid-json") == 40
