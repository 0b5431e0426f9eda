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
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import combinations

from ..spec import Answer, Outcome, Slot, TypedTask, describe_outcome, format_value, to_json_scalar
from ._encoding import GOAL_DIFFERS, GOAL_TWO_ELIGIBLE
from ._engine import QueryResult, TaskSolver
from ._status import CheckResult, Verdict


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


class Checker:
    """Runs the checks of one task on one incremental solver and keeps their certificates."""

    def __init__(self, solver: TaskSolver, certificates: dict[str, str] | None = None) -> None:
        self.ts = solver
        self.task = solver.task
        self.certificates = certificates
        self._hidden: dict[frozenset[str], QueryResult] = {}

    def _keep(self, name: str, result: QueryResult, comment: str = "") -> list[str]:
        if self.certificates is None:
            return []
        self.certificates[name] = self.ts.certificate(result, comment)
        return [name]

    # -- gold and uniqueness ------------------------------------------------------------------
    def gold_check(self, gold: Outcome) -> CheckResult:
        result = self.ts.query("gold", self.task.all_slots())
        certs = self._keep("gold", result, "all facts pinned: the model is the gold instance")
        if result.status == "unknown":
            return CheckResult(
                name="gold",
                kind="gold",
                verdict=Verdict.UNKNOWN,
                reason=result.reason,
                summary="the solver could not evaluate the instance",
                certificates=certs,
            )
        if result.status == "unsat":
            return CheckResult(
                name="gold",
                kind="gold",
                verdict=Verdict.REFUTED,
                core=core_names(result.core),
                summary="the recorded values contradict the declared domains",
                certificates=certs,
            )
        solver_view = self.ts.checked_outcome(result)  # raises on disagreement
        agree = solver_view.same_output(gold)
        return CheckResult(
            name="gold",
            kind="gold",
            verdict=Verdict.PROVED if agree else Verdict.REFUTED,
            summary=(
                f"exact arithmetic and the solver model agree: {describe_outcome(self.task, gold)}"
            ),
            witness={"outcome": outcome_json(self.task, solver_view)},
            certificates=certs,
        )

    def uniqueness_check(self) -> CheckResult:
        result = self.ts.query("uniqueness", self.task.all_slots(), GOAL_TWO_ELIGIBLE)
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
        self, roles: frozenset[str], want_core: bool = False, want_model: bool = True
    ) -> QueryResult:
        """Hide ``roles``: is there a completion whose output differs from gold? (memoized)

        The unsat core and the model are read only when asked for (they are what reports
        explain with, and the costly parts of an answer); a cached answer without them is
        asked again when they are wanted.
        """
        cached = self._hidden.get(roles)
        if (
            cached is None
            or (want_core and cached.status == "unsat" and cached.core is None)
            or (want_model and cached.status == "sat" and cached.codes is None)
        ):
            pinned = [s for s in self.task.all_slots() if self.task.facts[s[1]].owner not in roles]
            name = "hide-" + "+".join(sorted(roles))
            cached = self._hidden[roles] = self.ts.query(
                name, pinned, GOAL_DIFFERS, (), want_core, want_model
            )
        return cached

    def _witness(self, result: QueryResult, roles: frozenset[str]) -> dict[str, object]:
        hidden = [s for s in self.task.all_slots() if self.task.facts[s[1]].owner in roles]
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
            outcome = self.ts.checked_outcome(alone)
            return CheckResult(
                name=name,
                kind="necessity",
                role=role,
                verdict=Verdict.PROVED,
                summary=(
                    f"{title} is necessary: with its records hidden, "
                    f"{self._changed_slots_text(alone, frozenset({role}))} gives "
                    f"{describe_outcome(self.task, outcome)} instead of "
                    f"{describe_outcome(self.task, gold)}"
                ),
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
        pinning = ", ".join(core[:4]) + (" ..." if len(core) > 4 else "")
        return CheckResult(
            name=name,
            kind="necessity",
            role=role,
            verdict=Verdict.REFUTED,
            summary=f"{title} is not necessary: the other roles' facts fix the answer ({pinning})",
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
                result_without = self.hidden_query(without, want_core=True)
                result_with = self.hidden_query(with_role)  # the witness: now read its model
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
                outcome = self.ts.checked_outcome(result_with)
                partners = ", ".join(self.task.role_name(r) for r in sorted(without))
                return CheckResult(
                    name=name,
                    kind="necessity",
                    role=role,
                    verdict=Verdict.PROVED,
                    summary=(
                        f"{title} is necessary jointly with {partners}: hiding them together "
                        f"gives {describe_outcome(self.task, outcome)}, hiding {partners} alone "
                        "leaves the answer fixed"
                    ),
                    witness={
                        "mode": "jointly",
                        "with_roles": sorted(without),
                        **self._witness(result_with, with_role),
                        "without_role_core": core_names(result_without.core),
                    },
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
