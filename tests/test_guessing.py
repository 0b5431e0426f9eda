"""Guessing floors and the Mixed proofs (repair-two queries, face-value reading), against a
solver formulation and brute force on small specs, and against the built-in guessing agents'
actual answers."""

from __future__ import annotations

from fractions import Fraction

from hypothesis import assume, given
from hypothesis import strategies as st

from tests.strategies import small_specs
from uncobench_z3.settings import (
    Defect,
    DefectChecker,
    Imprecision,
    Setting,
    StatedValue,
    guess_accuracy,
    guessing_floors,
    incomplete_rule,
    misaligned_rule,
    missed_rule,
    operand_roles,
    strategy_reading,
)
from uncobench_z3.settings._stated import face_value
from uncobench_z3.solver import Checker, TaskSolver, Verdict, brute_force_differs
from uncobench_z3.spec import (
    Outcome,
    Slot,
    TaskSpec,
    TypedTask,
    Value,
    check_structure,
    to_json_scalar,
)


def _typed(spec: TaskSpec) -> tuple[TypedTask, Outcome]:
    task = check_structure(spec).task
    assert task is not None
    gold = task.outcome()
    assume(gold.kind != "ambiguous")
    return task, gold


def solver_accuracy(task: TypedTask, gold: Outcome, reading: dict[Slot, Value]) -> Fraction:
    """The floor's definition through the solver: a candidate is possible when some
    completion of the unknown records makes it eligible (with every condition satisfiable in
    its domain, the same as assuming unknown conditions hold)."""
    solver = TaskSolver(task, gold)
    changed = {s: v for s, v in reading.items() if v != task.values[s]}
    pinned = [s for s in reading if s not in changed]
    extras = [solver.encoding.value_equals_term(s, v) for s, v in changed.items()]
    possible = [
        c
        for c in task.candidates
        if solver.query(
            "possible", pinned, None, [*extras, solver.encoding.eligible_name(c)]
        ).status
        == "sat"
    ]
    if not possible:
        return Fraction(int(gold.kind == "none"))
    if gold.kind != "eligible" or gold.candidate not in possible:
        return Fraction(0)
    if any((gold.candidate, k) not in reading for k in task.rule.operands):
        return Fraction(0)
    operands = [Fraction(reading[(gold.candidate, k)]) for k in task.rule.operands]  # type: ignore[arg-type]
    return Fraction(1, len(possible)) if task.rule.rounded(operands) == gold.number else Fraction(0)


def _satisfiable_everywhere(task: TypedTask) -> bool:
    return all(
        any(cond.holds(v) for v in task.facts[cond.fact].domain_values())
        for cond in task.conditions
    )


def _defects(task: TypedTask, data: st.DataObject) -> list[Defect]:
    """One random defect of each kind on three different roles (validity not required)."""
    roles = data.draw(st.permutations(task.roles))
    mis_role, inc_role, missed_role = roles[:3]
    mis_slot = data.draw(st.sampled_from(task.slots_of(mis_role)))
    fact = task.facts[mis_slot[1]]
    wrong = data.draw(st.sampled_from(fact.domain_values()))
    inc_slot = data.draw(st.sampled_from(task.slots_of(inc_role)))
    inc_fact = task.facts[inc_slot[1]]
    truth = task.values[inc_slot]
    if inc_fact.type in ("bool", "enum"):
        others = [v for v in inc_fact.domain_values() if v != truth]
        assume(others)
        options = data.draw(st.permutations([truth, data.draw(st.sampled_from(others))]))
        fields: dict[str, object] = {"options": [to_json_scalar(v) for v in options]}
    else:
        values = inc_fact.domain_values()
        i = values.index(truth)
        low = data.draw(st.integers(0, i))
        high = data.draw(st.integers(i, len(values) - 1))
        statement = Imprecision(low=values[low], high=values[high])
        fields = statement.json_fields()
    return [
        Defect(
            kind="misaligned",
            role=mis_role,
            fact=mis_slot[1],
            candidates=[mis_slot[0]],
            first_reply=[
                StatedValue(
                    candidate=mis_slot[0],
                    fact=mis_slot[1],
                    context="before",
                    value=to_json_scalar(wrong),
                )
            ],
            targeted_follow_up=misaligned_rule(mis_slot[1], [mis_slot[0]], fact.context),
            rationale="t",
        ),
        Defect(
            kind="incomplete",
            role=inc_role,
            fact=inc_slot[1],
            candidates=[inc_slot[0]],
            first_reply=[
                StatedValue(
                    candidate=inc_slot[0],
                    fact=inc_slot[1],
                    context=inc_fact.context,
                    **fields,  # type: ignore[arg-type]
                )
            ],
            targeted_follow_up=incomplete_rule(inc_slot[1], [inc_slot[0]]),
            rationale="t",
        ),
        Defect(kind="missed", role=missed_role, targeted_follow_up=missed_rule(), rationale="t"),
    ]


@given(small_specs(), st.data())
def test_floors_agree_with_the_solver(spec: TaskSpec, data: st.DataObject) -> None:
    task, gold = _typed(spec)
    assume(_satisfiable_everywhere(task))
    defects = _defects(task, data)
    kinds = data.draw(st.sets(st.sampled_from(["misaligned", "incomplete", "missed"])))
    chosen = [d for d in defects if d.kind in kinds]
    for strategy in ("optimist", "midpoint", "face-value"):
        reading = strategy_reading(task, strategy, chosen)  # type: ignore[arg-type]
        assume(all(task.facts[s[1]].contains(v) for s, v in reading.items()))  # on the grid
        assert guess_accuracy(task, gold, reading) == solver_accuracy(task, gold, reading)


def plain_reading(task: TypedTask, strategy: str, defects: list[Defect]) -> dict[Slot, Value]:
    """The strategies' readings as the module's docstring defines them, defect by defect."""
    if strategy == "optimist":
        roles = set(operand_roles(task))
        return {s: v for s, v in task.values.items() if task.facts[s[1]].owner in roles}
    believed = dict(task.values)
    for defect in defects:
        if defect.kind == "missed":
            if strategy == "face-value":
                for slot in task.slots_of(defect.role):
                    believed.pop(slot, None)
            continue
        if defect.kind == "misaligned" and strategy != "face-value":
            continue
        for stated in defect.first_reply or []:
            if strategy == "midpoint" and stated.is_exact:
                continue
            believed[(stated.candidate, stated.fact)] = face_value(task, stated)
    return believed


@given(small_specs(), st.data())
def test_floors_of_settings_equal_the_floor_of_each(spec: TaskSpec, data: st.DataObject) -> None:
    """guessing_floors evaluates each distinct reading once: the same fractions as the plain
    definition, every strategy's reading in every setting computed and evaluated one by one
    (and strategy_reading is that reading)."""
    task, gold = _typed(spec)
    misaligned, incomplete, missed = _defects(task, data)
    extra = data.draw(st.sampled_from([misaligned, incomplete, missed]))
    settings = [
        Setting(name="reliable"),
        Setting(name="misaligned", defects=[misaligned]),
        Setting(name="incomplete", available=data.draw(st.booleans()), defects=[incomplete]),
        Setting(name="missed", defects=[missed]),
        Setting(name="mixed", defects=data.draw(st.permutations([misaligned, incomplete, missed]))),
        Setting(name="incomplete", defects=[extra, incomplete]),  # a name again: the last wins
    ]
    plain: dict[str, dict[str, Fraction]] = {s: {} for s in ("optimist", "midpoint", "face-value")}
    for setting in settings:
        for strategy in plain:
            reading = plain_reading(task, strategy, setting.defects)
            assert strategy_reading(task, strategy, setting.defects) == reading  # type: ignore[arg-type]
            if setting.available:
                plain[strategy][setting.name] = guess_accuracy(task, gold, reading)
    assert guessing_floors(task, gold, settings) == plain


@given(small_specs(), st.data())
def test_mixed_repair_two_queries_agree_with_brute_force(
    spec: TaskSpec, data: st.DataObject
) -> None:
    """Mixed needs all three repairs: each defect's query, with the other two repaired (their
    records true), is proved exactly when some completion it allows changes the answer."""
    task, gold = _typed(spec)
    checker = DefectChecker(Checker(TaskSolver(task, gold)), gold)
    for defect in _defects(task, data):
        name = DefectChecker.check_name("mixed", defect)
        verdict = next(c.verdict for c in checker.check("mixed", defect) if c.name == name)
        if defect.kind == "misaligned":
            stated = defect.first_reply[0]  # type: ignore[index]
            slot = (stated.candidate, stated.fact)
            wrong = checker.substitutions(defect)[slot]
            brute = brute_force_differs(task, gold, [], fixed={slot: wrong})
        elif defect.kind == "incomplete":
            ((slot, statement),) = checker.imprecisions(defect).items()
            fact = task.facts[slot[1]]
            allowed = [v for v in fact.domain_values() if statement.contains(fact, v)]
            brute = brute_force_differs(task, gold, [slot], restrict={slot: allowed})
        else:
            brute = brute_force_differs(task, gold, task.slots_of(defect.role))
        assume(brute.status != "undecided")
        assert verdict == (Verdict.PROVED if brute.status == "found" else Verdict.REFUTED)


@given(small_specs(), st.data())
def test_face_value_reading_agrees_with_brute_force(spec: TaskSpec, data: st.DataObject) -> None:
    task, gold = _typed(spec)
    defects = _defects(task, data)
    checker = DefectChecker(Checker(TaskSolver(task, gold)), gold)
    check = checker.face_value_reading("mixed", defects)
    reading = strategy_reading(task, "face-value", defects)
    if not all(task.facts[s[1]].contains(v) for s, v in reading.items()):
        assert check.verdict == Verdict.REFUTED  # a face value off the grid is refused
        return
    hidden = [s for s in task.all_slots() if s not in reading]
    fixed = {s: v for s, v in reading.items() if v != task.values[s]}
    brute = brute_force_differs(task, gold, hidden, fixed=fixed)
    assert check.verdict == (Verdict.PROVED if brute.status == "found" else Verdict.REFUTED)


@given(small_specs(), st.data())
def test_chance_check_agrees_with_enumeration(spec: TaskSpec, data: st.DataObject) -> None:
    task, gold = _typed(spec)
    defect = _defects(task, data)[1]
    checker = DefectChecker(Checker(TaskSolver(task, gold)), gold)
    checks = {c.name.rsplit("-", 1)[-1]: c for c in checker.incomplete("incomplete", defect)}
    stated = defect.first_reply[0]  # type: ignore[index]
    slot = (stated.candidate, stated.fact)
    statement = checker.imprecisions(defect)[slot]
    fact = task.facts[slot[1]]
    allowed = (
        list(statement.options)
        if statement.options is not None
        else [v for v in fact.domain_values() if statement.contains(fact, v)]
    )
    same = sum(task.outcome(task.with_values({slot: v})).same_output(gold) for v in allowed)
    if "chance" in checks:
        assert checks["chance"].witness is not None
        assert Fraction(checks["chance"].witness["gold_chance"]) == Fraction(same, len(allowed))
        expected = Verdict.PROVED if 2 * same <= len(allowed) else Verdict.REFUTED
        assert checks["chance"].verdict == expected
    else:  # a statement of the wrong shape is refused before its chance is counted
        assert checks["records"].verdict == Verdict.REFUTED
