"""The paper's figures, drawn from the numbers ``metrics.json`` holds (never recomputed).

Each :class:`FigureSpec` knows its caption (n and the interval method) without matplotlib;
:func:`render_figures` draws PNG and SVG where matplotlib is installed. Figures are data
driven: a setting, arm, behaviour class or attribution label present in the metrics gets
its bar, line or segment; one that is absent leaves no empty slot.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from ..evaluation import ATTRIBUTION_LABELS, INTERVENTION_ARMS, SettingMetrics
from ..settings import SETTING_NAMES
from ._metrics_json import MetricsDocument
from ._plotting import Panel, PlottingUnavailable, Rendered, Series, style
from ._tables import SETTING_TITLES, plain, row_label

SETTING_COLOURS = {"reliable": "#0072B2", "misaligned": "#D55E00", "incomplete": "#E69F00",
                   "missed": "#56B4E9", "mixed": "#CC79A7"}  # fmt: skip
SETTING_HATCHES = {"reliable": "", "misaligned": "//", "incomplete": "..", "missed": "xx",
                   "mixed": "\\\\"}  # fmt: skip
CLASS_STYLE = {
    "recovered_correct": ("recovered, then correct", "#009E73", ""),
    "recovered_wrong": ("recovered, still wrong", "#56B4E9", "//"),
    "partly_recovered": ("targeted, not all recovered", "#F0E442", ".."),
    "generic_only": ("generic (unclassified) follow-up only", "#E69F00", "xx"),
    "no_follow_up": ("no corrective follow-up", "#D55E00", "\\\\"),
    "defect_not_shown": ("defect never shown", "#BBBBBB", "oo"),
}
OUTCOME_STYLE = {
    "justified": ("correct, justified", "#009E73", ""),
    "lucky": ("correct, lucky", "#F0E442", ".."),
    "correct_undecided": ("correct, undecided", "#DDDDDD", "++"),
    "integration_error": ("wrong: integration", "#CC79A7", "//"),
    "misled": ("wrong: misled", "#D55E00", "\\\\"),
    "gathering_failure": ("wrong: gathering", "#0072B2", "xx"),
    "unknown": ("wrong: undecided", "#999999", "oo"),
}


@dataclass
class FigureSpec:
    name: str
    title: str
    caption: str
    draw: Callable[[], Rendered]


@dataclass
class Figures:
    specs: dict[str, FigureSpec] = field(default_factory=dict)
    rendered: dict[str, Rendered] = field(default_factory=dict)
    note: str | None = None
    """why figures are missing, if some are"""


def _f(value: Fraction | None) -> float | None:
    """Plotting only: the exact figures are in the tables and metrics.json."""
    return None if value is None else float(value)


def _pct(value: Fraction | None) -> float | None:
    return None if value is None else float(100 * value)


def _span(values: Sequence[int]) -> str:
    low, high = min(values, default=0), max(values, default=0)
    return str(low) if low == high else f"{low}-{high}"


def _bootstrap(document: MetricsDocument) -> str:
    b = document.bootstrap
    return (f"95% percentile bootstrap interval over groups ({b.samples} resamples, seed "
            f"{b.seed})")  # fmt: skip


def _settings(cells: Sequence[SettingMetrics], defective: bool = False) -> list[str]:
    present: list[str] = [s for s in SETTING_NAMES if any(m.setting == s for m in cells)]
    present += sorted({str(m.setting) for m in cells} - set(present))
    return [s for s in present if not defective or s != "reliable"]


def _agents(cells: Sequence[SettingMetrics]) -> list[str]:
    return list(dict.fromkeys(row_label(m) for m in cells))


def _by(cells: Sequence[SettingMetrics]) -> dict[tuple[str, str], SettingMetrics]:
    return {(row_label(m), m.setting): m for m in cells}


def _share_series(cells: Sequence[SettingMetrics], agents: list[str], setting: str,
                  value: Callable[[SettingMetrics], Fraction | None],
                  interval: Callable[[SettingMetrics], tuple[Fraction, Fraction] | None]
                  ) -> Series:  # fmt: skip
    found = _by(cells)
    picked = [found.get((a, setting)) for a in agents]
    bounds = [None if m is None else interval(m) for m in picked]
    return Series(
        SETTING_TITLES.get(setting, setting),
        [None if m is None else _pct(value(m)) for m in picked],
        [None if b is None else _pct(b[0]) for b in bounds],
        [None if b is None else _pct(b[1]) for b in bounds],
        SETTING_COLOURS.get(setting, "#000000"),
        SETTING_HATCHES.get(setting, ""),
    )


def _grouped(title: str, cells: Sequence[SettingMetrics], settings: list[str],
             value: Callable[[SettingMetrics], Fraction | None],
             interval: Callable[[SettingMetrics], tuple[Fraction, Fraction] | None],
             ylabel: str) -> Callable[[], Rendered]:  # fmt: skip
    from ._plotting import grouped_bars

    agents = _agents(cells)
    panel = Panel(title, agents, [_share_series(cells, agents, s, value, interval)
                                  for s in settings])  # fmt: skip
    return lambda: grouped_bars(panel, ylabel)


def _stacked(cells: Sequence[SettingMetrics], settings: list[str],
             counts: Callable[[SettingMetrics], dict[str, int]],
             styles: dict[str, tuple[str, str, str]]) -> Callable[[], Rendered]:  # fmt: skip
    from ._plotting import stacked_shares

    agents = _agents(cells)
    found = _by(cells)
    names = list(styles) + sorted({k for m in cells for k in counts(m)} - set(styles))
    panels = []
    for setting in settings:
        rows = [(a, found[(a, setting)]) for a in agents if (a, setting) in found]
        series = []
        for index, name in enumerate(names):
            label, colour, hatch = styles.get(name, (name, *style(index)[:2]))
            shares = [_pct(Fraction(counts(m).get(name, 0), m.samples)) if m.samples else 0.0
                      for _, m in rows]  # fmt: skip
            if any(shares):
                series.append(Series(label, shares, colour=colour, hatch=hatch))
        panels.append(Panel(SETTING_TITLES.get(setting, setting), [a for a, _ in rows], series))
    return lambda: stacked_shares(panels)


def outcome_counts(m: SettingMetrics) -> dict[str, int]:
    """Every scored sample of a cell by outcome: correct (justified / lucky / undecided) or
    wrong by attribution label."""
    counts = {"justified": m.justified, "lucky": m.lucky,
              "correct_undecided": m.justification_unknown}  # fmt: skip
    for label in (*ATTRIBUTION_LABELS, *sorted(set(m.attribution) - set(ATTRIBUTION_LABELS))):
        counts[label] = m.attribution.get(label, 0)
    return counts


def _missed_cost(cells: Sequence[SettingMetrics]) -> Panel:
    """Missed against Reliable per agent: means per sample (differences of exact means)."""
    found = _by(cells)
    agents = [a for a in _agents(cells) if (a, "missed") in found]
    parts: list[tuple[str, Callable[[SettingMetrics, SettingMetrics | None], Fraction | None]]] = [
        ("extra rounds (Missed - Reliable)", lambda m, r: _minus(m.mean_rounds, r, "mean_rounds")),
        ("wait rounds", lambda m, r: m.mean_waits),
        ("extra contacts (Missed - Reliable)",
         lambda m, r: _minus(m.mean_contacts, r, "mean_contacts")),
        ("redundant contacts", lambda m, r: m.mean_redundant),
    ]  # fmt: skip
    series = []
    for index, (name, value) in enumerate(parts):
        colour, hatch, _ = style(index)
        values = [_f(value(found[(a, "missed")], found.get((a, "reliable")))) for a in agents]
        series.append(Series(name, values, colour=colour, hatch=hatch))
    return Panel("Cost of a missed reply (means per sample)", agents, series)


def _minus(value: Fraction | None, reliable: SettingMetrics | None, name: str) -> Fraction | None:
    base = None if reliable is None else getattr(reliable, name)
    return None if value is None or base is None else value - base


def figure_specs(document: MetricsDocument) -> dict[str, FigureSpec]:
    """Every figure the metrics have data for, by section id."""
    cells = plain(document.results)
    specs: dict[str, FigureSpec] = {}
    if not cells:
        return specs
    method = _bootstrap(document)
    groups, epochs = _span([m.n_groups for m in cells]), _span([m.epochs for m in cells])
    n_text = f"n per bar = {groups} groups x {epochs} epochs (each cell's n in the table)"
    specs["main-results"] = FigureSpec(
        "main-results", "Accuracy by setting (Fig. 3)",
        f"Accuracy (decision, candidate and number all right) per agent and setting; error "
        f"bars: {method}; {n_text}.",
        _grouped("Accuracy by setting", cells, _settings(cells), lambda m: m.accuracy,
                 lambda m: m.accuracy_ci, "accuracy (%)"),
    )  # fmt: skip
    defective = [m for m in cells if m.setting != "reliable" and m.retention is not None]
    if defective:
        specs["retention"] = FigureSpec(
            "retention", "Retention of Reliable-correct groups",
            "Of the group-epochs an agent answered correctly in Reliable, the share still "
            f"correct in each setting; error bars: {method}; n per bar = the retention base, "
            f"{_span([m.retention_base for m in defective])} group-epochs.",
            _grouped("Retention", defective, _settings(defective, True), lambda m: m.retention,
                     lambda m: m.retention_ci, "retained (%)"),
        )  # fmt: skip
    behaving = [m for m in cells if m.setting != "reliable" and m.samples]
    if behaving:
        specs["behaviour"] = FigureSpec(
            "behaviour", "Behaviour after a defect (Figs. 4-5)",
            "Every scored sample in one behaviour class (shares stack to 100%); n per bar = "
            f"samples, {_span([m.samples for m in behaving])}; counts, no interval.",
            _stacked(behaving, _settings(behaving, True), lambda m: m.behaviour_classes,
                     CLASS_STYLE),
        )  # fmt: skip
    if any(m.setting == "missed" for m in cells):
        panel = _missed_cost(cells)
        from ._plotting import grouped_bars

        missed = [m.samples for m in cells if m.setting == "missed"]
        specs["missed-cost"] = FigureSpec(
            "missed-cost", "The cost of a missed reply",
            f"Per agent in Missed: extra rounds and contacts over its Reliable mean, wait "
            f"rounds and redundant contacts per sample; n = {_span(missed)} Missed samples "
            "per agent (exact values, and the share of cases with more than one contact to "
            "the designated role, in the table); means, no interval.",
            lambda: grouped_bars(panel, "per sample", percent=False),
        )  # fmt: skip
    single = [m for m in cells if m.setting in ("misaligned", "incomplete", "missed", "mixed")]
    if any(m.setting == "mixed" for m in single):
        specs["mixed"] = FigureSpec(
            "mixed", "Mixed against the single defects (Fig. 6)",
            f"Accuracy under each single defect and under Mixed (all three at once); error "
            f"bars: {method}; n per bar = {_span([m.n_groups for m in single])} groups x "
            f"{_span([m.epochs for m in single])} epochs (Mixed only where a group has it).",
            _grouped("Mixed vs single defects", single, _settings(single), lambda m: m.accuracy,
                     lambda m: m.accuracy_ci, "accuracy (%)"),
        )  # fmt: skip
    if document.interventions:
        specs["interventions"] = _interventions_spec(document, method)
    outcome = [m for m in cells if m.samples]
    if outcome:
        specs["attribution"] = FigureSpec(
            "attribution", "Where answers come from: justified, lucky, and why wrong",
            "Every scored sample: correct answers the received evidence determined "
            "(justified) or not (lucky), and wrong answers by solver attribution (gathering "
            "failure, integration error, misled); n per bar = samples, "
            f"{_span([m.samples for m in outcome])}; counts, no interval.",
            _stacked(outcome, _settings(outcome), outcome_counts, OUTCOME_STYLE),
        )  # fmt: skip
    if document.dataset is not None and document.dataset.domain_operation:
        specs["dataset"] = _dataset_spec(document)
    return specs


def _interventions_spec(document: MetricsDocument, method: str) -> FigureSpec:
    from ._plotting import line_panels

    panels = []
    settings = [s for s in SETTING_NAMES if any(p.setting == s for p in document.interventions)]
    for setting in settings:
        chosen = [p for p in document.interventions if p.setting == setting]
        arms = [a for a in INTERVENTION_ARMS if any(a in p.arms for p in chosen)]
        series = []
        for index, p in enumerate(chosen):
            colour, _, marker = style(index)
            by_arm = {m.arm: m for m in p.cells}
            picked = [by_arm.get(a) for a in arms]
            bounds = [None if m is None else m.accuracy_ci for m in picked]
            reliable = None if p.reliable is None else _pct(p.reliable.accuracy)
            series.append(Series(
                f"{p.agent} (n={p.common_groups})",
                [None if m is None else _pct(m.accuracy) for m in picked],
                [None if b is None else _pct(b[0]) for b in bounds],
                [None if b is None else _pct(b[1]) for b in bounds],
                colour, marker=marker, reference=reliable,
            ))  # fmt: skip
        panels.append(Panel(SETTING_TITLES.get(setting, setting), arms, series))
    counts = [p.common_groups for p in document.interventions]
    dropped = sum(p.dropped_groups for p in document.interventions)
    return FigureSpec(
        "interventions", "Accuracy by intervention arm against Reliable (Fig. 8)",
        f"Nested arms (none < existence < location < diagnosis < action), each agent on the "
        f"groups present in every arm it ran (n = {_span(counts)} groups; {dropped} "
        f"group-panels left out for lacking an arm); dashed: the agent's Reliable accuracy on "
        f"the same groups; error bars: {method}.",
        lambda: line_panels(panels, "accuracy (%)"),
    )  # fmt: skip


def _dataset_spec(document: MetricsDocument) -> FigureSpec:
    from ._plotting import heatmap

    dataset = document.dataset
    assert dataset is not None
    rows = list(dataset.domain_operation)
    columns = list(dict.fromkeys(c for row in dataset.domain_operation.values() for c in row))
    counts = [[dataset.domain_operation[r].get(c, 0) for c in columns] for r in rows]
    pairs = len(rows) * len(columns)
    return FigureSpec(
        "dataset", "Domains x operations (Fig. 7)",
        f"Task groups per application domain and numerical operation; n = {dataset.groups} "
        f"groups; {dataset.pairs_present} of {pairs} pairs present; counts from "
        f"{dataset.source}.",
        lambda: heatmap(rows, columns, counts, "Groups per domain and operation"),
    )  # fmt: skip


def render_figures(document: MetricsDocument, draw: bool = True) -> Figures:
    """The specs, and each figure drawn (a figure that fails is noted, not fatal)."""
    figures = Figures(figure_specs(document))
    if not draw:
        return figures
    failed: list[str] = []
    for name, spec in figures.specs.items():
        try:
            figures.rendered[name] = spec.draw()
        except PlottingUnavailable as exc:
            figures.rendered.clear()
            figures.note = str(exc)
            return figures
        except Exception as exc:  # one bad figure must not cost the report
            failed.append(f"the {name} figure failed ({type(exc).__name__}: {exc})")
    figures.note = "; ".join(failed) or None
    return figures
