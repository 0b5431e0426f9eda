"""Proofs that each defect matters, in the same three-valued form as the engine's checks.

* Misaligned: pin every fact but the substituted ones, force the wrong-context values, ask
  for the output to differ from gold. ``sat`` proves that *using* the reply changes the answer.
* Incomplete: pin every fact but the imprecise one, restrict it to what the reply states,
  ask for a differing output. ``sat`` proves the reply leaves the answer undetermined (the
  model is a value the reply allows that gives another output). Beside it, the reply's
  *gold chance* (:mod:`._chance`) must be at most 1/2: a value drawn uniformly from what the
  reply allows gives the gold answer no more often than a coin toss.
* Missed: the role's necessity query: without any reply from it, the answer is open.
* Mixed: one defect of each kind on three different roles. Each defect's own query above is
  the *repair-two* query of Mixed: with the other two defects repaired (their true records
  known), the remaining one still leaves the answer open - so an agent needs all three
  repairs. And the *face-value reading* of the three first replies together (the
  wrong-context value as the value, the imprecise statement's midpoint or first option, the
  silent role's records unknown) must not determine gold.

Beside the solver queries, programmatic checks tie the policy data to the records: a
misaligned value is the record of the stated other context and differs from the truth; an
imprecise statement contains the true value and has the shape replies are made with (2-4
options; a range inside the domain, narrower than it, with its midpoint on the fact's grid);
a resolved reply is the truth.
"""

from __future__ import annotations

from collections.abc import Iterable
from fractions import Fraction

from ..solver import GOAL_DIFFERS, Checker, CheckResult, QueryResult, Verdict
from ..solver._checks import completion_json, core_names, outcome_json
from ..spec import Outcome, Slot, Value, describe_outcome
from ._chance import gold_chance
from ._guessing import stored_figures_check, strategy_reading
from ._imprecise import MAX_OPTIONS, Imprecision
from ._model import Defect
from ._stated import range_midpoint, stated_imprecision, stated_value

#: The largest gold chance an Incomplete reply may leave.
MAX_GOLD_CHANCE = Fraction(1, 2)


class DefectChecker:
    """Runs the validity checks of defects on a task's live solver."""

    def __init__(self, checker: Checker, gold: Outcome, want_cores: bool = True) -> None:
        self.checker = checker
        self.task = checker.task
        self.gold = gold
        self.want_cores = want_cores

    # -- helpers ------------------------------------------------------------------------------
    def _result(
        self,
        name: str,
        setting: str,
        defect: Defect | None,
        result: QueryResult,
        claim: str,
        changed: list[Slot],
        comment: str,
    ) -> CheckResult:
        role = defect.role if defect is not None else None
        what = (
            f"the {defect.kind} defect on {defect.role}"
            if defect
            else "the face-value reading of the first replies"
        )
        certs = self.checker._keep(name, result, comment)
        if result.status == "sat":
            outcome = self.checker.ts.checked_outcome(result)
            values = self.checker.ts.values_of(result, changed)
            return CheckResult(
                name=name,
                kind="validity",
                setting=setting,
                role=role,
                verdict=Verdict.PROVED,
                summary=f"{claim}: the answer becomes {describe_outcome(self.task, outcome)} "
                f"instead of {describe_outcome(self.task, self.gold)}",
                witness={
                    "defect": defect.kind if defect else "face-value",
                    "values": completion_json(self.task, dict(values)),
                    "outcome": outcome_json(self.task, outcome),
                },
                certificates=certs,
            )
        if result.status == "unknown":
            return CheckResult(
                name=name,
                kind="validity",
                setting=setting,
                role=role,
                verdict=Verdict.UNKNOWN,
                reason=result.reason,
                summary=f"the solver could not decide whether {what} matters",
                certificates=certs,
            )
        return CheckResult(
            name=name,
            kind="validity",
            setting=setting,
            role=role,
            verdict=Verdict.REFUTED,
            summary=f"{what} is not decision-relevant: the answer stays the same",
            core=core_names(result.core),
            certificates=certs,
        )

    def _consistency(
        self, name: str, setting: str, defect: Defect, problems: list[str]
    ) -> CheckResult:
        if problems:
            return CheckResult(
                name=name,
                kind="consistency",
                setting=setting,
                role=defect.role,
                verdict=Verdict.REFUTED,
                summary="; ".join(problems),
            )
        return CheckResult(
            name=name,
            kind="consistency",
            setting=setting,
            role=defect.role,
            verdict=Verdict.PROVED,
            summary="the replies agree with the role's records",
        )

    def _resolved_problems(self, defect: Defect) -> list[str]:
        problems = []
        for stated in defect.resolved_reply or []:
            slot = (stated.candidate, stated.fact)
            fact = self.task.facts[stated.fact]
            if stated.context != fact.context:
                problems.append(f"the resolved reply for {slot} names {stated.context!r}")
            elif not stated.is_exact or stated_value(self.task, stated) != self.task.values[slot]:
                problems.append(f"the resolved reply for {slot} is not the recorded value")
        return problems

    # -- the three defects --------------------------------------------------------------------
    def substitutions(self, defect: Defect) -> dict[Slot, Value]:
        """The wrong-context values a misaligned first reply states."""
        out: dict[Slot, Value] = {}
        for stated in defect.first_reply or []:
            if stated.context != self.task.facts[stated.fact].context:
                out[(stated.candidate, stated.fact)] = stated_value(self.task, stated)
        return out

    def imprecisions(self, defect: Defect) -> dict[Slot, Imprecision]:
        return {
            (s.candidate, s.fact): stated_imprecision(self.task, s)
            for s in defect.first_reply or []
            if not s.is_exact
        }

    def _differs(
        self,
        name: str,
        setting: str,
        defect: Defect | None,
        free: list[Slot],
        extras: list[str],
        claim: str,
        comment: str,
    ) -> CheckResult:
        """Free the ``free`` slots under ``extras`` and ask for an answer other than gold."""
        freed = set(free)
        pinned = [s for s in self.task.all_slots() if s not in freed]
        result = self.checker.ts.query(name, pinned, GOAL_DIFFERS, extras, self.want_cores)
        return self._result(name, setting, defect, result, claim, free, comment)

    @staticmethod
    def check_name(setting: str, defect: Defect) -> str:
        kind = f"-{defect.kind}" if setting != defect.kind else ""
        return f"validity-{setting}{kind}-{defect.role}"

    def misaligned(self, setting: str, defect: Defect) -> list[CheckResult]:
        base = self.check_name(setting, defect)
        problems = []
        substituted = self.substitutions(defect)
        for stated in defect.first_reply or []:
            slot = (stated.candidate, stated.fact)
            fact = self.task.facts[stated.fact]
            if slot in substituted:
                recorded = self.task.alternatives.get(slot, {}).get(stated.context)
                if recorded is None or recorded != substituted[slot]:
                    problems.append(
                        f"{slot} has no record {substituted[slot]} in {stated.context!r}"
                    )
                if substituted[slot] == self.task.values[slot]:
                    problems.append(f"the wrong-context value of {slot} equals the true one")
            elif not stated.is_exact or stated_value(self.task, stated) != self.task.values[slot]:
                problems.append(f"{slot} is stated in {fact.context!r} but not as recorded")
        if not substituted:
            problems.append("the first reply states no value from another context")
        problems += self._resolved_problems(defect)
        checks = [self._consistency(f"{base}-records", setting, defect, problems)]
        if not substituted:
            return checks
        extras = [self.checker.ts.encoding.value_equals_term(s, v) for s, v in substituted.items()]
        contexts = sorted(
            {s.context for s in defect.first_reply or [] if (s.candidate, s.fact) in substituted}
        )
        claim = f"using {defect.role}'s {', '.join(contexts)} value instead of the required one"
        comment = "wrong-context values forced; sat = the answer changes"
        checks.append(
            self._differs(base, setting, defect, list(substituted), extras, claim, comment)
        )
        return checks

    def incomplete(self, setting: str, defect: Defect) -> list[CheckResult]:
        base = self.check_name(setting, defect)
        imprecise = self.imprecisions(defect)
        problems = [p for s, st in imprecise.items() for p in self.statement_problems(s, st)]
        if len(imprecise) != 1:
            problems.append(f"the first reply states {len(imprecise)} imprecise values, not one")
        problems += self._resolved_problems(defect)
        checks = [self._consistency(f"{base}-records", setting, defect, problems)]
        if not imprecise:
            return checks
        extras = [self.range_term(slot, st) for slot, st in imprecise.items()]
        claim = f"{defect.role}'s imprecise reply allows another value"
        comment = "imprecise values restricted to the reply; sat = the answer is open"
        checks.append(self._differs(base, setting, defect, list(imprecise), extras, claim, comment))
        slot, statement = next(iter(imprecise.items()))
        truthful = statement.contains(self.task.facts[slot[1]], self.task.values[slot])
        if len(imprecise) == 1 and truthful:  # counted even when the shape is wrong: it says more
            checks.append(self.chance_check(f"{base}-chance", setting, defect, slot, statement))
        return checks

    def statement_problems(self, slot: Slot, statement: Imprecision) -> list[str]:
        """The shape rules of an imprecise statement (see the module docstring)."""
        fact = self.task.facts[slot[1]]
        truth = self.task.values[slot]
        if statement.options is not None:
            members = fact.domain_values()
            if not 2 <= len(set(statement.options)) == len(statement.options) <= MAX_OPTIONS:
                return [f"the options for {slot} are not 2-{MAX_OPTIONS} distinct values"]
            if any(v not in members for v in statement.options):
                return [f"an option for {slot} is not a value of the fact"]
        else:
            assert statement.low is not None and statement.high is not None
            if not (fact.contains(statement.low) and fact.contains(statement.high)):
                return [f"the range for {slot} does not lie on the fact's grid and domain"]
            low, high = fact.code(statement.low), fact.code(statement.high)
            assert not isinstance(low, bool) and not isinstance(high, bool)
            if not low < high or (low, high) == fact.code_range():
                return [f"the range for {slot} is empty, a single value or the whole domain"]
            if not fact.contains(range_midpoint(statement.low, statement.high)):
                return [f"the midpoint of the range for {slot} is not a value of the fact"]
        if not statement.contains(fact, truth):
            return [f"the imprecise statement of {slot} excludes the true value"]
        return []

    def chance_check(
        self, name: str, setting: str, defect: Defect, slot: Slot, statement: Imprecision
    ) -> CheckResult:
        """The reply's gold chance is at most 1/2 (exact count, see :mod:`._chance`)."""
        chance = gold_chance(self.task, self.gold, slot, statement)
        ok = chance.probability <= MAX_GOLD_CHANCE
        return CheckResult(
            name=name,
            kind="validity",
            setting=setting,
            role=defect.role,
            verdict=Verdict.PROVED if ok else Verdict.REFUTED,
            summary=f"under a uniform prior over what {defect.role}'s reply allows, the gold "
            f"answer has probability {chance.text()}"
            + ("" if ok else f", above {MAX_GOLD_CHANCE}"),
            witness={
                "gold_chance": str(chance.probability),
                "gold_values": chance.gold,
                "allowed_values": chance.allowed,
            },
        )

    def range_term(self, slot: Slot, statement: Imprecision) -> str:
        encoding = self.checker.ts.encoding
        if statement.options is not None:
            return encoding.value_in_set_term(slot, statement.options)
        assert statement.low is not None and statement.high is not None
        return encoding.value_in_range_term(slot, statement.low, statement.high)

    def missed(self, setting: str, defect: Defect) -> list[CheckResult]:
        name = self.check_name(setting, defect)
        problems = [] if defect.first_reply is None else ["a missed reply must state nothing"]
        checks = [self._consistency(f"{name}-records", setting, defect, problems)]
        result = self.checker.hidden_query(frozenset({defect.role}))
        claim = f"without {defect.role}'s reply the answer is open"
        checks.append(
            self._result(
                name,
                setting,
                defect,
                result,
                claim,
                self.task.slots_of(defect.role),
                "the role's facts are all free; sat = the answer is open",
            )
        )
        return checks

    def check(self, setting: str, defect: Defect) -> list[CheckResult]:
        if defect.kind == "misaligned":
            return self.misaligned(setting, defect)
        if defect.kind == "incomplete":
            return self.incomplete(setting, defect)
        return self.missed(setting, defect)

    def face_value_reading(self, setting: str, defects: list[Defect]) -> CheckResult:
        """Mixed: the first replies read at face value (wrong-context values as values, an
        imprecise statement's midpoint or first option, a silent role's records unknown) do
        not determine gold - a completion of the unknown records gives another output."""
        name = f"validity-{setting}-face-value"
        believed = strategy_reading(self.task, "face-value", defects)
        unknown = [s for s in self.task.all_slots() if s not in believed]
        changed = {s: v for s, v in believed.items() if v != self.task.values[s]}
        off_grid = [s for s, v in changed.items() if not self.task.facts[s[1]].contains(v)]
        if off_grid:
            return CheckResult(
                name=name,
                kind="validity",
                setting=setting,
                verdict=Verdict.REFUTED,
                summary=f"the face value of {off_grid[0]} is not a value of the fact",
            )
        enc = self.checker.ts.encoding
        extras = [enc.value_equals_term(s, v) for s, v in changed.items()]
        roles = ", ".join(d.role for d in defects)
        claim = f"the first replies of {roles} read at face value"
        comment = "face values forced, silent role free; sat = they do not determine gold"
        free = sorted({*unknown, *changed})
        return self._differs(name, setting, None, free, extras, claim, comment)


def gold_chances(checks: Iterable[CheckResult]) -> dict[str, str]:
    """The gold chance of every gold-chance check (by check name)."""
    return {
        c.name: str(c.witness["gold_chance"])
        for c in checks
        if c.witness is not None and "gold_chance" in c.witness
    }


def stored_chances_check(checks: list[CheckResult], stored: dict[str, str] | None) -> CheckResult:
    """The gold chances a group stores equal those its checks recomputed."""
    computed = gold_chances(checks)
    shown = ", ".join(f"{k} {v}" for k, v in computed.items()) or "no imprecise reply"
    return stored_figures_check("gold-chances", "gold chances", computed, stored, shown)
