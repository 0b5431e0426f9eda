"""Agents by name: the built-ins, and a hook for agents defined elsewhere (LLM agents).

A name resolves to a *factory* ``(name, seed) -> Agent``; a fresh agent is made for every
sample, so no state leaks between samples. Built-in names are ``builtin/<kind>``; other
prefixes (``anthropic/``, ``openai/``...) are served by whatever registered them with
:func:`register_agent_prefix`.
"""

from __future__ import annotations

from collections.abc import Callable

from ..errors import ConfigError
from ._builtin import CarefulAgent, FaceValueAgent, MidpointAgent, NaiveAgent, OptimistAgent
from ._protocol import Agent

AgentFactory = Callable[[str, int], Agent]


def _naive(name: str, seed: int) -> Agent:
    return NaiveAgent(seed)


def _careful(name: str, seed: int) -> Agent:
    return CarefulAgent(seed)


def _patient(name: str, seed: int) -> Agent:
    return CarefulAgent(seed, wait_for_silence=True)


BUILTIN_AGENTS: dict[str, AgentFactory] = {
    "builtin/naive": _naive,
    "builtin/careful": _careful,
    "builtin/patient": _patient,
    "builtin/optimist": lambda name, seed: OptimistAgent(seed),
    "builtin/midpoint": lambda name, seed: MidpointAgent(seed),
    "builtin/face-value": lambda name, seed: FaceValueAgent(seed),
}
#: The guessing agents, by the name of the strategy whose floor the group's proofs hold.
GUESSING_AGENTS = {
    "optimist": "builtin/optimist",
    "midpoint": "builtin/midpoint",
    "face-value": "builtin/face-value",
}
_PREFIXES: dict[str, AgentFactory] = {}


# Options in a name that change how a model is called, never what it writes: they stay out of
# a sample's identity (its key, the run's configuration hash, the report's rows).
CALL_ONLY_OPTIONS = ("max_connections",)


def configuration_name(name: str) -> str:
    """``name`` (an agent or a colleague model) without the options that cannot change a
    result (``max_connections=N``): what identifies it in keys, hashes and reports."""
    first, *options = [part.strip() for part in name.split(",")]
    kept = [o for o in options if o.partition("=")[0] not in CALL_ONLY_OPTIONS]
    return ",".join([first, *kept])


def register_agent_prefix(prefix: str, factory: AgentFactory) -> None:
    """Serve every agent name starting with ``prefix/`` (for example ``anthropic``)."""
    _PREFIXES[prefix.rstrip("/")] = factory


def agent_names() -> list[str]:
    return sorted(BUILTIN_AGENTS) + [f"{p}/..." for p in sorted(_PREFIXES)]


def _factory(name: str) -> AgentFactory | None:
    if name in BUILTIN_AGENTS:
        return BUILTIN_AGENTS[name]
    prefix = name.split("/", 1)[0]
    if prefix in _PREFIXES:
        return _PREFIXES[prefix]
    from ..models import provider_names  # any model provider, also one registered later

    if prefix in {p.split("/", 1)[0] for p in provider_names()}:
        from ._llm_agent import llm_agent

        return llm_agent
    return None


def is_model_agent(name: str) -> bool:
    """Whether ``name`` is served by a language model (``provider/model[,options]``)."""
    from ._llm_agent import llm_agent

    return _factory(name) is llm_agent


def check_agent_name(name: str) -> None:
    """Raise :class:`ConfigError` unless ``name`` resolves to an agent."""
    if _factory(name) is None:
        raise ConfigError(f"unknown agent {name!r}; available: {', '.join(agent_names())}")


def make_agent(name: str, seed: int) -> Agent:
    """A fresh agent for one sample."""
    factory = _factory(name)
    if factory is None:
        check_agent_name(name)
    assert factory is not None
    return factory(name, seed)
