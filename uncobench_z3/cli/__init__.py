"""The ``uncobench`` command line."""

from ._app import cli, main

__all__ = ["cli", "main"]
