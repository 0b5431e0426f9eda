"""Reports of evaluation runs: Markdown (+ PNG plots) and one self-contained HTML file.

matplotlib is imported only while plots are drawn; every text that comes from a benchmark
or a model is escaped.
"""

from ._build import (
    DEFAULT_TITLE,
    HTML_FILE,
    MARKDOWN_FILE,
    PLOTS_DIR,
    ReportFiles,
    build_sections,
    write_report,
)
from ._load import ReportData, RunInfo, find_run_dirs, load_report_data
from ._metrics_json import (
    METRICS_FILE,
    METRICS_SCHEMA,
    METRICS_SCHEMA_VERSION,
    MetricsDocument,
    metrics_document,
    read_metrics,
    write_metrics,
)
from ._plots import PLOTS, PlottingUnavailable, render_plots
from ._render import html_page, markdown, md_text
from ._statistics import comparison_tables, justified_table, pass_k_table, statistics_sections
from ._tables import SETTING_TITLES, Section, Table, answer_text, stats_tables
from ._validity import llm_table, programmatic_table, validity_section

__all__ = [
    "DEFAULT_TITLE",
    "HTML_FILE",
    "MARKDOWN_FILE",
    "METRICS_FILE",
    "METRICS_SCHEMA",
    "METRICS_SCHEMA_VERSION",
    "PLOTS",
    "PLOTS_DIR",
    "SETTING_TITLES",
    "MetricsDocument",
    "PlottingUnavailable",
    "ReportData",
    "ReportFiles",
    "RunInfo",
    "Section",
    "Table",
    "answer_text",
    "build_sections",
    "comparison_tables",
    "find_run_dirs",
    "html_page",
    "justified_table",
    "llm_table",
    "load_report_data",
    "markdown",
    "md_text",
    "metrics_document",
    "pass_k_table",
    "programmatic_table",
    "read_metrics",
    "render_plots",
    "statistics_sections",
    "stats_tables",
    "validity_section",
    "write_metrics",
    "write_report",
]
