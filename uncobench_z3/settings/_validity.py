"""Proofs that each defect matters, in the same three-valued form as the engine's checks.

* Misaligned: pin every fact but the substituted ones, force the wrong-context values, ask
  for the output to differ from gold. ``sat`` proves that *using* the reply changes the answer.
* Incomplete: pin every fact but the imprecise ones, restrict them to what the reply states,
  ask for a differing output. ``sat`` proves the reply leaves the answer undetermined (the
  model is a value the reply allows that gives another output).
* Missed: the role's necessity query: without any reply from it, the answer is open.
* Mixed: each defect on its own as above, on three different roles, plus the combination.

Beside the solver queries, programmatic checks tie the policy data to the records: a
misaligned value is the record of the stated other context and differs from the truth; an
imprecise statement contains the true value; a resolved reply is the truth.
"""

from __future__ import annotations

from ..solver import GOAL_DIFFERS, Checker, CheckResult, QueryResult, Verdict
from ..solver._checks import completion_json, core_names, outcome_json
from ..spec import Outcome, Slot, TypedTask, Value, ValueParseError, describe_outcome, parse_value
from ._imprecise import Imprecision
from ._model import Defect, StatedValue


def stated_value(task: TypedTask, stated: StatedValue) -> Value:
    fact = task.facts[stated.fact]
    return parse_value(fact.type, stated.value, list(fact.members) or None)


def stated_imprecision(task: TypedTask, stated: StatedValue) -> Imprecision:
    fact = task.facts[stated.fact]
    members = list(fact.members) or None
    if stated.options is not None:
        return Imprecision(
            options=tuple(parse_value(fact.type, o, members) for o in stated.options)
        )
    if stated.low is None or stated.high is None:
        raise ValueParseError("an imprecise statement needs low and high, or options")
    return Imprecision(
        low=parse_value(fact.type, stated.low, members),
        high=parse_value(fact.type, stated.high, members),
    )


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
        what = f"the {defect.kind} defect on {defect.role}" if defect else "the combined defects"
        certs = self.checker._keep(name, result, comment)
        if result.status == "sat":
            summary = f"{claim}: the answer changes from {self.checker.describe(self.gold)}"
            witness = None
            if result.codes is not None:  # full evidence: the model was read
                outcome = self.checker.ts.checked_outcome(result)
                values = self.checker.ts.values_of(result, changed)
                summary = (
                    f"{claim}: the answer becomes {describe_outcome(self.task, outcome)} "
                    f"instead of {self.checker.describe(self.gold)}"
                )
                witness = {
                    "defect": defect.kind if defect else "combined",
                    "values": completion_json(self.task, dict(values)),
                    "outcome": outcome_json(self.task, outcome),
                }
            return CheckResult(
                name=name,
                kind="validity",
                setting=setting,
                role=role,
                verdict=Verdict.PROVED,
                summary=summary,
                witness=witness,
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
        result = self.checker.ts.query(
            name, pinned, GOAL_DIFFERS, extras, self.want_cores, self.checker.full
        )
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
        problems = []
        imprecise = self.imprecisions(defect)
        for slot, statement in imprecise.items():
            fact = self.task.facts[slot[1]]
            if not statement.contains(fact, self.task.values[slot]):
                problems.append(f"the imprecise statement of {slot} excludes the true value")
        if not imprecise:
            problems.append("the first reply states no imprecise value")
        problems += self._resolved_problems(defect)
        checks = [self._consistency(f"{base}-records", setting, defect, problems)]
        if not imprecise:
            return checks
        extras = [self.range_term(slot, st) for slot, st in imprecise.items()]
        claim = f"{defect.role}'s imprecise reply allows another value"
        comment = "imprecise values restricted to the reply; sat = the answer is open"
        checks.append(self._differs(base, setting, defect, list(imprecise), extras, claim, comment))
        return checks

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

    def combined(self, setting: str, defects: list[Defect]) -> CheckResult:
        """All defects at once (Mixed): the first replies together leave the answer open."""
        name = f"validity-{setting}-combined"
        substituted: dict[Slot, Value] = {}
        imprecise: dict[Slot, Imprecision] = {}
        hidden_roles: set[str] = set()
        for defect in defects:
            if defect.kind == "misaligned":
                substituted.update(self.substitutions(defect))
            elif defect.kind == "incomplete":
                imprecise.update(self.imprecisions(defect))
            else:
                hidden_roles.add(defect.role)
        free = (
            set(substituted)
            | set(imprecise)
            | {s for s in self.task.all_slots() if self.task.facts[s[1]].owner in hidden_roles}
        )
        enc = self.checker.ts.encoding
        extras = [enc.value_equals_term(s, v) for s, v in substituted.items()]
        extras += [self.range_term(s, st) for s, st in imprecise.items()]
        roles = ", ".join(d.role for d in defects)
        claim = f"the first replies of {roles} together"
        comment = "all defects at once; sat = the answer is open"
        return self._differs(name, setting, None, sorted(free), extras, claim, comment)
