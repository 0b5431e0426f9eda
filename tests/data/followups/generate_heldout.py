"""The held-out split of the follow-up corpus, generated part: generator E.

Written after the rules were frozen for the fourth time (docs/settings.md), with a phrase
inventory disjoint from generators A to D: the structured register of agents that keep
notes - checklists, "Q:" lines, quoted earlier replies, labelled fields. The hand-written
held-out messages are in ``heldout_hand.jsonl``. Run from the repository root:
``python tests/data/followups/generate_heldout.py`` (deterministic; writes heldout.jsonl).
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


def said(t: Target) -> str:
    if t.options:
        shown = ["yes" if o == "True" else "no" if o == "False" else o for o in t.options]
        return " / ".join(shown)
    return f"{t.low}-{t.high}"


MISALIGNED: list[Template] = [
    lambda t, r: (
        f"Checklist for {t.candidate}:\n[x] received {t.label}\n[ ] but it is labelled "
        f"{t.given}; required: {t.required}. Please resend for the required context.",
        True,
        ("checklist", "mismatch"),
        None,
    ),
    lambda t, r: (f"Q: {t.label} of {t.candidate} in the {t.required}?", True, ("q-line",), None),
    lambda t, r: (
        f"> {t.candidate} ... ({t.given})\nThat context is not the one in my brief. "
        f"Please give the {t.required} value.",
        True,
        ("quote", "mismatch"),
        None,
    ),
    lambda t, r: (
        f"Field: {t.label}\nCandidate: {t.candidate}\nContext wanted: {t.required}",
        True,
        ("fields",),
        None,
    ),
    # not targeted
    lambda t, r: (
        f"Checklist for {t.candidate}:\n[x] {t.label} received\n[ ] nothing else "
        "outstanding from you",
        False,
        ("checklist", "generic"),
        None,
    ),
    lambda t, r: (f"Q: {t.label} of {t.others[0]}?", False, ("q-line", "other-candidate"), None),
    lambda t, r: (
        f"Field: {t.label}\nCandidate: {t.candidate}\nContext wanted: {t.given}",
        False,
        ("fields", "other-context"),
        None,
    ),
    lambda t, r: (
        f"> {t.candidate} ... ({t.given})\nNoted, thank you.",
        False,
        ("quote", "generic"),
        None,
    ),
]

INCOMPLETE: list[Template] = [
    lambda t, r: (
        f"Checklist for {t.candidate}:\n[x] received {t.label}\n[ ] exact value still "
        f"missing (you gave {said(t)})",
        True,
        ("checklist", "reference"),
        None,
    ),
    lambda t, r: (
        f"Q: {t.label} of {t.candidate}, exact value as recorded?",
        True,
        ("q-line",),
        None,
    ),
    lambda t, r: (
        f"> {t.candidate}: {said(t)}\nThat is not precise enough for the decision; "
        "please state the exact entry.",
        True,
        ("quote", "reference"),
        None,
    ),
    lambda t, r: (
        f"Field: {t.label}\nCandidate: {t.candidate}\nPrecision needed: exact",
        True,
        ("fields",),
        None,
    ),
    # not targeted
    lambda t, r: (
        f"Q: {t.label} of {t.others[-1]}, exact value as recorded?",
        False,
        ("q-line", "other-candidate"),
        None,
    ),
    lambda t, r: (
        f"Checklist for {t.candidate}:\n[x] {t.label} received",
        False,
        ("checklist", "generic"),
        None,
    ),
    lambda t, r: (
        (
            f"Field: {t.other_facts[0]}\nCandidate: {t.candidate}\nPrecision needed: exact",
            False,
            ("fields", "other-fact"),
            None,
        )
        if t.other_facts
        else None
    ),
    lambda t, r: (f"> {t.candidate}: {said(t)}\nOK, thanks.", False, ("quote", "generic"), None),
]

MISSED: list[Template] = [
    lambda t, r: ("Q: status of my request?", True, ("q-line", "re-request"), None),
    lambda t, r: (
        "[ ] reply to my first request still outstanding",
        True,
        ("checklist", "re-request"),
        None,
    ),
]


def items(targets: list[Target], seed: int = 5) -> Iterator[dict[str, object]]:
    rng = random.Random(seed)
    for t in targets:
        inventory = {"misaligned": MISALIGNED, "incomplete": INCOMPLETE, "missed": MISSED}[t.kind]
        chosen = inventory if t.kind == "missed" else rng.sample(inventory, k=4)
        for template in chosen:
            made = template(t, rng)
            if made is None:
                continue
            message, targeted, styles, focus = made
            yield _line(t, t.role, message, targeted, styles, focus)


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
    (HERE / "heldout.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {len(lines)} follow-ups")


if __name__ == "__main__":
    main()
