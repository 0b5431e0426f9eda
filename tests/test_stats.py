"""The statistics module: estimators checked against hand computations, textbook values and
simulation; everything exact and deterministic."""

from __future__ import annotations

import itertools
import math
import random
import sys
from fractions import Fraction
from math import comb

import pytest
from hypothesis import given
from hypothesis import strategies as st

from uncobench_z3.stats import (
    BootstrapConfig,
    _bootstrap,
    bootstrap,
    bootstrap_many,
    decimal_text,
    holm_adjust,
    mcnemar_exact,
    mean_at,
    p_value_text,
    pass_at_k,
    pass_hat_k,
    pass_k_table,
    percent_text,
    percentile_interval,
    ratios_at,
    wilson_interval,
)
from uncobench_z3.stats._bootstrap import (
    _UNDECIDED,
    _numpy_rows,
    _sorted_exactly,
    resample_rows,
    resample_weights,
)

F = Fraction


# -- Wilson ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("successes", "total", "low", "high"),
    [(0, 10, 0.0, 0.2775), (5, 10, 0.2366, 0.7634), (10, 10, 0.7225, 1.0), (1, 1, 0.2065, 1.0)],
)
def test_wilson_interval_known_values(successes: int, total: int, low: float, high: float) -> None:
    got = wilson_interval(successes, total)
    assert all(isinstance(bound, Fraction) for bound in got)
    assert got == pytest.approx((low, high), abs=1e-4)


def test_wilson_interval_always_holds_the_proportion() -> None:
    for total in range(1, 60):
        for successes in range(total + 1):
            low, high = wilson_interval(successes, total)
            assert 0 <= low <= F(successes, total) <= high <= 1


def _float_wilson(successes: int, total: int, z: float = 1.959963984540054) -> tuple[float, float]:
    p = successes / total
    denominator = 1 + z * z / total
    centre = (p + z * z / (2 * total)) / denominator
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / denominator
    return centre - half, centre + half


@pytest.mark.parametrize(("successes", "total"), [(3, 7), (1, 3), (17, 40), (299, 1000)])
def test_wilson_interval_is_the_real_one_rounded_outward(successes: int, total: int) -> None:
    """The bounds are the real interval rounded away from the centre at 1e-12."""
    low, high = wilson_interval(successes, total)
    assert low.denominator <= 10**12 and high.denominator <= 10**12
    real_low, real_high = _float_wilson(successes, total)
    assert real_low - 3e-12 <= float(low) <= real_low + 1e-14
    assert real_high - 1e-14 <= float(high) <= real_high + 3e-12


def test_wilson_interval_without_trials_is_uninformative() -> None:
    assert wilson_interval(0, 0) == (0, 1)


# -- pass^k / pass@k ---------------------------------------------------------------------------
GROUPS = [(4, 4), (4, 2), (4, 0)]  # (trials, correct)


@pytest.mark.parametrize(
    ("k", "hat", "at"),
    [
        # pass^2: (1 + C(2,2)/C(4,2) + 0) / 3 = (1 + 1/6) / 3 = 7/18
        # pass@2: (1 + (1 - C(2,2)/C(4,2)) + 0) / 3 = (1 + 5/6) / 3 = 11/18
        (1, F(1, 2), F(1, 2)),
        (2, F(7, 18), F(11, 18)),
        (3, F(1, 3), F(2, 3)),
        (4, F(1, 3), F(2, 3)),
    ],
)
def test_pass_k_hand_computed(k: int, hat: Fraction, at: Fraction) -> None:
    assert pass_hat_k(GROUPS, k) == hat
    assert pass_at_k(GROUPS, k) == at


def test_pass_k_table_stops_at_the_fewest_trials() -> None:
    hat, at = pass_k_table([(3, 2), (2, 1)])
    assert list(hat) == list(at) == [1, 2]
    assert hat[1] == F(1, 2) * (F(2, 3) + F(1, 2))
    assert hat[2] == F(1, 2) * (F(1, 3) + 0)  # C(2,2)/C(3,2) = 1/3; C(1,2) = 0
    assert at[2] == F(1, 2) * (1 + 1)  # C(1,2) = 0 for both: one miss cannot fill 2 draws


def test_pass_k_rejects_impossible_inputs() -> None:
    with pytest.raises(ValueError, match="at least 3 trials"):
        pass_hat_k([(2, 1)], 3)
    with pytest.raises(ValueError, match="cannot have"):
        pass_at_k([(2, 3)], 1)
    assert pass_hat_k([], 1) is None


@given(st.lists(st.tuples(st.integers(1, 6), st.integers(0, 6)), min_size=1, max_size=6))
def test_pass_k_matches_brute_force_over_subsets(raw: list[tuple[int, int]]) -> None:
    """pass^k is the share of k-subsets of a group's trials that are all correct; pass@k the
    share with at least one correct (enumerated, then averaged over groups)."""
    groups = [(n, min(c, n)) for n, c in raw]
    k = min(n for n, _ in groups)
    for size in range(1, k + 1):
        hat, at = F(0), F(0)
        for n, c in groups:
            outcomes = [True] * c + [False] * (n - c)
            subsets = list(itertools.combinations(outcomes, size))
            hat += F(sum(all(s) for s in subsets), len(subsets))
            at += F(sum(any(s) for s in subsets), len(subsets))
        assert pass_hat_k(groups, size) == hat / len(groups)
        assert pass_at_k(groups, size) == at / len(groups)


# -- bootstrap ---------------------------------------------------------------------------------
def test_percentile_interval_takes_symmetric_order_statistics() -> None:
    values = [F(i) for i in range(1, 2001)]
    assert percentile_interval(values, F(95, 100)) == (F(50), F(1951))
    assert percentile_interval([F(3)], F(95, 100)) == (F(3), F(3))
    assert percentile_interval([], F(95, 100)) is None


def test_the_bootstrap_is_deterministic_and_exact() -> None:
    units = [(F(i % 3, 2),) for i in range(40)]
    config = BootstrapConfig(samples=300, seed=7)
    first = bootstrap(units, mean_at(0), config, "cell")
    assert first == bootstrap(units, mean_at(0), config, "cell")
    assert first != bootstrap(units, mean_at(0), BootstrapConfig(samples=300, seed=8), "cell")
    assert first.value == F(sum(i % 3 for i in range(40)), 80)
    assert first.interval is not None
    low, high = first.interval
    assert isinstance(low, Fraction) and low <= first.value <= high


def test_constant_units_give_a_point_interval() -> None:
    estimate = bootstrap([(F(2, 3),)] * 10, mean_at(0), BootstrapConfig(samples=50), "x")
    assert estimate.value == F(2, 3) and estimate.interval == (F(2, 3), F(2, 3))


def test_several_statistics_share_one_set_of_resamples() -> None:
    """The difference's resampled values are exactly the differences of the marginals'."""
    rng = random.Random(3)
    units = [(a, b, a - b) for a, b in ((rng.randint(0, 1), rng.randint(0, 1)) for _ in range(30))]
    got = bootstrap_many(
        units, {"a": mean_at(0), "b": mean_at(1), "d": mean_at(2)}, BootstrapConfig(200), "p"
    )
    assert got["d"].value == got["a"].value - got["b"].value  # type: ignore[operator]


def test_ratios_skip_epochs_without_a_denominator() -> None:
    # epoch 1: 1/2 correct of two paired; epoch 2: nobody paired
    units = [(1, 1, 0, 0), (0, 1, 0, 0)]
    assert bootstrap(units, ratios_at(0, 4), BootstrapConfig(10), "r").value == F(1, 2)
    assert bootstrap([(0, 0)], ratios_at(0, 2), BootstrapConfig(10), "r").value is None


@given(st.lists(st.fractions(min_value=-3, max_value=3, max_denominator=50), max_size=60))
def test_the_percentile_sort_is_the_exact_sort(values: list[Fraction]) -> None:
    """Sorting by floats first (for speed) never changes the order statistics."""
    assert _sorted_exactly(values) == sorted(values)
    close = [F(1, 3) + F(1, 10**30), F(1, 3), F(1, 3) - F(1, 10**30)]  # one float, three values
    assert _sorted_exactly(close) == sorted(close)


@given(
    st.lists(
        st.tuples(st.lists(st.integers(0, 5), min_size=6, max_size=6), st.integers(1, 4)),
        min_size=1,
        max_size=8,
    )
)
def test_ratios_equal_the_mean_of_fraction_ratios(rows: list[tuple[list[int], int]]) -> None:
    """The integer-accumulated statistic is the textbook mean of per-epoch ratios."""
    weighted = [(tuple(unit), weight) for unit, weight in rows]
    ratios = []
    for at in range(0, 6, 2):
        below = sum(unit[at + 1] * w for unit, w in weighted)
        if below:
            ratios.append(F(sum(unit[at] * w for unit, w in weighted), below))
    expected = sum(ratios, F(0)) / len(ratios) if ratios else None
    assert ratios_at(0, 6)(weighted, 1) == expected


@given(
    st.lists(st.integers(0, 5), min_size=17, max_size=80),
    st.integers(0, 2**64 - 1),
    st.integers(1, 40),
)
def test_vectorised_resamples_are_the_same_draws(
    classes: list[int], seed: int, samples: int
) -> None:
    """numpy's generator, started from random.Random's state, gives the same resamples as
    drawing them one by one (so intervals do not depend on whether numpy is installed)."""
    kinds = max(classes) + 1
    fast = _numpy_rows(classes, kinds, random.Random(seed), samples)
    assert fast is not None
    rng = random.Random(seed)
    assert fast == [resample_weights(classes, kinds, rng) for _ in range(samples)]


def test_without_numpy_the_resamples_are_drawn_one_by_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:

    classes = [i % 3 for i in range(40)]
    expected = resample_rows(classes, 3, random.Random(5), 30)
    monkeypatch.setitem(sys.modules, "numpy", None)  # import numpy now fails
    assert _numpy_rows(classes, 3, random.Random(5), 30) is None
    assert resample_rows(classes, 3, random.Random(5), 30) == expected


# Units as the metrics make them: shares of epochs (fractions), a signed number, then
# (numerator, denominator) pairs of paired epochs, one pair (one epoch) or two
_UNITS = st.integers(0, 2).flatmap(
    lambda extra: st.lists(
        st.tuples(
            st.fractions(0, 1, max_denominator=3),
            st.integers(-2, 3),
            *(st.integers(0, 2) for _ in range(4)),
        ),
        min_size=17,  # (fewer units are resampled one by one: nothing to compare)
        max_size=60 + 40 * extra,
    )
)
_STATISTICS = {
    "share": mean_at(0),
    "signed": mean_at(1),
    "ratio": ratios_at(2, 4),
    "two epochs": ratios_at(2, 6),
}


def _one_by_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make bootstrap_many compute every resample's value one by one (same draws)."""
    monkeypatch.setattr(_bootstrap, "_column_sums", lambda *args: None)


@given(_UNITS, st.integers(0, 2**32), st.integers(1, 300))
def test_intervals_from_column_sums_equal_the_values_made_one_by_one(
    units: list[tuple[Fraction | int, ...]], seed: int, samples: int
) -> None:
    """With numpy, a mean's and a one-epoch ratio's intervals come from the resamples' column
    sums at once: exactly the percentile intervals of the values made one by one, and with
    no numpy at all."""
    config = BootstrapConfig(samples=samples, seed=seed)
    fast = bootstrap_many(units, _STATISTICS, config, "cell")
    with pytest.MonkeyPatch.context() as patch:
        _one_by_one(patch)
        assert bootstrap_many(units, _STATISTICS, config, "cell") == fast
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(sys.modules, "numpy", None)  # import numpy now fails
        assert bootstrap_many(units, _STATISTICS, config, "cell") == fast


def test_the_column_sums_path_is_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    """(So that the test above compares two ways.) Over 17 units or more the resampled means
    and one-epoch ratios are not made one by one: each statistic is called once, at the
    observed weights; two epochs still are."""
    calls: dict[str, int] = {}
    for cls in (_bootstrap._MeanAt, _bootstrap._RatiosAt):
        original = cls.__call__

        def counted(self, weighted, scale, original=original):  # type: ignore[no-untyped-def]
            calls[repr(self)] = calls.get(repr(self), 0) + 1
            return original(self, weighted, scale)

        monkeypatch.setattr(cls, "__call__", counted)
    units = [(F(i % 3, 2), i % 2, i % 2, 1, i % 2, 1) for i in range(40)]
    bootstrap_many(units, _STATISTICS, BootstrapConfig(samples=50), "cell")
    assert calls == {
        repr(mean_at(0)): 1,
        repr(mean_at(1)): 1,
        repr(ratios_at(2, 4)): 1,
        repr(ratios_at(2, 6)): 51,
    }


def test_a_ratio_order_the_floats_get_wrong_is_left_to_the_exact_sort() -> None:
    """Two ratios with the same float but different values: when the float order puts them
    the wrong way round, the column sums do not decide; in the right order, they do."""
    import numpy as np

    low, high = (357913941, 1073741825), (357913943, 1073741831)
    assert float(F(*low)) == float(F(*high)) and F(*low) < F(*high)
    ratio = _bootstrap._RatiosAt(0, 2)
    wrong = np.array([high, low], dtype=np.int64)
    assert ratio.interval_of_sums(wrong, 1, 1, F(95, 100)) is _UNDECIDED
    right = np.array([low, high], dtype=np.int64)
    assert ratio.interval_of_sums(right, 1, 1, F(95, 100)) == (F(*low), F(*high))
    # several epochs, or a negative denominator: made one by one
    assert _bootstrap._RatiosAt(0, 4).interval_of_sums(right, 1, 1, F(1, 2)) is _UNDECIDED
    negative = np.array([(1, -2), (1, 2)], dtype=np.int64)
    assert ratio.interval_of_sums(negative, 1, 1, F(1, 2)) is _UNDECIDED


def test_sums_that_could_overflow_are_made_one_by_one() -> None:
    """Units large enough that a resample's sum could pass 2**31 take the exact path."""
    units = [(2**26 * (i % 5),) for i in range(40)]  # 40 draws of up to 2**28: past 2**31
    config = BootstrapConfig(samples=30, seed=3)
    got = bootstrap_many(units, {"mean": mean_at(0)}, config, "big")
    rows = resample_rows(  # (the units drawn in their sorted order)
        sorted(i % 5 for i in range(40)), 5, random.Random(_bootstrap.derived_seed(3, "big")), 30
    )
    means = sorted(F(sum(2**26 * k * w for k, w in enumerate(row)), 40) for row in rows)
    assert got["mean"].interval == percentile_interval(means, config.level)


@pytest.mark.parametrize("count", [12, 40])  # one by one, and with numpy
def test_intervals_do_not_depend_on_the_order_of_the_units(count: int) -> None:
    """A resumed run, or one with more workers, holds the same samples in another order in
    its log: its groups come in another order, and must give the same intervals."""
    rng = random.Random(5)
    units = [(F(rng.randrange(4), 3), rng.randrange(2)) for _ in range(count)]
    shuffled = list(units)
    random.Random(6).shuffle(shuffled)
    assert shuffled != units
    statistics = {"first": mean_at(0), "second": mean_at(1)}
    config = BootstrapConfig(samples=200, seed=1)
    assert bootstrap_many(units, statistics, config, "o") == bootstrap_many(
        shuffled, statistics, config, "o"
    )


def test_bootstrap_intervals_cover_a_known_mean_at_about_the_stated_rate() -> None:
    """Groups with a per-group success chance drawn from a known distribution, three epochs
    each: the 95% interval of accuracy covers the true mean in roughly 95% of 200 runs
    (observed 93-97.5% over other generator seeds)."""
    rng = random.Random(2024)
    chances = [F(1, 5), F(1, 2), F(4, 5), F(9, 10)]
    truth = sum(chances, F(0)) / len(chances)
    covered = 0
    runs = 200
    for run in range(runs):
        units = []
        for _ in range(30):
            chance = float(rng.choice(chances))
            units.append((F(sum(rng.random() < chance for _ in range(3)), 3),))
        interval = bootstrap(units, mean_at(0), BootstrapConfig(200, seed=run), "cov").interval
        assert interval is not None
        covered += interval[0] <= truth <= interval[1]
    assert 0.88 <= covered / runs <= 0.99, covered


# -- McNemar and Holm --------------------------------------------------------------------------
def test_mcnemar_textbook_example() -> None:
    """Fagerland, Lydersen & Laake (2013), BMC Med Res Methodol 13:91, the airway
    hyper-responsiveness example: 1 and 7 discordant pairs, exact conditional p = 0.070
    (mid-p 0.039)."""
    p = mcnemar_exact(1, 7)
    assert p == F(9, 128) and round(float(p), 3) == 0.070
    mid_p = p - F(comb(8, 1), 2**8)
    assert round(float(mid_p), 3) == 0.039


@given(st.integers(0, 7), st.integers(0, 7))
def test_mcnemar_matches_sign_flip_enumeration(b: int, c: int) -> None:
    """Under the null every discordant pair is a fair coin: the p-value is the share of the
    2^(b+c) assignments at least as lopsided as the observed one."""
    n = b + c
    observed = abs(b - c)
    extreme = sum(
        1 for flips in itertools.product((0, 1), repeat=n) if abs(2 * sum(flips) - n) >= observed
    )
    assert mcnemar_exact(b, c) == F(extreme, 2**n)
    assert mcnemar_exact(b, c) == mcnemar_exact(c, b)


def test_mcnemar_without_discordant_pairs_is_one() -> None:
    assert mcnemar_exact(0, 0) == 1


def test_holm_textbook_example() -> None:
    """p = (0.01, 0.04, 0.03, 0.005): sorted 0.005, 0.01, 0.03, 0.04 become 4 x 0.005,
    3 x 0.01, 2 x 0.03 and max(0.06, 0.04)."""
    p = [F(1, 100), F(4, 100), F(3, 100), F(5, 1000)]
    assert holm_adjust(p) == [F(3, 100), F(6, 100), F(6, 100), F(2, 100)]
    assert holm_adjust([F(1, 2), F(9, 10)]) == [F(1), F(1)]
    assert holm_adjust([]) == []


# -- text --------------------------------------------------------------------------------------
def test_decimal_text_rounds_the_fraction_exactly() -> None:
    assert decimal_text(F(1, 8), 2) == "0.12"  # half to even, on the exact value
    assert decimal_text(F(3, 8), 2) == "0.38"
    assert decimal_text(F(-1, 3), 1) == "-0.3"
    assert decimal_text(F(1, 5), 1, sign=True) == "+0.2"
    assert percent_text(F(2, 3)) == "66.7%" and percent_text(None) == "–"
    assert p_value_text(F(1, 10**6)) == "<0.001" and p_value_text(F(0)) == "0.000"
    assert p_value_text(F(9, 128)) == "0.070"
