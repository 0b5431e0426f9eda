"""The ``uncobench`` command line."""

from ._app import cli, main, run

__all__ = ["cli", "main", "run"]
