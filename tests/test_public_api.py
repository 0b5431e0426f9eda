"""Every public subpackage re-exports a complete ``__all__`` (httpx style)."""

from __future__ import annotations

import importlib
import subprocess
import sys
import types

import pytest

PUBLIC = [
    "uncobench_z3",
    "uncobench_z3.errors",
    "uncobench_z3.spec",
    "uncobench_z3.solver",
    "uncobench_z3.settings",
    "uncobench_z3.construct",
    "uncobench_z3.evaluation",
    "uncobench_z3.report",
    "uncobench_z3.models",
]


@pytest.mark.parametrize("name", PUBLIC)
def test_all_is_complete(name: str) -> None:
    module = importlib.import_module(name)
    exported = set(module.__all__)
    public = {
        attr
        for attr, value in vars(module).items()
        if not attr.startswith("_")
        and not isinstance(value, types.ModuleType)
        and attr not in ("annotations",)
    }
    assert sorted(public - exported) == []  # public but not exported
    assert sorted(n for n in exported if not hasattr(module, n)) == []  # exported but missing
    assert len(module.__all__) == len(exported)  # no duplicates


def test_importing_the_package_is_light() -> None:
    """The SDKs and plotting libraries are imported only when used."""
    code = (
        "import sys, uncobench_z3.cli, uncobench_z3.spec, uncobench_z3.solver;"
        "import uncobench_z3.models;"
        "heavy = ('openai', 'anthropic', 'matplotlib', 'datasets');"
        "heavy = [m for m in heavy if m in sys.modules];"
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
