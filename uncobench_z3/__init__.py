"""uncobench-z3: a benchmark of LLM agents collaborating with unreliable colleagues.

Tasks are proved well-posed by Z3: exactly one answer, every role needed, every injected
defect decision-relevant. Subpackages, in the direction of their dependencies:
``spec`` -> ``solver`` -> ``settings`` -> ``construct`` -> ``evaluation`` -> ``report`` -> ``cli``;
``models`` holds the LLM adapters used by construction and evaluation; ``stats`` (intervals,
bootstrap, pass^k, paired tests) sits below all of them and imports none.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
