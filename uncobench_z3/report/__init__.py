"""Reports of evaluation runs: one self-contained HTML page (the paper's figures, tables and a
trace viewer), the same tables in Markdown, ``metrics.json``, figures as PNG and SVG; a
leaderboard over runs; a local server to view a report.

matplotlib is imported only while figures are drawn; every text that comes from a benchmark
or a model is escaped.
"""

from ._build import (
    DEFAULT_TITLE,
    FIGURES_DIR,
    HTML_FILE,
    MARKDOWN_FILE,
    ReportFiles,
    write_report,
)
from ._dataset import DatasetSummary, dataset_summary
from ._figures import Figures, FigureSpec, figure_specs, render_figures
from ._html import html_page
from ._interventions import InterventionPanel, intervention_panels
from ._leaderboard import (
    LEADERBOARD_FILES,
    Leaderboard,
    LeaderboardRow,
    build_leaderboard,
    rank_rows,
    write_leaderboard,
)
from ._load import (
    BenchmarkGroups,
    ReportData,
    RunInfo,
    TraceVisitor,
    ViewReply,
    ViewRound,
    find_run_dirs,
    load_report_data,
    open_report_data,
    read_runs,
    read_samples,
)
from ._markdown import markdown, md_text
from ._metrics_json import (
    METRICS_FILE,
    METRICS_SCHEMA,
    METRICS_SCHEMA_VERSION,
    MetricsDocument,
    metrics_document,
    read_metrics,
    write_metrics,
)
from ._plotting import PlottingUnavailable
from ._sections import PAPER_SECTIONS, SectionInputs, build_sections
from ._serve import ReportServer, serve_report
from ._statistics import comparison_tables, justified_table, pass_k_table, statistics_tables
from ._tables import SETTING_TITLES, Section, Table, answer_text, stats_tables
from ._validity import ValidityJudge, llm_table, validity_details, validity_matrix
from ._viewer import TraceViewer, ViewerData

__all__ = [
    "DEFAULT_TITLE",
    "FIGURES_DIR",
    "HTML_FILE",
    "LEADERBOARD_FILES",
    "MARKDOWN_FILE",
    "METRICS_FILE",
    "METRICS_SCHEMA",
    "METRICS_SCHEMA_VERSION",
    "PAPER_SECTIONS",
    "SETTING_TITLES",
    "BenchmarkGroups",
    "DatasetSummary",
    "FigureSpec",
    "Figures",
    "InterventionPanel",
    "Leaderboard",
    "LeaderboardRow",
    "MetricsDocument",
    "PlottingUnavailable",
    "ReportData",
    "ReportFiles",
    "ReportServer",
    "RunInfo",
    "Section",
    "SectionInputs",
    "Table",
    "TraceViewer",
    "TraceVisitor",
    "ValidityJudge",
    "ViewReply",
    "ViewRound",
    "ViewerData",
    "answer_text",
    "build_leaderboard",
    "build_sections",
    "comparison_tables",
    "dataset_summary",
    "figure_specs",
    "find_run_dirs",
    "html_page",
    "intervention_panels",
    "justified_table",
    "llm_table",
    "load_report_data",
    "markdown",
    "md_text",
    "metrics_document",
    "open_report_data",
    "pass_k_table",
    "rank_rows",
    "read_metrics",
    "read_runs",
    "read_samples",
    "render_figures",
    "serve_report",
    "statistics_tables",
    "stats_tables",
    "validity_details",
    "validity_matrix",
    "write_leaderboard",
    "write_metrics",
    "write_report",
]
