"""Per-construct tests of the SMT encoding against the reference semantics."""

from __future__ import annotations

from fractions import Fraction

import z3
from hypothesis import given
from hypothesis import strategies as st

from tests.strategies import _condition_fact, small_specs
from uncobench_z3.solver import Checker, SolverBudget, TaskSolver, Verdict, verify_spec
from uncobench_z3.solver._encoding import condition_term
from uncobench_z3.spec import OPERATIONS, Fact, Role, TaskSpec, TypedCondition, check_structure
from uncobench_z3.spec._fact_checks import check_facts
from uncobench_z3.spec._problems import Collector
from uncobench_z3.spec._structure import _typed_operand


def _typed(fact_doc: dict, cond_doc: dict):  # type: ignore[no-untyped-def]
    spec_like = TaskSpec.model_construct(
        facts=[Fact.model_validate(fact_doc)], roles=[Role(id="r0", name="r0")]
    )
    out = Collector()
    facts = check_facts(spec_like, out)  # type: ignore[arg-type]
    fact = facts[fact_doc["key"]]
    from uncobench_z3.spec import Condition

    cond = Condition.model_validate(cond_doc)
    operand = _typed_operand(fact, cond, "$", out)
    assert operand is not None, out.problems
    return fact, TypedCondition(cond.id, cond.fact, cond.op, operand)


@given(st.data())
def test_condition_terms_match_reference_semantics_on_the_whole_domain(data: st.DataObject) -> None:
    fact_doc, cond_doc = data.draw(_condition_fact("x", "r0"))
    fact, cond = _typed(fact_doc, cond_doc)
    solver = z3.Solver()
    var_sort = "Bool" if fact.type == "bool" else "Int"
    solver.from_string(
        f"(declare-const x {var_sort})(declare-const q Bool)"
        f"(assert (= q {condition_term(fact, cond, 'x')}))"
    )
    q = z3.Bool("q")
    x = z3.Bool("x") if fact.type == "bool" else z3.Int("x")
    for value in fact.domain_values():
        code = fact.code(value)
        solver.push()
        solver.add(x == code)
        assert solver.check() == z3.sat
        assert z3.is_true(solver.model().eval(q)) == cond.holds(value), (value, cond)
        solver.pop()


@given(st.sampled_from(OPERATIONS).flatmap(lambda op: small_specs(operation=op)))
def test_rule_terms_match_exact_arithmetic_for_every_candidate(spec: TaskSpec) -> None:
    task = check_structure(spec).task
    assert task is not None
    ts = TaskSolver(task)
    result = ts.query("all", task.all_slots())
    assert result.status == "sat"
    model = ts.solver.model()
    for candidate in task.candidates:
        num = model.eval(z3.Int(f"out.num.{candidate}", ts.solver.ctx)).as_long()
        den = model.eval(z3.Int(f"out.den.{candidate}", ts.solver.ctx)).as_long()
        assert den > 0
        operands = [Fraction(task.values[(candidate, k)]) for k in task.rule.operands]  # type: ignore[arg-type]
        assert Fraction(num, den) == task.rule.value(operands)


@given(small_specs())
def test_gold_read_back_from_the_model_agrees(spec: TaskSpec) -> None:
    report = verify_spec(spec)  # a disagreement raises ConsistencyError
    gold_checks = [c for c in report.checks if c.kind == "gold"]
    assert all(c.verdict == Verdict.PROVED for c in gold_checks)


def test_unknown_is_never_reported_as_proved(examples_dir) -> None:  # type: ignore[no-untyped-def]
    from uncobench_z3.spec import load_spec

    spec = load_spec(examples_dir / "mining_supervisor.json")
    report = verify_spec(spec, budget=SolverBudget(rlimit=1))
    solver_checks = [c for c in report.checks if c.kind != "structure"]
    assert solver_checks and all(c.verdict == Verdict.UNKNOWN for c in solver_checks)
    assert all(c.reason for c in solver_checks)
    assert report.verdict == Verdict.UNKNOWN and report.exit_code == 3


def test_one_solver_serves_every_query(examples_dir) -> None:  # type: ignore[no-untyped-def]
    from uncobench_z3.spec import load_spec

    task = check_structure(load_spec(examples_dir / "mining_supervisor.json")).task
    assert task is not None
    ts = TaskSolver(task, task.outcome())
    checker = Checker(ts)
    checker.gold_check(task.outcome())
    for role in task.roles:
        checker.necessity_check(role, task.outcome())
    assert ts.queries == 1 + len(task.roles)
