"""Optional integrations with other tools, each behind its own extra and imported lazily.

* :mod:`uncobench_z3.integrations.inspect` - UNCOBENCH as an inspect_ai Task
  (``pip install "uncobench-z3[inspect]"``; ``inspect eval uncobench_z3/uncobench``).

Importing this package imports none of them.
"""

__all__: list[str] = []
