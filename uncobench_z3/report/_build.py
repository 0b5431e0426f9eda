"""Writing the report: ``report.html``, ``report.md``, ``metrics.json`` and ``figures/``.

The folder is locked (one writer of any kind) before anything is read; everything is read and
computed before the first file is written; every file is replaced atomically. The set of
files is not one atomic step, so ``report.incomplete`` is written before the first file and
removed after the last: a report killed while replacing an earlier one leaves it, ``view``
refuses such a folder and the next ``report`` says it replaces an incomplete report.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from pathlib import Path

from .._outdir import check_output_folder, incomplete_marker, lock_output
from ..evaluation import compare_agents, compute_metrics
from ..spec import remove_stale_temps, write_bytes_atomic, write_text_atomic
from ..stats import BootstrapConfig
from ._dataset import dataset_summary
from ._figures import Figures, render_figures
from ._html import html_page
from ._interventions import intervention_panels
from ._load import open_report_data, read_runs
from ._markdown import markdown
from ._metrics_json import METRICS_FILE, MetricsDocument, metrics_document, write_metrics
from ._sections import SectionInputs, build_sections
from ._tables import Section
from ._validity import ValidityJudge, llm_judgements
from ._viewer import TraceViewer, ViewerData

MARKDOWN_FILE = "report.md"
HTML_FILE = "report.html"
FIGURES_DIR = "figures"
REPORT_FILES = (HTML_FILE, MARKDOWN_FILE, METRICS_FILE)
"""what makes a folder a report folder (besides ``figures/``)"""
INCOMPLETE_FILE = "report.incomplete"
"""present while a report's files are being replaced (see the module docstring)"""
DEFAULT_TITLE = "uncobench evaluation report"


@dataclass
class ReportFiles:
    markdown: Path
    html: Path
    metrics: Path
    figures: list[Path] = field(default_factory=list)
    """every figure as PNG and SVG"""
    note: str | None = None
    """why figures are missing, if some are"""
    benchmarks: list[str] = field(default_factory=list)
    """the content hashes of the runs' benchmarks (more than one: their samples are pooled)"""
    timings: dict[str, float] = field(default_factory=dict)
    """CPU seconds per stage (read, metrics, figures, viewer, write)"""
    replaced_incomplete: bool = False
    """the folder held a report whose writer had been interrupted (now replaced)"""


def check_report_folder(out: str | Path) -> None:
    """Refuse ``out`` unless it is new, empty or a report's folder (a file, a run folder or
    someone's papers is not)."""
    check_output_folder(out, REPORT_FILES, "report folder", allowed=(FIGURES_DIR, INCOMPLETE_FILE))


_ANY_NAME = re.compile(r".+")


def remove_stale_report_temps(target: Path) -> list[Path]:
    """The temporary files that a report writer killed part way left in its folder (and in
    its figures folder, which is the report's alone; the lock's own go when it is taken);
    call it holding the folder's lock."""
    removed = remove_stale_temps(target, (*REPORT_FILES, INCOMPLETE_FILE))
    return removed + remove_stale_temps(target / FIGURES_DIR, (_ANY_NAME,))


def write_report(
    runs: str | Path,
    out: str | Path,
    title: str = DEFAULT_TITLE,
    figures: bool = True,
    bootstrap: BootstrapConfig | None = None,
    *,
    plots: bool | None = None,
) -> ReportFiles:
    """Read every run under ``runs`` and write the report into the folder ``out``
    (``figures=False``: no matplotlib; ``plots`` is that option's older name)."""
    figures = figures if plots is None else plots
    target = Path(out)
    # before any work: one writer of any kind in ``out``, and a file, a run folder or
    # someone's papers is not a report folder
    with lock_output(target, "report", check=lambda: check_report_folder(target)):
        remove_stale_report_temps(target)
        return _compute_and_write(runs, target, title, figures, bootstrap or BootstrapConfig())


def _compute_and_write(
    runs: str | Path, target: Path, title: str, figures: bool, bootstrap: BootstrapConfig
) -> ReportFiles:
    clock = time.process_time()
    timings: dict[str, float] = {}

    def lap(stage: str) -> None:
        nonlocal clock
        now = time.process_time()
        timings[stage] = now - clock
        clock = now

    data = open_report_data(runs)
    viewer, judge = TraceViewer(data.groups), ValidityJudge(data.groups)
    read_runs(data, [viewer, judge])
    lap("read")
    metrics = compute_metrics(data.samples, data.unavailable, bootstrap)
    comparisons = compare_agents(data.samples, config=bootstrap)
    panels = intervention_panels(data.samples, data.unavailable, bootstrap)
    judged, notes = llm_judgements(data)
    document = metrics_document(data, metrics, comparisons, bootstrap, panels,
                                judge.results(bootstrap), dataset_summary(data))  # fmt: skip
    lap("metrics")
    drawn = render_figures(document, draw=figures)
    lap("figures")
    viewer_data = viewer.payload()
    lap("viewer")
    sections = build_sections(SectionInputs(data, document, viewer_data, judged, notes,
                                            drawn.note))  # fmt: skip
    # the set of files under ``report.incomplete`` (each file is replaced atomically)
    with incomplete_marker(target / INCOMPLETE_FILE, "report") as interrupted:
        files = _write(target, title, drawn, sections, document, viewer_data)
    files.replaced_incomplete = interrupted
    files.timings = timings
    files.benchmarks = data.benchmark_hashes()
    lap("write")
    return files


def _write(
    target: Path,
    title: str,
    drawn: Figures,
    sections: list[Section],
    document: MetricsDocument,
    viewer_data: ViewerData,
) -> ReportFiles:
    """The report's files, each replaced atomically."""
    figure_files: list[Path] = []
    for name, rendered in drawn.rendered.items():
        for suffix, content in (("png", rendered.png), ("svg", rendered.svg)):
            path = target / FIGURES_DIR / f"{name}.{suffix}"
            write_bytes_atomic(path, content)
            figure_files.append(path)
    md_figures = {name: (spec.title, spec.caption,
                         f"{FIGURES_DIR}/{name}.png" if name in drawn.rendered else None)
                  for name, spec in drawn.specs.items()}  # fmt: skip
    html_figures = {name: (spec.title, spec.caption, drawn.rendered.get(name))
                    for name, spec in drawn.specs.items()}  # fmt: skip
    # an earlier report's figures that this one does not have (--no-figures, a figure that
    # failed) would be taken for this report's: they go
    for stale in sorted((target / FIGURES_DIR).glob("*")):
        if stale.suffix in (".png", ".svg") and stale not in figure_files:
            stale.unlink(missing_ok=True)
    files = ReportFiles(target / MARKDOWN_FILE, target / HTML_FILE, target / METRICS_FILE,
                        figure_files, drawn.note)  # fmt: skip
    write_metrics(files.metrics, document)
    write_text_atomic(files.markdown, markdown(title, sections, md_figures))
    write_text_atomic(files.html, html_page(title, sections, html_figures, viewer_data))
    return files
