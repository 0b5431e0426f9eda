"""How a run is carried out: :class:`EvalOptions`.

Nothing here changes a sample's record, so none of it is part of a run's configuration
(:class:`~._plan.RunConfig`, which says *what* runs): a run started with one concurrency,
executor or number of workers resumes with any other.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any

from .._executor import ExecutorOptions
from ..errors import ConfigError
from ._errors import ErrorBudget
from ._models import CallPolicy

DEFAULT_CONCURRENCY = 8


@dataclass(frozen=True)
class EvalOptions:
    """The options of :func:`~._runner.run_evaluation` (and ``uncobench eval``)."""

    concurrency: int | None = None
    """samples played at once, across all workers (None: :data:`DEFAULT_CONCURRENCY`, or
    fewer when a model the run calls serves fewer calls at once, as its server says)"""
    restart: bool = False
    """set the existing log aside and run everything"""
    force: bool = False
    """resume despite a changed configuration, keeping the samples that still apply"""
    progress: bool = False
    """a progress bar on stderr (when it is a terminal)"""
    max_errors: ErrorBudget | str | int = 0
    """error samples tolerated before the run stops (a count, or ``"P%"``)"""
    calls: CallPolicy = field(default_factory=CallPolicy)
    """timeouts, attempts and waits of model calls"""
    executor: ExecutorOptions = field(default_factory=ExecutorOptions)
    """where samples are played: this process (``--workers 1``, the default), local worker
    processes, or a Ray cluster; each worker plays its groups' samples with its share of the
    concurrency and of every model's connections, and the driver alone writes the log"""

    def __post_init__(self) -> None:
        if self.concurrency is not None and self.concurrency < 1:
            raise ConfigError(f"--concurrency must be at least 1, not {self.concurrency}")
        if not isinstance(self.max_errors, ErrorBudget):
            object.__setattr__(self, "max_errors", ErrorBudget.parse(self.max_errors))

    @property
    def error_budget(self) -> ErrorBudget:
        assert isinstance(self.max_errors, ErrorBudget)
        return self.max_errors

    def updated(self, **changes: Any) -> EvalOptions:
        """A copy with ``changes`` (field names; ``calls=None`` means the default policy)."""
        known = {f.name for f in fields(self)}
        unknown = sorted(set(changes) - known)
        if unknown:
            raise TypeError(f"unknown evaluation option(s): {', '.join(unknown)}")
        if "calls" in changes and changes["calls"] is None:
            changes["calls"] = CallPolicy()
        return replace(self, **changes)
