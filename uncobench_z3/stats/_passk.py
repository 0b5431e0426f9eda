"""pass^k and pass@k: tau-bench's unbiased estimators over repeated trials.

A group run ``n`` times with ``c`` correct trials contributes, for ``k <= n``,

* pass^k (all ``k`` trials drawn without replacement are correct): ``C(c, k) / C(n, k)``;
* pass@k (at least one of them is): ``1 - C(n - c, k) / C(n, k)``;

and the estimate is the mean over groups. Both are unbiased for the probability that ``k``
fresh trials of a group drawn at random all succeed / one succeeds; pass^1 = pass@1 is the
mean per-group accuracy.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from math import comb

GroupTrials = tuple[int, int]
"""(trials, correct) of one group."""


def _check(groups: Sequence[GroupTrials], k: int) -> None:
    if k < 1:
        raise ValueError(f"k must be at least 1, not {k}")
    for n, c in groups:
        if not 0 <= c <= n:
            raise ValueError(f"a group cannot have {c} correct of {n} trials")
        if n < k:
            raise ValueError(f"k = {k} needs at least {k} trials per group; a group has {n}")


def pass_hat_k(groups: Sequence[GroupTrials], k: int) -> Fraction | None:
    """Mean over groups of C(c, k) / C(n, k); None without groups."""
    _check(groups, k)
    if not groups:
        return None
    return sum((Fraction(comb(c, k), comb(n, k)) for n, c in groups), Fraction(0)) / len(groups)


def pass_at_k(groups: Sequence[GroupTrials], k: int) -> Fraction | None:
    """Mean over groups of 1 - C(n - c, k) / C(n, k); None without groups."""
    _check(groups, k)
    if not groups:
        return None
    total = sum((1 - Fraction(comb(n - c, k), comb(n, k)) for n, c in groups), Fraction(0))
    return total / len(groups)


def pass_k_table(
    groups: Sequence[GroupTrials],
) -> tuple[dict[int, Fraction], dict[int, Fraction]]:
    """pass^k and pass@k for every k from 1 to the fewest trials any group has."""
    if not groups:
        return {}, {}
    most = min(n for n, _ in groups)
    hat: dict[int, Fraction] = {}
    at: dict[int, Fraction] = {}
    for k in range(1, most + 1):
        hat[k] = pass_hat_k(groups, k) or Fraction(0)
        at[k] = pass_at_k(groups, k) or Fraction(0)
    return hat, at
