"""Whether face-value evidence determines a task's gold answer: :class:`EvidenceJudge`.

Justification (:func:`._attribution.justify_answer`), attribution's first question, the
round notes (:mod:`._notes`) and the minimum rounds (:mod:`._min_rounds`) all ask it of the
evidence received (:mod:`._evidence`). Exact evaluation settles most of it: evidence that pins
every decision record at its true value determines gold, and a completion of the records
found by evaluation (:func:`._completion.differing_completion`) is a model of the solver's
"does the evidence leave another output open?" query. The rest goes to the solver, through
the task's encoding (:class:`_Attributor`, loaded on first use; its queries read only
verdicts), which attribution's own questions use too. A judge remembers each verdict by the
evidence; :func:`._attribution.shared_judge` shares one among a group's samples.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from itertools import product
from typing import TYPE_CHECKING, Literal

from ..settings import StatedValue, stated_imprecision, stated_value
from ..solver import GOAL_DIFFERS, QueryResult, SolverBudget, TaskSolver, shared_context
from ..solver._encoding import smt_and
from ..spec import Answer, Outcome, Slot, TypedTask, Value, preimage, round_fraction
from ._completion import StoredChanges, TaskTables, differing_completion
from ._environment import RoundRecord
from ._evidence import FaceValueEvidence, ReadingTable, StatementKeys, final_evidence
from ._scoring import ParsedAnswer

if TYPE_CHECKING:
    from ._notes import RoundNote

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


def _true_of(tables: TaskTables, slot: Slot, stated: StatedValue) -> bool:
    """Does the record's true value satisfy an imprecise statement? (False when unsure.)"""
    truth = tables.task.values.get(slot)
    try:
        statement = tables.imprecision(stated)
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

    def __init__(
        self,
        task: TypedTask,
        gold: Answer,
        budget: SolverBudget,
        changes: StoredChanges | None = None,
    ) -> None:
        """``changes``: the group's stored first changes (``proofs.decision_changes``, made
        for this task and gold), when it has them (:meth:`._completion.TaskTables.store`):
        trusted as the proof that the true records give gold (as an evaluation trusts a
        group's other stored proofs; ``uncobench verify`` checks them)."""
        self.task = task
        self.gold = gold
        self.budget = budget
        self._attributor: _Attributor | None = None
        self.verdicts: dict[tuple[object, ...], DeterminedStatus] = {}
        self.evaluations: dict[tuple[object, ...], DeterminedStatus | None] = {}
        """:meth:`evaluated` of each evidence decided, by its signature (:meth:`settled`)"""
        self.readings = ReadingTable()
        """how each statement stated in the group's samples reads (:class:`._evidence.
        EvidenceReader`): shared by every reading of a trace of this task"""
        self.notes: dict[tuple[int, tuple[object, ...]], RoundNote] = {}
        """round notes by round and evidence signature (:func:`._notes.round_notes`: a note
        is a function of the two)"""
        self.statement_keys: StatementKeys = {}
        """each statement's :func:`._evidence.statement_key`, made once (attribution's memo
        key)"""
        self.tables = TaskTables(task)
        """what exact evaluation reads of the task alone, for every evidence asked about"""
        self._decision_slots = frozenset(self.tables.decision_slots)
        # the readings name each decision record by the tables' object of it, as the notes
        # do: each is then found in a snapshot's exact values by identity (ReadingTable.slots)
        # (each made in C: written as comprehensions, their frames cost about as much as the
        # lookups they save in a group's first samples)
        decision_slots = self.tables.decision_slots
        slots = self.readings.slots = dict(zip(decision_slots, decision_slots, strict=True))
        # (every candidate with every decision fact, in order: the facts sorted once; each
        # the tables' object of it, else the product's own)
        facts = sorted(self.tables.decision)
        self.note_slots = tuple(
            map(slots.get, product(task.candidates, facts), product(task.candidates, facts))
        )
        """the decision records in the order the round notes list them"""
        # Gold is what the true records give (verify proved it at build time; a group edited
        # since would not be, and then every verdict goes to the solver). Stored first changes
        # are a proof of it: the build stores a table only when the true records give gold
        # (:func:`._decision_changes.decision_changes`), and verify refutes a stored table
        # whose recomputation finds they do not. Their output is then gold's (one candidate
        # eligible, or none), not evaluated again: that was most of a judge's making.
        try:
            self._gold: Outcome | None = gold.to_outcome()
            if changes is not None:
                self._truth: Outcome | None = self._gold
                self._gold_is_truth = True
            else:
                self._truth = task.outcome()
                self._gold_is_truth = self._truth.same_output(self._gold)
        except Exception:  # a rule the true records cannot evaluate: leave it to the solver
            self._gold, self._truth, self._gold_is_truth = None, None, False
        if changes is not None and self._gold_is_truth:  # (else the table is never read)
            assert self._gold is not None and self._truth is not None
            self.tables.store(self._gold, self._truth, changes)

    def know_faithful(self, task: TypedTask, faithful: Mapping[Slot, StatedValue]) -> None:
        """Let the readings take ``faithful`` (a record book's statements by slot, made from
        ``task``'s own records) as read (:class:`._evidence.ReadingTable`), when ``task`` is
        the judge's own."""
        if task is self.task and self.readings.faithful is not faithful:
            self.readings.know(task, faithful)

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
        # (loops, not all() over generators: most evidence compares nothing, and each
        # generator made cost more than what it compared; every decision asks this)
        for slot in compared:
            if not values.get(slot) == exact[slot]:  # noqa: SIM201  (as all() tested it)
                return False
        for slot, stated in evidence.imprecise:  # noqa: SIM110
            if not _true_of(self.tables, slot, stated):
                return False
        return True

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

    def settled(self, evidence: FaceValueEvidence) -> DeterminedStatus | None:
        """:meth:`evaluated` of ``evidence`` (as :meth:`truthful` finds it), remembered by its
        signature: attribution asks it of the exact values of a trace whose evidence the round
        notes have decided already."""
        signature = evidence.signature
        if signature in self.evaluations:
            return self.evaluations[signature]
        settled = self.evaluations[signature] = self.evaluated(evidence, self.truthful(evidence))
        return settled

    def _decide(self, evidence: FaceValueEvidence) -> DeterminedStatus:
        truthful = self.truthful(evidence)
        settled = self.evaluations[evidence.signature] = self.evaluated(evidence, truthful)
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
