"""``uncobench import-inspect``: inspect_ai logs of the task as runs for report and compare."""

from __future__ import annotations

from pathlib import Path

import click
from rich.markup import escape

from ..errors import ConfigError
from ._app import EXIT_OK, cli
from ._eval import console

INSPECT_PACKAGE = "inspect_ai"


@cli.command("import-inspect")
@click.argument(
    "logs", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path)
)
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    required=True,
    help="Folder for the runs: one run directory per log, named after the log.",
)
def import_inspect_command(logs: tuple[Path, ...], out: Path) -> int:
    """Convert inspect_ai logs (.eval) of uncobench_z3/uncobench into run directories.

    Then `uncobench report OUT` and `uncobench compare OUT` read them like runs of
    `uncobench eval`; the scores are the ones inspect computed.
    """
    try:
        from ..integrations.inspect import import_inspect_logs
    except ModuleNotFoundError as error:
        if not (error.name or "").startswith(INSPECT_PACKAGE):
            raise
        raise ConfigError(
            "import-inspect needs inspect_ai: pip install 'uncobench-z3[inspect]'"
        ) from None
    for imported, folder in import_inspect_logs(list(logs), out):
        skipped = len(imported.skipped)
        note = f", {skipped} without a score (not imported)" if skipped else ""
        console.print(
            f"{escape(str(imported.path))}: {len(imported.records)} sample(s){note} -> "
            f"{escape(str(folder))}"
        )
    console.print(f"next: uncobench report {escape(str(out))} --out report/")
    return EXIT_OK
