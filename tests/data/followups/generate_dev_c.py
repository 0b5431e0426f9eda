"""Generator C: the second held-out split, now part of the development split.

Written after the rules were frozen for the second time (at 45e5d82), with a phrase inventory
disjoint from generators A and B: the formal register language-model agents write in. Measured
once as the held-out split (with ``dev_c_hand.jsonl``): precision 0.9930, recall 0.9627
(docs/settings.md lists the errors). The rules were then changed to cover what it found, so
this split became development data too. Run from the repository root:
``python tests/data/followups/generate_dev_c.py`` (writes dev_c.jsonl).
"""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus_groups import HERE, Target, load_targets

Item = tuple[str, bool, tuple[str, ...], str | None]
Template = Callable[[Target, random.Random], Item | None]


def stated(t: Target) -> str:
    if t.options:
        shown = ["yes" if o == "True" else "no" if o == "False" else o for o in t.options]
        return " or ".join(shown)
    return f"{t.low} to {t.high}"


MISALIGNED: list[Template] = [
    lambda t, r: (
        f"Thank you for the records. However, I noticed that {t.candidate}'s {t.label} "
        f"appears to be taken from the {t.given}, whereas the task requires the "
        f"{t.required}. Could you please provide {t.candidate}'s {t.label} from the "
        f"{t.required}?",
        True,
        ("formal", "mismatch"),
        None,
    ),
    lambda t, r: (
        f"**Clarification needed:** the {t.label} you provided for {t.candidate} "
        f"references the {t.given}. Please share the value recorded in the "
        f"{t.required}.",
        True,
        ("formal", "markdown"),
        None,
    ),
    lambda t, r: (
        f"- {t.candidate}: {t.label} ({t.required}); the value you sent was labelled {t.given}",
        True,
        ("bullet",),
        None,
    ),
    lambda t, r: (
        f"1. Please confirm {t.candidate}'s {t.label} according to the {t.required} "
        f"(your reply cited the {t.given}).",
        True,
        ("numbered",),
        None,
    ),
    lambda t, r: (
        f"I require the {t.required} version of the {t.label} for all three candidates, please.",
        True,
        ("formal", "all-candidates"),
        None,
    ),
    lambda t, r: (
        f"Please provide the {t.label} for {t.candidate} as recorded in the "
        f"{t.required}. Thank you.",
        True,
        ("formal",),
        None,
    ),
    # not targeted
    lambda t, r: (
        f"Thank you for the records. Could you please confirm the {t.label} for {t.candidate}?",
        False,
        ("formal", "fact-only"),
        None,
    ),
    lambda t, r: (
        f"Thank you. Could you also provide {t.candidate}'s {t.label} from the {t.given}?",
        False,
        ("formal", "other-context"),
        None,
    ),
    lambda t, r: (
        f"Please verify all of your records for {t.candidate}.",
        False,
        ("formal", "generic"),
        None,
    ),
    lambda t, r: (
        f"Could you please provide {t.others[0]}'s {t.label} as recorded in the {t.required}?",
        False,
        ("formal", "other-candidate"),
        None,
    ),
    lambda t, r: (
        (
            f"To complete my analysis, I need {t.candidate}'s {t.other_facts[0]}.",
            False,
            ("formal", "other-fact"),
            None,
        )
        if t.other_facts
        else None
    ),
    lambda t, r: (
        "I appreciate your help. Is there anything in your records that I might have missed?",
        False,
        ("formal", "generic"),
        None,
    ),
]


def _options(t: Target, r: random.Random) -> Item | None:
    if not t.options or t.fact_type == "bool":
        return None
    return (
        f"Your reply indicates that {t.candidate}'s {t.label} is either {t.options[0]} or "
        f"{t.options[1]}. Which one is recorded?",
        True,
        ("formal", "options"),
        None,
    )


def _bool(t: Target, r: random.Random) -> Item | None:
    if t.fact_type != "bool":
        return None
    return (
        f"Please confirm definitively whether {t.candidate} has the {t.label} (yes/no).",
        True,
        ("formal", "options"),
        None,
    )


def _threshold(t: Target, r: random.Random) -> Item | None:
    if not t.threshold or t.fact_type not in ("int", "decimal", "date"):
        return None
    return (
        f"Could you confirm whether {t.candidate}'s {t.label} is at least {t.threshold}?",
        True,
        ("formal", "threshold"),
        None,
    )


INCOMPLETE: list[Template] = [
    lambda t, r: (
        f"Thank you. The {t.label} for {t.candidate} was given as {stated(t)}. Could "
        "you please provide the exact value?",
        True,
        ("formal", "reference"),
        None,
    ),
    lambda t, r: (
        f"**Follow-up:** for {t.candidate}, the {t.label} is still ambiguous "
        f"({stated(t)}). What is the specific recorded value?",
        True,
        ("formal", "markdown"),
        None,
    ),
    lambda t, r: (
        f"To evaluate the eligibility criteria, I need the precise {t.label} of "
        f"{t.candidate} rather than an approximate range.",
        True,
        ("formal",),
        None,
    ),
    _options,
    _bool,
    _threshold,
    # not targeted
    lambda t, r: (
        f"Thank you for the information about {t.candidate}.",
        False,
        ("formal", "generic"),
        None,
    ),
    lambda t, r: (
        f"Could you please provide {t.candidate}'s {t.label} again?",
        False,
        ("formal", "fact-only"),
        None,
    ),
    lambda t, r: (
        f"Could you provide the exact {t.label} for {t.others[0]}?",
        False,
        ("formal", "other-candidate"),
        None,
    ),
    lambda t, r: ("Could you please be more precise?", False, ("formal", "generic"), None),
    lambda t, r: (
        (
            f"Please provide the exact {t.other_facts[0]} of {t.candidate}.",
            False,
            ("formal", "other-fact"),
            None,
        )
        if t.other_facts
        else None
    ),
]

MISSED: list[Template] = [
    lambda t, r: (
        "I haven't received a response yet. Could you please send the requested records?",
        True,
        ("formal", "re-request"),
        None,
    ),
    lambda t, r: ("Just following up on my previous request.", True, ("re-request",), None),
]


def items(targets: list[Target], seed: int = 3) -> Iterator[dict[str, object]]:
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
            message = (f"Please provide {t.candidate}'s {t.label} as recorded in the "
                       f"{t.required}.")  # fmt: skip
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
    (HERE / "dev_c.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {len(lines)} follow-ups")


if __name__ == "__main__":
    main()
