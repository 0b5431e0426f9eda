"""The command group and the one place errors become messages and exit codes.

Exit codes: 0 every check proved; 1 a check refuted (structural failures included), or a
run stopped (a model error); 2 the input cannot be used (not JSON, schema violation, missing
file, bad option or model setting, a path that cannot be written); 3 nothing refuted but
something unknown; 4 an internal inconsistency or an unexpected error (a bug: please report;
its traceback is kept in a file the message names); 130 interrupted (finished work is kept);
141 the output's reader went away (``| head``). Every error is one line on stderr.
"""

from __future__ import annotations

import contextlib
import os
import select
import sys
import tempfile
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.markup import escape

from .. import __version__
from .._gc import end_without_collecting, fewer_collections
from .._secrets import redact, redact_cut, redacted_traceback
from .._textcap import one_line
from ..errors import (
    ConsistencyError,
    InputError,
    ModelConfigError,
    ResumeError,
    UncobenchError,
)

EXIT_OK, EXIT_REFUTED, EXIT_INPUT, EXIT_UNKNOWN, EXIT_BUG = 0, 1, 2, 3, 4
EXIT_INTERRUPTED = 130
EXIT_CLOSED_PIPE = 141
"""the reader of the output went away (``| head``): 128 + SIGPIPE, as a shell reports a
program the signal ended - not 1, which says a check was refuted"""

err_console = Console(stderr=True, highlight=False, soft_wrap=True)

INTERRUPTED_MESSAGE = "interrupted; finished work is kept, run the same command to resume"
"""the one line a command stopped by Ctrl-C prints (exit :data:`EXIT_INTERRUPTED`)"""


class _Interrupted(BaseException):
    """A command stopped by Ctrl-C, on its way out of Click: Click turns a KeyboardInterrupt
    into its ``Abort`` after printing a blank line, which :func:`main` could not tell from
    any other abort."""


class ClosedOutput(Exception):
    """The reader of standard output went away (``uncobench stats ... | head``): the command
    stops and exits with :data:`EXIT_CLOSED_PIPE`."""


def _stdout_closed() -> bool:
    """Whether standard output is a pipe whose reader has gone (the writer's end then
    reports an error condition); False where that cannot be told."""
    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLERR)
        return any(events & select.POLLERR for _, events in poller.poll(0))
    except (AttributeError, OSError, ValueError):  # no poll(), no file descriptor
        return False


class _Commands(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        # Click turns any EPIPE into exit code 1, which here says "a check refuted": a closed
        # stdout leaves Click's hands as its own exception instead (a broken pipe to a model
        # server stays an OSError)
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            raise _Interrupted from None
        except BrokenPipeError:
            if _stdout_closed():
                raise ClosedOutput from None
            raise


@click.group(
    cls=_Commands,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.version_option(__version__, prog_name="uncobench")
def cli() -> None:
    """uncobench-z3: build, verify and run a benchmark of LLM agents with unreliable colleagues."""


def _register() -> None:
    from . import (  # noqa: F401  (commands register on import)
        _audit,
        _build,
        _compare,
        _demo,
        _eval,
        _followup,
        _inspect,
        _judge,
        _perturb,
        _report,
        _verify,
    )


def _keep_traceback(exc: BaseException) -> Path:
    """Write the traceback of an unexpected error to a file for the bug report."""
    descriptor, name = tempfile.mkstemp(prefix="uncobench-traceback-", suffix=".txt")
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(redacted_traceback(exc))
    return Path(name)


def _said(exc: BaseException) -> str:
    """An error's message as printed: keys masked (any text can quote one), one line without
    control characters (a server's error body can hold escape sequences), markup escaped."""
    return escape(one_line(redact(str(exc))))


def _say_interrupted(line_break: bool = True) -> None:
    """Ctrl-C: the README's one line (after a line break on a terminal, which shows the
    ``^C``), exit :data:`EXIT_INTERRUPTED`."""
    if line_break and err_console.is_terminal:
        err_console.print()
    err_console.print(INTERRUPTED_MESSAGE)
    sys.exit(EXIT_INTERRUPTED)


def run() -> None:
    """The ``uncobench`` program: :func:`main` on the process's arguments, then the process
    ends without the interpreter's final walks of the heap (``uncobench_z3/_gc.py``: 0.2 s
    after any command, more after a large one). :func:`main` leaves the process as it was,
    for callers that go on (the tests, a notebook)."""
    try:
        main()
    finally:  # main ends in sys.exit, whose code this leaves as it is
        end_without_collecting()


def main(argv: list[str] | None = None) -> None:
    """Console entry point: user errors print one line and exit non-zero, never a traceback."""
    try:
        _register()  # (an interrupt while the commands import is an interrupt, not a traceback)
        with fewer_collections():
            code = cli.main(args=argv, prog_name="uncobench", standalone_mode=False)
    except ClosedOutput:
        # nothing more can be said on stdout, nor flushed at exit
        with contextlib.suppress(OSError, ValueError):  # a stdout with no file descriptor
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(EXIT_CLOSED_PIPE)
    except (_Interrupted, KeyboardInterrupt):
        _say_interrupted()
    except click.exceptions.Abort as exc:  # Ctrl-C while Click read the arguments
        if isinstance(exc.__cause__, KeyboardInterrupt):
            _say_interrupted(line_break=False)  # Click has printed one
        err_console.print("aborted")
        sys.exit(EXIT_INTERRUPTED)
    except click.UsageError as exc:  # one line, not the usage text: `--help` shows that
        command = exc.ctx.command_path if exc.ctx is not None else "uncobench"
        err_console.print(
            f"[bold red]error:[/] {escape(exc.format_message())} (see `{escape(command)} --help`)"
        )
        sys.exit(EXIT_INPUT)
    except click.ClickException as exc:
        exc.show()
        sys.exit(EXIT_INPUT if exc.exit_code == 2 else exc.exit_code)
    except (InputError, ResumeError, ModelConfigError) as exc:
        err_console.print(f"[bold red]error:[/] {_said(exc)}")
        sys.exit(EXIT_INPUT)
    except ConsistencyError as exc:
        err_console.print(f"[bold red]internal inconsistency (please report):[/] {_said(exc)}")
        sys.exit(EXIT_BUG)
    except UncobenchError as exc:
        err_console.print(f"[bold red]error:[/] {_said(exc)}")
        sys.exit(EXIT_REFUTED)
    except OSError as exc:  # a path that cannot be created, read or written
        where = f"{exc.filename}: " if exc.filename else ""
        err_console.print(
            f"[bold red]error:[/] {escape(one_line(redact(where + (exc.strerror or str(exc)))))}"
        )
        sys.exit(EXIT_INPUT)
    except Exception as exc:  # a bug: one line for the user, the traceback kept for the report
        err_console.print(
            f"[bold red]internal error (please report):[/] {escape(type(exc).__name__)}: "
            f"{escape(one_line(redact_cut(str(exc), 300)))} "
            f"(traceback in {escape(str(_keep_traceback(exc)))})"
        )
        sys.exit(EXIT_BUG)
    sys.exit(code if isinstance(code, int) else EXIT_OK)
