"""Random statements of a task's records, for the tests that compare a shortened path with
its plain definition (attribution's admission questions, the built-in agents' reading)."""

from __future__ import annotations

import random

from uncobench_z3.settings import StatedValue
from uncobench_z3.spec import Slot, TypedTask, Value, to_json_scalar


def imprecise_stated(task: TypedTask, slot: Slot, context: str, rng: random.Random) -> StatedValue:
    """An imprecise statement of a record in ``context``: a range around its true value,
    beside it or reaching off the domain (ordered facts), or a set of options."""
    candidate, key = slot
    fact = task.facts[key]
    if fact.is_ordered:
        low, high = fact.code_range()
        code = fact.code(task.values[slot])
        assert not isinstance(code, bool)
        first = rng.choice([low - 3, low, code - 1, code, code + 1])
        last = max(first, rng.choice([code, code + 2, high, high + 2]))
        return StatedValue(
            candidate=candidate,
            fact=key,
            context=context,
            low=to_json_scalar(fact.value_of(first)),
            high=to_json_scalar(fact.value_of(last)),
        )
    pool: list[Value] = [False, True] if fact.type == "bool" else list(fact.members)
    options = rng.sample(pool, rng.randint(1, len(pool)))
    return StatedValue(
        candidate=candidate,
        fact=key,
        context=context,
        options=[to_json_scalar(o) for o in options],
    )
