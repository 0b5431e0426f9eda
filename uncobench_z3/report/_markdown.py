"""``report.md``: the same sections and tables as the HTML page, figures as PNG files.

Every string that reaches the output goes through :func:`md_text`, which escapes HTML too
(Markdown renderers pass raw HTML through): names, replies and answers come from benchmarks
and models and are never trusted.
"""

from __future__ import annotations

import html

from .. import __version__
from ._tables import Section, Table


def md_text(text: str) -> str:
    """A table cell or line of Markdown: HTML escaped, pipes escaped, one line."""
    escaped = html.escape(text, quote=False).replace("|", "\\|")
    return " ".join(escaped.split())


def md_table(table: Table) -> list[str]:
    lines = []
    if table.caption:
        lines += [f"*{md_text(table.caption)}*", ""]
    lines.append("| " + " | ".join(md_text(h) or " " for h in table.headers) + " |")
    lines.append("|" + "---|" * len(table.headers))
    for row in table.rows:
        lines.append("| " + " | ".join(md_text(c) for c in row) + " |")
    if not table.rows:
        lines.append("| " + " | ".join("–" for _ in table.headers) + " |")
    return [*lines, ""]


def markdown(
    title: str, sections: list[Section], figures: dict[str, tuple[str, str, str | None]]
) -> str:
    """The document; ``figures``: name -> (title, caption, PNG path relative to the
    document, or None when it was not drawn)."""
    lines = [f"# {md_text(title)}", "", f"*uncobench-z3 {__version__}*", ""]
    for section in sections:
        lines += [f"## {md_text(section.title)}", ""]
        if section.text:
            lines += [md_text(section.text), ""]
        for name in section.figures:
            if name in figures:
                figure_title, caption, path = figures[name]
                if path is not None:
                    lines += [f"![{md_text(figure_title)}]({path})", ""]
                lines += [f"*{md_text(caption)}*", ""]
        for table in section.tables:
            lines += md_table(table)
    return "\n".join(lines).rstrip() + "\n"
