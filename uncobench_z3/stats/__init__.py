"""Statistics a paper can cite, in exact arithmetic: intervals, bootstrap, pass^k, paired tests.

Below both construction and evaluation (it imports nothing of the package): the audit's
agreement intervals and the evaluation's metrics share it. Every estimate is a
:class:`fractions.Fraction`; intervals are exact fractions too (see each module for the
definition).
"""

from ._bootstrap import (
    DEFAULT_LEVEL,
    DEFAULT_SAMPLES,
    MAX_SAMPLES,
    BootstrapConfig,
    Estimate,
    Interval,
    Statistic,
    Unit,
    Weighted,
    bootstrap,
    bootstrap_many,
    derived_seed,
    mean_at,
    percentile_interval,
    ratios_at,
    resample_weights,
)
from ._intervals import RESOLUTION, Z_95, wilson_interval
from ._paired import holm_adjust, mcnemar_exact
from ._passk import GroupTrials, pass_at_k, pass_hat_k, pass_k_table
from ._text import decimal_text, fraction_json, p_value_text, percent_text

__all__ = [
    "DEFAULT_LEVEL",
    "DEFAULT_SAMPLES",
    "MAX_SAMPLES",
    "RESOLUTION",
    "Z_95",
    "BootstrapConfig",
    "Estimate",
    "GroupTrials",
    "Interval",
    "Statistic",
    "Unit",
    "Weighted",
    "bootstrap",
    "bootstrap_many",
    "decimal_text",
    "derived_seed",
    "fraction_json",
    "holm_adjust",
    "mcnemar_exact",
    "mean_at",
    "p_value_text",
    "pass_at_k",
    "pass_hat_k",
    "pass_k_table",
    "percent_text",
    "percentile_interval",
    "ratios_at",
    "resample_weights",
    "wilson_interval",
]
