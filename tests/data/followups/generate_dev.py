"""The development split of the follow-up corpus: generator A (its own phrase inventory).

The interpreter's phrase lists were tuned on this split only. Run from the repository root:
``python tests/data/followups/generate_dev.py`` (deterministic; writes dev.jsonl). Each line:
group, setting, role (the addressee), message, optional focus (the candidate discussed
before), the label ``targeted`` (what the message means, by the rules of docs/settings.md),
the styles it exercises, and the fact type of the defect.
"""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus_groups import HERE, Target, first_name, load_targets, typo

Item = tuple[str, bool, tuple[str, ...], str | None]  # message, targeted, styles, focus
Template = Callable[[Target, random.Random], Item | None]


def name(t: Target, rng: random.Random) -> str:
    if t.person and rng.random() < 0.4:
        return first_name(t.candidate)
    return t.candidate


def fact(t: Target, rng: random.Random) -> str:
    if t.synonyms and rng.random() < 0.4:
        return rng.choice(t.synonyms[:2])
    return t.label


# -- Misaligned -----------------------------------------------------------------------------
MISALIGNED: list[Template] = [
    lambda t, r: (
        f"Could you send {name(t, r)}'s {fact(t, r)} for the {t.required}?",
        True,
        ("question", "polite"),
        None,
    ),
    lambda t, r: (
        f"The {fact(t, r)} you gave for {name(t, r)} is from the {t.given}; I need the "
        f"{t.required} figure.",
        True,
        ("mismatch",),
        None,
    ),
    lambda t, r: (f"{fact(t, r)} for {name(t, r)}, {t.required} please", True, ("terse",), None),
    lambda t, r: (
        f"Please resend {name(t, r)}'s {fact(t, r)}: the {t.required} one, not the {t.given} one.",
        True,
        ("imperative", "negation"),
        None,
    ),
    lambda t, r: (
        f"Wrong period on {name(t, r)}'s {fact(t, r)}, can you fix it?",
        True,
        ("mismatch", "question"),
        None,
    ),
    lambda t, r: (
        f"For all candidates, send the {fact(t, r)} according to the {t.required}.",
        True,
        ("imperative", "all-candidates"),
        None,
    ),
    lambda t, r: (
        (f"What is his {fact(t, r)} in the {t.required}?", True, ("pronoun",), t.candidate)
        if t.person
        else None
    ),
    lambda t, r: (
        f"{t.candidate} {typo(t.label)} for {t.required} pls",
        True,
        ("typo", "terse"),
        None,
    ),
    lambda t, r: (
        (
            f"Please send {name(t, r)}'s {t.other_facts[0]} and {fact(t, r)} ({t.required}).",
            True,
            ("multi-fact",),
            None,
        )
        if t.other_facts
        else None
    ),
    lambda t, r: (
        f"{t.candidate} and {t.others[0]}: {fact(t, r)} for the {t.required}, please.",
        True,
        ("multi-candidate",),
        None,
    ),
    lambda t, r: (
        f"that {fact(t, r).upper()} FOR {name(t, r).upper()} IS THE {t.given.upper()} "
        "ONE, RIGHT? I NEED THE REQUIRED ONE",
        True,
        ("mismatch", "case"),
        None,
    ),
    # not targeted
    lambda t, r: ("Could you double-check your records?", False, ("generic",), None),
    lambda t, r: (f"Can you resend {name(t, r)}'s {fact(t, r)}?", False, ("fact-only",), None),
    lambda t, r: (
        f"What was {name(t, r)}'s {fact(t, r)} in the {t.given}?",
        False,
        ("other-context",),
        None,
    ),
    lambda t, r: (
        f"Please send {t.others[0]}'s {fact(t, r)} for the {t.required}.",
        False,
        ("other-candidate",),
        None,
    ),
    lambda t, r: (
        (f"What is {name(t, r)}'s {t.other_facts[0]}?", False, ("other-fact",), None)
        if t.other_facts
        else None
    ),
    lambda t, r: (f"Are you sure about {name(t, r)}?", False, ("generic", "question"), None),
    lambda t, r: (
        f"I don't need the {t.required} figure; send {name(t, r)}'s {fact(t, r)} from "
        f"the {t.given}.",
        False,
        ("negation", "other-context"),
        None,
    ),
    lambda t, r: (f"Thanks. And {name(t, r)}'s {fact(t, r)} again?", False, ("fact-only",), None),
]


# -- Incomplete -----------------------------------------------------------------------------
def _options(t: Target, r: random.Random) -> Item | None:
    if not t.options:
        return None
    if t.fact_type == "bool":
        return (f"Does {name(t, r)} have the {fact(t, r)}, yes or no?", True, ("options",), None)
    return (
        f"Which is it for {name(t, r)}: {t.options[0]} or {t.options[1]}?",
        True,
        ("options", "question"),
        None,
    )


def _range(t: Target, r: random.Random) -> Item | None:
    if not t.low:
        return None
    return (
        f"You said between {t.low} and {t.high}. What's the actual number for {name(t, r)}?",
        True,
        ("reference",),
        None,
    )


def _threshold(t: Target, r: random.Random) -> Item | None:
    if not t.threshold or t.fact_type not in ("int", "decimal", "date"):
        return None
    return (
        f"Is {name(t, r)}'s {fact(t, r)} at least {t.threshold}?",
        True,
        ("threshold", "question"),
        None,
    )


INCOMPLETE: list[Template] = [
    lambda t, r: (f"What is {name(t, r)}'s exact {fact(t, r)}?", True, ("question",), None),
    lambda t, r: (
        f"Could you give me a precise figure for {name(t, r)}'s {fact(t, r)}?",
        True,
        ("polite",),
        None,
    ),
    _options,
    _range,
    _threshold,
    lambda t, r: (
        f"narrow down the {fact(t, r)} for {name(t, r)}, please",
        True,
        ("imperative", "lowercase"),
        None,
    ),
    lambda t, r: (
        (f"What is her {fact(t, r)} exactly?", True, ("pronoun",), t.candidate)
        if t.person
        else None
    ),
    lambda t, r: (
        f"Please give exact {fact(t, r)} values for all candidates.",
        True,
        ("all-candidates",),
        None,
    ),
    lambda t, r: (f"exact {typo(t.label)} for {name(t, r)}?", True, ("typo", "terse"), None),
    lambda t, r: (
        (
            f"Please send {name(t, r)}'s {t.other_facts[0]} and the exact {fact(t, r)}.",
            True,
            ("multi-fact",),
            None,
        )
        if t.other_facts
        else None
    ),
    # not targeted
    lambda t, r: ("Could you double-check your records?", False, ("generic",), None),
    lambda t, r: (f"Can you resend {name(t, r)}'s {fact(t, r)}?", False, ("fact-only",), None),
    lambda t, r: ("Please be more precise.", False, ("generic",), None),
    lambda t, r: (
        f"What is {t.others[0]}'s exact {fact(t, r)}?",
        False,
        ("other-candidate",),
        None,
    ),
    lambda t, r: (
        (f"What is {name(t, r)}'s exact {t.other_facts[0]}?", False, ("other-fact",), None)
        if t.other_facts
        else None
    ),
    lambda t, r: (f"Is that right for {name(t, r)}?", False, ("generic",), None),
    lambda t, r: (f"Thanks! Anything else on {name(t, r)}?", False, ("generic",), None),
]

MISSED: list[Template] = [
    lambda t, r: ("Hello? Still waiting on your records.", True, ("re-request",), None),
    lambda t, r: ("Please send your records for every candidate.", True, ("imperative",), None),
]


def items(targets: list[Target], seed: int = 1) -> Iterator[dict[str, object]]:
    rng = random.Random(seed)
    for t in targets:
        inventory = {"misaligned": MISALIGNED, "incomplete": INCOMPLETE, "missed": MISSED}[t.kind]
        chosen = inventory if t.kind == "missed" else rng.sample(inventory, k=7)
        for template in chosen:
            made = template(t, rng)
            if made is None:
                continue
            message, targeted, styles, focus = made
            yield _line(t, t.role, message, targeted, styles, focus)
        if t.kind != "missed" and t.other_roles:
            # a targeted-looking message to another colleague is no follow-up to this defect
            message = f"Could you send {t.candidate}'s {t.label} for the {t.required}?"
            yield _line(t, rng.choice(t.other_roles), message, False, ("other-role",), None)


def _line(t: Target, role: str, message: str, targeted: bool, styles: tuple[str, ...],
          focus: str | None) -> dict[str, object]:  # fmt: skip
    line: dict[str, object] = {
        "group": t.group, "setting": t.setting, "role": role, "message": message,
        "targeted": targeted, "styles": list(styles), "fact_type": t.fact_type,
    }  # fmt: skip
    if focus:
        line["focus"] = focus
    return line


def main() -> None:
    targets = [t for t in load_targets() if t.group not in ("mining_supervisor_paper",)]
    lines = [json.dumps(item, ensure_ascii=False) for item in items(targets)]
    (HERE / "dev.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {len(lines)} follow-ups")


if __name__ == "__main__":
    main()
