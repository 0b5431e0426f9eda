"""Generator D: the third held-out split, now part of the development split.

Written after the rules were frozen for the third time (at f42c273), with a phrase inventory
disjoint from generators A to C: e-mail register and messaging shorthand. Measured once as
the held-out split (with ``dev_d_hand.jsonl``): precision 0.9981, recall 0.9642
(docs/settings.md lists the errors). The rules were then changed, so this split became
development data too. Run from the repository root:
``python tests/data/followups/generate_dev_d.py`` (writes dev_d.jsonl).
"""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus_groups import HERE, Target, first_name, load_targets

Item = tuple[str, bool, tuple[str, ...], str | None]
Template = Callable[[Target, random.Random], Item | None]

GREETINGS = ("Hi team,", "Dear colleague,", "Hello again,", "Good afternoon,")
SIGN_OFFS = ("Many thanks, J.", "Best regards", "Cheers", "Thanks in advance!")


def mail(r: random.Random, body: str) -> str:
    return f"{r.choice(GREETINGS)}\n{body}\n{r.choice(SIGN_OFFS)}"


def short(t: Target) -> str:
    return first_name(t.candidate) if t.person else t.candidate


def noun(t: Target, r: random.Random) -> str:
    return t.synonyms[-1] if t.synonyms and r.random() < 0.5 else t.label


MISALIGNED: list[Template] = [
    lambda t, r: (
        mail(
            r,
            f"Regarding {t.candidate}: the {noun(t, r)} in your last message "
            f"seems to come from the {t.given}. Our criteria use the {t.required}, "
            "so could you send that value instead?",
        ),
        True,
        ("email", "mismatch"),
        None,
    ),
    lambda t, r: (
        mail(
            r,
            f"One correction please. For {t.candidate} we must use the "
            f"{noun(t, r)} from the {t.required}.",
        ),
        True,
        ("email",),
        None,
    ),
    lambda t, r: (
        f"{short(t).lower()} {noun(t, r).lower()} - {t.required.lower()} pls, "
        f"{t.given.lower()} doesnt count",
        True,
        ("shorthand", "mismatch"),
        None,
    ),
    lambda t, r: (
        f"need {noun(t, r).lower()} for {short(t).lower()} from the {t.required.lower()}",
        True,
        ("shorthand",),
        None,
    ),
    lambda t, r: (
        f"hmm {short(t)}'s {noun(t, r)} = {t.given}?? should be {t.required}",
        True,
        ("shorthand", "mismatch"),
        None,
    ),
    # not targeted
    lambda t, r: (
        mail(
            r,
            f"Thanks for the quick reply on {t.candidate}. Could you resend the "
            f"{noun(t, r)} when you have a minute?",
        ),
        False,
        ("email", "fact-only"),
        None,
    ),
    lambda t, r: (
        mail(r, f"Could you tell me what the {t.given} shows for {t.candidate}'s {noun(t, r)}?"),
        False,
        ("email", "other-context"),
        None,
    ),
    lambda t, r: (
        f"{t.others[-1].lower()} {noun(t, r).lower()} {t.required.lower()}?",
        False,
        ("shorthand", "other-candidate"),
        None,
    ),
    lambda t, r: ("all good, ty", False, ("shorthand", "generic"), None),
    lambda t, r: (
        mail(r, "Please look over what you sent me once more, something may be off."),
        False,
        ("email", "generic"),
        None,
    ),
]


def _which(t: Target, r: random.Random) -> Item | None:
    if not t.options:
        return None
    if t.fact_type == "bool":
        return (
            f"{short(t).lower()} {noun(t, r).lower()} y/n?",
            True,
            ("shorthand", "options"),
            None,
        )
    a, b = t.options[0], t.options[1]
    return (
        mail(
            r,
            f"You listed {a} and {b} as possible for {t.candidate}'s {noun(t, r)}. "
            "Which of the two does your register actually show?",
        ),
        True,
        ("email", "options"),
        None,
    )


def _bound(t: Target, r: random.Random) -> Item | None:
    if not t.low:
        return None
    return (
        f"{t.low}-{t.high} for {short(t).lower()}?? need the exact one",
        True,
        ("shorthand", "reference"),
        None,
    )


INCOMPLETE: list[Template] = [
    lambda t, r: (
        mail(
            r,
            f"Your answer on {t.candidate}'s {noun(t, r)} was a bit vague. Could "
            "you give me the precise value from the record?",
        ),
        True,
        ("email", "reference"),
        None,
    ),
    lambda t, r: (
        f"exact {noun(t, r).lower()} for {short(t).lower()} pls",
        True,
        ("shorthand",),
        None,
    ),
    _which,
    _bound,
    lambda t, r: (
        mail(
            r, f"To close this out I need a definite {noun(t, r)} for {t.candidate}, not a range."
        ),
        True,
        ("email",),
        None,
    ),
    # not targeted
    lambda t, r: (
        mail(r, f"Could you resend {t.candidate}'s {noun(t, r)}?"),
        False,
        ("email", "fact-only"),
        None,
    ),
    lambda t, r: (
        f"{t.others[-1].lower()} exact {noun(t, r).lower()}?",
        False,
        ("shorthand", "other-candidate"),
        None,
    ),
    lambda t, r: ("ok noted", False, ("shorthand", "generic"), None),
    lambda t, r: (
        mail(r, "Is there anything else in your files I should know about?"),
        False,
        ("email", "generic"),
        None,
    ),
]

MISSED: list[Template] = [
    lambda t, r: ("ping - any update?", True, ("shorthand", "re-request"), None),
    lambda t, r: (
        mail(r, "I am still waiting for your answer to my request."),
        True,
        ("email", "re-request"),
        None,
    ),
]


def items(targets: list[Target], seed: int = 4) -> Iterator[dict[str, object]]:
    rng = random.Random(seed)
    for t in targets:
        inventory = {"misaligned": MISALIGNED, "incomplete": INCOMPLETE, "missed": MISSED}[t.kind]
        chosen = inventory if t.kind == "missed" else rng.sample(inventory, k=5)
        for template in chosen:
            made = template(t, rng)
            if made is None:
                continue
            message, targeted, styles, focus = made
            yield _line(t, t.role, message, targeted, styles, focus)
        if t.kind != "missed" and t.other_roles:
            message = f"need {t.label} for {t.candidate} from the {t.required}"
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
    (HERE / "dev_d.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {len(lines)} follow-ups")


if __name__ == "__main__":
    main()
