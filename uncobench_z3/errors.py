"""Every error uncobench-z3 raises on purpose, in one tree.

::

    UncobenchError                  base class; the CLI turns any of these into one message
    ├── InputError                  the user's input cannot be used            (exit code 2)
    │   ├── SpecReadError           a file is missing, not JSON, or violates the schema;
    │   │                           carries the file and the JSON path
    │   └── ConfigError             an option or configuration value is unusable
    ├── ResumeError                 an output directory holds a run made with another
    │                               configuration (refuses to mix them)
    ├── ConsistencyError            two independent computations disagree (for example the
    │                               gold answer computed in Python and read from the solver
    │                               model); always a bug report, never silently resolved
    └── ModelError                  calling a language model failed
        ├── ModelConfigError        unknown provider, missing API key or base URL
        └── ModelAPIError           the provider answered with an error after retries
            └── ContextWindowError  the conversation no longer fits the model's context
                                    window (the evaluation ends that sample as
                                    ``context_exhausted``; the run goes on)

Solver outcomes are *not* errors: "refuted" and "unknown" are verdicts
(:class:`uncobench_z3.solver.Verdict`). Control flow inside the evaluation loop uses
dedicated exceptions that do not derive from :class:`UncobenchError`, so a bare
``except UncobenchError`` never swallows them.

Messages never contain API keys: model errors are built from status codes and provider
messages, never from request headers.
"""

from __future__ import annotations

__all__ = [
    "ConfigError",
    "ConsistencyError",
    "ContextWindowError",
    "InputError",
    "ModelAPIError",
    "ModelConfigError",
    "ModelError",
    "ResumeError",
    "SpecReadError",
    "UncobenchError",
]


class UncobenchError(Exception):
    """Base class of the errors this package raises on purpose."""


class InputError(UncobenchError):
    """The user's input cannot be used."""


class SpecReadError(InputError):
    """A file cannot be read as the expected document.

    ``path`` is the file, ``json_path`` the location inside it (``$.facts[2].domain.min``),
    or ``None`` when the whole file is at fault (missing, not JSON).
    """

    def __init__(self, path: str, message: str, json_path: str | None = None) -> None:
        self.path = path
        self.json_path = json_path
        self.detail = message
        where = f"{path}: {json_path}" if json_path else path
        super().__init__(f"{where}: {message}")

    def __reduce__(self) -> tuple[type[SpecReadError], tuple[str, str, str | None]]:
        # picklable: a worker process's error reaches the parent whole
        return (type(self), (self.path, self.detail, self.json_path))


class ConfigError(InputError):
    """An option or configuration value is unusable."""


class ResumeError(UncobenchError):
    """An output directory was written with a different configuration."""


class ConsistencyError(UncobenchError):
    """Two independent computations of the same quantity disagree: a bug, reported loudly."""


class ModelError(UncobenchError):
    """Calling a language model failed."""


class ModelConfigError(ModelError):
    """The model name, provider, key or base URL is unusable."""


class ModelAPIError(ModelError):
    """The provider returned an error that retries did not cure."""

    def __init__(
        self, message: str, status_code: int | None = None, attempts: int | None = None
    ) -> None:
        self.status_code = status_code
        self.attempts = attempts
        """how many attempts were made (``None`` for a single attempt's own error)"""
        super().__init__(message)


class ContextWindowError(ModelAPIError):
    """The request does not fit the model's context window: asking again cannot help."""
