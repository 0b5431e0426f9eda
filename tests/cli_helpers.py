"""Run the ``uncobench`` entry point in-process and capture what a user would see."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from uncobench_z3.cli import main

__all__ = ["CliResult", "main", "run_cli"]


@dataclass
class CliResult:
    code: int
    out: str
    err: str


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
