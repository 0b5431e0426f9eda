"""The report's content as plain tables of strings (rendered to Markdown and HTML elsewhere).

Every string here may come from a benchmark or a model (candidate names, replies, answers):
the renderers escape all of them; nothing here is markup.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from ..evaluation import SampleRecord, SettingMetrics, configuration_of, is_scored
from ..settings import SETTING_NAMES
from ..stats import Interval, decimal_text, percent_text

SETTING_TITLES = {
    "reliable": "Reliable",
    "misaligned": "Misaligned",
    "incomplete": "Incomplete",
    "missed": "Missed",
    "mixed": "Mixed (stress test)",
}
MAX_WRONG_EXAMPLES = 25


@dataclass
class Table:
    headers: list[str]
    rows: list[list[str]]
    caption: str = ""


@dataclass
class Section:
    id: str
    """the HTML anchor (``<section id=...>``)"""
    title: str
    text: str = ""
    tables: list[Table] = field(default_factory=list)
    figures: list[str] = field(default_factory=list)
    """names of figures (see :mod:`._figures`) shown in this section"""


def percent(value: Fraction | float | None, digits: int = 1) -> str:
    """A share as an exact percentage (rounded on the fraction, never through a float)."""
    return percent_text(value, digits)


def interval_text(interval: Interval | None, digits: int = 0, points: bool = False) -> str:
    """``[low, high]`` as percentages, or as signed percentage points."""
    if interval is None:
        return "–"
    low, high = interval
    if points:
        low_text, high_text = (decimal_text(100 * x, digits, sign=True) for x in (low, high))
        return f"[{low_text}, {high_text}]"
    return f"[{percent(low, digits)}, {percent(high, digits)}]"


def number(value: Fraction | None, digits: int = 2) -> str:
    return "–" if value is None else decimal_text(value, digits)


def cell_n(m: SettingMetrics) -> str:
    """A cell's n: groups x epochs, or its samples and groups when its groups ran different
    numbers of epochs (runs of another seed or limit pooled, error samples left out), where
    groups x epochs would count trials no group ran."""
    if m.samples == m.n_groups * m.epochs:
        return f"{m.n_groups}x{m.epochs}"
    return f"{m.samples} ({m.n_groups} groups, up to {m.epochs} epochs)"


def plain(metrics: list[SettingMetrics]) -> list[SettingMetrics]:
    """The cells of the plain evaluation (intervention arm none)."""
    return [m for m in metrics if m.arm == "none"]


def row_label(m: SettingMetrics) -> str:
    """What a row of the report names: the whole configuration that changes scores (the
    agent's name with its protocol and generation options, and the budget and colleagues
    when not the defaults: :func:`~uncobench_z3.evaluation.configuration_label`, which the
    metrics already key their cells by); the arm is a column of its own."""
    return m.agent


def optional(m: SettingMetrics, name: str) -> Any:
    """A field that not every version of the metrics has (None when absent): columns for it
    appear as soon as the metrics carry it."""
    return getattr(m, name, None)


def _agents(metrics: list[SettingMetrics]) -> list[str]:
    return list(dict.fromkeys(row_label(m) for m in metrics))


def _cell(metrics: list[SettingMetrics], agent: str, setting: str) -> SettingMetrics | None:
    for m in metrics:
        if row_label(m) == agent and m.setting == setting and m.arm == "none":
            return m
    return None


def setting_title(setting: str) -> str:
    return SETTING_TITLES.get(setting, setting)


def accuracy_table(metrics: list[SettingMetrics]) -> Table:
    settings = [s for s in SETTING_NAMES if any(m.setting == s for m in metrics)]
    rows = []
    for agent in _agents(metrics):
        row = [agent]
        for setting in settings:
            m = _cell(metrics, agent, setting)
            row.append(
                "–"
                if m is None
                else f"{percent(m.accuracy)} {interval_text(m.accuracy_ci)} n={cell_n(m)}"
            )
        rows.append(row)
    return Table(
        ["agent", *(setting_title(s) for s in settings)],
        rows,
        "Accuracy (decision, candidate and number all right): the mean over groups of each "
        "group's share of correct epochs, with a 95% bootstrap interval over groups; "
        "n = groups x epochs (samples, where groups ran different numbers of epochs).",
    )


def retention_table(metrics: list[SettingMetrics]) -> Table:
    rows = []
    for m in plain(metrics):
        if m.setting == "reliable":
            continue
        rows.append(
            [
                row_label(m),
                setting_title(m.setting),
                str(m.paired),
                "–" if m.drop is None else decimal_text(100 * m.drop, 1, sign=True),
                interval_text(m.drop_ci, 1, points=True),
                f"{percent(m.retention)} {interval_text(m.retention_ci)}",
                f"{m.retained}/{m.retention_base}",
                str(m.excluded_unavailable),
                str(m.excluded_missing),
            ]
        )
    return Table(
        ["agent", "setting", "paired group-epochs", "drop (pp)", "95% CI (pp)", "retention",
         "retained / base", "excluded: unavailable", "excluded: not run"],
        rows,
        "Per epoch, then averaged over epochs, with 95% bootstrap intervals over groups. "
        "Drop: Reliable accuracy minus this setting's, on the groups run in both in that "
        "epoch. Retention: of the groups answered correctly in Reliable in that epoch (the "
        "base), the share still correct here; group-epochs lacking this setting (or not run "
        "in it) are excluded and counted.",
    )  # fmt: skip


def answer_text(sample: SampleRecord) -> str:
    if sample.answer is None:
        return f"(no answer: {sample.status.replace('_', ' ')})"
    answer = sample.answer
    parts = [p for p in (answer.decision, answer.candidate, answer.number, answer.unit) if p]
    text = " / ".join(parts)
    if answer.text:
        text = f"{text} | {answer.text}" if text else answer.text
    return text or "(empty answer)"


def gold_text(sample: SampleRecord) -> str:
    return sample.gold.text()


def _spread(samples: list[SampleRecord], count: int) -> list[SampleRecord]:
    """Up to ``count`` samples taken in turn from each (configuration, setting, arm) stratum,
    each stratum in group order, so that no agent or setting crowds the others out."""
    strata: dict[tuple[str, int, str], list[SampleRecord]] = {}
    for sample in sorted(samples, key=lambda s: (s.group_id, s.epoch)):
        key = (configuration_of(sample), SETTING_NAMES.index(sample.setting), sample.intervention)
        strata.setdefault(key, []).append(sample)
    queues = [strata[key] for key in sorted(strata)]
    chosen: list[SampleRecord] = []
    depth = 0
    while len(chosen) < count and any(depth < len(q) for q in queues):
        chosen += [q[depth] for q in queues if depth < len(q)][: count - len(chosen)]
        depth += 1
    return chosen


def wrong_examples(samples: list[SampleRecord]) -> Table:
    # error samples, and those whose policy colleague broke its policy, are not scored: apart
    wrong = [s for s in samples if not s.correct and is_scored(s)]
    rows = []
    for sample in _spread(wrong, MAX_WRONG_EXAMPLES):
        attribution = sample.attribution
        rows.append(
            [
                configuration_of(sample),
                setting_title(sample.setting),
                sample.intervention,
                sample.group_id,
                gold_text(sample),
                answer_text(sample),
                "" if attribution is None else f"{attribution.label}: {attribution.detail}",
            ]
        )
    caption = f"{len(wrong)} wrong answers" + (
        f"; {MAX_WRONG_EXAMPLES} shown, taken in turn from each agent, setting and arm"
        if len(wrong) > MAX_WRONG_EXAMPLES
        else ""
    )
    return Table(
        ["agent", "setting", "arm", "group", "gold", "answer", "attribution"], rows, caption
    )


def _scalar(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def stats_tables(stats: dict[str, Any], title: str = "benchmark") -> list[Table]:
    """The manifest's statistics, whatever their shape: the scalars of a mapping in one table,
    a mapping of flat mappings as a matrix, deeper mappings recursively."""
    tables = []
    scalars = [[key, _scalar(value)] for key, value in stats.items() if not isinstance(value, dict)]
    if scalars:
        tables.append(Table(["statistic", "value"], scalars, title))
    for key, value in stats.items():
        if not isinstance(value, dict):
            continue
        name = key if title == "benchmark" else f"{title}: {key}"
        inner = list(value.values())
        flat_rows = all(
            isinstance(v, dict) and not any(isinstance(x, dict) for x in v.values()) for v in inner
        )
        if inner and flat_rows:
            columns = list(dict.fromkeys(c for v in inner for c in v))
            rows = [[row, *(_scalar(v.get(c, "")) for c in columns)] for row, v in value.items()]
            tables.append(Table(["", *columns], rows, name))
        else:
            tables += stats_tables(value, name)
    return tables
