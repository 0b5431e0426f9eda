"""What reading a group line says of mutated groups, frozen: ``refusals.json`` holds, for
every mutant line, the one-line refusal (``str`` of the :class:`SpecReadError`) or, for a
line that is read, its content hash.

The mutants are made from the first groups of the follow-up corpus by seeded random edits,
most of them inside the settings (what the name and reference checks of a group read): a
field set to a name of the same group (a candidate, role, fact or context, of the right
kind or not) or to a value from a pool (numbers as int, Decimal and text, booleans, nulls,
lists, nonsense), a key removed, a list item repeated, dropped or swapped, a stated value
given another form; some edits anywhere in the group.

``tests/test_load_recorded.py`` reads them again in one process. A deliberate change to a
check changes some outcomes: look at them, then record the file again with
``python tests/data/loading/record_refusals.py`` and say in the commit what changed.
Recorded from main at 03fb746, before the reference checks had a fast path.
"""

from __future__ import annotations

import copy
import json
import random
from decimal import Decimal
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent.parent
OUTCOMES = HERE / "refusals.json"
SEED = 20261204
CORPUS_GROUPS = 8
MUTANTS_PER_BASE = 100

POOL: tuple[object, ...] = (
    0,
    1,
    -1,
    7,
    True,
    False,
    None,
    Decimal("1.0"),
    Decimal("0.5"),
    Decimal("1e400"),
    "1",
    "0.5",
    "2026-01-01",
    "",
    "nonsense",
    [],
    ["c1"],
    {},
    {"sign": "fact"},
)
_DECIMAL = "\x00decimal:"


def _bases() -> list[dict[str, Any]]:
    corpus = ROOT / "tests" / "data" / "followups" / "groups.jsonl"
    lines = corpus.read_text(encoding="utf-8").splitlines()[:CORPUS_GROUPS]
    return [json.loads(line, parse_float=Decimal) for line in lines]


def line_of(doc: Any) -> str:
    """``doc`` as one JSON line, its decimals written as JSON numbers (exactly)."""

    def marked(node: Any) -> Any:
        if isinstance(node, Decimal):
            return f"{_DECIMAL}{node}"
        if isinstance(node, dict):
            return {key: marked(value) for key, value in node.items()}
        if isinstance(node, list):
            return [marked(value) for value in node]
        return node

    text = json.dumps(marked(doc), ensure_ascii=False)
    parts = text.split(f'"{json.dumps(_DECIMAL)[1:-1]}')
    return parts[0] + "".join(p.replace('"', "", 1) for p in parts[1:])


def _places(node: Any, trail: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [trail] if trail else []
    if isinstance(node, dict):
        for key, value in node.items():
            out += _places(value, (*trail, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            out += _places(value, (*trail, i))
    return out


def _get(doc: Any, place: tuple[Any, ...]) -> Any:
    for part in place:
        doc = doc[part]
    return doc


def _names(doc: dict[str, Any]) -> list[object]:
    spec = doc["spec"]
    found: list[object] = [c["id"] for c in spec["candidates"]]
    found += [r["id"] for r in spec["roles"]]
    for fact in spec["facts"]:
        found += [fact["key"], fact["context"], *fact.get("other_contexts", [])]
        found += fact.get("values") or []
    found += ["reliable", "misaligned", "incomplete", "missed", "mixed"]
    return found


def _mutate(doc: dict[str, Any], rng: random.Random, names: list[object]) -> str:
    """One random edit of ``doc`` in place (``names``: its base's); what it did, in words."""
    inside = rng.random() < 0.85 and "settings" in doc
    places = _places(doc["settings"], ("settings",)) if inside else _places(doc)
    leaves = [p for p in places if not isinstance(_get(doc, p), dict | list)]
    place = rng.choice(leaves if leaves and rng.random() < 0.7 else places)
    parent = _get(doc, place[:-1])
    last = place[-1]
    move = rng.random()
    if move < 0.45:
        value = rng.choice(names)
    elif move < 0.7:
        value = copy.deepcopy(rng.choice(POOL))
    elif move < 0.8 and isinstance(parent, dict):
        del parent[last]
        return f"{place} removed"
    elif move < 0.9 and isinstance(parent, list):
        choice = rng.choice(("repeat", "drop", "swap"))
        if choice == "repeat":
            parent.insert(last, copy.deepcopy(parent[last]))
        elif choice == "drop":
            del parent[last]
        else:
            other = rng.randrange(len(parent))
            parent[last], parent[other] = parent[other], parent[last]
        return f"{place} {choice}"
    else:  # another form for a stated value
        stated = parent if isinstance(parent, dict) and "candidate" in parent else None
        if stated is None:
            value = rng.choice(names)
        else:
            for key in ("value", "low", "high", "options"):
                stated.pop(key, None)
            form = rng.choice(("value", "low", "high", "range", "options", "none"))
            some = rng.choice(POOL)
            if form in ("value", "low", "high"):
                stated[form] = some
            elif form == "range":
                stated["low"], stated["high"] = some, rng.choice(POOL)
            elif form == "options":
                stated["options"] = [some, rng.choice(names)][: rng.randint(0, 2)]
            return f"{place[:-1]} as {form}"
    parent[last] = value
    return f"{place} = {value!r}"


def mutants() -> list[tuple[str, str]]:
    """``(name, line)`` of every mutant, in a fixed order."""
    rng = random.Random(SEED)
    found: list[tuple[str, str]] = []
    for base in _bases():
        found.append((f"{base['id']}: as it is", line_of(base)))
        names = _names(base)
        for n in range(MUTANTS_PER_BASE):
            doc = copy.deepcopy(base)
            edits = [_mutate(doc, rng, names) for _ in range(rng.choice((1, 1, 2)))]
            found.append((f"{base['id']} #{n}: {'; '.join(edits)}", line_of(doc)))
    return found


def outcome(line: str) -> str:
    """The refusal's one line, or ``read <content hash>``."""
    from uncobench_z3.construct._benchfile import parse_group_line
    from uncobench_z3.errors import SpecReadError
    from uncobench_z3.settings import group_digest

    try:
        group = parse_group_line(line, "mutant:1")
    except SpecReadError as exc:
        return str(exc)
    return f"read {group_digest(group)}"


def main() -> None:
    recorded = {name: outcome(line) for name, line in mutants()}
    OUTCOMES.write_text(json.dumps(recorded, indent=1, ensure_ascii=False) + "\n", "utf-8")
    read = sum(found.startswith("read ") for found in recorded.values())
    print(f"{len(recorded)} mutants: {read} read, {len(recorded) - read} refused")


if __name__ == "__main__":
    main()
