"""The benchmark scripts still run (tiny sizes; their figures are not asserted)."""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


@pytest.mark.parametrize(
    ("script", "args", "expected"),
    [
        (
            "verify_throughput.py",
            ["--specs", "4", "--brute-specs", "1", "--workers", "2"],
            "engine speed-up over fresh solver",
        ),
        (
            "build_throughput.py",
            ["--groups", "3", "--stage-sample", "2", "--workers", "2"],
            "speed-up from workers",
        ),
        ("eval_overhead.py", ["--copies", "1", "--concurrency", "1", "4"], "ratio"),
        (
            "soak.py",
            ["--kills", "1", "--build-kills", "0", "--model-kills", "0", "--groups", "2"],
            "0 lost, 0 duplicated, identical scores",
        ),
        ("report_scale.py", ["--groups", "1", "--samples", "20"], "baseline CPU s"),
    ],
)
def test_benchmark_script_runs(
    script: str,
    args: list[str],
    expected: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr(sys, "argv", [script, *args])
    try:
        runpy.run_path(str(BENCHMARKS / script), run_name="__main__")
    except SystemExit as stopped:
        assert stopped.code in (0, None)
    assert expected in capsys.readouterr().out
