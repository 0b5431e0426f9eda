"""Run the ``uncobench`` entry point in-process and capture what a user would see."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from uncobench_z3.cli import main

__all__ = ["CliResult", "main", "one_line", "reliable_run", "run_cli"]


@dataclass
class CliResult:
    code: int
    out: str
    err: str


INTERRUPTIBLE = "import signal; signal.signal(signal.SIGINT, signal.default_int_handler); "
"""Code a Python child runs first when its test interrupts it (SIGINT): a suite started as a
background job without job control (``pytest ... &`` in a script) inherits SIGINT ignored,
which a child keeps (Python then installs no KeyboardInterrupt, and the test waits on a child
that never stops), as the tests' processes inherit an ignored SIGHUP under ``nohup``."""


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> CliResult:
    capsys.readouterr()
    try:
        main(list(args))
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    else:  # pragma: no cover - main always exits
        code = 0
    captured = capsys.readouterr()
    return CliResult(code, captured.out, captured.err)


def one_line(result: CliResult, code: int = 2) -> str:
    """The one line a refused command printed (exit ``code``, no traceback)."""
    assert result.code == code, (result.out, result.err)
    assert "Traceback" not in result.err + result.out
    lines = [line for line in result.err.strip().splitlines() if line.strip()]
    assert len(lines) == 1, result.err
    return lines[0]


def reliable_run(bench: Path, out: Path) -> Path:
    """Evaluate ``builtin/naive`` on ``bench`` in the Reliable setting into ``out`` (outside a
    test's capsys: for module fixtures)."""
    try:
        main(["eval", str(bench), "--agent", "builtin/naive", "--out", str(out), "--no-progress",
              "--setting", "reliable"])  # fmt: skip
    except SystemExit as exc:
        assert exc.code == 0, exc.code
    return out
