"""The evaluation and report packages re-export a complete ``__all__``."""

from __future__ import annotations

import importlib
import types

import pytest


@pytest.mark.parametrize("name", ["uncobench_z3.evaluation", "uncobench_z3.report"])
def test_all_is_complete(name: str) -> None:
    module = importlib.import_module(name)
    exported = set(module.__all__)
    public = {
        attr
        for attr, value in vars(module).items()
        if not attr.startswith("_")
        and not isinstance(value, types.ModuleType)
        and attr != "annotations"
    }
    assert sorted(public - exported) == []
    assert sorted(n for n in exported if not hasattr(module, n)) == []
    assert len(module.__all__) == len(exported)  # no duplicates
