"""``uncobench import-inspect``: inspect_ai logs of the task as runs for report and compare."""

from __future__ import annotations

from pathlib import Path

import click
from rich.markup import escape

from ..errors import ConfigError
from ._app import EXIT_OK, cli
from ._output import OutputTable, format_option, output_for

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
@format_option
def import_inspect_command(
    logs: tuple[Path, ...], out: Path, output_format: str, as_json: bool
) -> int:
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
    output = output_for(output_format, as_json)
    imported = import_inspect_logs(list(logs), out)
    if output.is_json:
        output.json(
            [
                {
                    "log": str(item.path),
                    "run": str(folder),
                    "samples": len(item.records),
                    "skipped": item.skipped,
                }
                for item, folder in imported
            ]
        )
        return EXIT_OK
    table = OutputTable.of("imported", ["log", "run directory", "samples", "not scored"])
    for item, folder in imported:
        table.add_row(item.path.name, str(folder), str(len(item.records)), str(len(item.skipped)))
    output.table(table)
    output.say(f"next: uncobench report {escape(str(out))} --out report/")
    return EXIT_OK
