"""``uncobench report``, ``uncobench leaderboard`` and ``uncobench view``."""

from __future__ import annotations

import shutil
import signal
import sys
import tempfile
import time
import webbrowser
from pathlib import Path

import click
from rich.markup import escape

from ..errors import ConfigError
from ..stats import BootstrapConfig
from ._app import EXIT_OK, cli
from ._eval import bootstrap_options
from ._output import Output, OutputTable, format_option, output_for


@cli.command("report")
@click.argument("runs", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    required=True,
    help="Folder for report.html, report.md, metrics.json and figures/.",
)
@click.option("--title", default="uncobench evaluation report", show_default=True)
@click.option(
    "--no-figures", "--no-plots", "no_figures", is_flag=True,
    help="Skip the figures (no matplotlib needed); the tables and the viewer stay.",
)  # fmt: skip
@bootstrap_options
def report_command(
    runs: Path,
    out: Path,
    title: str,
    no_figures: bool,
    bootstrap_samples: int,
    bootstrap_seed: int,
) -> int:
    """Write one self-contained HTML report of every run under RUNS (the paper's figures,
    the tables and a trace viewer), the same tables in Markdown, metrics.json (every figure,
    exact) and each figure as PNG and SVG."""
    from ..report import write_report

    config = BootstrapConfig(samples=bootstrap_samples, seed=bootstrap_seed)
    files = write_report(runs, out, title=title, figures=not no_figures, bootstrap=config)
    output = Output()
    output.say(
        f"wrote {escape(str(files.html))}, {escape(str(files.markdown))}, "
        f"{escape(str(files.metrics))} and {len(files.figures)} figure file(s)"
    )
    if files.replaced_incomplete:
        output.say(
            f"[yellow]note:[/] {escape(str(out))} held an incomplete report (an earlier report "
            "was stopped while writing it); it is replaced"
        )
    if files.note:
        output.say(f"[yellow]figures omitted:[/] {escape(files.note)}")
    if len(files.benchmarks) > 1:
        output.say(
            f"[yellow]note:[/] the runs come from {len(files.benchmarks)} different benchmarks; "
            "an agent's figures pool their samples (the report's Runs section lists them)"
        )
    return EXIT_OK


@cli.command("leaderboard")
@click.argument("runs", nargs=-1, required=True,
                type=click.Path(exists=True, file_okay=False, path_type=Path))  # fmt: skip
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    required=True,
    help="Folder for leaderboard.md, leaderboard.html and leaderboard.json.",
)
@bootstrap_options
@format_option
def leaderboard_command(
    runs: tuple[Path, ...],
    out: Path,
    bootstrap_samples: int,
    bootstrap_seed: int,
    output_format: str,
    as_json: bool,
) -> int:
    """Rank the agents of runs of one benchmark (each RUNS a run or a folder of runs; runs
    of different benchmarks are refused): one row per agent, accuracy per setting, overall
    and justified accuracy with 95% intervals, best first."""
    from ..report._leaderboard import leaderboard_table, rank_into_folder

    config = BootstrapConfig(samples=bootstrap_samples, seed=bootstrap_seed)
    board, paths = rank_into_folder(runs, config, out)
    output = output_for(output_format, as_json)
    if output.is_json:
        output.json(board.model_dump(mode="json", by_alias=True))
        return EXIT_OK
    table = leaderboard_table(board)
    shown = OutputTable.of("leaderboard", table.headers, left=2)
    for row in table.rows:
        shown.add_row(*row)
    output.table(shown)
    output.say(f"wrote {', '.join(escape(str(p)) for p in paths)}")
    return EXIT_OK


def _report_folder(path: Path, title: str) -> tuple[Path, bool]:
    """A folder holding a report of ``path`` (itself, if it is a report folder), and whether
    it was made here (a temporary folder, removed when the server stops)."""
    from ..report import HTML_FILE, write_report
    from ..report._build import INCOMPLETE_FILE

    if (path / INCOMPLETE_FILE).is_file():
        raise ConfigError(
            f"{path} holds an incomplete report (its writer was stopped before the last file; "
            "its files may come from two runs); run `uncobench report` on it again"
        )
    if (path / HTML_FILE).is_file():
        return path, False
    folder = Path(tempfile.mkdtemp(prefix="uncobench-view-"))
    try:
        write_report(path, folder, title=title)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return folder, True


@cli.command("view")
@click.argument("runs", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--port", default=0, show_default=True, type=click.IntRange(0, 65535),
              help="Port on 127.0.0.1 (0: a free one).")  # fmt: skip
@click.option("--no-browser", is_flag=True, help="Print the URL only; do not open a browser.")
@click.option("--title", default="uncobench evaluation report", show_default=True)
def view_command(runs: Path, port: int, no_browser: bool, title: str) -> int:
    """Serve the report of RUNS (a run, a folder of runs, or a report folder) on 127.0.0.1
    and open it in a browser (or print the URL); Ctrl-C stops."""
    from ..report import serve_report

    def terminated(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)  # `kill`, a closed terminal: the finally below still runs

    output = Output()
    # The handlers and the clean-up are in place before the report is written and before its
    # URL is printed: a `kill` or a Ctrl-C as soon as the URL is read (a script, a test)
    # still removes the report written here. (They were set after the URL was printed, and a
    # Ctrl-C sent on reading it, on a loaded machine, left the report behind.)
    previous = {sig: signal.signal(sig, terminated) for sig in (signal.SIGTERM, signal.SIGHUP)}
    folder: Path | None = None
    made = False
    try:
        folder, made = _report_folder(runs, title)
        try:
            server = serve_report(folder, port)
        except OSError as exc:
            raise ConfigError(f"cannot serve on 127.0.0.1:{port}: {exc.strerror or exc}") from None
        try:
            if made:
                output.say(f"wrote a report of {escape(str(runs))} (removed when this stops)")
            output.say(f"report at {escape(server.url)} (Ctrl-C stops)")
            sys.stdout.flush()
            if not no_browser and not webbrowser.open(server.url):
                output.say("no browser found here: open the URL above")
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            output.say("stopped")
        finally:
            server.stop()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if made and folder is not None:
            shutil.rmtree(folder, ignore_errors=True)
    return EXIT_OK
