"""``report.md``: the same sections and tables as the HTML page, figures as PNG files.

Every string that reaches the output goes through :func:`md_text`, which escapes HTML too
(Markdown renderers pass raw HTML through) and Markdown's own markup, so a model's answer
cannot add a link (an autolinked URL or e-mail address included), an image or emphasis:
names, replies and answers come from benchmarks and models and are never trusted.
"""

from __future__ import annotations

import html
import re

from .. import __version__
from .._textcap import one_line
from ._tables import Section, Table

# Characters that start Markdown inline markup: emphasis, code, links and images,
# strikethrough, table cells, escapes. Backslash-escaped, each shows as itself. An underscore
# inside a word (snake_case) cannot open emphasis, so it stays readable.
_MD_INLINE = re.compile(r"[\\`*\[\]!~|]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")
# What would open a block at the start of a line: a heading, a list item, a quote, a rule.
_MD_BLOCK_START = re.compile(r"^(\d*)([#+=-]|(?<=\d)[.)](?=\s|$))")
# Bare URLs, which GitHub-flavoured renderers turn into links: shown as code instead.
_URL = re.compile(r"(?:[A-Za-z][A-Za-z0-9+.-]*://|www\.)\S+")
# An at sign, as an HTML entity: it shows as itself, and no renderer finds an e-mail address
# (``bob@example.com``, which GitHub-flavoured renderers link as ``mailto:``) or an
# ``@mention`` across it (an entity is text of its own; a backslash escape of ``@`` would
# show in renderers that escape only CommonMark's list, such as Python-Markdown).
_AT = "&#64;"
# Every at sign but one that can start neither: after a letter or digit (no @mention) and
# before letters and digits that end the word (no domain: an e-mail domain has a dot), as
# in a metric's name ``pass@3``, which stays readable in the Markdown file itself.
_LINKABLE_AT = re.compile(r"@(?<![A-Za-z0-9]@)|@(?![A-Za-z0-9]*(?:$|[^A-Za-z0-9_.+&\\-]))")


def _code_span(text: str) -> str:
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    cell_safe = text.replace("|", "\\|")  # a pipe would end a table cell, even in code
    return f"{fence} {cell_safe} {fence}"


def md_text(text: str) -> str:
    """A table cell or line of Markdown that shows ``text`` as plain text: one line, HTML
    escaped, every inline markup character backslash-escaped, a block marker at the start
    escaped, bare URLs in code spans and at signs as entities (never links, images or
    e-mail links), control characters shown escaped (``\\x1b``: a terminal that shows the
    file would obey them)."""
    flat = " ".join(one_line(text).split())
    parts, position = [], 0
    for match in _URL.finditer(flat):
        parts.append(_escape_inline(flat[position : match.start()]))
        parts.append(_code_span(match.group(0)))
        position = match.end()
    parts.append(_escape_inline(flat[position:]))
    escaped = "".join(parts)
    return _MD_BLOCK_START.sub(r"\1\\\2", escaped)


def _escape_inline(text: str) -> str:
    escaped = _MD_INLINE.sub(lambda match: "\\" + match.group(0), html.escape(text, quote=False))
    return _LINKABLE_AT.sub(_AT, escaped) if "@" in escaped else escaped


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
