"""Chart kinds the report's figures are drawn with: grouped bars with error bars, stacked
shares, lines against a reference, a heatmap; PNG and SVG of each.

matplotlib is imported only here and only when a chart is drawn, with the object API on an
Agg canvas (no pyplot, no global backend, nothing shown). Colours are the Okabe-Ito palette,
which people with any common colour-vision deficiency tell apart; bars also carry hatching
and lines markers, so a grey-scale print keeps every series apart. Labels that come from
data are drawn with math text off (a ``$`` in an agent's name is drawn as written). Output
is deterministic: fixed SVG ids, no dates, bundled fonts (SVG text stays text: smaller,
searchable, selectable in print).
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

OKABE_ITO = ("#0072B2", "#D55E00", "#009E73", "#E69F00", "#56B4E9", "#CC79A7", "#F0E442",
             "#000000")  # fmt: skip
HATCHES = ("", "//", "..", "xx", "\\\\", "oo", "--", "++")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
DPI = 110


class PlottingUnavailable(RuntimeError):
    """matplotlib is not installed."""


@dataclass
class Series:
    """One set of bars (or one line): a value per position; None leaves a gap."""

    name: str
    values: Sequence[float | None]
    lows: Sequence[float | None] = ()
    highs: Sequence[float | None] = ()
    colour: str = OKABE_ITO[0]
    hatch: str = ""
    marker: str = "o"
    reference: float | None = None
    """lines: a dashed horizontal reference in the line's colour"""


@dataclass
class Panel:
    title: str
    labels: Sequence[str]
    """positions: x ticks (bars, lines) or rows (stacked shares)"""
    series: list[Series] = field(default_factory=list)


@dataclass(frozen=True)
class Rendered:
    png: bytes
    svg: bytes


def style(index: int) -> tuple[str, str, str]:
    """(colour, hatch, marker) of the ``index``-th series: eight colours, then hatches."""
    return (
        OKABE_ITO[index % len(OKABE_ITO)],
        HATCHES[(index // len(OKABE_ITO) + index) % len(HATCHES)],
        MARKERS[index % len(MARKERS)],
    )


def text(value: str) -> str:
    """A data label drawn literally (math text off)."""
    return value.replace("$", r"\$")


def _figure(width: float, height: float) -> Any:
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise PlottingUnavailable(
            "figures need matplotlib: pip install 'uncobench-z3[report]'"
        ) from None
    figure = Figure(figsize=(width, height), dpi=DPI, layout="constrained")
    FigureCanvasAgg(figure)
    return figure


def _render(figure: Any) -> Rendered:
    from matplotlib import rc_context

    png, svg = io.BytesIO(), io.BytesIO()
    figure.savefig(png, format="png", metadata={"Software": None})
    # the layout is solved once, for the PNG; the SVG reuses it (it is the slow part)
    figure.set_layout_engine("none")
    with rc_context({"svg.hashsalt": "uncobench", "svg.fonttype": "none"}):
        figure.savefig(svg, format="svg", metadata={"Date": None, "Creator": None})
    return Rendered(png.getvalue(), svg.getvalue())


def _errors(series: Series) -> tuple[list[float], list[float]] | None:
    if not series.lows:
        return None
    below, above = [], []
    for value, low, high in zip(series.values, series.lows, series.highs, strict=True):
        below.append(0.0 if value is None or low is None else max(0.0, value - low))
        above.append(0.0 if value is None or high is None else max(0.0, high - value))
    return below, above


def _legend(figure: Any, axes_list: Sequence[Any]) -> None:
    """One legend below the figure with every series of every panel, once each, in as many
    columns as fit the width."""
    found: dict[str, Any] = {}
    for axes in axes_list:
        for handle, label in zip(*axes.get_legend_handles_labels(), strict=True):
            found.setdefault(label, handle)
    if not found:
        return
    width = figure.get_figwidth() * 72 / 7  # characters of small text per row, roughly
    longest = max(len(label) for label in found) + 6
    columns = max(1, min(len(found), int(width // longest)))
    figure.legend(list(found.values()), list(found), loc="outside lower center", ncols=columns,
                  fontsize="small", frameon=False)  # fmt: skip


def grouped_bars(panel: Panel, ylabel: str, percent: bool = True) -> Rendered:
    """Bars grouped by position, one colour per series, with error bars where given."""
    groups, count = len(panel.labels), len(panel.series)
    figure = _figure(max(6.0, 0.22 * groups * max(count, 1) + 2.0), 3.8)
    axes = figure.add_subplot()
    width = 0.8 / max(count, 1)
    for index, series in enumerate(panel.series):
        xs = [p + (index - (count - 1) / 2) * width for p in range(groups)]
        present = [i for i, v in enumerate(series.values) if v is not None]
        errors = _errors(series)
        axes.bar(
            [xs[i] for i in present],
            [series.values[i] or 0.0 for i in present],
            width,
            yerr=None if errors is None else [[e[i] for i in present] for e in errors],
            capsize=2,
            color=series.colour,
            hatch=series.hatch,
            edgecolor="#333333",
            linewidth=0.4,
            label=text(series.name),
            error_kw={"elinewidth": 0.8, "ecolor": "#222222"},
        )
    tilted = groups > 4
    labels = [text(label) for label in panel.labels]
    axes.set_xticks(range(groups), labels, fontsize="small", rotation=20 if tilted else 0,
                    ha="right" if tilted else "center")  # fmt: skip
    axes.set_ylabel(ylabel)
    if percent:
        axes.set_ylim(0, 105)
    axes.grid(axis="y", color="#dddddd", linewidth=0.6)
    axes.set_axisbelow(True)
    axes.set_title(text(panel.title), fontsize="medium")
    _legend(figure, [axes])
    return _render(figure)


def stacked_shares(panels: Sequence[Panel], xlabel: str = "share of samples (%)") -> Rendered:
    """Horizontal bars stacked to 100%, one panel per setting (say), a row per agent."""
    rows = max((len(p.labels) for p in panels), default=1)
    figure = _figure(8.0, 0.9 + len(panels) * (0.32 * rows + 0.7))
    axes_list = figure.subplots(len(panels), 1, sharex=True, squeeze=False)[:, 0]
    for axes, panel in zip(axes_list, panels, strict=True):
        left = [0.0] * len(panel.labels)
        for series in panel.series:
            widths = [v or 0.0 for v in series.values]
            axes.barh(range(len(panel.labels)), widths, left=left, color=series.colour,
                      hatch=series.hatch, edgecolor="#333333", linewidth=0.4,
                      label=text(series.name))  # fmt: skip
            left = [a + b for a, b in zip(left, widths, strict=True)]
        axes.set_yticks(range(len(panel.labels)), [text(x) for x in panel.labels],
                        fontsize="small")  # fmt: skip
        axes.invert_yaxis()
        axes.set_xlim(0, 100)
        axes.set_title(text(panel.title), fontsize="medium", loc="left")
    axes_list[-1].set_xlabel(xlabel)
    _legend(figure, list(axes_list))
    return _render(figure)


def line_panels(panels: Sequence[Panel], ylabel: str) -> Rendered:
    """Side-by-side panels of lines over the same positions, each with dashed references."""
    figure = _figure(max(6.0, 3.4 * len(panels)), 3.8)
    axes_list = figure.subplots(1, len(panels), sharey=True, squeeze=False)[0]
    for axes, panel in zip(axes_list, panels, strict=True):
        xs = range(len(panel.labels))
        for series in panel.series:
            points = [(x, v) for x, v in zip(xs, series.values, strict=True) if v is not None]
            errors = _errors(series)
            axes.errorbar([p[0] for p in points], [p[1] for p in points],
                          yerr=None if errors is None else
                          [[e[x] for x, _ in points] for e in errors],
                          color=series.colour, marker=series.marker, capsize=2,
                          linewidth=1.4, label=text(series.name))  # fmt: skip
            if series.reference is not None:
                axes.axhline(series.reference, color=series.colour, linestyle="--",
                             linewidth=0.9)  # fmt: skip
        axes.set_xticks(list(xs), [text(x) for x in panel.labels], fontsize="small")
        axes.set_ylim(0, 105)
        axes.grid(axis="y", color="#dddddd", linewidth=0.6)
        axes.set_title(text(panel.title), fontsize="medium")
    axes_list[0].set_ylabel(ylabel)
    _legend(figure, list(axes_list))
    return _render(figure)


def heatmap(rows: Sequence[str], columns: Sequence[str], counts: Sequence[Sequence[int]],
            title: str) -> Rendered:  # fmt: skip
    """Counts in a grid, each cell labelled (a sequential palette readable in grey)."""
    figure = _figure(max(6.0, 0.75 * len(columns) + 3.0), max(3.0, 0.34 * len(rows) + 1.6))
    axes = figure.add_subplot()
    image = axes.imshow(counts, cmap="cividis", aspect="auto")
    peak = max((max(row, default=0) for row in counts), default=0)
    for y, row in enumerate(counts):
        for x, value in enumerate(row):
            dark = value < peak / 2
            axes.text(x, y, str(value), ha="center", va="center", fontsize="x-small",
                      color="white" if dark else "black")  # fmt: skip
    axes.set_xticks(range(len(columns)), [text(c) for c in columns], rotation=30, ha="right",
                    fontsize="small")  # fmt: skip
    axes.set_yticks(range(len(rows)), [text(r) for r in rows], fontsize="small")
    axes.set_title(text(title), fontsize="medium")
    figure.colorbar(image, ax=axes, shrink=0.8, label="groups")
    return _render(figure)
