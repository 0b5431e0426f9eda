"""Options several commands share, declared once (same name, range and help everywhere)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, cast

import click

from .._executor import EXECUTOR_KINDS, MAX_WORKERS, ExecutorKind, ExecutorOptions
from ..solver._factory import MAX_RLIMIT, MAX_SOLVER_SEED, MAX_TIMEOUT_MS

F = TypeVar("F", bound=Callable[..., Any])

timeout_ms_option = click.option(
    "--timeout-ms",
    type=click.IntRange(min=1, max=MAX_TIMEOUT_MS),
    default=2000,
    show_default=True,
    help="Solver timeout per query.",
)

rlimit_option = click.option(
    "--rlimit",
    type=click.IntRange(min=1, max=MAX_RLIMIT),
    default=50_000_000,
    show_default=True,
    help="Solver resource limit per query.",
)

solver_seed_type = click.IntRange(min=0, max=MAX_SOLVER_SEED)
"""the solver's random seed (Z3 reads it as an unsigned 32-bit number)"""


def workers_option(default_help: str) -> Callable[[F], F]:
    """``--workers``: local worker processes, or with Ray the tasks (shards) at once."""
    return click.option(
        "--workers",
        type=click.IntRange(min=1, max=MAX_WORKERS),
        default=None,
        help=f"Worker processes, or with --executor ray the tasks at once [default: "
        f"{default_help}].",
    )


def executor_options(command: F) -> F:
    """``--executor`` and ``--ray-address`` (see docs/scale.md)."""
    command = click.option(
        "--ray-address",
        default=None,
        help="The Ray cluster for --executor ray [default: RAY_ADDRESS, else a cluster "
        "running on this machine, else a local Ray started for this command].",
    )(command)
    return click.option(
        "--executor",
        type=click.Choice(EXECUTOR_KINDS),
        default="local",
        show_default=True,
        help="Where the work runs: worker processes here, or a Ray cluster "
        '(pip install "uncobench-z3[ray]").',
    )(command)


def executor_from(executor: str, ray_address: str | None, workers: int | None) -> ExecutorOptions:
    """The :class:`ExecutorOptions` of the command's options (checked: Ray is importable)."""
    options = ExecutorOptions(cast("ExecutorKind", executor), workers, ray_address)
    if options.kind == "ray":
        from .._ray import import_ray

        import_ray()
    return options
