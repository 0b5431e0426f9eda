"""The report's sections, in the paper's order, each with its figure, tables and a note
where the runs lack its data (a section is never empty).

Ids (the HTML anchors): ``runs``, then ``main-results`` (Fig. 3), ``retention``,
``behaviour`` (Figs. 4-5), ``missed-cost``, ``mixed`` (Fig. 6), ``interventions`` (Fig. 8),
``attribution``, ``validity`` (Table 7), ``dataset`` (Fig. 7, Tables 4-5), ``traces``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..evaluation import JudgeLine, error_counts
from ..models import ModelUsage
from ._analysis_tables import (
    attribution_table,
    behaviour_table,
    efficiency_table,
    interventions_table,
    missed_cost_table,
    mixed_table,
    single_defects_on_mixed_groups,
)
from ._dataset import domains_table, operations_table, other_stats_tables, pass_rate_table
from ._load import ReportData
from ._metrics_json import MetricsDocument
from ._statistics import statistics_tables
from ._tables import (
    SETTING_TITLES,
    Section,
    Table,
    accuracy_table,
    optional,
    plain,
    retention_table,
    wrong_examples,
)
from ._validity import llm_table, validity_details, validity_matrix
from ._viewer import ViewerData

PAPER_SECTIONS = ("main-results", "retention", "behaviour", "missed-cost", "mixed",
                  "interventions", "attribution", "validity", "dataset", "traces")  # fmt: skip
"""the paper's figures and tables, in the report's order (after ``runs``)"""


@dataclass
class SectionInputs:
    """What the sections are made of besides the metrics document."""

    data: ReportData
    document: MetricsDocument
    viewer: ViewerData
    judged: list[JudgeLine] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    """problems met while reading (a judge.jsonl, a benchmark)"""
    figure_note: str | None = None


def _runs_table(data: ReportData) -> Table:
    rows = []
    for run in data.runs:
        config = run.config
        rows.append([
            str(run.path), str(config.get("benchmark", "")), ", ".join(config.get("agents", [])),
            ", ".join(config.get("settings", [])), str(config.get("seed", "")),
            str(config.get("epochs", 1)), str(config.get("budget", "")),
            f"{run.samples}/{run.planned}", run.config_hash[:12],
        ])  # fmt: skip
    return Table(
        ["run", "benchmark", "agents", "settings", "seed", "epochs", "budget", "samples", "config"],
        rows,
    )


def _usage_table(data: ReportData) -> Table | None:
    totals: dict[tuple[str, str], ModelUsage] = {}
    for sample in data.samples:
        for part, spent in sample.usage.items():
            who = sample.agent if part.startswith("agent") else sample.colleague
            key = (part.replace("_cached", " (cached)"), who)
            totals[key] = totals.get(key, ModelUsage()) + spent
    if not totals:
        return None
    rows = [
        [part, who, _input_tokens(u), f"{u.output_tokens:,}",
         "–" if u.cost_usd is None else f"{u.cost_usd:.4f}"]
        for (part, who), u in sorted(totals.items())
    ]  # fmt: skip
    return Table(["role", "model", "input tokens", "output tokens", "cost (USD)"], rows,
                 "Tokens and list-price cost spent by language models. Rows marked (cached) are "
                 "answers served from the response cache: what they cost when first made, not "
                 "spent again.")  # fmt: skip


def _input_tokens(usage: ModelUsage) -> str:
    """The input tokens, and the calls whose prompt the server did not count (a lower bound)."""
    if not usage.unreported_input_calls:
        return f"{usage.input_tokens:,}"
    return f">= {usage.input_tokens:,} ({usage.unreported_input_calls:,} call(s) not reported)"


def _errors_table(data: ReportData) -> Table | None:
    """Error samples (model calls failed after retries): counted apart, never scored."""
    counts = error_counts(data.samples)
    if not counts:
        return None
    rows = [
        [agent, SETTING_TITLES.get(setting, setting), str(sum(c.values())),
         ", ".join(f"{kind}: {n}" for kind, n in sorted(c.items()))]
        for (agent, setting), c in counts.items()
    ]  # fmt: skip
    return Table(["agent", "setting", "errors", "by type"], rows,
                 "Error samples: their model calls failed after their retries. They are left "
                 "out of every metric (not counted as wrong); running the same eval command "
                 "tries them again.")  # fmt: skip


def _runs_section(inputs: SectionInputs) -> Section:
    data = inputs.data
    parts = [f"{len(data.samples)} distinct samples from {len(data.runs)} run(s)."]
    skipped = [f"{SETTING_TITLES.get(s, s)}: {len(g)} group(s)"
               for s, g in data.unavailable.items() if g]  # fmt: skip
    if skipped:
        parts.append(f"Settings unavailable (skipped, excluded from retention): "
                     f"{'; '.join(skipped)}.")  # fmt: skip
    else:
        parts.append("Every requested setting was available for every group.")
    benchmarks = data.benchmark_hashes()
    if len(benchmarks) > 1:
        parts.append(f"These runs come from {len(benchmarks)} different benchmarks (content "
                     f"hashes {', '.join(h[:12] for h in benchmarks)}): an agent's figures pool "
                     "the samples of all of them. A leaderboard ranks runs of one benchmark "
                     "only.")  # fmt: skip
    if inputs.figure_note:
        parts.append(f"Figures omitted: {inputs.figure_note}.")
    parts += inputs.notes
    tables = [_runs_table(data)]
    tables += [t for t in (_usage_table(data), _errors_table(data)) if t is not None]
    return Section("runs", "Runs", " ".join(parts), tables)


def build_sections(inputs: SectionInputs) -> list[Section]:
    document = inputs.document
    metrics = document.results
    cells = plain(metrics)
    settings = {m.setting for m in cells}
    defective = settings - {"reliable"}
    sections = [_runs_section(inputs)]
    sections.append(Section("main-results", "Accuracy by setting", "",
                            [accuracy_table(metrics),
                             *statistics_tables(metrics, document.comparisons)],
                            ["main-results"]))  # fmt: skip
    sections.append(Section(
        "retention", "Drop from Reliable and retention",
        "" if defective and "reliable" in settings else
        "Drop and retention need Reliable and at least one defective setting of the same "
        "groups; these runs lack one of them.",
        [retention_table(metrics)], ["retention"]))  # fmt: skip
    sections.append(Section(
        "behaviour", "Behaviour after a defect",
        "" if defective else "No defective setting in these runs: no defect to react to.",
        [behaviour_table(metrics), efficiency_table(metrics)], ["behaviour"]))  # fmt: skip
    pending = any(optional(m, "missed_cases") is not None for m in cells)
    sections.append(Section(
        "missed-cost", "The cost of a missed reply",
        ("" if "missed" in settings else "No Missed samples in these runs. ")
        + ("" if pending else "The share of Missed cases with more than one contact to the "
           "designated role needs pending-request metrics (missed_cases, "
           "missed_multi_contact), which these metrics do not carry yet; rounds, waits and "
           "contacts are shown."),
        [missed_cost_table(metrics)], ["missed-cost"]))  # fmt: skip
    sections.append(Section(
        "mixed", "Mixed against the single defects",
        "" if "mixed" in settings else "No Mixed samples in these runs (`--setting mixed`).",
        [mixed_table(metrics, single_defects_on_mixed_groups(inputs.data.samples))],
        ["mixed"]))  # fmt: skip
    sections.append(Section(
        "interventions", "Causal interventions",
        "" if document.interventions else "No intervention arms in these runs: `uncobench eval "
        "BENCH --agent A --intervention all` runs the five nested arms.",
        [interventions_table(document.interventions)] if document.interventions else [],
        ["interventions"]))  # fmt: skip
    sections.append(Section("attribution", "Error attribution and justified answers", "",
                            [attribution_table(metrics), wrong_examples(inputs.data.samples)],
                            ["attribution"]))  # fmt: skip
    sections.append(_validity_section(inputs))
    sections.append(_dataset_section(inputs))
    viewer = inputs.viewer
    sections.append(Section(
        "traces", "Trace viewer",
        f"{viewer.samples} sample(s); filter the list, then open a sample to read its "
        "conversation round by round: each request and reply (defective replies marked), "
        "waits and pending requests, the answer against gold, and the solver's note on what "
        "the evidence determined after each round. Conversations are compressed in this "
        f"page in {len(viewer.chunks)} chunk(s), each decoded only when opened."))  # fmt: skip
    return sections


def _validity_section(inputs: SectionInputs) -> Section:
    cells = inputs.document.validity
    notes = []
    if inputs.data.groups.notes:
        notes.append("Benchmark not readable, its replies are not judged: "
                     + "; ".join(inputs.data.groups.notes) + ".")  # fmt: skip
    if cells and all(c.mode == "scripted" for c in cells):
        notes.append("Every colleague here is scripted: its replies state the records by "
                     "construction (the judge confirms it); colleagues phrased by a model "
                     "(`--colleague-model`) add rows to compare.")  # fmt: skip
    if not cells:
        notes.append("No colleague reply in these runs.")
    tables = [validity_matrix(cells), validity_details(cells)] if cells else []
    if inputs.judged:
        tables.append(llm_table(inputs.judged))
    return Section("validity", "Role-agent validity", " ".join(notes), tables)


def _dataset_section(inputs: SectionInputs) -> Section:
    summary = inputs.document.dataset
    if summary is None:
        text = ("The runs' benchmark could not be read (neither its manifest nor its groups), "
                "so its domains, operations and pass rates are not shown.")  # fmt: skip
        return Section("dataset", "The benchmark", text)
    tables = [operations_table(summary), domains_table(summary)]
    rates = pass_rate_table(summary)
    if rates is not None:
        tables.append(rates)
    tables += other_stats_tables(inputs.data)
    return Section("dataset", "The benchmark", f"From {summary.source}.", tables, ["dataset"])
