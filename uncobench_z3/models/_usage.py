"""Token prices of well-known models, and a process-wide tally of usage per model.

Prices are list prices in USD per million tokens, as published by the providers; they
change, so a run can pass its own table. Unknown models cost ``None``, never zero.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from ._types import ModelUsage

__all__ = [
    "MODEL_PRICES",
    "ModelPrice",
    "model_usage",
    "price_for",
    "priced",
    "record_usage",
    "reset_model_usage",
]


@dataclass(frozen=True)
class ModelPrice:
    """USD per million input tokens and per million output tokens."""

    input_per_million: float
    output_per_million: float

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        return (
            input_tokens * self.input_per_million + output_tokens * self.output_per_million
        ) / 1_000_000


MODEL_PRICES: Mapping[str, ModelPrice] = {
    "anthropic/claude-3-haiku": ModelPrice(0.25, 1.25),
    "anthropic/claude-3-5-haiku": ModelPrice(0.80, 4.0),
    "anthropic/claude-haiku-4-5": ModelPrice(1.0, 5.0),
    "anthropic/claude-3-5-sonnet": ModelPrice(3.0, 15.0),
    "anthropic/claude-3-7-sonnet": ModelPrice(3.0, 15.0),
    "anthropic/claude-sonnet-4": ModelPrice(3.0, 15.0),
    "anthropic/claude-sonnet-4-5": ModelPrice(3.0, 15.0),
    "anthropic/claude-3-opus": ModelPrice(15.0, 75.0),
    "anthropic/claude-opus-4": ModelPrice(15.0, 75.0),
    "anthropic/claude-opus-4-1": ModelPrice(15.0, 75.0),
    "anthropic/claude-opus-4-5": ModelPrice(5.0, 25.0),
    "openai/gpt-4o": ModelPrice(2.5, 10.0),
    "openai/gpt-4o-mini": ModelPrice(0.15, 0.60),
    "openai/gpt-4.1": ModelPrice(2.0, 8.0),
    "openai/gpt-4.1-mini": ModelPrice(0.40, 1.60),
    "openai/gpt-4.1-nano": ModelPrice(0.10, 0.40),
    "openai/o3": ModelPrice(2.0, 8.0),
    "openai/o3-mini": ModelPrice(1.10, 4.40),
    "openai/o4-mini": ModelPrice(1.10, 4.40),
    "openai/gpt-5": ModelPrice(1.25, 10.0),
    "openai/gpt-5-mini": ModelPrice(0.25, 2.0),
    "openai/gpt-5-nano": ModelPrice(0.05, 0.40),
}

# What may follow a priced name and still be the same model: a dated snapshot
# (-20241022, -2024-08-06) or the -latest alias.
_SNAPSHOT_SUFFIX = re.compile(r"^-(\d{8}|\d{4}-\d{2}-\d{2}|latest)$")


def price_for(
    model_name: str, prices: Mapping[str, ModelPrice] = MODEL_PRICES
) -> ModelPrice | None:
    """The price of ``model_name`` (``provider/model``), matching dated snapshots too."""
    if model_name in prices:
        return prices[model_name]
    # The longest priced prefix wins, so gpt-4o-mini-2024-07-18 is not priced as gpt-4o.
    for priced_name in sorted(prices, key=len, reverse=True):
        if model_name.startswith(priced_name) and _SNAPSHOT_SUFFIX.match(
            model_name[len(priced_name) :]
        ):
            return prices[priced_name]
    return None


def priced(usage: ModelUsage, price: ModelPrice | None) -> ModelUsage:
    """``usage`` with its cost filled in from ``price`` (``None`` when unknown: no price, or
    input tokens the server did not report)."""
    if price is None or usage.unreported_input_calls:
        return usage.model_copy(update={"cost_usd": None})
    return usage.model_copy(
        update={"cost_usd": price.cost(usage.input_tokens, usage.output_tokens)}
    )


_usage_by_model: dict[str, ModelUsage] = {}


def record_usage(model_name: str, usage: ModelUsage) -> None:
    _usage_by_model[model_name] = _usage_by_model.get(model_name, ModelUsage()) + usage


def model_usage() -> dict[str, ModelUsage]:
    """Usage of every model called in this process so far (cache hits excluded)."""
    return dict(_usage_by_model)


def reset_model_usage() -> None:
    _usage_by_model.clear()
