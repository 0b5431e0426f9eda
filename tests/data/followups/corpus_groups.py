"""What the follow-up generators know about a group's defects (shared by both generators).

Only the group's *data* is used - names, labels, synonyms, contexts, the defect's first
reply - never the interpreter, so a generator cannot lean on how messages are read.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
GROUPS = HERE / "groups.jsonl"


@dataclass(frozen=True)
class Target:
    """One defect to write follow-ups to."""

    group: str
    setting: str
    kind: str
    role: str
    other_roles: tuple[str, ...]
    fact_type: str
    candidate: str
    """the designated candidate's full name ("" for Missed)"""
    others: tuple[str, ...]
    """the other candidates' names"""
    label: str
    synonyms: tuple[str, ...]
    key: str
    required: str
    given: str
    """the context the misaligned first reply named ("" otherwise)"""
    other_facts: tuple[str, ...]
    """labels of the role's other facts"""
    members: tuple[str, ...]
    low: str
    high: str
    options: tuple[str, ...]
    threshold: str
    """a value a condition compares the fact with ("" when none)"""
    person: bool


def load_targets(limit: int | None = None) -> list[Target]:
    out = []
    for line in GROUPS.read_text(encoding="utf-8").splitlines()[:limit]:
        group = json.loads(line)
        spec = group["spec"]
        names = {c["id"]: c["name"] for c in spec["candidates"]}
        facts = {f["key"]: f for f in spec["facts"]}
        person = all(len(n.split()) >= 2 and n.split()[0][0].isupper() for n in names.values())
        for setting in group["settings"]:
            if setting["name"] in ("reliable", "mixed") or not setting.get("available", True):
                continue
            for defect in setting.get("defects", []):
                role = defect["role"]
                roles = tuple(r["id"] for r in spec["roles"] if r["id"] != role)
                if defect["kind"] == "missed":
                    out.append(
                        Target(
                            group["id"],
                            setting["name"],
                            "missed",
                            role,
                            roles,
                            "role",
                            "",
                            tuple(names.values()),
                            "",
                            (),
                            "",
                            "",
                            "",
                            (),
                            (),
                            "",
                            "",
                            (),
                            "",
                            person,
                        )
                    )
                    continue
                fact = facts[defect["fact"]]
                cid = defect["candidates"][0]
                given = next(
                    (
                        s["context"]
                        for s in defect["first_reply"]
                        if s["candidate"] == cid and s["context"] != fact["context"]
                    ),
                    "",
                )
                stated = next(s for s in defect["first_reply"] if s["candidate"] == cid)
                threshold = next(
                    (
                        str(c["value"])
                        for c in spec["conditions"]
                        if c["fact"] == fact["key"] and not isinstance(c["value"], list)
                    ),
                    "",
                )
                out.append(
                    Target(
                        group=group["id"],
                        setting=setting["name"],
                        kind=defect["kind"],
                        role=role,
                        other_roles=roles,
                        fact_type=fact["type"],
                        candidate=names[cid],
                        others=tuple(n for c, n in names.items() if c != cid),
                        label=fact["label"],
                        synonyms=tuple(fact.get("synonyms") or ()),
                        key=fact["key"],
                        required=fact["context"],
                        given=given,
                        other_facts=tuple(
                            f["label"]
                            for f in spec["facts"]
                            if f["owner"] == role and f["key"] != fact["key"]
                        ),
                        members=tuple(fact.get("values") or ()),
                        low=str(stated.get("low", "")),
                        high=str(stated.get("high", "")),
                        options=tuple(str(o) for o in stated.get("options") or ()),
                        threshold=threshold,
                        person=person,
                    )
                )
    return out


def first_name(name: str) -> str:
    return name.split()[0]


def last_name(name: str) -> str:
    return name.split()[-1]


def typo(word: str, shift: int = 0) -> str:
    """Swap two letters inside the longest word of a phrase (a keyboard slip)."""
    words = word.split()
    longest = max(range(len(words)), key=lambda i: len(words[i]))
    w = words[longest]
    if len(w) < 7:
        return word
    i = 2 + shift % max(1, len(w) - 4)
    words[longest] = w[:i] + w[i + 1] + w[i] + w[i + 2 :]
    return " ".join(words)
