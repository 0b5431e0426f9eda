"""The certificates in encodings/: current with the code, and re-checked by cvc5."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

from uncobench_z3.solver import verify_spec
from uncobench_z3.spec import load_spec

ROOT = Path(__file__).resolve().parent.parent
ENCODINGS = ROOT / "encodings"
SOURCES = [
    *sorted(ROOT.glob("examples/*.json")),
    ROOT / "examples/invalid/two_eligible.json",
    ROOT / "examples/invalid/unnecessary_role.json",
]
CERTIFICATES = sorted(ENCODINGS.glob("*/*.smt2"))


def _expected(text: str) -> str:
    match = re.search(r"^; expected: (sat|unsat)$", text, re.MULTILINE)
    assert match, "every certificate states its expected result"
    return match.group(1)


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_committed_certificates_match_the_code(source: Path) -> None:
    spec = load_spec(source)
    certificates: dict[str, str] = {}
    verify_spec(spec, certificates=certificates)
    folder = ENCODINGS / spec.id
    assert sorted(p.stem for p in folder.glob("*.smt2")) == sorted(certificates), (
        "regenerate with: uncobench verify examples/*.json ... --emit-smt2 encodings"
    )
    for name, text in certificates.items():
        assert (folder / f"{name}.smt2").read_text() == text


def test_there_are_certificates_for_every_example() -> None:
    assert len({p.parent.name for p in CERTIFICATES}) == len(SOURCES)


def _cvc5_check(path: Path) -> str:
    cvc5 = pytest.importorskip("cvc5")
    tm = cvc5.TermManager()
    solver = cvc5.Solver(tm)
    symbols = cvc5.SymbolManager(tm)
    parser = cvc5.InputParser(solver, symbols)
    parser.setFileInput(cvc5.InputLanguage.SMT_LIB_2_6, str(path))
    answers = []
    while True:
        command = parser.nextCommand()
        if command.isNull():
            break
        out = command.invoke(solver, symbols)
        if out and out.strip():
            answers.append(out.strip())
    assert len(answers) == 1
    return str(answers[0])


@pytest.mark.skipif(
    importlib.util.find_spec("cvc5") is None, reason="cvc5 (test extra) not installed"
)
@pytest.mark.parametrize("path", CERTIFICATES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_cvc5_agrees_with_every_certificate(path: Path) -> None:
    assert _cvc5_check(path) == _expected(path.read_text())


@pytest.mark.parametrize("path", CERTIFICATES[:12], ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_z3_standalone_agrees(path: Path) -> None:
    import z3

    solver = z3.Solver()
    solver.from_file(str(path))
    assert str(solver.check()) == _expected(path.read_text())
