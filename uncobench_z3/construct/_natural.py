"""Would a domain expert accept the built tasks? Two measures that ``uncobench stats`` prints.

- **Names off-domain**: a candidate named from a pool of another domain (a haulage contractor
  in a banking task). Pools declare their domains in ``generators/names.json``; names from
  no pool (an LLM generator's own) are counted apart, not judged.
- **Non-positive amounts**: a gold answer in money (a currency unit, alone or per something)
  that is zero or negative. Nobody believes a grant of 0 USD or an "equity cushion" of
  -3,200,000 GBP. A sign is natural only where the rule says the answer is a change that can
  go either way: a ``percentage_change``, or a rule whose label states it ("net change",
  "variance", "gain or loss"); those are counted apart. The library's ``difference`` rules
  name positive quantities ("salary increase", "budget remaining", "saving"), so they are
  not exempt. Record values in money that are zero or negative are counted too (a fee of
  0 GBP can be true; they are listed, not forbidden).

Instantiation keeps the counted kind at zero: :func:`believable_amount_term` is a hard
constraint on the eligible candidate's result (at least one unit of the rule's rounding).
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any

from ..solver import TaskEncoding
from ..spec import TypedTask
from ._library import ScenarioLibrary, load_library

MONEY_UNIT = re.compile(r"^[A-Z]{3}(/\S+)?$")
"""AUD, GBP/day, USD/MW: an ISO 4217 code, alone or per something"""
SIGNED_OPERATIONS = frozenset({"percentage_change"})
SIGNED_LABEL = re.compile(r"\b(change|variance|net|gain or loss|profit or loss|balance)\b")
EXAMPLES = 5


def is_money(unit: str | None) -> bool:
    return bool(unit) and MONEY_UNIT.match(unit or "") is not None


def is_signed_rule(operation: str, label: str) -> bool:
    """Whether a negative answer is natural: the rule says the answer is a change."""
    return operation in SIGNED_OPERATIONS or SIGNED_LABEL.search(label.lower()) is not None


def believable_amount_term(task: TypedTask, candidate: str) -> str | None:
    """SMT: ``candidate``'s result is at least one unit of the rule's rounding (so its gold
    answer is positive), for a money rule that does not state a sign; else ``None``."""
    rule = task.rule
    if not is_money(rule.unit) or is_signed_rule(rule.operation, rule.label):
        return None
    least = Fraction(10) ** -rule.digits
    num, den = TaskEncoding.num_name(candidate), TaskEncoding.den_name(candidate)
    # num/den >= a/b  <=>  b*num >= a*den   (den > 0 in the encoding)
    return f"(>= (* {least.denominator} {num}) (* {least.numerator} {den}))"


def naturalness_stats(
    groups: list[dict[str, Any]], library: ScenarioLibrary | None = None
) -> dict[str, Any]:
    """Off-domain names and non-positive money amounts over built groups (plain JSON)."""
    library = library or load_library()
    off_domain: list[str] = []
    unpooled = 0
    pooled = {name for pool in library.names.values() for name in pool}
    answers = 0
    nonpositive: dict[str, list[str]] = {"unsigned": [], "signed": []}
    records_nonpositive: list[str] = []
    for group in groups:
        spec = group["spec"]
        names = [c["name"] for c in spec["candidates"]]
        strangers = library.off_domain_names(spec["domain"], names)
        off_domain += [f"{group['id']}: {name}" for name in strangers]
        unpooled += sum(name not in pooled for name in names)
        rule, number = spec["rule"], group["gold"].get("number")
        if is_money(rule["unit"]) and number is not None:
            answers += 1
            if Fraction(str(number)) <= 0:
                signed = is_signed_rule(rule["operation"], rule["label"])
                kind = "signed" if signed else "unsigned"
                nonpositive[kind].append(
                    f"{group['id']}: {rule['label']} = {number} {rule['unit']} "
                    f"({rule['operation']})"
                )
        money_facts = {f["key"]: f for f in spec["facts"] if is_money(f.get("unit"))}
        for record in spec.get("records") or []:
            fact = money_facts.get(record["fact"])
            if fact is not None and Fraction(str(record["value"])) <= 0:
                records_nonpositive.append(
                    f"{group['id']}: {fact['label']} = {record['value']} {fact['unit']}"
                )
    return {
        "names_off_domain": len(off_domain),
        "names_from_no_pool": unpooled,
        "money_answers": answers,
        "money_answers_nonpositive": len(nonpositive["unsigned"]),
        "money_answers_nonpositive_signed": len(nonpositive["signed"]),
        "money_records_nonpositive": len(records_nonpositive),
        "examples": {
            "names_off_domain": off_domain[:EXAMPLES],
            "money_answers_nonpositive": nonpositive["unsigned"][:EXAMPLES],
            "money_answers_nonpositive_signed": nonpositive["signed"][:EXAMPLES],
            "money_records_nonpositive": records_nonpositive[:EXAMPLES],
        },
    }
