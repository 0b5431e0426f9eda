"""The proofs that make a task well-posed: gold agreement, uniqueness, role necessity.

Role necessity (MISSION stage 4): hide one role's facts for every candidate, keep the rest
pinned, and ask for a completion whose output differs from gold. Satisfiable means the role
is necessary (the model is the witness); unsatisfiable means it is not (the unsat core names
the pinned facts that fix the answer).

One refinement, forced by arithmetic: when the answer is "no eligible candidate", hiding one
role can only change it by letting a candidate qualify, which needs that role to be the
*only* one excluding the candidate. Three candidates can single out at most three roles, so a
5-7 role task with no eligible candidate can never have every role necessary alone. For those
tasks a role also counts as necessary *jointly* when it belongs to a minimal set of roles
whose joint hiding changes the answer (hiding the set changes it, hiding the set without the
role does not): it is part of the only evidence that excludes some candidate. The report
says which form was proved; a role in no such set is refuted after every set was tried.

Hiding more roles pins fewer facts, so "some completion differs from gold" is monotone in
the hidden set: once hiding S is satisfiable so is hiding any superset, and once hiding S is
unsatisfiable so is hiding any subset. The joint search reads such answers off earlier ones
instead of asking the solver again (the sets it reports are still asked, for their evidence).

**Evidence.** A checker runs in one of two modes. ``"full"`` reads the model of every
satisfiable query (the witness: a completion and the output it gives) and the core of every
unsatisfiable one. ``"verdict"`` asks only for the verdicts, which costs a fraction as much,
and computes evidence where a report needs it: every refuted check carries its core or
witness either way. A verdict-only proof of necessity still says which form was proved
(``witness`` holds the mode and the hidden roles, without a completion).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from itertools import combinations
from typing import Any, Literal

from ..spec import Answer, Outcome, Slot, TypedTask, describe_outcome, format_value, to_json_scalar
from ._encoding import GOAL_DIFFERS, GOAL_TWO_ELIGIBLE
from ._engine import QueryResult, TaskSolver
from ._status import CheckResult, Verdict

Evidence = Literal["verdict", "full"]


def slot_label(task: TypedTask, slot: Slot) -> str:
    fact = task.facts[slot[1]]
    return f"{task.candidate_name(slot[0])}'s {fact.label}"


def core_names(core: Iterable[str] | None) -> list[str]:
    """``pin.c1.experience`` -> ``c1.experience`` (guard literals are dropped)."""
    return [lit.removeprefix("pin.") for lit in core or () if lit.startswith("pin.")]


def completion_json(task: TypedTask, values: dict[Slot, object]) -> dict[str, object]:
    return {f"{c}.{f}": to_json_scalar(v) for (c, f), v in values.items()}  # type: ignore[arg-type]


def outcome_json(task: TypedTask, outcome: Outcome) -> dict[str, object]:
    if outcome.kind == "ambiguous":
        return {"decision": "ambiguous", "eligible": list(outcome.eligible)}
    return Answer.from_outcome(task, outcome).model_dump(exclude_none=True)


def _gold(verdict: Verdict, summary: str, **evidence: Any) -> CheckResult:
    return CheckResult(name="gold", kind="gold", verdict=verdict, summary=summary, **evidence)


class Checker:
    """Runs the checks of one task on one incremental solver and keeps their certificates.

    ``evidence`` is ``"verdict"`` (the default) or ``"full"`` (see the module docstring);
    asking for certificates implies full evidence.
    """

    def __init__(
        self,
        solver: TaskSolver,
        certificates: dict[str, str] | None = None,
        evidence: Evidence = "verdict",
    ) -> None:
        self.ts = solver
        self.task = solver.task
        self.certificates = certificates
        self.full = evidence == "full" or certificates is not None
        self._hidden: dict[frozenset[str], QueryResult] = {}
        # every slot with the role that owns it, listed once (the search hides many role sets)
        self._slots = self.task.all_slots()
        self._owned = [(slot, self.task.facts[slot[1]].owner) for slot in self._slots]
        self._described: dict[Outcome, str] = {}

    def describe(self, outcome: Outcome) -> str:
        """:func:`describe_outcome`, once per outcome (summaries repeat the gold answer)."""
        text = self._described.get(outcome)
        if text is None:
            text = self._described[outcome] = describe_outcome(self.task, outcome)
        return text

    def _keep(self, name: str, result: QueryResult, comment: str = "") -> list[str]:
        if self.certificates is None:
            return []
        self.certificates[name] = self.ts.certificate(result, comment)
        return [name]

    # -- gold and uniqueness ------------------------------------------------------------------
    def gold_check(self, gold: Outcome) -> CheckResult:
        if not self.full:
            # One query without a model: with every fact pinned the output is determined, so
            # "consistent and the output is gold" is exactly what reading the model shows.
            same = self.ts.query(
                "gold-verdict",
                self._slots,
                extras=[self.ts.encoding.outcome_term(gold)],
                want_core=False,
                want_model=False,
            )
            if same.status == "sat":
                summary = "with every record pinned the solver's output is the gold answer"
                return _gold(Verdict.PROVED, f"{summary}: {self.describe(gold)}")
        result = self.ts.query("gold", self._slots)
        certs = self._keep("gold", result, "all facts pinned: the model is the gold instance")
        if result.status == "unknown":
            summary = "the solver could not evaluate the instance"
            return _gold(Verdict.UNKNOWN, summary, reason=result.reason, certificates=certs)
        if result.status == "unsat":
            summary = "the recorded values contradict the declared domains"
            core = core_names(result.core)
            return _gold(Verdict.REFUTED, summary, core=core, certificates=certs)
        solver_view = self.ts.checked_outcome(result)  # raises on disagreement
        agree = solver_view.same_output(gold)
        return _gold(
            Verdict.PROVED if agree else Verdict.REFUTED,
            f"exact arithmetic and the solver model agree: {self.describe(gold)}",
            witness={"outcome": outcome_json(self.task, solver_view)},
            certificates=certs,
        )

    def uniqueness_check(self) -> CheckResult:
        result = self.ts.query("uniqueness", self._slots, GOAL_TWO_ELIGIBLE, (), False, self.full)
        if result.status == "sat":
            result = self.ts.explain(result)  # refuted: the witness names the candidates
        certs = self._keep(
            "uniqueness", result, "sat would mean two candidates are eligible at once"
        )
        if result.status == "unsat":
            return CheckResult(
                name="uniqueness",
                kind="uniqueness",
                verdict=Verdict.PROVED,
                summary="at most one candidate is eligible with all facts known",
                certificates=certs,
            )
        if result.status == "unknown":
            return CheckResult(
                name="uniqueness",
                kind="uniqueness",
                verdict=Verdict.UNKNOWN,
                reason=result.reason,
                summary="the solver could not decide uniqueness",
                certificates=certs,
            )
        outcome = self.ts.checked_outcome(result)
        names = ", ".join(self.task.candidate_name(c) for c in outcome.eligible)
        return CheckResult(
            name="uniqueness",
            kind="uniqueness",
            verdict=Verdict.REFUTED,
            summary=f"several candidates are eligible: {names}",
            witness={"eligible": list(outcome.eligible)},
            certificates=certs,
        )

    # -- necessity ----------------------------------------------------------------------------
    def hidden_query(
        self, roles: frozenset[str], want_core: bool = False, want_model: bool | None = None
    ) -> QueryResult:
        """Hide ``roles``: is there a completion whose output differs from gold? (memoized)

        The unsat core and the model are read only when asked for (they are what reports
        explain with, and the costly parts of an answer; ``want_model`` defaults to the
        checker's evidence mode); a cached answer without them is asked again when they are
        wanted. A bare verdict may be read off earlier answers by monotonicity.
        """
        if want_model is None:
            want_model = self.full
        cached = self._hidden.get(roles)
        if cached is None and not want_core and not want_model:
            cached = self._implied(roles)
        if (
            cached is None
            or (want_core and cached.status == "unsat" and cached.core is None)
            or (want_model and cached.status == "sat" and cached.codes is None)
        ):
            name, pinned = self._hiding(roles)
            answer = self.ts.query(name, pinned, GOAL_DIFFERS, (), want_core, want_model)
            if cached is not None and answer.status != cached.status:
                # Asked again for evidence only, and the budget ran out this time: the earlier
                # answer stands (a verdict once proved is never replaced by unknown); the
                # evidence is missing and the reason says why.
                return replace(cached, reason=answer.reason)
            cached = self._hidden[roles] = answer
        return cached

    def _hiding(self, roles: frozenset[str]) -> tuple[str, list[Slot]]:
        """The name of the query that hides ``roles``, and the slots it pins."""
        pinned = [slot for slot, owner in self._owned if owner not in roles]
        return "hide-" + "+".join(sorted(roles)), pinned

    def _implied(self, roles: frozenset[str]) -> QueryResult | None:
        """The answer for hiding ``roles`` when an earlier answer implies it (monotonicity)."""
        for known, result in self._hidden.items():
            if (result.status == "sat" and known <= roles) or (
                result.status == "unsat" and roles <= known
            ):
                name, pinned = self._hiding(roles)
                implied = QueryResult(
                    name,
                    result.status,
                    [],
                    pinned=frozenset(pinned),
                    goal=GOAL_DIFFERS,
                    implied_by=result.name,
                )
                self._hidden[roles] = implied
                return implied
        return None

    def _witness(self, result: QueryResult, roles: frozenset[str]) -> dict[str, object]:
        if result.codes is None:  # verdict only: what the search established, no completion
            return {"hidden_roles": sorted(roles)}
        hidden = [slot for slot, owner in self._owned if owner in roles]
        values = self.ts.values_of(result, hidden)
        outcome = self.ts.checked_outcome(result)
        return {
            "hidden_roles": sorted(roles),
            "completion": completion_json(self.task, dict(values)),
            "outcome": outcome_json(self.task, outcome),
        }

    def _changed_slots_text(self, result: QueryResult, roles: frozenset[str]) -> str:
        values = self.ts.values_of(result)
        changed = []
        for slot, value in values.items():
            fact = self.task.facts[slot[1]]
            if fact.owner in roles and self.task.values[slot] != value:
                changed.append(
                    f"{slot_label(self.task, slot)} = {format_value(value, fact.unit, fact.type)}"
                )
        return "; ".join(changed[:3]) + (" ..." if len(changed) > 3 else "")

    def necessity_check(self, role: str, gold: Outcome) -> CheckResult:
        name = f"necessity-{role}"
        title = f"{self.task.role_name(role)} ({role})"
        alone = self.hidden_query(frozenset({role}))
        if alone.status == "sat":
            certs = self._keep(
                name, alone, f"hide role {role}; sat = a completion differs from gold"
            )
            if alone.codes is None:
                summary = (
                    f"{title} is necessary: with its records hidden, some completion gives "
                    f"another answer than {self.describe(gold)}"
                )
            else:
                outcome = self.ts.checked_outcome(alone)
                summary = (
                    f"{title} is necessary: with its records hidden, "
                    f"{self._changed_slots_text(alone, frozenset({role}))} gives "
                    f"{describe_outcome(self.task, outcome)} instead of "
                    f"{self.describe(gold)}"
                )
            return CheckResult(
                name=name,
                kind="necessity",
                role=role,
                verdict=Verdict.PROVED,
                summary=summary,
                witness={"mode": "alone", **self._witness(alone, frozenset({role}))},
                certificates=certs,
            )
        if alone.status == "unknown":
            certs = self._keep(name, alone, f"hide role {role}")
            return CheckResult(
                name=name,
                kind="necessity",
                role=role,
                verdict=Verdict.UNKNOWN,
                reason=alone.reason,
                summary=f"the solver could not decide whether {title} matters",
                certificates=certs,
            )
        if gold.kind == "none":
            joint = self._joint_necessity(role, gold, name, title)
            if joint is not None:
                return joint
        alone = self.hidden_query(frozenset({role}), want_core=True)
        certs = self._keep(name, alone, f"hide role {role}; unsat = the other roles fix the answer")
        core = core_names(alone.core)
        if alone.core is None:  # the verdict was proved, the core not read (see hidden_query)
            unread = f"the core could not be read: {alone.reason or 'unknown'}"
            why = f"the other roles' facts fix the answer ({unread})"
        elif not core:
            # no pinned fact is needed: no value of any record changes the answer (a
            # condition no value of its domain meets, say), which "()" left unsaid
            why = "no value of any record changes the answer (the conditions and domains fix it)"
        else:
            pinning = ", ".join(core[:4]) + (" ..." if len(core) > 4 else "")
            why = f"the other roles' facts fix the answer ({pinning})"
        return CheckResult(
            name=name,
            kind="necessity",
            role=role,
            verdict=Verdict.REFUTED,
            summary=f"{title} is not necessary: {why}",
            core=core,
            certificates=certs,
        )

    def _joint_necessity(
        self, role: str, gold: Outcome, name: str, title: str
    ) -> CheckResult | None:
        """Find a minimal answer-changing set of hidden roles containing ``role``."""
        others = [r for r in self.task.roles if r != role]
        undecided = False
        for size in range(1, len(others) + 1):
            for group in combinations(others, size):
                without = frozenset(group)
                with_role = without | {role}
                result_with = self.hidden_query(with_role, want_model=False)
                if result_with.status != "sat":
                    undecided |= result_with.status == "unknown"
                    continue
                result_without = self.hidden_query(without, want_model=False)
                if result_without.status == "unknown":
                    undecided = True
                    continue
                if result_without.status == "sat":
                    continue
                partners = ", ".join(self.task.role_name(r) for r in sorted(without))
                witness: dict[str, object] = {"mode": "jointly", "with_roles": sorted(without)}
                changes = "changes the answer"
                certs: list[str] = []
                if self.full:  # the evidence: the witness's model and the core without the role
                    result_without = self.hidden_query(without, want_core=True)
                    result_with = self.hidden_query(with_role)
                    certs = self._keep(
                        f"{name}-jointly",
                        result_with,
                        f"hide roles {sorted(with_role)}; sat = a completion differs from gold",
                    )
                    certs += self._keep(
                        f"{name}-without",
                        result_without,
                        f"hide roles {sorted(without)} only; unsat = the answer stays fixed",
                    )
                    if result_with.codes is not None:  # None: asked again, out of budget
                        outcome = self.ts.checked_outcome(result_with)
                        changes = f"gives {describe_outcome(self.task, outcome)}"
                witness.update(self._witness(result_with, with_role))
                if self.full:
                    witness["without_role_core"] = core_names(result_without.core)
                return CheckResult(
                    name=name,
                    kind="necessity",
                    role=role,
                    verdict=Verdict.PROVED,
                    summary=(
                        f"{title} is necessary jointly with {partners}: hiding them together "
                        f"{changes}, hiding {partners} alone leaves the answer fixed"
                    ),
                    witness=witness,
                    certificates=certs,
                )
        if undecided:
            return CheckResult(
                name=name,
                kind="necessity",
                role=role,
                verdict=Verdict.UNKNOWN,
                reason="some joint-hiding queries were undecided",
                summary=f"the solver could not decide whether {title} matters jointly",
            )
        return None
