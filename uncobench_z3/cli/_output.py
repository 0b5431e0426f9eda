"""Output that fits where it goes: the one helper every command prints through.

- On a terminal (``--format auto``, the default): rich, as a person reads it - colours,
  boxed tables, the terminal's width (or ``COLUMNS``).
- Piped, redirected or in CI: **plain** text. A table is one line per row with columns as
  wide as their content: never cut with an ellipsis, never wrapped into a narrow column,
  whatever ``COLUMNS`` says (a log that cuts a row loses data, and ``grep`` finds a row only
  when it is one line). No colour, no progress bar.
- ``--format md``: Markdown tables and messages (escaped: names and replies come from
  benchmarks and models); ``--format json``: the command's data, and nothing else on stdout.

``NO_COLOR`` turns colour off everywhere (rich honours it); ``FORCE_COLOR`` /
``TTY_COMPATIBLE`` make a pipe count as a terminal, as in every rich program.

Commands describe a table once (:class:`OutputTable`: strings, never markup, so nothing
from a benchmark can inject styles) and :class:`Output` renders it for the destination.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple, TypeVar, cast

import click
from rich.cells import cell_len
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from .._textcap import one_line
from ..errors import ConfigError
from ..report import md_text
from ._app import ClosedOutput

FORMATS = ("auto", "rich", "plain", "md", "json")
Format = Literal["rich", "plain", "md", "json"]
Align = Literal["left", "right"]
F = TypeVar("F", bound=Callable[..., Any])


class Styled(NamedTuple):
    """A cell with a rich style (used on a terminal only; plain and Markdown drop it)."""

    text: str
    style: str


Cell = str | Styled


@dataclass(frozen=True)
class Column:
    header: str
    align: Align = "left"


@dataclass
class OutputTable:
    """A table of plain strings, rendered by :class:`Output` for the destination."""

    title: str
    columns: list[Column]
    rows: list[list[Cell]] = field(default_factory=list)
    boxed: bool = True
    """a box around the rich table (a report's evidence list reads better without)"""

    @classmethod
    def of(cls, title: str, headers: list[str], *, left: int = 1) -> OutputTable:
        """Columns from headers: the first ``left`` are names (left-aligned), the others
        numbers (right-aligned)."""
        columns = [Column(h, "left" if i < left else "right") for i, h in enumerate(headers)]
        return cls(title, columns)

    def add_row(self, *cells: Cell) -> None:
        if len(cells) != len(self.columns):
            raise ValueError(f"{self.title}: {len(cells)} cells for {len(self.columns)} columns")
        self.rows.append(list(cells))

    def records(self) -> list[dict[str, str]]:
        """The rows as objects keyed by column header (for JSON)."""
        headers = [c.header for c in self.columns]
        return [dict(zip(headers, map(cell_text, row), strict=True)) for row in self.rows]


def cell_text(cell: Cell) -> str:
    """The cell's text on one line (a newline would break a plain row in two), control
    characters shown escaped (a name read from a run folder can hold escape sequences)."""
    text = cell.text if isinstance(cell, Styled) else cell
    return one_line(" ".join(text.split()) if "\n" in text else text)


def plain_lines(table: OutputTable) -> list[str]:
    """The table as aligned plain text: widths from the content, rows never cut or wrapped."""
    header = [c.header for c in table.columns]
    body = [[cell_text(cell) for cell in row] for row in table.rows]
    widths = [max(cell_len(r[i]) for r in [header, *body]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        parts = []
        for text, width, column in zip(cells, widths, table.columns, strict=True):
            pad = " " * (width - cell_len(text))
            parts.append(pad + text if column.align == "right" else text + pad)
        return "  ".join(parts).rstrip()

    out = [one_line(table.title)] if table.title else []
    out += [line(header), line(["-" * cell_len(h) for h in header])]
    out += [line(row) for row in body]
    return out


def markdown_lines(table: OutputTable) -> list[str]:
    out = [f"**{md_text(table.title)}**", ""] if table.title else []
    out.append("| " + " | ".join(md_text(c.header) or " " for c in table.columns) + " |")
    out.append("|" + "".join("--:|" if c.align == "right" else "---|" for c in table.columns))
    for row in table.rows:
        out.append("| " + " | ".join(md_text(cell_text(cell)) for cell in row) + " |")
    return out


def rich_table(table: OutputTable) -> Table:
    # the title as Text, never markup: it holds agents' names (``compare``)
    title = Text(one_line(table.title)) if table.title else None
    rendered = Table(title=title, header_style="bold", title_justify="left")
    if not table.boxed:
        rendered.box, rendered.pad_edge = None, False
    for column in table.columns:
        # fold, not ellipsis: on a narrow terminal a long name breaks across lines, never cut
        rendered.add_column(column.header, justify=column.align, overflow="fold")
    for row in table.rows:
        rendered.add_row(
            *(
                Text(cell_text(c), style=c.style) if isinstance(c, Styled) else Text(cell_text(c))
                for c in row
            )
        )
    return rendered


class _StdoutConsole(Console):
    def on_broken_pipe(self) -> None:
        # rich's own answer is SystemExit(1), which here would say "a check was refuted"
        self.quiet = True
        raise ClosedOutput


class Output:
    """Where a command's output goes, in which format (``auto`` decides by the terminal)."""

    def __init__(self, fmt: str = "auto") -> None:
        if fmt not in FORMATS:
            raise ValueError(f"unknown output format {fmt!r}")
        terminal = Console().is_terminal
        chosen = ("rich" if terminal else "plain") if fmt == "auto" else fmt
        self.format = cast("Format", chosen)
        plain = self.format != "rich"
        # Plain text is never cut: soft wrapping leaves long lines to the reader's pager.
        options: dict[str, Any] = {"color_system": None} if plain else {}
        self.console = _StdoutConsole(highlight=False, soft_wrap=True, **options)
        self.err = Console(stderr=True, highlight=False, soft_wrap=True, **options)
        # Spacing of plain and Markdown output: one blank line between a table and what is
        # around it, none at the very start and never two in a row.
        self._fresh = True  # nothing printed yet, or the last line was blank
        self._after_table = False

    @property
    def is_json(self) -> bool:
        return self.format == "json"

    def _line_break(self, before_table: bool = False) -> None:
        if self.format != "rich" and not self._fresh and (self._after_table or before_table):
            click.echo("")
        self._fresh = self._after_table = False

    def say(self, markup: str) -> None:
        """A message (rich markup; escape what came from input). With JSON on stdout,
        messages go to stderr so that stdout stays one JSON document. In Markdown, the
        message's text is escaped line by line as a table cell is (:func:`md_text`): a name
        or a reply quoted in it is shown, never rendered as HTML, a link or an image."""
        if self.is_json:
            self.err.print(markup)
            return
        self._line_break()
        if self.format == "md":
            text = Text.from_markup(markup).plain
            click.echo("\n".join(md_text(line) for line in text.split("\n")))
            return
        self.console.print(markup)

    def blank(self) -> None:
        if not self.is_json and not self._fresh:
            self.console.print()
        self._fresh, self._after_table = True, False

    def heading(self, text: str, *details: Cell) -> None:
        """A section heading (``text`` is plain, never markup) with styled details."""
        if self.format == "md":
            self._line_break()
            click.echo(f"### {' · '.join(md_text(cell_text(p)) for p in (text, *details))}")
            return
        line = Text(text, style="bold")
        for detail in details:
            line.append("  ")
            line.append(*(detail if isinstance(detail, Styled) else (detail,)))
        if self.is_json:
            self.err.print(line)
            return
        self._line_break()
        self.console.print(line)

    def table(self, table: OutputTable) -> None:
        if self.format == "rich":
            self.console.print(rich_table(table))
        elif self.format in ("md", "plain"):
            self._line_break(before_table=bool(table.title))
            lines = markdown_lines(table) if self.format == "md" else plain_lines(table)
            click.echo("\n".join(lines))
        else:
            raise ValueError("a JSON output prints data, not tables: use Output.json")
        self._fresh, self._after_table = False, True

    def json(self, data: Any) -> None:
        click.echo(json.dumps(data, indent=2))


def format_option(func: F) -> F:
    """``--format`` (and ``--json``, its shorthand) for a command that prints tables."""

    command = func

    @functools.wraps(command)
    def checked(*args: Any, **kwargs: Any) -> Any:
        # before the command's work: --json --format md would print JSON, not what was asked
        if kwargs.get("as_json") and kwargs.get("output_format") not in ("auto", "json"):
            raise ConfigError(f"--json and --format {kwargs['output_format']} contradict: give one")
        return command(*args, **kwargs)

    func = cast("F", checked)
    func = click.option(
        "--json", "as_json", is_flag=True, help="Print the data as JSON (same as --format json)."
    )(func)
    return click.option(
        "--format",
        "output_format",
        type=click.Choice(FORMATS),
        default="auto",
        show_default=True,
        help="auto: rich on a terminal, plain text when piped or in CI (rows never cut); "
        "md: Markdown tables; json: the data.",
    )(func)


def output_for(output_format: str, as_json: bool = False) -> Output:
    return Output("json" if as_json else output_format)


class ProgressBar:
    """A rich bar on stderr when it is a terminal and the bar is wanted; nothing otherwise
    (a log file gets no bar). The bar appears at the first update, so work that turns out
    to be done already (a reused build) draws no empty bar."""

    def __init__(self, label: str, unit: str, enabled: bool) -> None:
        self._label, self._unit = label, unit
        console = Console(stderr=True)
        self._console = console if enabled and console.is_terminal else None
        self._progress: Progress | None = None
        self._task: Any = None

    def update(self, completed: int, total: int, note: str = "") -> None:
        if self._console is None:
            return
        if self._progress is None:
            self._progress = Progress(
                TextColumn(f"[bold]{self._label}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn(f"{self._unit} {{task.fields[note]}}"),
                TimeElapsedColumn(),
                console=self._console,
            )
            self._progress.start()
            self._task = self._progress.add_task(self._label, total=total, note=note)
        self._progress.update(self._task, completed=completed, total=total, note=note)

    def close(self) -> None:
        if self._progress is not None:
            self._progress.stop()


@contextmanager
def progress_bar(label: str, unit: str, enabled: bool = True) -> Iterator[ProgressBar]:
    bar = ProgressBar(label, unit, enabled)
    try:
        yield bar
    finally:
        bar.close()
