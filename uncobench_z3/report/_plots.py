"""The report's plots as PNG bytes (matplotlib, imported only here and only when called).

Figures are drawn with the object API on an Agg canvas: no pyplot, no global backend switch,
nothing shown on screen. Labels that come from data are passed with math text off, so a
``$`` in an agent's name is drawn as written.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from ..evaluation import ATTRIBUTION_LABELS, SettingMetrics
from ..settings import SETTING_NAMES
from ._tables import SETTING_TITLES, plain

PlotMaker = Callable[[list[SettingMetrics]], bytes]


class PlottingUnavailable(RuntimeError):
    """matplotlib is not installed."""


def _figure(width: float, height: float) -> Any:
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise PlottingUnavailable(
            "plots need matplotlib: pip install 'uncobench-z3[report]'"
        ) from None
    figure = Figure(figsize=(width, height), dpi=110, layout="constrained")
    FigureCanvasAgg(figure)
    return figure


def _png(figure: Any) -> bytes:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    return buffer.getvalue()


def _text(value: str) -> str:
    return value.replace("$", r"\$")


def _settings(metrics: list[SettingMetrics]) -> list[str]:
    return [s for s in SETTING_NAMES if any(m.setting == s for m in metrics)]


def _float(value: Fraction | None) -> float:
    """Plotting only: the exact figures are in the tables and metrics.json."""
    return 0.0 if value is None else float(value)


def accuracy_plot(metrics: list[SettingMetrics]) -> bytes:
    """Accuracy by setting, one bar per agent, with the 95% bootstrap interval."""
    metrics = plain(metrics)
    agents = list(dict.fromkeys(m.agent for m in metrics))
    settings = _settings(metrics)
    figure = _figure(max(6.0, 1.4 * len(settings) + 0.5 * len(agents)), 3.6)
    axes = figure.add_subplot()
    width = 0.8 / max(len(agents), 1)
    for index, agent in enumerate(agents):
        xs, ys, low, high = [], [], [], []
        for position, setting in enumerate(settings):
            found = [m for m in metrics if m.agent == agent and m.setting == setting]
            if not found:
                continue
            m = found[0]
            accuracy = _float(m.accuracy)
            low_ci, high_ci = m.accuracy_ci or (m.accuracy, m.accuracy)
            xs.append(position + (index - (len(agents) - 1) / 2) * width)
            ys.append(100 * accuracy)
            low.append(max(0.0, 100 * (accuracy - _float(low_ci))))
            high.append(max(0.0, 100 * (_float(high_ci) - accuracy)))
        axes.bar(xs, ys, width, yerr=[low, high], capsize=3, label=_text(agent))
    axes.set_xticks(range(len(settings)), [SETTING_TITLES[s] for s in settings])
    axes.set_ylabel("accuracy (%)")
    axes.set_ylim(0, 105)
    axes.legend(fontsize="small", loc="lower left")
    axes.set_title("Accuracy by setting (95% bootstrap interval over groups)")
    return _png(figure)


def attribution_plot(metrics: list[SettingMetrics]) -> bytes:
    """Wrong answers per agent and setting, stacked by attribution label."""
    rows = [m for m in plain(metrics) if m.samples > m.correct]
    figure = _figure(7.0, max(2.4, 0.35 * len(rows) + 1.6))
    axes = figure.add_subplot()
    labels = [_text(f"{m.agent} · {SETTING_TITLES[m.setting]}") for m in rows]
    left = [0.0] * len(rows)
    for label in ATTRIBUTION_LABELS:
        counts = [float(m.attribution.get(label, 0)) for m in rows]
        axes.barh(range(len(rows)), counts, left=left, label=label)
        left = [a + b for a, b in zip(left, counts, strict=True)]
    axes.set_yticks(range(len(rows)), labels, fontsize="small")
    axes.invert_yaxis()
    axes.set_xlabel("wrong answers")
    axes.xaxis.get_major_locator().set_params(integer=True)
    axes.legend(fontsize="small", loc="upper center", bbox_to_anchor=(0.5, -0.3), ncols=4)
    axes.set_title("Error attribution (solver)")
    return _png(figure)


def rounds_plot(metrics: list[SettingMetrics]) -> bytes:
    """Mean rounds, waits and redundant contacts by setting, one line per agent."""
    metrics = plain(metrics)
    settings = _settings(metrics)
    figure = _figure(8.0, 3.2)
    panels = figure.subplots(1, 3, sharex=True)
    for axes, (title, field) in zip(
        panels,
        (("rounds", "mean_rounds"), ("waits", "mean_waits"), ("redundant", "mean_redundant")),
        strict=True,
    ):
        for agent in dict.fromkeys(m.agent for m in metrics):
            points = [
                (settings.index(m.setting), _float(getattr(m, field)))
                for m in metrics
                if m.agent == agent
            ]
            axes.plot(
                [p[0] for p in points], [p[1] for p in points], marker="o", label=_text(agent)
            )
        axes.set_title(f"mean {title}", fontsize="medium")
        axes.set_ylim(bottom=0)
        axes.set_xticks(range(len(settings)), [s[:4] for s in settings], fontsize="small")
    panels[0].legend(fontsize="x-small")
    return _png(figure)


PLOTS: dict[str, tuple[str, PlotMaker]] = {
    "accuracy": ("Accuracy by setting", accuracy_plot),
    "attribution": ("Error attribution", attribution_plot),
    "rounds": ("Rounds, waits and redundant contacts", rounds_plot),
}


def render_plots(metrics: list[SettingMetrics]) -> tuple[dict[str, bytes], str | None]:
    """Every plot that has data, and why plots are missing, if some are.

    A plot that fails is left out with its error in the note rather than costing the whole
    report (the tables carry the same numbers).
    """
    out: dict[str, bytes] = {}
    failed: list[str] = []
    if not metrics:
        return out, None
    for name, (_, maker) in PLOTS.items():
        if name == "attribution" and all(m.samples == m.correct for m in metrics):
            continue
        try:
            out[name] = maker(metrics)
        except PlottingUnavailable as exc:
            return {}, str(exc)
        except Exception as exc:
            failed.append(f"the {name} plot failed ({type(exc).__name__}: {exc})")
    return out, "; ".join(failed) or None
