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
vectorised from the generator's state (:func:`resample_rows`, checked against it), and the
intervals of means and of one-epoch ratios are read from the resamples' column sums at once
(exact 64-bit integers: the same order statistics, six times faster over a run's metrics).
Resampled statistics are exact fractions (units are scaled to integers over their common
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
from typing import Any

Number = int | Fraction
Unit = tuple[Number, ...]
Weighted = Sequence[tuple[tuple[int, ...], int]]
"""Distinct units, scaled to integers, with their multiplicity (zero weights left out)."""
Statistic = Callable[[Weighted, int], Fraction | None]
"""``statistic(weighted, scale)``: units are the originals multiplied by ``scale``."""
Interval = tuple[Fraction, Fraction]

DEFAULT_SAMPLES = 2000
MAX_SAMPLES = 100_000
"""the most resamples an interval may draw: fifty times the default, past any gain in
precision, and still bounded in time and memory (each resample is kept)"""
DEFAULT_LEVEL = Fraction(95, 100)


@dataclass(frozen=True)
class BootstrapConfig:
    """How intervals are drawn: resamples, seed and confidence level."""

    samples: int = DEFAULT_SAMPLES
    seed: int = 0
    level: Fraction = DEFAULT_LEVEL

    def __post_init__(self) -> None:
        if not 1 <= self.samples <= MAX_SAMPLES:
            raise ValueError(
                f"the bootstrap draws 1 to {MAX_SAMPLES} resamples, not {self.samples}"
            )
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
    low, high = _order_statistics(len(ordered), level)
    return ordered[low], ordered[high]


def _order_statistics(size: int, level: Fraction) -> tuple[int, int]:
    """The 0-based places of the ``l``-th smallest and largest of ``size`` sorted values."""
    rank = max(1, math.ceil(size * (1 - level) / 2))
    return rank - 1, size - rank


def resample_weights(classes: Sequence[int], kinds: int, rng: random.Random) -> list[int]:
    """How often each class is drawn when ``len(classes)`` units are drawn with replacement."""
    n = len(classes)
    draw = rng.random
    counts = [0] * kinds
    for _ in range(n):
        counts[classes[int(draw() * n)]] += 1
    return counts


def _numpy_counts(classes: Sequence[int], kinds: int, rng: random.Random, samples: int) -> Any:
    """The weights of ``samples`` resamples drawn with numpy from ``rng``'s exact state, as a
    ``samples x kinds`` integer array, or None (no numpy, or its generator does not reproduce
    ``rng``). ``rng`` itself is not advanced.

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
    return np.bincount(rows.ravel(), minlength=samples * kinds).reshape(samples, kinds)


def _numpy_rows(
    classes: Sequence[int], kinds: int, rng: random.Random, samples: int
) -> list[list[int]] | None:
    """:func:`_numpy_counts` as lists (None where it is None)."""
    counts = _numpy_counts(classes, kinds, rng, samples)
    if counts is None:
        return None
    rows_of_counts: list[list[int]] = counts.tolist()
    return rows_of_counts


_NUMPY_FROM = 17
"""units from which resamples are drawn with numpy (fewer: one by one, as cheap)"""

_SUM_LIMIT = 2**31
"""resampled column sums below this in size: the products of two fit in 64-bit integers"""


def _column_sums(counts: Any, kinds: Sequence[tuple[int, ...]], draws: int) -> Any:
    """Each resample's sum of each number of the units drawn (``samples x numbers``, exact
    64-bit integers), or None when a sum could reach :data:`_SUM_LIMIT`."""
    import numpy as np

    largest = max((abs(number) for unit in kinds for number in unit), default=0)
    if largest * draws >= _SUM_LIMIT:
        return None
    return counts @ np.array(kinds, dtype=np.int64)


def resample_rows(
    classes: Sequence[int], kinds: int, rng: random.Random, samples: int
) -> list[list[int]]:
    """The weights of ``samples`` consecutive resamples (as :func:`resample_weights` draws
    them, one after the other), with numpy when it reproduces ``rng``."""
    fast = _numpy_rows(classes, kinds, rng, samples) if len(classes) >= _NUMPY_FROM else None
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
    # the units in a canonical order: a resample draws units by their place, and the places
    # must not come from the order a run's log holds its samples in (a resumed run, or one
    # with more workers, holds the same samples in another order: the same intervals)
    scaled.sort()
    distinct: dict[tuple[int, ...], int] = {}
    classes = [distinct.setdefault(unit, len(distinct)) for unit in scaled]
    kinds = list(distinct)
    observed = Counter(classes)
    at_observed = [(kinds[k], observed[k]) for k in range(len(kinds))]
    values = {name: statistic(at_observed, scale) for name, statistic in statistics.items()}
    live = {name: s for name, s in statistics.items() if values[name] is not None}
    intervals: dict[str, Interval | None] = {}
    if live:
        rng = random.Random(derived_seed(config.seed, label))
        one_by_one = dict(live)
        rows: Sequence[Sequence[int]] | None = None
        counts = None
        if len(classes) >= _NUMPY_FROM:
            counts = _numpy_counts(classes, len(kinds), rng, config.samples)
        if counts is not None:
            # the mean's and a ratio's intervals straight from the resamples' column sums:
            # the same order statistics as the values made one by one (tests/test_stats.py)
            sums = _column_sums(counts, kinds, len(classes))
            for name, statistic in live.items():
                of_sums = getattr(statistic, "interval_of_sums", None)
                if sums is not None and of_sums is not None:
                    found = of_sums(sums, len(classes), scale, config.level)
                    if found is not _UNDECIDED:
                        intervals[name] = found
                        del one_by_one[name]
            if one_by_one:
                rows = counts.tolist()
        elif one_by_one:  # (numpy was tried above where it could serve: not again)
            rows = [resample_weights(classes, len(kinds), rng) for _ in range(config.samples)]
        resampled: dict[str, list[Fraction]] = {name: [] for name in one_by_one}
        for weights in rows or ():
            drawn = [(kinds[k], w) for k, w in enumerate(weights) if w]
            for name, statistic in one_by_one.items():
                result = statistic(drawn, scale)
                if result is not None:
                    resampled[name].append(result)
        for name, values_of_name in resampled.items():
            intervals[name] = percentile_interval(values_of_name, config.level)
    return {name: Estimate(values[name], intervals.get(name)) for name in statistics}


def bootstrap(
    units: Sequence[Unit], statistic: Statistic, config: BootstrapConfig, label: str
) -> Estimate:
    """One statistic on ``units`` and its percentile interval."""
    return bootstrap_many(units, {"value": statistic}, config, label)["value"]


_UNDECIDED = object()
"""what a statistic's ``interval_of_sums`` returns when the resamples' values must be made
one by one (see :func:`bootstrap_many`)"""


@dataclass(frozen=True)
class _MeanAt:
    """The mean over units of the number at ``index`` (see :func:`mean_at`)."""

    index: int

    def __call__(self, weighted: Weighted, scale: int) -> Fraction | None:
        total = sum(w for _, w in weighted)
        if total == 0:
            return None
        return Fraction(sum(unit[self.index] * w for unit, w in weighted), scale * total)

    def interval_of_sums(self, sums: Any, draws: int, scale: int, level: Fraction) -> Any:
        """The percentile interval of the resampled means, from the resamples' column sums:
        every resample draws ``draws`` units, so all its means share the denominator
        ``scale * draws`` and are ordered as the sums are."""
        import numpy as np

        column = np.sort(sums[:, self.index])
        low, high = _order_statistics(len(column), level)
        return Fraction(int(column[low]), scale * draws), Fraction(int(column[high]), scale * draws)


@dataclass(frozen=True)
class _RatiosAt:
    """The mean of per-epoch ratios over units' numbers ``start:stop`` (see :func:`ratios_at`)."""

    start: int
    stop: int

    def __call__(self, weighted: Weighted, scale: int) -> Fraction | None:
        # the sum of the ratios in integers (numerator / denominator), one Fraction at the
        # end: the same value as adding Fractions, without normalising at every step
        numerator, denominator, count = 0, 1, 0
        for at in range(self.start, self.stop, 2):
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

    def interval_of_sums(self, sums: Any, draws: int, scale: int, level: Fraction) -> Any:
        """With one epoch: the percentile interval of the resampled ratios (those with a
        denominator), ordered by their floats and the order checked exactly in integers;
        :data:`_UNDECIDED` for several epochs, a negative denominator, or an order the floats
        got wrong."""
        import numpy as np

        if self.stop - self.start != 2:
            return _UNDECIDED
        above, below = sums[:, self.start], sums[:, self.start + 1]
        if (below < 0).any():
            return _UNDECIDED  # (the exact order check below needs positive denominators)
        defined = below != 0
        above, below = above[defined], below[defined]
        if not len(above):
            return None
        order = np.argsort(above / below, kind="stable")
        above, below = above[order], below[order]
        # |sums| < 2**31: the products are exact
        if not (above[:-1] * below[1:] <= above[1:] * below[:-1]).all():
            return _UNDECIDED
        low, high = _order_statistics(len(above), level)
        return (
            Fraction(int(above[low]), int(below[low])),
            Fraction(int(above[high]), int(below[high])),
        )


def mean_at(index: int = 0) -> Statistic:
    """The mean over units of the number at ``index``."""
    return _MeanAt(index)


def ratios_at(start: int, stop: int) -> Statistic:
    """Units hold ``(numerator_1, denominator_1, numerator_2, denominator_2, ...)`` between
    ``start`` and ``stop``, one pair per epoch: the mean over epochs whose summed denominator
    is not zero of summed numerator over summed denominator (None when no epoch has one)."""
    return _RatiosAt(start, stop)
