"""Generator B: the first held-out split, now part of the development split.

Written after the rules were first frozen, with a phrase inventory disjoint from generator
A's (``generate_dev.py``). Measured once as the held-out split (with ``dev_b_hand.jsonl``):
precision 1.0000, recall 0.9268 (docs/settings.md lists what it missed). The rules were then
changed to cover what it found, so this split became development data, and a new held-out
split was written (``generate_heldout.py``, ``heldout_hand.jsonl``). Run from the
repository root: ``python tests/data/followups/generate_dev_b.py`` (writes dev_b.jsonl).
"""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus_groups import HERE, Target, first_name, last_name, load_targets, typo

Item = tuple[str, bool, tuple[str, ...], str | None]
Template = Callable[[Target, random.Random], Item | None]


def who(t: Target, r: random.Random) -> str:
    if t.person and r.random() < 0.5:
        return r.choice([first_name(t.candidate), last_name(t.candidate)])
    return t.candidate


def what(t: Target, r: random.Random) -> str:
    if t.synonyms and r.random() < 0.6:
        return r.choice(t.synonyms)
    return t.label


def pronoun(t: Target, r: random.Random) -> str:
    return r.choice(["his", "her"])


MISALIGNED: list[Template] = [
    lambda t, r: (
        f"Hi, quick one: for {who(t, r)}, I was after the {what(t, r)} as of the "
        f"{t.required} rather than the {t.given}.",
        True,
        ("polite", "mismatch"),
        None,
    ),
    lambda t, r: (
        f"{t.candidate} / {what(t, r)}. Per {t.required}, if you would.",
        True,
        ("terse",),
        None,
    ),
    lambda t, r: (
        f"Would you mind pulling {who(t, r)}'s {what(t, r)} from the {t.required} instead?",
        True,
        ("polite",),
        None,
    ),
    lambda t, r: (
        f"Hmm, that {what(t, r)} for {who(t, r)} belongs to the {t.given}. Can I get "
        f"the {t.required} version?",
        True,
        ("mismatch",),
        None,
    ),
    lambda t, r: (
        f"re {t.candidate}: need {what(t, r)} ({t.required}), the one you sent was {t.given}",
        True,
        ("terse", "mismatch"),
        None,
    ),
    lambda t, r: (
        f"I'd appreciate {who(t, r)}'s {what(t, r)} under the {t.required}.",
        True,
        ("polite",),
        None,
    ),
    lambda t, r: (
        f"Can we get the {t.required} numbers on {what(t, r)} for everyone?",
        True,
        ("all-candidates",),
        None,
    ),
    lambda t, r: (
        (
            f"And for {pronoun(t, r)} {what(t, r)}, what does the {t.required} show?",
            True,
            ("pronoun",),
            t.candidate,
        )
        if t.person
        else None
    ),
    lambda t, r: (
        f"{typo(t.label, 1)} for {t.candidate} per the {t.required}?",
        True,
        ("typo",),
        None,
    ),
    # not targeted
    lambda t, r: ("Hmm, something looks off. Can you look again?", False, ("generic",), None),
    lambda t, r: (
        f"Would you mind re-sending {who(t, r)}'s {what(t, r)}?",
        False,
        ("fact-only",),
        None,
    ),
    lambda t, r: (
        f"Just checking the {t.given} figure for {who(t, r)}'s {what(t, r)}: can you confirm it?",
        False,
        ("other-context",),
        None,
    ),
    lambda t, r: (
        f"{t.others[1]}'s {what(t, r)} under the {t.required}, please.",
        False,
        ("other-candidate",),
        None,
    ),
    lambda t, r: (
        (f"Also, {who(t, r)}'s {t.other_facts[-1]}?", False, ("other-fact",), None)
        if t.other_facts
        else None
    ),
    lambda t, r: (f"I'm not sure that's right for {who(t, r)}.", False, ("generic",), None),
    lambda t, r: (
        f"Great, thanks. Could you also send the {what(t, r)} for {who(t, r)} again?",
        False,
        ("fact-only", "polite"),
        None,
    ),
]


def _choice(t: Target, r: random.Random) -> Item | None:
    if not t.options:
        return None
    if t.fact_type == "bool":
        return (
            f"Straight answer please: {what(t, r)} for {t.candidate}, yes or no.",
            True,
            ("options",),
            None,
        )
    return (
        f"{t.options[0]}? {t.options[1]}? Which applies to {t.candidate}?",
        True,
        ("options",),
        None,
    )


def _pin(t: Target, r: random.Random) -> Item | None:
    if not t.low:
        return None
    return (
        f"Your {t.low} to {t.high} for {who(t, r)} - can you pin that down?",
        True,
        ("reference",),
        None,
    )


def _meets(t: Target, r: random.Random) -> Item | None:
    if not t.threshold or t.fact_type not in ("int", "decimal"):
        return None
    return (
        f"Does {t.candidate} meet the {t.threshold} mark on {what(t, r)}?",
        True,
        ("threshold",),
        None,
    )


INCOMPLETE: list[Template] = [
    lambda t, r: (
        f"For {who(t, r)}, could you be specific about the {what(t, r)}?",
        True,
        ("polite",),
        None,
    ),
    lambda t, r: (
        f"I can't work with an estimate. {t.candidate}'s {what(t, r)}, as recorded?",
        True,
        ("reference",),
        None,
    ),
    lambda t, r: (f"{t.candidate}: {what(t, r)}, single value please.", True, ("terse",), None),
    _choice,
    _pin,
    _meets,
    lambda t, r: (
        (f"What is {pronoun(t, r)} {what(t, r)} precisely?", True, ("pronoun",), t.candidate)
        if t.person
        else None
    ),
    lambda t, r: (
        f"Exact {what(t, r)} for each candidate, please.",
        True,
        ("all-candidates",),
        None,
    ),
    # not targeted
    lambda t, r: ("Noted, thanks!", False, ("generic",), None),
    lambda t, r: (
        f"Would you mind re-sending {who(t, r)}'s {what(t, r)}?",
        False,
        ("fact-only",),
        None,
    ),
    lambda t, r: ("Can you clarify?", False, ("generic",), None),
    lambda t, r: (
        f"{t.others[0]}: what's the exact {what(t, r)}?",
        False,
        ("other-candidate",),
        None,
    ),
    lambda t, r: (
        (f"Exact {t.other_facts[-1]} for {who(t, r)}?", False, ("other-fact",), None)
        if t.other_facts
        else None
    ),
    lambda t, r: (
        f"Where did the {what(t, r)} for {who(t, r)} come from?",
        False,
        ("generic",),
        None,
    ),
]

MISSED: list[Template] = [
    lambda t, r: ("Are you there?", True, ("re-request",), None),
    lambda t, r: (
        "Following up on my earlier request, when you have a moment.",
        True,
        ("re-request", "polite"),
        None,
    ),
]


def items(targets: list[Target], seed: int = 2) -> Iterator[dict[str, object]]:
    rng = random.Random(seed)
    for t in targets:
        inventory = {"misaligned": MISALIGNED, "incomplete": INCOMPLETE, "missed": MISSED}[t.kind]
        chosen = inventory if t.kind == "missed" else rng.sample(inventory, k=6)
        for template in chosen:
            made = template(t, rng)
            if made is None:
                continue
            message, targeted, styles, focus = made
            yield _line(t, t.role, message, targeted, styles, focus)
        if t.kind != "missed" and t.other_roles:
            message = f"For {t.candidate}, I'd need the {t.label} under the {t.required}."
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
    lines = [json.dumps(item, ensure_ascii=False) for item in items(load_targets())]
    (HERE / "dev_b.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {len(lines)} follow-ups")


if __name__ == "__main__":
    main()
