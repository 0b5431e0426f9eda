"""Reading task groups written by earlier versions of the schema.

Version 1 stored each follow-up rule as lists of phrases (keyword matching). Version 2
stores the rule as structured signs read against the task's vocabulary. A version-1 group
is migrated when it is read: each defect's phrase lists are replaced by the rule
``perturb`` writes today for the same defect (kind, fact, candidates, required context), so
benchmarks built before still evaluate - under the new reading of follow-ups.
"""

from __future__ import annotations

from typing import Any

from ._followup import incomplete_rule, misaligned_rule, missed_rule


def _rule(defect: dict[str, Any], contexts: dict[str, str]) -> dict[str, Any]:
    kind = defect.get("kind")
    fact = defect.get("fact")
    candidates = list(defect.get("candidates") or [])
    if kind == "missed" or not isinstance(fact, str) or not candidates:
        rule = missed_rule()
    elif kind == "misaligned":
        rule = misaligned_rule(fact, candidates, contexts.get(fact, ""))
    else:
        rule = incomplete_rule(fact, candidates)
    return rule.model_dump(mode="json")


def migrate_group(data: Any) -> Any:
    """A raw group document in the current schema (unchanged when it is current or unreadable)."""
    if not isinstance(data, dict) or data.get("schema_version", 1) != 1:
        return data
    spec = data.get("spec")
    facts = spec.get("facts") if isinstance(spec, dict) else None
    contexts = {
        f["key"]: f.get("context", "")
        for f in facts or []
        if isinstance(f, dict) and isinstance(f.get("key"), str)
    }
    settings = []
    for setting in data.get("settings") or []:
        if isinstance(setting, dict) and isinstance(setting.get("defects"), list):
            defects = [
                {**d, "targeted_follow_up": _rule(d, contexts)} if isinstance(d, dict) else d
                for d in setting["defects"]
            ]
            setting = {**setting, "defects": defects}
        settings.append(setting)
    return {**data, "schema_version": 2, "settings": settings}
