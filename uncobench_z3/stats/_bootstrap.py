"""A seeded, deterministic, exact nonparametric bootstrap over independent units (groups).

Epochs of one group are not independent trials of the benchmark - they share the task - so
intervals resample *groups* with replacement, each group carrying all its epochs. Every group
is described by a *unit*: a tuple of exact numbers. A statistic is a function of weighted
units - each distinct unit with the number of times a resample drew it - so the point
estimate is the statistic at the observed weights and estimate and interval always share one
definition. Several statistics of the same units are computed from the same resamples.

Determinism: the generator is :class:`random.Random` seeded with an integer derived (SHA-256)
from the configured seed and a label naming the cell, and draws use only ``random()``, the
one method whose sequence Python guarantees across versions: index ``floor(random() * n)``.
With numpy installed, the same draws are made
vectorised from the generator's state (:func:`resample_rows`, checked against it). Resampled
statistics are exact fractions (units are scaled to integers over their common
denominator, so the arithmetic stays in integers until the last division). The interval is
the percentile interval: with ``m`` defined resampled values sorted, the ``l``-th smallest
and the ``l``-th largest, ``l = max(1, ceil(m * (1 - level) / 2))`` (for ``m = 2000`` at
95%: the 50th and the 1951st). Resamples where a statistic is undefined (an empty
denominator) are left out of its ``m``.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import random
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

Number = int | Fraction
Unit = tuple[Number, ...]
Weighted = Sequence[tuple[tuple[int, ...], int]]
"""Distinct units, scaled to integers, with their multiplicity (zero weights left out)."""
Statistic = Callable[[Weighted, int], Fraction | None]
"""``statistic(weighted, scale)``: units are the originals multiplied by ``scale``."""
Interval = tuple[Fraction, Fraction]

DEFAULT_SAMPLES = 2000
DEFAULT_LEVEL = Fraction(95, 100)


@dataclass(frozen=True)
class BootstrapConfig:
    """How intervals are drawn: resamples, seed and confidence level."""

    samples: int = DEFAULT_SAMPLES
    seed: int = 0
    level: Fraction = DEFAULT_LEVEL

    def __post_init__(self) -> None:
        if self.samples < 1:
            raise ValueError(f"the bootstrap needs at least 1 resample, not {self.samples}")
        if not 0 < self.level < 1:
            raise ValueError("the confidence level must lie strictly between 0 and 1")


@dataclass(frozen=True)
class Estimate:
    """A point estimate and its bootstrap interval (None when undefined)."""

    value: Fraction | None
    interval: Interval | None = None


def derived_seed(seed: int, label: str) -> int:
    """A 64-bit generator seed from the configured seed and a label."""
    digest = hashlib.sha256(f"uncobench-bootstrap:{seed}:{label}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def _sorted_exactly(values: Sequence[Fraction]) -> list[Fraction]:
    """``sorted(values)``, faster: ordered by their floats, then checked exactly (comparing
    fractions is slow; a float order that is wrong somewhere falls back to the exact sort)."""
    ordered = sorted(values, key=float)
    pairs = itertools.pairwise(ordered)
    if all(a.numerator * b.denominator <= b.numerator * a.denominator for a, b in pairs):
        return ordered
    return sorted(values)


def percentile_interval(values: Sequence[Fraction], level: Fraction) -> Interval | None:
    """The ``l``-th smallest and largest of ``values`` (see the module docstring)."""
    if not values:
        return None
    ordered = _sorted_exactly(values)
    m = len(ordered)
    rank = max(1, math.ceil(m * (1 - level) / 2))
    return ordered[rank - 1], ordered[m - rank]


def resample_weights(classes: Sequence[int], kinds: int, rng: random.Random) -> list[int]:
    """How often each class is drawn when ``len(classes)`` units are drawn with replacement."""
    n = len(classes)
    draw = rng.random
    counts = [0] * kinds
    for _ in range(n):
        counts[classes[int(draw() * n)]] += 1
    return counts


def _numpy_rows(
    classes: Sequence[int], kinds: int, rng: random.Random, samples: int
) -> list[list[int]] | None:
    """The weights of ``samples`` resamples drawn with numpy from ``rng``'s exact state, or
    None (no numpy, or its generator does not reproduce ``rng``).

    ``random.Random`` and numpy's ``RandomState`` are the same Mersenne Twister with the same
    53-bit doubles, so from the same state they give the same draws; index and counts are
    then computed as :func:`resample_weights` does (``floor(u * n)``), vectorised. The first
    draws are checked against ``rng`` itself before any is used.
    """
    try:
        import numpy as np
    except ImportError:
        return None
    _, state, _ = rng.getstate()
    generator = np.random.RandomState()
    keys = np.array(state[:-1], dtype=np.uint32)
    generator.set_state(("MT19937", keys, int(state[-1]), 0, 0.0))
    n = len(classes)
    draws = generator.random_sample(samples * n)
    probe = random.Random()
    probe.setstate(rng.getstate())
    if any(probe.random() != float(draws[i]) for i in range(min(8, len(draws)))):
        return None
    drawn = np.asarray(classes, dtype=np.int64)[(draws * n).astype(np.int64)]
    rows = drawn.reshape(samples, n) + np.arange(samples, dtype=np.int64)[:, None] * kinds
    counts = np.bincount(rows.ravel(), minlength=samples * kinds).reshape(samples, kinds)
    rows_of_counts: list[list[int]] = counts.tolist()
    return rows_of_counts


def resample_rows(
    classes: Sequence[int], kinds: int, rng: random.Random, samples: int
) -> list[list[int]]:
    """The weights of ``samples`` consecutive resamples (as :func:`resample_weights` draws
    them, one after the other), with numpy when it reproduces ``rng``."""
    fast = _numpy_rows(classes, kinds, rng, samples) if len(classes) > 16 else None
    if fast is not None:
        return fast
    return [resample_weights(classes, kinds, rng) for _ in range(samples)]


def _scaled(units: Sequence[Unit]) -> tuple[list[tuple[int, ...]], int]:
    scale = 1
    for unit in units:
        for number in unit:
            if isinstance(number, Fraction):
                scale = math.lcm(scale, number.denominator)
    return [tuple(int(number * scale) for number in unit) for unit in units], scale


def bootstrap_many(
    units: Sequence[Unit],
    statistics: Mapping[str, Statistic],
    config: BootstrapConfig,
    label: str,
) -> dict[str, Estimate]:
    """Every statistic on ``units``, with percentile intervals from one set of resamples."""
    if not units:
        return {name: Estimate(None, None) for name in statistics}
    scaled, scale = _scaled(units)
    distinct: dict[tuple[int, ...], int] = {}
    classes = [distinct.setdefault(unit, len(distinct)) for unit in scaled]
    kinds = list(distinct)
    observed = Counter(classes)
    at_observed = [(kinds[k], observed[k]) for k in range(len(kinds))]
    values = {name: statistic(at_observed, scale) for name, statistic in statistics.items()}
    live = {name: s for name, s in statistics.items() if values[name] is not None}
    resampled: dict[str, list[Fraction]] = {name: [] for name in live}
    if live:
        rng = random.Random(derived_seed(config.seed, label))
        for weights in resample_rows(classes, len(kinds), rng, config.samples):
            drawn = [(kinds[k], w) for k, w in enumerate(weights) if w]
            for name, statistic in live.items():
                result = statistic(drawn, scale)
                if result is not None:
                    resampled[name].append(result)
    return {
        name: Estimate(
            values[name],
            percentile_interval(resampled[name], config.level) if name in live else None,
        )
        for name in statistics
    }


def bootstrap(
    units: Sequence[Unit], statistic: Statistic, config: BootstrapConfig, label: str
) -> Estimate:
    """One statistic on ``units`` and its percentile interval."""
    return bootstrap_many(units, {"value": statistic}, config, label)["value"]


def mean_at(index: int = 0) -> Statistic:
    """The mean over units of the number at ``index``."""

    def statistic(weighted: Weighted, scale: int) -> Fraction | None:
        total = sum(w for _, w in weighted)
        if total == 0:
            return None
        return Fraction(sum(unit[index] * w for unit, w in weighted), scale * total)

    return statistic


def ratios_at(start: int, stop: int) -> Statistic:
    """Units hold ``(numerator_1, denominator_1, numerator_2, denominator_2, ...)`` between
    ``start`` and ``stop``, one pair per epoch: the mean over epochs whose summed denominator
    is not zero of summed numerator over summed denominator (None when no epoch has one)."""

    def statistic(weighted: Weighted, scale: int) -> Fraction | None:
        # the sum of the ratios in integers (numerator / denominator), one Fraction at the
        # end: the same value as adding Fractions, without normalising at every step
        numerator, denominator, count = 0, 1, 0
        for at in range(start, stop, 2):
            below = sum(unit[at + 1] * w for unit, w in weighted)
            if below:
                above = sum(unit[at] * w for unit, w in weighted)
                numerator, denominator = (
                    numerator * below + above * denominator,
                    denominator * below,
                )
                count += 1
        if not count:
            return None
        return Fraction(numerator, denominator * count)

    return statistic
