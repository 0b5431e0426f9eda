"""The unreliable settings: Misaligned, Incomplete, Missed and Mixed, each proved to matter."""

from ._followup import (
    MISMATCH_PHRASES,
    PRECISION_PHRASES,
    contains_phrase,
    fact_phrases,
    incomplete_rule,
    is_targeted,
    misaligned_rule,
    missed_rule,
)
from ._imprecise import Imprecision, imprecise_statements
from ._model import (
    GROUP_KIND,
    SETTING_NAMES,
    AnyOf,
    Defect,
    DefectKind,
    FollowUpRule,
    ProofSummary,
    Setting,
    SettingName,
    StatedValue,
    TaskGroup,
)
from ._perturb import DefectBalance, Perturbation, perturb
from ._validity import DefectChecker, stated_imprecision, stated_value
from ._verify import verify_group

__all__ = [
    "GROUP_KIND",
    "MISMATCH_PHRASES",
    "PRECISION_PHRASES",
    "SETTING_NAMES",
    "AnyOf",
    "Defect",
    "DefectBalance",
    "DefectChecker",
    "DefectKind",
    "FollowUpRule",
    "Imprecision",
    "Perturbation",
    "ProofSummary",
    "Setting",
    "SettingName",
    "StatedValue",
    "TaskGroup",
    "contains_phrase",
    "fact_phrases",
    "imprecise_statements",
    "incomplete_rule",
    "is_targeted",
    "misaligned_rule",
    "missed_rule",
    "perturb",
    "stated_imprecision",
    "stated_value",
    "verify_group",
]
