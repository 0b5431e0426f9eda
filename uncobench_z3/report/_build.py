"""Assembling and writing the report: ``report.md`` (+ ``plots/*.png``) and ``report.html``."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..evaluation import (
    Comparison,
    SettingMetrics,
    compare_agents,
    compute_metrics,
    error_counts,
)
from ..models import ModelUsage
from ..spec import write_text_atomic
from ..stats import BootstrapConfig
from ._load import ReportData, load_report_data
from ._metrics_json import METRICS_FILE, metrics_document, write_metrics
from ._plots import render_plots
from ._render import html_page, markdown
from ._statistics import statistics_sections
from ._tables import (
    SETTING_TITLES,
    Section,
    Table,
    accuracy_table,
    attribution_table,
    behaviour_table,
    efficiency_table,
    interval_text,
    percent,
    retention_table,
    stats_tables,
    wrong_examples,
)
from ._validity import ReportValidity, report_validity, validity_section

MARKDOWN_FILE = "report.md"
HTML_FILE = "report.html"
PLOTS_DIR = "plots"
DEFAULT_TITLE = "uncobench evaluation report"


@dataclass
class ReportFiles:
    markdown: Path
    html: Path
    plots: list[Path] = field(default_factory=list)
    note: str | None = None
    """why plots are missing, if they are"""
    metrics: Path | None = None


def _runs_table(data: ReportData) -> Table:
    rows = []
    for run in data.runs:
        config = run.config
        rows.append(
            [
                str(run.path),
                str(config.get("benchmark", "")),
                ", ".join(config.get("agents", [])),
                ", ".join(config.get("settings", [])),
                str(config.get("seed", "")),
                str(config.get("epochs", 1)),
                str(config.get("budget", "")),
                f"{run.samples}/{run.planned}",
                run.config_hash[:12],
            ]
        )
    return Table(
        ["run", "benchmark", "agents", "settings", "seed", "epochs", "budget", "samples", "config"],
        rows,
    )


def _unavailable_text(data: ReportData) -> str:
    if not any(data.unavailable.values()):
        return "Every requested setting was available for every group."
    parts = [
        f"{SETTING_TITLES.get(s, s)}: {len(groups)} group(s)"
        for s, groups in data.unavailable.items()
        if groups
    ]
    return "Settings unavailable (skipped, excluded from retention): " + "; ".join(parts) + "."


def _interventions_section(metrics: list[SettingMetrics]) -> Section | None:
    if all(m.arm == "none" for m in metrics):
        return None
    rows = [m for m in metrics if m.setting != "reliable"]
    table = Table(
        ["agent", "setting", "arm", "accuracy", "95% CI", "n", "delivered", "Reliable"],
        [
            [
                m.agent, SETTING_TITLES.get(m.setting, m.setting), m.arm, percent(m.accuracy),
                interval_text(m.accuracy_ci), str(m.samples), str(m.delivered),
                percent(m.reliable_accuracy),
            ]
            for m in rows
        ],
    )  # fmt: skip
    text = (
        "Nested arms, each saying more: none, existence, location, diagnosis, action; the "
        "text arrives once, with the round in which a defect first shows ('delivered' counts "
        "the samples "
        "where it did). The Reliable column is the agent's accuracy on the same groups."
    )
    return Section("Causal interventions", text, [table])


def _usage_section(data: ReportData) -> Section | None:
    totals: dict[tuple[str, str], ModelUsage] = {}
    for sample in data.samples:
        for part, spent in sample.usage.items():
            who = sample.agent if part.startswith("agent") else sample.colleague
            key = (part.replace("_cached", " (cached)"), who)
            totals[key] = totals.get(key, ModelUsage()) + spent
    if not totals:
        return None
    rows = [
        [part, who, f"{u.input_tokens:,}", f"{u.output_tokens:,}",
         "–" if u.cost_usd is None else f"{u.cost_usd:.4f}"]
        for (part, who), u in sorted(totals.items())
    ]  # fmt: skip
    text = (
        "Tokens and list-price cost spent by language models. Rows marked (cached) are answers "
        "served from the response cache: what they cost when first made, not spent again."
    )
    return Section(
        "Model usage",
        text,
        [Table(["role", "model", "input tokens", "output tokens", "cost (USD)"], rows)],
    )


def _errors_section(data: ReportData) -> Section | None:
    """Error samples (model calls failed after retries): counted apart, never scored."""
    counts = error_counts(data.samples)
    if not counts:
        return None
    rows = [
        [agent, SETTING_TITLES.get(setting, setting), str(sum(c.values())),
         ", ".join(f"{kind}: {n}" for kind, n in sorted(c.items()))]
        for (agent, setting), c in counts.items()
    ]  # fmt: skip
    text = (
        "Samples whose model calls failed after their retries. They are left out of every "
        "metric above (not counted as wrong); running the same eval command tries them again."
    )
    return Section("Error samples", text, [Table(["agent", "setting", "errors", "by type"], rows)])


def build_sections(
    data: ReportData,
    metrics: list[SettingMetrics],
    comparisons: list[Comparison] | None = None,
    validity: ReportValidity | None = None,
) -> list[Section]:
    sections = [
        Section("Runs", _unavailable_text(data), [_runs_table(data)]),
        Section("Accuracy by setting", "", [accuracy_table(metrics)], ["accuracy"]),
        *statistics_sections(metrics, comparisons or []),
        Section("Drop from Reliable and retention", "", [retention_table(metrics)]),
        Section("Rounds, waits and redundant contacts", "", [efficiency_table(metrics)],
                ["rounds"]),
        Section("Behaviour after a defect", "", [behaviour_table(metrics)]),
        Section("Error attribution", "", [attribution_table(metrics)], ["attribution"]),
    ]  # fmt: skip
    extra = [_interventions_section(metrics), _usage_section(data), _errors_section(data)]
    sections += [section for section in extra if section is not None]
    sections.append(validity_section(data, validity))
    sections.append(Section("Wrong answers", "", [wrong_examples(data.samples)]))
    if data.manifest_stats:
        where = f"From {data.manifest_path}." if data.manifest_path else ""
        sections.append(Section("Benchmark statistics", where, stats_tables(data.manifest_stats)))
    return sections


def write_report(
    runs: str | Path,
    out: str | Path,
    title: str = DEFAULT_TITLE,
    plots: bool = True,
    bootstrap: BootstrapConfig | None = None,
) -> ReportFiles:
    """Read every run under ``runs`` and write the report (``report.md``, ``report.html``,
    ``metrics.json``, ``plots/``) into the folder ``out``."""
    bootstrap = bootstrap or BootstrapConfig()
    data = load_report_data(runs)
    metrics = compute_metrics(data.samples, data.unavailable, bootstrap)
    comparisons = compare_agents(data.samples, config=bootstrap)
    validity = report_validity(data, bootstrap)
    sections = build_sections(data, metrics, comparisons, validity)
    images, note = render_plots(metrics) if plots else ({}, None)
    target = Path(out)
    target.mkdir(parents=True, exist_ok=True)
    plot_paths: list[Path] = []
    plot_files: dict[str, str] = {}
    for name, png in images.items():
        path = target / PLOTS_DIR / f"{name}.png"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(png)
        plot_paths.append(path)
        plot_files[name] = f"{PLOTS_DIR}/{name}.png"
    if note:
        sections[0].text += f" Plots omitted: {note}."
    md_path, html_path = target / MARKDOWN_FILE, target / HTML_FILE
    metrics_path = target / METRICS_FILE
    document = metrics_document(data, metrics, comparisons, bootstrap, validity.cells)
    write_metrics(metrics_path, document)
    write_text_atomic(md_path, markdown(title, sections, plot_files))
    write_text_atomic(html_path, html_page(title, sections, images))
    return ReportFiles(md_path, html_path, plot_paths, note, metrics_path)
