"""The command group and the one place errors become messages and exit codes.

Exit codes: 0 every check proved; 1 a check refuted (structural failures included);
2 the input cannot be used (not JSON, schema violation, missing file, bad option);
3 nothing refuted but something unknown; 4 an internal inconsistency (a bug: please report).
"""

from __future__ import annotations

import sys

import click
from rich.console import Console
from rich.markup import escape

from .. import __version__
from ..errors import ConsistencyError, InputError, ResumeError, UncobenchError

EXIT_OK, EXIT_REFUTED, EXIT_INPUT, EXIT_UNKNOWN, EXIT_BUG = 0, 1, 2, 3, 4

err_console = Console(stderr=True, highlight=False, soft_wrap=True)


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="uncobench")
def cli() -> None:
    """uncobench-z3: build, verify and run a benchmark of LLM agents with unreliable colleagues."""


def _register() -> None:
    from . import (  # noqa: F401  (commands register on import)
        _audit,
        _build,
        _compare,
        _eval,
        _followup,
        _judge,
        _perturb,
        _verify,
    )


def main(argv: list[str] | None = None) -> None:
    """Console entry point: user errors print one line and exit non-zero, never a traceback."""
    _register()
    try:
        code = cli.main(args=argv, prog_name="uncobench", standalone_mode=False)
    except click.exceptions.Abort:
        err_console.print("aborted")
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(EXIT_INPUT if exc.exit_code == 2 else exc.exit_code)
    except (InputError, ResumeError) as exc:
        err_console.print(f"[bold red]error:[/] {escape(str(exc))}")
        sys.exit(EXIT_INPUT)
    except ConsistencyError as exc:
        err_console.print(
            f"[bold red]internal inconsistency (please report):[/] {escape(str(exc))}"
        )
        sys.exit(EXIT_BUG)
    except UncobenchError as exc:
        err_console.print(f"[bold red]error:[/] {escape(str(exc))}")
        sys.exit(EXIT_REFUTED)
    except KeyboardInterrupt:
        err_console.print("interrupted; finished work is kept, run the same command to resume")
        sys.exit(130)
    sys.exit(code if isinstance(code, int) else EXIT_OK)
