"""The structure check's outcome on mutated specs, frozen: ``outcomes.json`` holds, for every
mutant, the problems found (path, code, message, in order) or a digest of the typed task.

The mutants are made from the examples (valid and invalid) and from the first groups of the
follow-up corpus by seeded random edits: a field set to another value of the same spec or to
a value from a pool (numbers as int, Decimal and text, booleans, dates, lists, nonsense), a
key removed, a list item repeated, dropped or swapped. A fact's bounds and step take values
that are equal but not alike (``1``, ``True``, ``Decimal("1")``, ``"1"``, ``"1.0"``), which
the typed facts remembered by content must tell apart.

``tests/test_structure_recorded.py`` checks them again, in one process (so a mutant is
checked with the facts of the mutants before it remembered). A deliberate change to a check
changes some outcomes: look at them, then record the file again with
``python tests/data/structure/record_outcomes.py`` and say in the commit what changed.
Recorded from main at 09a62c1, before the typed facts were remembered.
"""

from __future__ import annotations

import copy
import hashlib
import json
import random
from decimal import Decimal
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent.parent
OUTCOMES = HERE / "outcomes.json"
SEED = 20261204
MUTANTS_PER_BASE = 60
CORPUS_GROUPS = 12

POOL: tuple[object, ...] = (
    0,
    1,
    -1,
    2,
    7,
    100,
    True,
    False,
    Decimal("1"),
    Decimal("1.0"),
    Decimal("0.5"),
    Decimal("-0"),
    "1",
    "1.0",
    "0.5",
    "0.50",
    "2.5",
    " 3 ",
    "1_000",
    "1e2",
    "NaN",
    "Infinity",
    "abc",
    "",
    "2026-03-01",
    "2026-02-30",
    "%",
    "AUD/hour",
    "hours",
    [],
    [1, 2],
    ["a", "b", "a"],
    [Decimal("0.5"), "2"],
    None,
)


def _bases() -> list[tuple[str, dict[str, Any]]]:
    from uncobench_z3.spec import load_json

    found = [
        (path.relative_to(ROOT).as_posix(), load_json(path))
        for folder in (ROOT / "examples", ROOT / "examples" / "invalid")
        for path in sorted(folder.glob("*.json"))
    ]
    corpus = ROOT / "tests" / "data" / "followups" / "groups.jsonl"
    for number, line in enumerate(corpus.read_text(encoding="utf-8").splitlines()):
        if number >= CORPUS_GROUPS:
            break
        from uncobench_z3.spec._io import parse_json_text

        found.append((f"corpus:{number}", parse_json_text(line, str(corpus))["spec"]))
    return found


def _places(node: Any, trail: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path into ``node`` (dict keys and list indexes), the root left out."""
    found: list[tuple[Any, ...]] = []
    items = node.items() if isinstance(node, dict) else enumerate(node)
    for key, child in items:
        found.append((*trail, key))
        if isinstance(child, dict | list):
            found += _places(child, (*trail, key))
    return found


def _leaves(doc: dict[str, Any]) -> list[object]:
    out: list[object] = []
    for place in _places(doc):
        value = _get(doc, place)
        if not isinstance(value, dict):
            out.append(value)
    return out


def _get(doc: Any, place: tuple[Any, ...]) -> Any:
    for key in place:
        doc = doc[key]
    return doc


def _mutate(doc: dict[str, Any], rng: random.Random) -> str:
    """One edit of ``doc`` in place; what it did."""
    places = [p for p in _places(doc) if p[0] not in ("id", "domain", "title", "question")]
    place = rng.choice(places)
    parent = _get(doc, place[:-1])
    key = place[-1]
    kind = rng.random()
    if isinstance(parent, list) and kind < 0.3:
        if len(parent) > 1 and kind < 0.1:
            del parent[key]
            return f"drop {place}"
        if kind < 0.2:
            parent.insert(key, copy.deepcopy(parent[key]))
            return f"repeat {place}"
        other = rng.randrange(len(parent))
        parent[key], parent[other] = parent[other], parent[key]
        return f"swap {place} {other}"
    if isinstance(parent, dict) and kind < 0.1:
        del parent[key]
        return f"remove {place}"
    if kind < 0.55:
        value = copy.deepcopy(rng.choice(_leaves(doc)))
    else:
        value = copy.deepcopy(rng.choice(POOL))
    parent[key] = value
    return f"set {place} {value!r}"


def _unlike_equals(raw: object) -> list[object]:
    """Values equal to a bound or step ``raw`` but written otherwise."""
    if isinstance(raw, bool) or not isinstance(raw, int | Decimal | str):
        return []
    text = str(raw).strip()
    try:
        number = Decimal(text)
    except ArithmeticError:
        return []
    found: list[object] = [number, text, f" {text}", text + ("0" if "." in text else ".0")]
    if number == number.to_integral_value():
        found.append(int(number))
        if number in (0, 1):
            found.append(bool(number))
    return [value for value in found if type(value) is not type(raw) or value != raw]


def _bound_variants(name: str, base: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Every fact's bound and step of ``base`` written each other way, one at a time."""
    found = []
    for i, fact in enumerate(base.get("facts", [])):
        for field in ("min", "max", "step"):
            for value in _unlike_equals(fact.get(field)):
                doc = copy.deepcopy(base)
                doc["facts"][i][field] = value
                found.append((f"{name} facts[{i}].{field} = {value!r}", doc))
    return found


def mutants() -> list[tuple[str, Any]]:
    """(name, spec) of every mutant that has a spec's shape (the others are refused before
    any structure check), in order; the bases themselves first."""
    from pydantic import ValidationError

    from uncobench_z3.spec import TaskSpec

    rng = random.Random(SEED)
    found: list[tuple[str, Any]] = []
    for name, base in _bases():
        for number in range(MUTANTS_PER_BASE + 1):
            doc = copy.deepcopy(base)
            edits = [_mutate(doc, rng) for _ in range(rng.choice((1, 1, 2, 3)))] if number else []
            try:
                spec = TaskSpec.model_validate(doc)
            except (ValidationError, IndexError, KeyError):
                continue
            found.append((f"{name} #{number}: {'; '.join(edits)}", spec))
        if not name.startswith("corpus:") or name == "corpus:0":
            for variant, doc in _bound_variants(name, base):
                try:
                    found.append((variant, TaskSpec.model_validate(doc)))
                except ValidationError:
                    continue
    return found


def outcome(spec: Any) -> list[list[str]] | str:
    """The problems (path, code, message) or, with none, a digest of the typed task."""
    from uncobench_z3.spec import check_structure

    report = check_structure(spec)
    if report.problems:
        return [[p.path, p.code, p.message] for p in report.problems]
    task = report.task
    assert task is not None
    typed = repr(
        (
            task.candidates,
            task.roles,
            list(task.facts.items()),
            task.conditions,
            task.rule,
            list(task.values.items()),
            [(slot, list(found.items())) for slot, found in task.alternatives.items()],
        )
    )
    return "typed " + hashlib.sha256(typed.encode()).hexdigest()[:24]


def outcomes() -> dict[str, list[list[str]] | str]:
    return {name: outcome(spec) for name, spec in mutants()}


if __name__ == "__main__":
    lines = [f"{json.dumps(k, ensure_ascii=False)}: {json.dumps(v)}" for k, v in outcomes().items()]
    OUTCOMES.write_text("{\n" + ",\n".join(lines) + "\n}\n", encoding="utf-8")
    print(f"wrote {OUTCOMES}")
