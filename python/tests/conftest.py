"""Shared by the tests: the repository's fixtures and the CLI built from the same tree."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures"
CLI = Path(os.environ.get("AGUI_LENS_BIN", ROOT / "target" / "debug" / "agui-lens"))

# Every capture under fixtures/valid and fixtures/invalid (a `.args` file holds the flags a
# fixture is checked with by the Rust tests: the Python API is compared with the CLI run
# without them, on the defaults both share).
STREAMS = sorted(
    p
    for d in ("valid", "invalid")
    for p in (FIXTURES / d).rglob("*")
    if p.is_file() and p.suffix != ".args"
)


def fixture_id(path: Path) -> str:
    return str(path.relative_to(FIXTURES))


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """Runs the CLI in `cwd` (an empty folder: no agui-lens.toml above it changes a level)."""
    assert CLI.exists(), f"build the CLI first: cargo build -p agui-lens ({CLI})"
    return subprocess.run(
        [str(CLI), *args],
        cwd=cwd,
        capture_output=True,
        env={**os.environ, "NO_COLOR": "1"},
    )


@pytest.fixture
def empty_dir(tmp_path: Path) -> Path:
    d = tmp_path / "cwd"
    d.mkdir()
    return d
