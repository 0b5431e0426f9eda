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
by evaluation is a model (:mod:`._evidence_judge`, :mod:`._admission`); nor is a query whose
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
(:mod:`._min_rounds`). :class:`._evidence_judge.EvidenceJudge` asks it; this module keeps
the judges a group's samples share (:func:`shared_judge`) and the labels they remember.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Literal

from pydantic import BaseModel, ConfigDict

from .._memo import remember
from .._trusted import trusted_maker
from ..settings import StatedValue, stated_value
from ..solver import GOAL_DIFFERS, SolverBudget
from ..spec import Answer, Slot, TypedTask, Value
from ._admission import settle_admission
from ._completion import StoredChanges
from ._environment import RoundRecord
from ._evidence import (
    FaceValueEvidence,
    Reading,
    Readings,
    StatementKey,
    StatementKeys,
    final_evidence,
    is_exact_reading,
    reading_of,
    statement_key,
)
from ._evidence_judge import DeterminedStatus, EvidenceJudge
from ._evidence_judge import _Attributor as _Attributor  # (its home before: imported from here)
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
    evidence, accepted, _ = _received(task, trace, {} if readings is None else readings)
    return evidence, accepted


_Received = tuple[dict[Slot, Value], dict[Slot, StatedValue], tuple[tuple[Slot, str], ...]]


def _received(task: TypedTask, trace: Sequence[RoundRecord], readings: Readings) -> _Received:
    """:func:`received_evidence`, and each exact value's slot and repr in the evidence's order
    (they tell its values and their types: with the accepted statements' keys, all the label
    reads of the trace)."""
    first: dict[Slot, Reading] = {}  # each slot's first exact reading, in the order stated
    last: dict[Slot, Reading] = {}  # its last one (the value the evidence holds)
    differ: set[Slot] = set()  # the slots stated at two values that are not equal
    defective: dict[Slot, StatedValue] = {}
    for record in trace:
        for reply in record.replies:
            for stated in reply.stated:
                reading = reading_of(task, stated, readings)
                slot = reading[1]
                if is_exact_reading(reading):  # exact, in the required context
                    seen = first.get(slot)
                    if seen is None:
                        first[slot] = reading
                    # the values stated are all equal when each equals the first (equality
                    # of numbers, dates and texts is transitive); an equal repr, an equal value
                    elif seen[4] != reading[4] and seen[3] != reading[3]:
                        differ.add(slot)
                    last[slot] = reading
                else:
                    defective[slot] = stated
    kept = [last[slot] for slot in first if slot not in differ]
    evidence: dict[Slot, Value] = {r[1]: r[3] for r in kept}  # type: ignore[misc]
    accepted = {slot: s for slot, s in defective.items() if slot not in first}
    return evidence, accepted, tuple((r[1], r[4]) for r in kept)


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


def attribute_error(
    task: TypedTask,
    gold: Answer,
    trace: Sequence[RoundRecord],
    parsed: ParsedAnswer | None,
    budget: SolverBudget = ATTRIBUTION_BUDGET,
    group_hash: str | None = None,
    judge: EvidenceJudge | None = None,
    evidence: FaceValueEvidence | None = None,
) -> Attribution:
    """Label a wrong answer (see the module docstring for the definitions).

    ``group_hash`` (the group's content hash) lets the samples of one group share a solver
    and remember each label by what it is a function of: the evidence received (its records
    and the repr of each value), the accepted statements and what the answer says - read in
    the one pass over the trace the label needs anyway.
    ``judge``: ``shared_judge(group_hash, task, gold, budget)``, when the caller has it.
    ``evidence``: the face-value evidence of the whole trace, read from the judge's readings,
    when the caller has it (scoring reads it for the round notes): whether its exact values
    determine gold is then looked up, when the judge has evaluated them already."""
    memo = _group_memo(group_hash, budget)
    if judge is None:
        judge = shared_judge(group_hash, task, gold, budget)
    read = _received(task, trace, judge.readings)
    if memo is None:
        return _attribute(judge, trace, parsed, evidence, read)
    # the label is a function of the evidence, the accepted statements and the answer
    keys = judge.statement_keys
    key = (
        read[2],
        tuple((slot, _statement_key(s, keys)) for slot, s in read[1].items()),
        _answer_key(parsed),
    )
    found = memo.attributions.get(key)
    if found is None:
        found = _attribute(judge, trace, parsed, evidence, read)
        remember(memo.attributions, key, found, MEMO_ENTRIES)
    return found


def _attribute(
    judge: EvidenceJudge,
    trace: Sequence[RoundRecord],
    parsed: ParsedAnswer | None,
    final: FaceValueEvidence | None = None,
    read: _Received | None = None,
) -> Attribution:
    """The label of a wrong answer (``read``: :func:`_received` of ``trace``, when the caller
    has it)."""
    task = judge.task
    evidence, accepted, _ = _received(task, trace, judge.readings) if read is None else read
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
    if final is not None and final.exact.keys() == evidence.keys():
        # The same records as the face-value evidence's exact ones, so at the same values of
        # the same types (the reader keeps a record whose values all have one repr; this, one
        # whose values are all equal): the exact-only evidence has the signature the reader
        # would give it, and the judge remembers what evaluation made of it.
        signature: tuple[object, ...] = (final.signature[0], frozenset())
        status = judge.settled(FaceValueEvidence(evidence, (), signature, final.untrue))
    else:
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
    # an answer the misled questions can read (:meth:`._evidence_judge._Attributor.answer_term`)
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
    return tuple(
        _statement_key(s, keys)
        for record in trace
        for reply in record.replies
        for s in reply.stated
    )


def _statement_key(stated: StatedValue, keys: StatementKeys) -> StatementKey:
    """:func:`._evidence.statement_key`, remembered in ``keys``."""
    kept = keys.get(id(stated))
    if kept is None or kept[0] is not stated:
        kept = (stated, statement_key(stated))
        remember(keys, id(stated), kept, _KEYS_KEPT)
    return kept[1]


_KEYS_KEPT = 4096
"""statement keys a judge keeps (then it starts again), as its readings"""


def _answer_key(parsed: ParsedAnswer | None) -> tuple[str | None, ...] | None:
    """What of a parsed answer :meth:`._evidence_judge._Attributor.answer_term` reads."""
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
    """by the evidence received, the accepted statements and the answer"""


_memos: OrderedDict[tuple[str, SolverBudget | None], _GroupMemo] = OrderedDict()


def _group_memo(group_hash: str | None, budget: SolverBudget) -> _GroupMemo | None:
    if group_hash is None:
        return None
    key = (group_hash, _budget_key(budget))
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
    # (each record's fact looked up in C: True counts one)
    received = sum(map(decision.__contains__, map(itemgetter(1), evidence)))
    return received, len(judge.task.candidates) * len(decision)


_SHARED_LIMIT = 256
"""judges kept (the least recently used go first). An evaluation forgets a group's judge after
the group's last sample (:func:`forget_group`), so it keeps only the groups in play: at most
its concurrency. Fewer than that made a judge again for a group still in play, with its
remembered verdicts (at concurrency 256, 623 judges for 320 groups with a limit of 32). A
judge whose encoding is loaded holds about 450 KB."""
_shared: OrderedDict[tuple[str, SolverBudget | None], EvidenceJudge] = OrderedDict()


def _budget_key(budget: SolverBudget) -> SolverBudget | None:
    """``budget`` as the tables of groups (:data:`_memos`, :data:`_shared`) key it: None for
    :data:`ATTRIBUTION_BUDGET` (every scoring's), known by identity first. A frozen
    dataclass hashes its fields in Python, and scoring looks both tables up twice a sample."""
    if budget is ATTRIBUTION_BUDGET or budget == ATTRIBUTION_BUDGET:
        return None
    return budget


def shared_judge(
    key: str | None,
    task: TypedTask,
    gold: Answer,
    budget: SolverBudget = ATTRIBUTION_BUDGET,
    changes: StoredChanges | None = None,
) -> EvidenceJudge:
    """The :class:`EvidenceJudge` of a group, shared by all its samples in a process
    (``key``: the group's content hash; None makes a fresh one). Loading the encoding costs
    far more than a query, and these queries read only the verdict, which does not depend on
    what the solver answered before (a model would). The last few groups are kept.
    ``changes``: the group's stored first changes, for a judge made here (the group's
    ``proofs.decision_changes``: :func:`._decision_changes.stored_changes`)."""
    if key is None:
        return EvidenceJudge(task, gold, budget, changes)
    table_key = (key, _budget_key(budget))
    found = _shared.get(table_key)
    if found is None:
        found = _shared[table_key] = EvidenceJudge(task, gold, budget, changes)
        while len(_shared) > _SHARED_LIMIT:
            _shared.popitem(last=False)
    else:
        _shared.move_to_end(table_key)
    return found


def justify_answer(
    task: TypedTask,
    gold: Answer,
    trace: Sequence[RoundRecord],
    budget: SolverBudget = ATTRIBUTION_BUDGET,
    group_hash: str | None = None,
    evidence: FaceValueEvidence | None = None,
    judge: EvidenceJudge | None = None,
) -> Justification:
    """Label a correct answer ``justified``, ``lucky`` or ``unknown`` (module docstring).

    ``group_hash`` (the group's content hash) lets the samples of one group share a solver
    and remember each label by the statements received. ``evidence``: the face-value evidence
    of the whole trace, when the caller has read it already (scoring reads it for the round
    notes too); the label is then remembered by the evidence. ``judge``: ``shared_judge(
    group_hash, task, gold, budget)``, when the caller has it."""
    memo = _group_memo(group_hash, budget)
    # evidence already read: its signature is a shorter key than every statement of the trace
    key = trace_statements(trace) if evidence is None else ("evidence", evidence.signature)
    found = memo.justifications.get(key) if memo is not None else None
    if found is None:
        if judge is None:
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


_attribution = trusted_maker(Attribution)
_justification = trusted_maker(Justification)
