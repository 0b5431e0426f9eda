"""``report.html``: one self-contained page - styles, figures (SVG), the trace viewer's code
and its compressed data inline; nothing fetched, no server needed.

Every string from a run goes through :func:`html.escape` (tables, captions, titles) or, in
the viewer, ``textContent``. A Content-Security-Policy allows only this page's own style and
script (by hash) and ``data:`` images, so even a string that escaped escaping could neither
run code nor reach the network.
"""

from __future__ import annotations

import base64
import hashlib
import html
from datetime import UTC, datetime
from importlib import resources

from .. import __version__
from ._plotting import Rendered
from ._tables import Section, Table
from ._viewer import ViewerData

TRACES_ID = "traces"


def asset(name: str) -> str:
    return resources.files(__package__).joinpath("assets", name).read_text(encoding="utf-8")


def _hash(source: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(source.encode()).digest()).decode() + "'"


def html_table(table: Table) -> str:
    parts = ['<div class="table-wrap"><table>']
    if table.caption:
        parts.append(f"<caption>{html.escape(table.caption)}</caption>")
    parts.append("<thead><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in table.headers)
                 + "</tr></thead><tbody>")  # fmt: skip
    for row in table.rows:
        parts.append("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>")
    if not table.rows:
        parts.append(f'<tr><td colspan="{len(table.headers)}">–</td></tr>')
    parts.append("</tbody></table></div>")
    return "\n".join(parts)


def _figure(title: str, caption: str, rendered: Rendered | None) -> str:
    if rendered is None:  # not drawn: the caption still says what the numbers are
        return f'<p class="note">{html.escape(caption)}</p>'
    data = base64.b64encode(rendered.svg).decode("ascii")
    alt = html.escape(title, quote=True)
    return (f'<figure><img alt="{alt}" src="data:image/svg+xml;base64,{data}">'
            f"<figcaption>{html.escape(caption)}</figcaption></figure>")  # fmt: skip


def _viewer() -> str:
    return """
<div id="viewer" class="viewer">
<form id="viewer-filters" class="filters" aria-label="filter samples"></form>
<div class="viewer-list">
<table><thead><tr><th>agent</th><th>setting</th><th>arm</th><th>epoch</th><th>group</th>
<th>outcome</th><th>attribution</th><th>rounds</th></tr></thead><tbody id="viewer-rows"></tbody>
</table>
<div class="pager"><button type="button" id="viewer-prev">previous</button>
<span id="viewer-page"></span><button type="button" id="viewer-next">next</button></div>
</div>
<div id="viewer-detail" class="viewer-detail" aria-live="polite">Choose a sample in the list
to read its conversation round by round.</div>
<noscript>The trace viewer needs JavaScript; the tables above do not.</noscript>
</div>"""


def _data_blocks(viewer: ViewerData) -> str:
    # base64 has no '<', so a data block can never end its script element early
    blocks = [f'<script type="application/octet-stream" id="viewer-index">{viewer.index}</script>']
    blocks += [
        f'<script type="application/octet-stream" id="viewer-chunk-{n}">{chunk}</script>'
        for n, chunk in enumerate(viewer.chunks)
    ]
    return "\n".join(blocks)


def html_page(
    title: str,
    sections: list[Section],
    figures: dict[str, tuple[str, str, Rendered | None]],
    viewer: ViewerData,
) -> str:
    """The page; ``figures``: name -> (title, caption, drawing or None)."""
    style, script = asset("report.css"), asset("viewer.js")
    policy = (f"default-src 'none'; img-src data:; style-src {_hash(style)}; "
              f"script-src {_hash(script)}; base-uri 'none'; form-action 'none'")  # fmt: skip
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    toc = "".join(
        f'<li><a href="#{html.escape(s.id)}">{html.escape(s.title)}</a></li>' for s in sections
    )
    body = []
    for section in sections:
        parts = [
            f'<section id="{html.escape(section.id)}">',
            f"<h2>{html.escape(section.title)}</h2>",
        ]
        if section.text:
            parts.append(f'<p class="note">{html.escape(section.text)}</p>')
        for name in section.figures:
            if name in figures:
                parts.append(_figure(*figures[name]))
        parts += [html_table(table) for table in section.tables]
        if section.id == TRACES_ID:
            parts.append(_viewer())
        parts.append("</section>")
        body.append("\n".join(parts))
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{policy}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<link rel="icon" href="data:,">\n'
        f"<title>{html.escape(title)}</title>\n<style>{style}</style></head><body>\n"
        f"<header><h1>{html.escape(title)}</h1>\n"
        f'<p class="note">uncobench-z3 {html.escape(__version__)}, generated {stamp}</p>\n'
        f'<nav class="toc" aria-label="sections"><ol>{toc}</ol></nav></header>\n<main>\n'
        + "\n".join(body)
        + "\n</main>\n"
        + _data_blocks(viewer)
        + f"\n<script>{script}</script>\n</body></html>\n"
    )
