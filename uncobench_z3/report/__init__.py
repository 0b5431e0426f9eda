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
from ._plots import PLOTS, PlottingUnavailable, render_plots
from ._render import html_page, markdown, md_text
from ._tables import SETTING_TITLES, Section, Table, stats_tables
from ._validity import llm_table, programmatic_table, validity_section

__all__ = [
    "DEFAULT_TITLE",
    "HTML_FILE",
    "MARKDOWN_FILE",
    "PLOTS",
    "PLOTS_DIR",
    "SETTING_TITLES",
    "PlottingUnavailable",
    "ReportData",
    "ReportFiles",
    "RunInfo",
    "Section",
    "Table",
    "build_sections",
    "find_run_dirs",
    "html_page",
    "llm_table",
    "load_report_data",
    "markdown",
    "md_text",
    "programmatic_table",
    "render_plots",
    "stats_tables",
    "validity_section",
    "write_report",
]
