"""Every public subpackage re-exports a complete ``__all__`` (httpx style)."""

from __future__ import annotations

import importlib
import json
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
    "uncobench_z3.stats",
    "uncobench_z3.integrations",
    "uncobench_z3.integrations.inspect",
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


def _loaded(code: str, prefixes: tuple[str, ...]) -> list[str]:
    """The package modules starting with one of ``prefixes`` that ``code`` loads."""
    probe = f"import sys, json; {code}; print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return [m for m in json.loads(out.stdout) if m.startswith(prefixes)]


def test_the_statistics_sit_below_every_other_subpackage() -> None:
    """``stats`` imports nothing else of the package, so construction and evaluation can both
    use it without an import against the layering."""
    loaded = _loaded("import uncobench_z3.stats", ("uncobench_z3.",))
    assert [m for m in loaded if not m.startswith("uncobench_z3.stats")] == []


def test_construction_does_not_import_the_evaluation() -> None:
    """Not even the audit's agreement intervals (they come from ``stats``)."""
    code = "import uncobench_z3.construct as c; c.audit_agreement([])"
    later = ("uncobench_z3.evaluation", "uncobench_z3.report", "uncobench_z3.cli")
    assert _loaded(code, later) == []
