"""The Python package says what the CLI built from the same tree says, on every fixture."""

from __future__ import annotations

import json

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
        assert agui_lens.fold(path) == json.loads(ran.stdout)
    else:
        # The CLI's error is the exception's message.
        with pytest.raises(agui_lens.AguiLensError) as raised:
            agui_lens.fold(path)
        assert ran.stderr.decode().strip() == f"error: {raised.value}"
