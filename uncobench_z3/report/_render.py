"""Markdown and self-contained HTML from the report's sections.

Every string that reaches the output goes through :func:`html.escape` (HTML) or
:func:`md_text` (Markdown, which escapes HTML too, since Markdown renderers pass raw HTML
through, and escapes Markdown's own markup, so a model's answer cannot add a link, an image
or emphasis): names, replies and answers come from benchmarks and models and are never
trusted.
"""

from __future__ import annotations

import base64
import html
import re
from datetime import UTC, datetime

from .. import __version__
from ._tables import Section, Table

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:2rem auto;max-width:72rem;
color:#1d1d1f;padding:0 1rem;line-height:1.45}
h1{font-size:1.6rem}h2{font-size:1.25rem;margin-top:2.2rem;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:.6rem 0 1.2rem;font-size:.86rem}
th,td{border:1px solid #d4d4d8;padding:.25rem .5rem;text-align:left;vertical-align:top}
th{background:#f4f4f5}caption{caption-side:top;text-align:left;color:#52525b;padding:.2rem 0}
img{max-width:100%;margin:.5rem 0}p.note{color:#52525b}
"""


# Characters that start Markdown inline markup: emphasis, code, links and images,
# strikethrough, table cells, escapes. Backslash-escaped, each shows as itself. An underscore
# inside a word (snake_case) cannot open emphasis, so it stays readable.
_MD_INLINE = re.compile(r"[\\`*\[\]!~|]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")
# What would open a block at the start of a line: a heading, a list item, a quote, a rule.
_MD_BLOCK_START = re.compile(r"^(\d*)([#+=-]|(?<=\d)[.)](?=\s|$))")
# Bare URLs, which GitHub-flavoured renderers turn into links: shown as code instead.
_URL = re.compile(r"(?:[A-Za-z][A-Za-z0-9+.-]*://|www\.)\S+")


def _code_span(text: str) -> str:
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    cell_safe = text.replace("|", "\\|")  # a pipe would end a table cell, even in code
    return f"{fence} {cell_safe} {fence}"


def md_text(text: str) -> str:
    """A table cell or line of Markdown that shows ``text`` as plain text: one line, HTML
    escaped, every inline markup character backslash-escaped, a block marker at the start
    escaped, bare URLs in code spans (never links or images)."""
    flat = " ".join(text.split())
    parts, position = [], 0
    for match in _URL.finditer(flat):
        parts.append(_escape_inline(flat[position : match.start()]))
        parts.append(_code_span(match.group(0)))
        position = match.end()
    parts.append(_escape_inline(flat[position:]))
    escaped = "".join(parts)
    return _MD_BLOCK_START.sub(r"\1\\\2", escaped)


def _escape_inline(text: str) -> str:
    return _MD_INLINE.sub(lambda match: "\\" + match.group(0), html.escape(text, quote=False))


def _md_table(table: Table) -> list[str]:
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


def markdown(title: str, sections: list[Section], plot_files: dict[str, str]) -> str:
    lines = [f"# {md_text(title)}", "", f"*uncobench-z3 {__version__}*", ""]
    for section in sections:
        lines += [f"## {md_text(section.title)}", ""]
        if section.text:
            lines += [md_text(section.text), ""]
        for name in section.plots:
            if name in plot_files:
                lines += [f"![{md_text(section.title)}]({plot_files[name]})", ""]
        for table in section.tables:
            lines += _md_table(table)
    return "\n".join(lines).rstrip() + "\n"


def _html_table(table: Table) -> str:
    parts = ["<table>"]
    if table.caption:
        parts.append(f"<caption>{html.escape(table.caption)}</caption>")
    parts.append("<tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in table.headers) + "</tr>")
    for row in table.rows:
        parts.append("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>")
    parts.append("</table>")
    return "\n".join(parts)


def html_page(title: str, sections: list[Section], plots: dict[str, bytes]) -> str:
    """One HTML file: styles inline, plots as base64 PNG data URIs, no scripts."""
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    body = [
        f"<h1>{html.escape(title)}</h1>",
        f'<p class="note">uncobench-z3 {html.escape(__version__)}, generated {stamp}</p>',
    ]
    for section in sections:
        body.append(f"<h2>{html.escape(section.title)}</h2>")
        if section.text:
            body.append(f'<p class="note">{html.escape(section.text)}</p>')
        for name in section.plots:
            if name in plots:
                data = base64.b64encode(plots[name]).decode("ascii")
                alt = html.escape(section.title, quote=True)
                body.append(f'<img alt="{alt}" src="data:image/png;base64,{data}">')
        body += [_html_table(table) for table in section.tables]
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title><style>{CSS}</style></head><body>\n"
        + "\n".join(body)
        + "\n</body></html>\n"
    )
