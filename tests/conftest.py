"""Shared fixtures. Hypothesis runs a bounded number of examples so the suite stays fast."""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "default",
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "thorough",
    max_examples=500,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"


@pytest.fixture(scope="session")
def examples_dir() -> Path:
    return EXAMPLES


@pytest.fixture(scope="session")
def llama_server() -> Iterator[str]:
    """The SmolLM2 llama.cpp server for the ``llama`` tests, started once and stopped at the
    end; skips, saying why, when llama-cpp-python or the weights are not installed."""
    from uncobench_z3.errors import ModelConfigError
    from uncobench_z3.models import find_local_gguf, start_local_server, stop_local_servers
    from uncobench_z3.models.providers import _local

    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("llama-cpp-python is not installed (pip install 'llama-cpp-python[server]')")
    try:
        find_local_gguf("smollm2")
    except ModelConfigError as error:
        pytest.skip(f"SmolLM2 weights not found: {error}")
    base_url = start_local_server("smollm2")
    yield base_url
    stop_local_servers()
    assert "smollm2" not in _local._servers


@pytest.fixture(scope="session")
def report_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Evaluation runs for the report tests (see ``tests/report_runs.py``)."""
    from .report_runs import make_report_runs

    return make_report_runs(tmp_path_factory.mktemp("report-runs"))
