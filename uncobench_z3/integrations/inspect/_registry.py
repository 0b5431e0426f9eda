"""inspect_ai's entry point (``[project.entry-points.inspect_ai]``): importing this module
registers the ``uncobench_z3/uncobench`` task."""

from ._task import uncobench

__all__ = ["uncobench"]
