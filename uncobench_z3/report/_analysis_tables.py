"""The tables beside the paper's analysis figures: behaviour, rounds, the cost of a missed
reply, Mixed, interventions, attribution. Same numbers as ``metrics.json``; columns for
fields a newer evaluation adds (pending requests, invalid actions, context exhaustion)
appear when the metrics carry them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction

from ..evaluation import (
    ATTRIBUTION_LABELS,
    GroupKey,
    SampleRecord,
    SettingMetrics,
    cells,
    configuration_of,
    group_mean_accuracy,
    group_of,
    is_scored,
)
from ..stats import decimal_text
from ._interventions import InterventionPanel
from ._tables import (
    Table,
    cell_n,
    interval_text,
    number,
    optional,
    percent,
    plain,
    row_label,
    setting_title,
)


def _count_share(count: int, total: int) -> str:
    return f"{count} ({percent(Fraction(count, total) if total else None)})"


def behaviour_table(metrics: list[SettingMetrics]) -> Table:
    """Behaviour classes per agent and defective setting (counts and shares)."""
    cells = [m for m in plain(metrics) if m.setting != "reliable"]
    names = list(dict.fromkeys(k for m in cells for k in m.behaviour_classes))
    rows = [
        [row_label(m), setting_title(m.setting), str(m.samples),
         *(_count_share(m.behaviour_classes.get(k, 0), m.samples) for k in names),
         str(m.targeted_follow_ups), str(m.generic_follow_ups)]
        for m in cells
    ]  # fmt: skip
    return Table(
        ["agent", "setting", "samples", *(k.replace("_", " ") for k in names),
         "targeted follow-ups", "generic follow-ups"],
        rows,
        "Each scored sample in one class, checked in this order: a defect showed and every "
        "one shown was resolved (then correct or wrong); a targeted follow-up but not all "
        "resolved; only generic (unclassified) follow-ups; no corrective follow-up; the "
        "defect never showed. Follow-ups are counted over all samples.",
    )  # fmt: skip


# (header, field, how to show it): fields absent from the metrics are left out
_ROUND_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("rounds", "mean_rounds", "mean"),
    ("minimum rounds", "mean_min_rounds", "mean"),
    ("ratio", "rounds_ratio", "mean"),
    ("contacts", "mean_contacts", "mean"),
    ("waits", "mean_waits", "mean"),
    ("redundant contacts", "mean_redundant", "mean"),
    ("budget exhausted", "budget_exhausted", "count"),
    ("context exhausted", "context_exhausted", "count"),
    ("invalid actions", "invalid_actions", "of rounds"),
    ("answered while a request was pending", "answered_pending", "count"),
)


def efficiency_table(metrics: list[SettingMetrics]) -> Table:
    cells = plain(metrics)
    columns = [c for c in _ROUND_COLUMNS if any(hasattr(m, c[1]) for m in cells)]
    rows = []
    for m in cells:
        row = [row_label(m), setting_title(m.setting)]
        for _, name, kind in columns:
            value = optional(m, name)
            if kind == "mean":
                row.append(number(value))
            elif kind == "of rounds":
                share = percent(optional(m, "invalid_rate"))
                row.append(f"{share} ({value or 0}/{optional(m, 'actions') or 0})")
            else:
                row.append(str(value or 0))
        rows.append(row)
    return Table(
        ["agent", "setting", *(c[0] for c in columns)],
        rows,
        "Means per sample. Minimum rounds: the fewest an ideal agent needs (solver-computed); "
        "ratio: rounds used over the minimum. A contact is redundant when the colleague was "
        "asked before and every record the request concerns had already arrived exactly and "
        "in the required context. Invalid actions: rounds whose action the environment "
        "rejected, of all rounds played. Budget / context exhausted: samples that ended "
        "without an answer because the round budget ran out / the conversation outgrew the "
        "model's context window (both scored wrong).",
    )


def _difference(value: Fraction | None, base: Fraction | None) -> str:
    if value is None or base is None:
        return "–"
    return decimal_text(value - base, 2, sign=True)


def missed_cost_table(metrics: list[SettingMetrics]) -> Table:
    """Per agent: Missed against Reliable, with the pending-request counts when present."""
    cells = plain(metrics)
    reliable = {row_label(m): m for m in cells if m.setting == "reliable"}
    pending = any(optional(m, "missed_cases") is not None for m in cells)
    rows = []
    for m in (m for m in cells if m.setting == "missed"):
        base = reliable.get(row_label(m))
        row = [
            row_label(m), str(m.samples), number(m.mean_rounds),
            number(None if base is None else base.mean_rounds),
            _difference(m.mean_rounds, None if base is None else base.mean_rounds),
            number(m.mean_waits),
            _difference(m.mean_contacts, None if base is None else base.mean_contacts),
            number(m.mean_redundant),
        ]  # fmt: skip
        if pending:
            cases, multi = optional(m, "missed_cases") or 0, optional(m, "missed_multi_contact")
            row.append(
                f"{multi or 0}/{cases} ({percent(Fraction(multi or 0, cases) if cases else None)})"
            )
        rows.append(row)
    headers = ["agent", "Missed samples", "rounds (Missed)", "rounds (Reliable)", "extra rounds",
               "wait rounds", "extra contacts", "redundant contacts"]  # fmt: skip
    if pending:
        headers.append("> 1 contact to the designated role")
    return Table(headers, rows, "Means per sample; extra = the Missed mean minus the agent's "
                 "Reliable mean (exact differences, rounded for display).")  # fmt: skip


SINGLE_DEFECTS = ("misaligned", "incomplete", "missed")


def single_defects_on_mixed_groups(
    samples: Iterable[SampleRecord],
) -> dict[tuple[str, str], Fraction]:
    """(configuration, single-defect setting) -> its accuracy on the groups where that
    configuration has a scored Mixed sample (arm none; the mean over groups of each group's
    share of correct trials, as ``accuracy``). Groups without a Mixed setting (those whose
    answer is "no eligible candidate") are easier or harder than the rest, so Mixed against a
    single defect over all groups compares other tasks."""
    plain_scored = [s for s in samples if s.intervention == "none" and is_scored(s)]
    mixed: dict[str, set[GroupKey]] = {}
    for sample in plain_scored:
        if sample.setting == "mixed":
            mixed.setdefault(configuration_of(sample), set()).add(group_of(sample))
    chosen = [
        s
        for s in plain_scored
        if s.setting in SINGLE_DEFECTS and group_of(s) in mixed.get(configuration_of(s), ())
    ]
    accuracies = {}
    for (label, setting, _arm), cell in cells(chosen).items():
        accuracy = group_mean_accuracy(cell)
        if accuracy is not None:
            accuracies[label, setting] = accuracy
    return accuracies


def mixed_table(
    metrics: list[SettingMetrics], same_groups: Mapping[tuple[str, str], Fraction] | None = None
) -> Table:
    """Mixed beside each single defect. With ``same_groups``
    (:func:`single_defects_on_mixed_groups`) the single defects, the hardest of them and the
    gap are on the Mixed groups; without, on all groups (as ``metrics.json``'s cells)."""
    shown = plain(metrics)
    found = {(row_label(m), m.setting): m for m in shown}
    rows = []
    for agent in dict.fromkeys(row_label(m) for m in shown if m.setting == "mixed"):
        mixed = found[(agent, "mixed")]
        singles: dict[str, Fraction | None] = {}
        for setting in SINGLE_DEFECTS:
            cell = found.get((agent, setting))
            if same_groups is not None:
                singles[setting] = same_groups.get((agent, setting))
            elif cell is not None:
                singles[setting] = cell.accuracy
        known = {s: a for s, a in singles.items() if a is not None}
        hardest = min(known, key=lambda s: known[s], default=None)
        gap = "–"
        if hardest is not None and mixed.accuracy is not None:
            gap = decimal_text(100 * (mixed.accuracy - known[hardest]), 1, sign=True)
        rows.append([
            agent, f"{percent(mixed.accuracy)} {interval_text(mixed.accuracy_ci)}",
            *(percent(singles[s]) if s in singles else "–" for s in SINGLE_DEFECTS),
            "–" if hardest is None else setting_title(hardest), gap,
            cell_n(mixed),
        ])  # fmt: skip
    where = (
        "the single defects on the same groups (those with a Mixed sample of the agent), so "
        "the gap compares the same tasks; the accuracy table has them over all groups"
        if same_groups is not None
        else "the single defects over all groups"
    )
    return Table(
        ["agent", "Mixed", "Misaligned", "Incomplete", "Missed", "hardest single defect",
         "Mixed minus hardest (pp)", "n (Mixed)"],
        rows,
        "Mixed puts all three defects in one task, on different roles; groups without a "
        f"Mixed setting are not in its n. Beside it: {where}.",
    )  # fmt: skip


def interventions_table(panels: Sequence[InterventionPanel]) -> Table:
    rows = []
    for p in panels:
        base = None if p.reliable is None else p.reliable.accuracy
        for m in p.cells:
            rows.append([
                p.agent, setting_title(p.setting), m.arm,
                f"{percent(m.accuracy)} {interval_text(m.accuracy_ci)}",
                "–" if m.accuracy is None or base is None
                else decimal_text(100 * (m.accuracy - base), 1, sign=True),
                percent(base), cell_n(m), str(m.delivered),
                str(p.dropped_groups),
            ])  # fmt: skip
    return Table(
        ["agent", "setting", "arm", "accuracy", "vs Reliable (pp)", "Reliable (same groups)",
         "n", "delivered", "groups left out"],
        rows,
        "Each arm on the groups present in every arm the agent ran in that setting (n = "
        "groups x epochs); 'delivered' counts the samples where the intervention text "
        "arrived (with the round in which a defect first showed); groups left out lacked "
        "some arm.",
    )  # fmt: skip


def attribution_table(metrics: list[SettingMetrics]) -> Table:
    cells = plain(metrics)
    labels: list[str] = list(ATTRIBUTION_LABELS)
    labels += sorted({k for m in cells for k in m.attribution} - set(labels))
    rows = [
        [row_label(m), setting_title(m.setting), str(m.samples), str(m.justified),
         str(m.lucky), str(m.justification_unknown), str(m.samples - m.correct),
         *(str(m.attribution.get(label, 0)) for label in labels)]
        for m in cells
    ]  # fmt: skip
    return Table(
        ["agent", "setting", "samples", "correct: justified", "correct: lucky",
         "correct: undecided", "wrong", *labels],
        rows,
        "Correct answers: justified when the evidence received determined them (solver), "
        "lucky otherwise. Wrong answers: integration_error = the evidence received "
        "determined the gold answer; misled = an accepted wrong-context or imprecise "
        "statement explains the answer; gathering_failure = the evidence left the answer "
        "open; unknown = the solver could not decide.",
    )  # fmt: skip
