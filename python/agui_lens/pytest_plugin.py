"""The pytest plugin (entry point ``pytest11``): fixtures ``assert_agui`` and ``agui_run``.

    def test_agent(agui_run, assert_agui):
        result = agui_run(app, {"threadId": "t", "runId": "r", ...}, path="/agent")
        assert_agui(result)
"""

from __future__ import annotations

import pytest

from . import testing


@pytest.fixture
def assert_agui():
    """``agui_lens.testing.assert_agui``: fails with the human report on a broken stream."""
    return testing.assert_agui


@pytest.fixture
def agui_run():
    """``agui_lens.testing.run_asgi``: runs an ASGI agent in process, returns its checked
    answer."""
    return testing.run_asgi


def pytest_assertrepr_compare(op, left, right):
    """``assert report.ok``-style comparisons of a Report show its findings."""
    from . import Report

    for side in (left, right):
        if isinstance(side, Report) and not side.ok:
            return ["AG-UI stream report:", *str(side).splitlines()]
    return None
