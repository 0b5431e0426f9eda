"""Why a wrong answer was wrong, proved by the solver from what the agent actually received.

The *evidence* of an episode is every record a reply stated exactly and in the required
context (from the trace's stated values, not from what the agent claims to have read); a
record stated twice with different values counts as not received. A *defective statement*
is a wrong-context value or an imprecise one (a range or a set of options); the agent
*accepted* it when no exact required-context statement of the same record ever reached it.

Labels, in order of precedence:

1. ``integration_error`` - the evidence determined the gold answer: with the received
   records pinned, no completion of the others gives a different output (``unsat`` of
   ``GOAL_DIFFERS``). The agent had what it needed and still answered wrong (or ran out of
   rounds).
2. ``misled`` - the agent accepted defective statements, and they explain its answer: the
   evidence plus the defective statements taken at face value (a wrong-context value as
   the value, a range or options as a constraint) admit the answer the agent gave (``sat``),
   while the evidence plus the *true* values of those records do not (``unsat``). An output
   "admits" a positive answer when the named candidate is eligible and, if a number was
   given, its result rounds to it (other candidates are left free: a defect that makes two
   candidates eligible forces any answer to pick one); a negative answer when nobody is
   eligible.
3. ``gathering_failure`` - otherwise: the evidence left the answer open (step 1 is ``sat``:
   some completion of the records not received gives another output), and no accepted
   defect accounts for the answer.

``unknown`` when a query needed for the label was undecided by the solver (never counted as
any of the three). A query whose verdict exact evaluation proves is not asked: evidence that
pins every decision record at its truth determines gold, and a completion of the records found
by evaluation is a model (:class:`EvidenceJudge`, :mod:`._admission`); nor is a query whose
verdict can no longer change the label. An episode without a usable answer (budget
exhausted, nothing parsed) can only be ``integration_error`` or ``gathering_failure``.

**Justification of a correct answer** (:func:`justify_answer`). The evidence taken at *face
value* is what the replies literally state about the required-context records: the exact
values above, plus every imprecise statement in the required context as a constraint (a
range or a set of options is true of the record, only not precise); a wrong-context value
states nothing about the required context. A resolved reply, once received, is an exact
value like any other. The answer is ``justified`` when that evidence determines it (no
completion of the records not received gives another output: ``unsat`` of
``GOAL_DIFFERS``), ``lucky`` when it does not (``sat``: the agent guessed right), and
``unknown`` when the solver could not decide (never counted as justified). The same
question, asked after every round of an ideal agent, gives a group's minimum rounds
(:mod:`._min_rounds`). :class:`EvidenceJudge` asks it.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Literal

from pydantic import BaseModel, ConfigDict

from .._memo import remember
from .._trusted import TrustedMaker
from ..settings import StatedValue, stated_imprecision, stated_value
from ..solver import GOAL_DIFFERS, QueryResult, SolverBudget, TaskSolver, shared_context
from ..solver._encoding import smt_and
from ..spec import (
    Answer,
    Outcome,
    Slot,
    TypedTask,
    Value,
    preimage,
    round_fraction,
)
from ._admission import settle_admission
from ._environment import RoundRecord
from ._evidence import (
    FaceValueEvidence,
    Readings,
    StatementKey,
    TaskTables,
    differing_completion,
    final_evidence,
    is_exact_reading,
    reading_of,
    statement_key,
)
from ._scoring import ParsedAnswer

AttributionLabel = Literal["integration_error", "misled", "gathering_failure", "unknown"]
ATTRIBUTION_LABELS: tuple[AttributionLabel, ...] = (
    "integration_error",
    "misled",
    "gathering_failure",
    "unknown",
)
ATTRIBUTION_BUDGET = SolverBudget(timeout_ms=5000)
JustificationLabel = Literal["justified", "lucky", "unknown"]
JUSTIFICATION_LABELS: tuple[JustificationLabel, ...] = ("justified", "lucky", "unknown")


class Attribution(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    label: AttributionLabel
    detail: str
    received: int
    """decision-relevant records received exactly in the required context"""
    needed: int
    """decision-relevant records of the task"""
    accepted: tuple[str, ...] = ()
    """the accepted defective statements, described"""


def received_evidence(
    task: TypedTask, trace: Sequence[RoundRecord], readings: Readings | None = None
) -> tuple[dict[Slot, Value], dict[Slot, StatedValue]]:
    """(exact required-context values, accepted defective statements) of a trace
    (``readings``: the statements' readings to share, :class:`._evidence.EvidenceReader`'s:
    scoring has read every statement of the trace for the round notes already)."""
    exact: dict[Slot, set[object]] = {}
    values: dict[Slot, Value] = {}
    defective: dict[Slot, StatedValue] = {}
    if readings is None:
        readings = {}
    for record in trace:
        for reply in record.replies:
            for stated in reply.stated:
                reading = reading_of(task, stated, readings)
                slot = reading[1]
                if is_exact_reading(reading):  # exact, in the required context
                    value: Value = reading[3]  # type: ignore[assignment]
                    exact.setdefault(slot, set()).add(value)
                    values[slot] = value
                else:
                    defective[slot] = stated
    evidence = {slot: values[slot] for slot, seen in exact.items() if len(seen) == 1}
    accepted = {slot: s for slot, s in defective.items() if slot not in exact}
    return evidence, accepted


class Justification(BaseModel):
    """Whether the evidence received determined a correct answer (see the module docstring)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    label: JustificationLabel
    detail: str
    received: int
    """decision-relevant records received exactly in the required context"""
    needed: int
    """decision-relevant records of the task"""
    imprecise: int = 0
    """required-context imprecise statements of records not received exactly, used as
    constraints"""


def face_value_evidence(
    task: TypedTask, trace: Sequence[RoundRecord]
) -> tuple[dict[Slot, Value], list[tuple[Slot, StatedValue]]]:
    """(exact required-context values, imprecise required-context statements of the records
    not received exactly): what the replies state, taken literally."""
    found = final_evidence(task, trace)
    return found.exact, list(found.imprecise)


def _describe(task: TypedTask, stated: StatedValue) -> str:
    who = task.candidate_name(stated.candidate)
    label = task.facts[stated.fact].label
    if stated.is_exact:
        return f"{who}'s {label} for {stated.context!r} (wrong context)"
    return f"{who}'s {label} stated imprecisely"


Pinned = tuple[list[Slot], list[str]]
"""values as solver constraints: (slots pinned at their true value, equality terms)"""


class _Attributor:
    def __init__(self, task: TypedTask, gold: Answer, budget: SolverBudget) -> None:
        self.task = task
        self.gold = gold.to_outcome()
        # Only verdicts are read, so the thread's long-lived Z3 context serves (no model or
        # core reaches the label, so what the context solved before cannot change it).
        self.solver = TaskSolver(task, self.gold, budget, shared_context())
        self.encoding = self.solver.encoding

    def ask(self, name: str, goal: str | None, values: Pinned, terms: list[str]) -> QueryResult:
        """A verdict-only query with ``values`` pinned and ``terms`` asserted."""
        slots, pinned_terms = values
        return self.solver.query(
            name, slots, goal, [*pinned_terms, *terms], want_core=False, want_model=False
        )

    def equals(self, values: dict[Slot, Value]) -> Pinned:
        """``values`` as constraints: a record at its true value by the encoding's own pin
        literal (already in the solver), any other value as an equality term (parsed into the
        solver once, behind a guard). Both say the same: ``slot = value``."""
        recorded = self.task.values
        slots = [slot for slot, value in values.items() if recorded.get(slot) == value]
        terms = [
            self.encoding.value_equals_term(slot, value)
            for slot, value in values.items()
            if recorded.get(slot) != value
        ]
        return slots, terms

    def statement_term(self, slot: Slot, stated: StatedValue) -> str:
        if stated.is_exact:
            return self.encoding.value_equals_term(slot, stated_value(self.task, stated))
        statement = stated_imprecision(self.task, stated)
        if statement.options is not None:
            return self.encoding.value_in_set_term(slot, statement.options)
        assert statement.low is not None and statement.high is not None
        return self.encoding.value_in_range_term(slot, statement.low, statement.high)

    def answer_term(self, parsed: ParsedAnswer | None) -> str | None:
        """The outputs that agree with the agent's answer, as far as it says anything.

        A negative answer: nobody eligible. A positive one: the named candidate eligible and,
        if a number was given, its result rounding to that number. Other candidates are left
        free: a defect that makes two candidates eligible forces any answer to pick one.
        """
        if parsed is None or parsed.decision is None:
            return None
        if parsed.decision == "negative":
            return self.encoding.outcome_term(Outcome("none"))
        chosen = parsed.candidate
        if chosen is None or chosen not in self.task.candidates:
            return None
        terms = [self.encoding.eligible_name(chosen)]
        if parsed.number is not None:
            rule = self.task.rule
            number = round_fraction(Fraction(parsed.number), rule.digits, rule.mode)
            window = preimage(number, rule.digits, rule.mode)
            terms.append(self.encoding.in_interval_term(chosen, window))
        return smt_and(terms)


def attribute_error(
    task: TypedTask,
    gold: Answer,
    trace: Sequence[RoundRecord],
    parsed: ParsedAnswer | None,
    budget: SolverBudget = ATTRIBUTION_BUDGET,
    group_hash: str | None = None,
) -> Attribution:
    """Label a wrong answer (see the module docstring for the definitions).

    ``group_hash`` (the group's content hash) lets the samples of one group share a solver
    and remember each label by what the replies stated and what the agent answered."""
    memo = _group_memo(group_hash, budget)
    judge = shared_judge(group_hash, task, gold, budget)
    if memo is None:
        return _attribute(judge, trace, parsed)
    key = (trace_statements(trace, judge.statement_keys), _answer_key(parsed))
    found = memo.attributions.get(key)
    if found is None:
        found = _attribute(judge, trace, parsed)
        remember(memo.attributions, key, found, MEMO_ENTRIES)
    return found


def _attribute(
    judge: EvidenceJudge, trace: Sequence[RoundRecord], parsed: ParsedAnswer | None
) -> Attribution:
    task = judge.task
    evidence, accepted = received_evidence(task, trace, judge.readings)
    received, needed = _decision_records(judge, evidence)
    described = tuple(_describe(task, s) for _, s in sorted(accepted.items()))

    def result(label: AttributionLabel, detail: str) -> Attribution:
        # built from checked parts: no validation pass
        return _attribution(
            label=label, detail=detail, received=received, needed=needed, accepted=described
        )

    # Did the evidence determine gold? Exact evaluation answers most such questions (see
    # EvidenceJudge: all decision records pinned at their truth, or a completion giving
    # another output - a model of the query); the solver is asked the rest.
    exact_only = FaceValueEvidence(evidence, (), ())
    status = judge.evaluated(exact_only, judge.truthful(exact_only))
    if status is None:
        attributor = judge.attributor
        determined = attributor.ask(
            "attribution-evidence", GOAL_DIFFERS, attributor.equals(evidence), []
        )
        if determined.status == "unknown":
            return result("unknown", f"the solver could not decide: {determined.reason}")
        status = determined.status
    if status == "unsat":
        return result(
            "integration_error",
            f"the evidence received ({received} of {needed} decision records) determined "
            "the gold answer",
        )
    # The sat model (a witness of another output) is not reported: Z3's models depend on
    # what the process solved before, and a sample's record must not depend on run order.
    # an answer the misled questions can read (:meth:`_Attributor.answer_term`)
    usable = parsed is not None and (
        parsed.decision == "negative"
        or (parsed.decision == "positive" and parsed.candidate in task.candidates)
    )
    if accepted and usable and parsed is not None:
        truth = {slot: task.values[slot] for slot in accepted}
        face_fixed = {**evidence}
        for slot, stated in accepted.items():
            if stated.is_exact:
                face_fixed[slot] = stated_value(task, stated)
        # Each question by exact evaluation where that proves it (:mod:`._admission`). The
        # solver is asked the rest, but only a question whose verdict can still change the
        # label: misled needs the face values to admit the answer and the true ones not to.
        face_status: DeterminedStatus | None = settle_admission(task, face_fixed, accepted, parsed)
        truth_status: DeterminedStatus | None = None
        if face_status != "unsat":
            truth_status = settle_admission(task, {**evidence, **truth}, {}, parsed)
        ask_face = face_status is None and truth_status != "sat"
        ask_truth = truth_status is None and face_status != "unsat"
        if ask_face or ask_truth:
            attributor = judge.attributor
            answer = attributor.answer_term(parsed)
            assert answer is not None
            if ask_face:
                pinned = attributor.equals(evidence)
                face = [attributor.statement_term(slot, s) for slot, s in accepted.items()]
                query = attributor.ask("attribution-face", None, pinned, [*face, answer])
                face_status = query.status
            if ask_truth and face_status != "unsat":
                both = attributor.equals({**evidence, **truth})
                truth_status = attributor.ask("attribution-truth", None, both, [answer]).status
        if "unknown" in (face_status, truth_status):
            return result("unknown", "the solver could not decide whether a defect misled")
        if face_status == "sat" and truth_status == "unsat":
            return result(
                "misled",
                f"accepted {'; '.join(described)}: taken at face value it admits the "
                "answer given, the true records do not",
            )
    return result(
        "gathering_failure",
        f"the evidence received ({received} of {needed} decision records) left the answer "
        "open (another output is consistent with it)",
    )


StatementKeys = dict[int, tuple[StatedValue, StatementKey]]
"""statements and their :func:`statement_key`, by ``id`` of the statement (as
:data:`._evidence.Readings`)"""


def trace_statements(
    trace: Sequence[RoundRecord], keys: StatementKeys | None = None
) -> tuple[StatementKey, ...]:
    """Every statement of a trace's replies, in order, as a hashable key: all that attribution
    and justification read from a trace (equal keys get equal labels). ``keys``: a table of
    statement keys to share (a group's judge keeps one: its samples state the same statement
    objects again)."""
    if keys is None:
        return tuple(
            statement_key(s) for record in trace for reply in record.replies for s in reply.stated
        )
    found: list[StatementKey] = []
    for record in trace:
        for reply in record.replies:
            for stated in reply.stated:
                kept = keys.get(id(stated))
                if kept is None or kept[0] is not stated:
                    kept = (stated, statement_key(stated))
                    remember(keys, id(stated), kept, _KEYS_KEPT)
                found.append(kept[1])
    return tuple(found)


_KEYS_KEPT = 4096
"""statement keys a judge keeps (then it starts again), as its readings"""


def _answer_key(parsed: ParsedAnswer | None) -> tuple[str | None, ...] | None:
    """What of a parsed answer :meth:`_Attributor.answer_term` reads."""
    if parsed is None:
        return None
    return (parsed.decision, parsed.candidate, parsed.number)


MEMO_GROUPS = 4096
"""groups whose labels are remembered in a process (the least recently used go first)"""
MEMO_ENTRIES = 512
"""labels remembered per group and kind (then that group's memo starts again)"""


@dataclass
class _GroupMemo:
    """Labels of one group by the statements received (and the answer, for attribution).

    The scripted colleagues state a fixed, small set of statement objects per group, and
    agents that behave alike (every epoch of a built-in agent, and agents that ask alike)
    receive the same ones: the solver is then asked once per group, not once per sample.
    """

    justifications: dict[tuple[object, ...], Justification] = field(default_factory=dict)
    """by the statements received, or by the face-value evidence's signature when the caller
    has read it (the label is a function of the evidence)"""
    attributions: dict[tuple[object, ...], Attribution] = field(default_factory=dict)


_memos: OrderedDict[tuple[str, SolverBudget], _GroupMemo] = OrderedDict()


def _group_memo(group_hash: str | None, budget: SolverBudget) -> _GroupMemo | None:
    if group_hash is None:
        return None
    key = (group_hash, budget)
    memo = _memos.get(key)
    if memo is None:
        memo = _memos[key] = _GroupMemo()
        while len(_memos) > MEMO_GROUPS:
            _memos.popitem(last=False)
    else:
        _memos.move_to_end(key)
    return memo


def forget_group(group_hash: str) -> None:
    """Drop what this process remembers of a group (its labels and its shared judge, for
    every budget): an evaluation calls this when the group's last sample has finished."""
    for table in (_memos, _shared):
        for key in [key for key in table if key[0] == group_hash]:
            del table[key]


def _decision_records(judge: EvidenceJudge, evidence: dict[Slot, Value]) -> tuple[int, int]:
    """(decision records in ``evidence``, decision records of the judge's task)."""
    decision = judge.tables.decision
    received = sum(1 for _, fact in evidence if fact in decision)
    return received, len(judge.task.candidates) * len(decision)


def _true_of(task: TypedTask, slot: Slot, stated: StatedValue) -> bool:
    """Does the record's true value satisfy an imprecise statement? (False when unsure.)"""
    truth = task.values.get(slot)
    try:
        statement = stated_imprecision(task, stated)
        if statement.options is not None:
            return truth in statement.options
        return statement.low <= truth <= statement.high  # type: ignore[operator]
    except Exception:  # an unreadable or incomparable statement: let the solver decide
        return False


DeterminedStatus = Literal["sat", "unsat", "unknown"]


class EvidenceJudge:
    """Decides, for one task, whether face-value evidence determines the gold answer, and
    remembers each verdict by the evidence (samples of one group often receive the same).

    Evidence that pins every decision record at its true value (with every imprecise
    statement true of its record) determines gold by exact evaluation: the output is a
    function of the decision records, and the true records give gold. That is what the
    solver would prove, so it is not asked. Evidence that leaves another output open is
    usually shown so by a completion found by evaluation (:func:`._evidence.
    differing_completion`: a model of the solver's query). The task's encoding is loaded into
    a solver only when some evidence needs one: evidence that determines gold without pinning
    every decision record, or whose other outputs those tries miss.
    """

    def __init__(self, task: TypedTask, gold: Answer, budget: SolverBudget) -> None:
        self.task = task
        self.gold = gold
        self.budget = budget
        self._attributor: _Attributor | None = None
        self.verdicts: dict[tuple[object, ...], DeterminedStatus] = {}
        self.readings: Readings = {}
        """how each statement stated in the group's samples reads (:class:`._evidence.
        EvidenceReader`): shared by every reading of a trace of this task"""
        self.statement_keys: StatementKeys = {}
        """each statement's :func:`._evidence.statement_key`, made once (attribution's memo
        key)"""
        self.tables = TaskTables(task)
        """what exact evaluation reads of the task alone, for every evidence asked about"""
        self._decision_slots = frozenset(self.tables.decision_slots)
        self.note_slots = tuple(
            (candidate, fact)
            for candidate in task.candidates
            for fact in sorted(self.tables.decision)
        )
        """the decision records in the order the round notes list them"""
        # Gold is what the true records give (verify proved it at build time; a group edited
        # since would not be, and then every verdict goes to the solver).
        try:
            self._gold: Outcome | None = gold.to_outcome()
            self._truth: Outcome | None = task.outcome()
            self._gold_is_truth = self._truth.same_output(self._gold)
        except Exception:  # a rule the true records cannot evaluate: leave it to the solver
            self._gold, self._truth, self._gold_is_truth = None, None, False

    @property
    def attributor(self) -> _Attributor:
        """The task's encoding in a solver, loaded on first use."""
        if self._attributor is None:
            self._attributor = _Attributor(self.task, self.gold, self.budget)
        return self._attributor

    def determines_gold(
        self, trace: Sequence[RoundRecord]
    ) -> tuple[DeterminedStatus, dict[Slot, Value], int]:
        """``unsat``: the face-value evidence of ``trace`` determines gold; ``sat``: another
        output is consistent with it; ``unknown``: undecided - with the exact evidence and the
        number of imprecise statements used. Contradictory evidence (which faithful
        colleagues never give) determines nothing and is reported ``unknown``."""
        return self.verdict_of(final_evidence(self.task, trace, self.readings))

    def verdict_of(
        self, evidence: FaceValueEvidence
    ) -> tuple[DeterminedStatus, dict[Slot, Value], int]:
        """:meth:`determines_gold` of a trace whose evidence is already read."""
        return self.verdict(evidence), evidence.exact, len(evidence.imprecise)

    def verdict(self, evidence: FaceValueEvidence) -> DeterminedStatus:
        """:meth:`determines_gold` of evidence already read from a trace."""
        status = self.verdicts.get(evidence.signature)
        if status is None:
            status = self.verdicts[evidence.signature] = self._decide(evidence)
        return status

    def truthful(self, evidence: FaceValueEvidence) -> bool:
        """Every exact value is the record's true value, every imprecise statement true of it."""
        values, exact = self.task.values, evidence.exact
        # (the reader knows the exact values at their true value: only the others are compared)
        compared = exact if evidence.untrue is None else evidence.untrue
        return all(values.get(slot) == exact[slot] for slot in compared) and all(
            _true_of(self.task, slot, s) for slot, s in evidence.imprecise
        )

    def evaluated(self, evidence: FaceValueEvidence, truthful: bool) -> DeterminedStatus | None:
        """Whether ``evidence`` leaves an output other than gold open, when exact evaluation
        settles it (class docstring): ``unsat`` for evidence that pins every decision record
        at its true value (``truthful``: :meth:`truthful` of it), ``sat`` when a differing
        completion is found; None leaves the question to the solver."""
        if truthful and self._gold_is_truth and self._decision_slots <= evidence.exact.keys():
            return "unsat"  # every decision record pinned at its true value (class docstring)
        if self._gold is not None and differing_completion(
            self.task, self._gold, evidence, truth=self._truth, tables=self.tables
        ):
            return "sat"  # a model of the query below, found by evaluation (class docstring)
        return None

    def _decide(self, evidence: FaceValueEvidence) -> DeterminedStatus:
        truthful = self.truthful(evidence)
        settled = self.evaluated(evidence, truthful)
        if settled is not None:
            return settled
        attributor = self.attributor
        pinned = attributor.equals(evidence.exact)
        terms = [attributor.statement_term(slot, stated) for slot, stated in evidence.imprecise]
        differs = attributor.ask("justification", GOAL_DIFFERS, pinned, terms)
        if differs.status != "unsat":
            return differs.status
        # unsat is only meaningful for consistent evidence: the true records are a witness
        # when they satisfy every statement (always, with faithful colleagues), else ask
        if truthful:
            return "unsat"
        consistent = attributor.ask("justification-consistent", None, pinned, terms)
        return "unsat" if consistent.status == "sat" else "unknown"


_SHARED_LIMIT = 256
"""judges kept (the least recently used go first). An evaluation forgets a group's judge after
the group's last sample (:func:`forget_group`), so it keeps only the groups in play: at most
its concurrency. Fewer than that made a judge again for a group still in play, with its
remembered verdicts (at concurrency 256, 623 judges for 320 groups with a limit of 32). A
judge whose encoding is loaded holds about 450 KB."""
_shared: OrderedDict[tuple[str, SolverBudget], EvidenceJudge] = OrderedDict()


def shared_judge(
    key: str | None, task: TypedTask, gold: Answer, budget: SolverBudget = ATTRIBUTION_BUDGET
) -> EvidenceJudge:
    """The :class:`EvidenceJudge` of a group, shared by all its samples in a process
    (``key``: the group's content hash; None makes a fresh one). Loading the encoding costs
    far more than a query, and these queries read only the verdict, which does not depend on
    what the solver answered before (a model would). The last few groups are kept."""
    if key is None:
        return EvidenceJudge(task, gold, budget)
    found = _shared.get((key, budget))
    if found is None:
        found = _shared[(key, budget)] = EvidenceJudge(task, gold, budget)
        while len(_shared) > _SHARED_LIMIT:
            _shared.popitem(last=False)
    else:
        _shared.move_to_end((key, budget))
    return found


def justify_answer(
    task: TypedTask,
    gold: Answer,
    trace: Sequence[RoundRecord],
    budget: SolverBudget = ATTRIBUTION_BUDGET,
    group_hash: str | None = None,
    evidence: FaceValueEvidence | None = None,
) -> Justification:
    """Label a correct answer ``justified``, ``lucky`` or ``unknown`` (module docstring).

    ``group_hash`` (the group's content hash) lets the samples of one group share a solver
    and remember each label by the statements received. ``evidence``: the face-value evidence
    of the whole trace, when the caller has read it already (scoring reads it for the round
    notes too); the label is then remembered by the evidence."""
    memo = _group_memo(group_hash, budget)
    # evidence already read: its signature is a shorter key than every statement of the trace
    key = trace_statements(trace) if evidence is None else ("evidence", evidence.signature)
    found = memo.justifications.get(key) if memo is not None else None
    if found is None:
        judge = shared_judge(group_hash, task, gold, budget)
        found = _justify(
            judge, judge.determines_gold(trace) if evidence is None else judge.verdict_of(evidence)
        )
        if memo is not None:
            remember(memo.justifications, key, found, MEMO_ENTRIES)
    return found


def _justify(
    judge: EvidenceJudge, determined: tuple[DeterminedStatus, dict[Slot, Value], int]
) -> Justification:
    status, evidence, imprecise = determined
    received, needed = _decision_records(judge, evidence)
    seen = f"{received} of {needed} decision records"
    if imprecise:
        seen += f" and {imprecise} imprecise statement{'s' if imprecise > 1 else ''}"
    if status == "unsat":
        label: JustificationLabel = "justified"
        detail = f"the evidence received ({seen}) determined the answer"
    elif status == "sat":
        label = "lucky"
        detail = f"the evidence received ({seen}) left the answer open: it was a guess"
    else:
        label = "unknown"
        detail = f"the solver could not decide whether the evidence ({seen}) determined it"
    return _justification(  # built from checked parts: no validation pass
        label=label, detail=detail, received=received, needed=needed, imprecise=imprecise
    )


_attribution = TrustedMaker(Attribution)
_justification = TrustedMaker(Justification)
