"""Options several commands share, declared once (same name, range and help everywhere)."""

from __future__ import annotations

import click

timeout_ms_option = click.option(
    "--timeout-ms",
    type=click.IntRange(min=1),
    default=2000,
    show_default=True,
    help="Solver timeout per query.",
)

rlimit_option = click.option(
    "--rlimit",
    type=click.IntRange(min=1),
    default=50_000_000,
    show_default=True,
    help="Solver resource limit per query.",
)
