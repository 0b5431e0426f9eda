"""Scripted colleagues: deterministic replies from a role's records under the setting's policy.

The policy is the group's data (:class:`~uncobench_z3.settings.Defect`); this module only
executes it. Every request is first read into a structured request
(:func:`~uncobench_z3.settings.read_request`, against the task's own vocabulary). The rules
(also in docs/evaluation.md):

* **What a question concerns.** The candidates it names (full name, first name or surname,
  any case; "he"/"she" for the one candidate the previous request to this colleague named;
  "all candidates") and the role's facts it names (label, key, synonyms, distinctive words,
  members, contexts only that fact has). No candidate named: every candidate. None of the
  role's facts named: every fact of the role. A reply never states another role's facts.
* **A faithful reply** states each concerned record in the *required* context, one line per
  record (:func:`~uncobench_z3.construct.statement_text`), candidates in directory order.
* **Misaligned / Incomplete.** The first reply that concerns a designated record (the
  defect's fact for one of its candidates) states the defect's ``first_reply`` for the
  concerned candidates of that fact - whatever the question says. A later request that
  concerns it again is a follow-up: if it is targeted (the defect's rule holds for the
  reading, :func:`~uncobench_z3.settings.decide`) it gets ``resolved_reply`` for the
  concerned candidates and the defect is resolved for good; otherwise (a generic follow-up)
  the first reply is repeated.
* **Missed.** The first request addressed to the role gets no reply: it stays *pending*.
  Its reply arrives after the agent has waited ``missed_wait`` rounds (the defect's data, or
  the run's override; 0: never), or together with the reply to any later request to the
  role (a re-request), whichever comes first. From then on the role answers normally.

State changes only with the requests received and the waits, so the same conversation always
gets the same replies.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, NamedTuple

from .._trusted import trusted_maker
from ..construct import Style
from ..settings import (
    DEFAULT_MISSED_WAIT,
    Defect,
    DefectKind,
    FollowUpDecision,
    Request,
    StatedValue,
    decide,
)
from ..spec import Slot, TypedTask
from ._record_book import (
    READINGS_KEPT,
    ColleagueReply,
    FollowUpKind,
    FollowUpReader,
    FollowUpReading,
    RecordBook,
    _made_reply,
    named_candidates,
)

# (the replies and the record book are ._record_book's, named here too)
__all__ = [
    "READINGS_KEPT",
    "ColleagueReply",
    "FollowUpKind",
    "FollowUpReader",
    "FollowUpReading",
    "RecordBook",
    "ScriptedColleagues",
    "named_candidates",
]
_DefectState = Literal["armed", "stated", "resolved"]


_reading = trusted_maker(FollowUpReading)
"""(a follow-up's reading is made from values typed here: without validation)"""


class _DefectTables(NamedTuple):
    """What a setting's defects give every episode (shared read-only): the defects other
    than Missed by role, the first Missed defect of each role, the defects' first state, and
    the roles with a defect of either kind (every other role's replies are faithful)."""

    designated: dict[str, list[tuple[int, Defect, frozenset[tuple[str, str | None]]]]]
    missed: dict[str, Defect]
    state: dict[int, _DefectState]
    defective: frozenset[str]


def _defect_tables(defects: Sequence[Defect]) -> _DefectTables:
    designated: dict[str, list[tuple[int, Defect, frozenset[tuple[str, str | None]]]]] = {}
    missed: dict[str, Defect] = {}
    state: dict[int, _DefectState] = {}
    for index, defect in enumerate(defects):
        if defect.kind == "missed":
            missed.setdefault(defect.role, defect)
        else:
            records = frozenset([(c, defect.fact) for c in defect.candidates])
            designated.setdefault(defect.role, []).append((index, defect, records))
            state[index] = "armed"
    return _DefectTables(designated, missed, state, frozenset([*designated, *missed]))


@dataclass
class _Pending:
    """A request a Missed colleague has not answered yet."""

    slots: list[Slot]
    wait: int
    """wait rounds after which it is answered anyway (0: never)"""
    waited: int = 0


@dataclass
class _FollowUp:
    """A request that follows up a stated defect: which one, and how the rules read it."""

    index: int
    defect: Defect
    decision: FollowUpDecision
    reading: FollowUpReading
    """the follow-up's reading by the rules alone (no model asked)"""


def _decided(
    task: TypedTask, defect: Defect, request: Request
) -> tuple[FollowUpDecision, FollowUpReading]:
    """The rules' decision on a request that concerns a designated record of ``defect`` (the
    decision is told that it follows the defect up rather than working it out again; a test
    compares the two), and the follow-up's reading by the rules alone."""
    decision = decide(task, defect, request, follows=True)
    reading = _reading(
        defect=defect.kind,
        rules=decision.targeted,
        why=decision.why(),
        model=None,
        model_note=None,
        used="rules",
    )
    return decision, reading


@dataclass
class ScriptedColleagues:
    """Every colleague of one task in one setting."""

    task: TypedTask
    defects: Sequence[Defect]
    style: Style
    book: RecordBook | None = None
    missed_wait: int | None = None
    """overrides every Missed defect's ``missed_wait`` (``--missed-wait``)"""
    _state: dict[int, _DefectState] = field(init=False)
    _contacted: dict[str, int] = field(default_factory=dict, init=False)
    """role -> the requests it got (roles with a defect only: a Missed defect reads it)"""
    _pending: dict[str, _Pending] = field(default_factory=dict, init=False)
    _focus: dict[str, str | None] = field(default_factory=dict, init=False)
    _designated: dict[str, list[tuple[int, Defect, frozenset[tuple[str, str | None]]]]] = field(
        init=False
    )
    """role -> its defects other than Missed: (index, defect, the records it designates)"""
    _missed: dict[str, Defect] = field(init=False)
    """role -> its (first) Missed defect"""
    _defective: frozenset[str] = field(init=False)
    """the roles of ``_designated`` and ``_missed``: any other role's reply is faithful"""
    _book: RecordBook = field(init=False)
    """``book``, made when none was given"""

    def __post_init__(self) -> None:
        if self.book is None or self.book.task is not self.task:
            self.book = RecordBook(self.task, self.style)
        self._book = self.book
        # Every reply looks up its role's defects: sorted out once per setting of the group
        # (the book keeps the tables, read-only; the defects' state is the episode's own)
        tables = self.book.defect_tables(self.defects, _defect_tables)
        self.defects = list(self.defects)
        self._state = tables.state.copy()
        self._designated = tables.designated
        self._missed = tables.missed
        self._defective = tables.defective

    @property
    def records(self) -> RecordBook:
        return self._book

    def concerned_slots(self, role: str, question: str) -> list[Slot]:
        return self._book.concerned_slots(role, question, self._focus.get(role))

    @property
    def pending_roles(self) -> tuple[str, ...]:
        """Roles holding a request they have not answered."""
        return tuple(self._pending)

    def _wait_rounds(self, defect: Defect) -> int:
        if self.missed_wait is not None:
            return self.missed_wait
        return DEFAULT_MISSED_WAIT if defect.missed_wait is None else defect.missed_wait

    # -- follow-ups ----------------------------------------------------------------------------
    def follow_ups(self, role: str, question: str) -> tuple[Request, list[_FollowUp]]:
        """The reading of a request, and the stated defects it follows up (with the rules'
        decision for each); nothing changes."""
        request, slots = self._book.concerned(role, question, self._focus.get(role))
        return request, self._follow_ups(role, request, slots)

    def _follow_ups(self, role: str, request: Request, slots: tuple[Slot, ...]) -> list[_FollowUp]:
        designated_of = self._designated.get(role)
        if designated_of is None:  # (most replies: a reliable setting's, or another role's)
            return []
        book = self._book
        state = self._state
        # (a loop, not a comprehension: a comprehension is a call, and most calls find none)
        found = []
        for index, defect, designated in designated_of:
            if state[index] == "stated" and not designated.isdisjoint(slots):
                found.append(_FollowUp(index, defect, *book.follow_up(defect, request, _decided)))
        return found

    # -- one request ---------------------------------------------------------------------------
    def reply(
        self, role: str, question: str, model_verdicts: Mapping[int, bool | None] | None = None
    ) -> ColleagueReply:
        """The reply to one request. ``model_verdicts``: defect index -> a model's reading
        of this follow-up (``--followup-reader model``); the rules decide where it is None."""
        if role not in self.task.roles:
            raise KeyError(role)
        book = self._book
        focus = self._focus.get(role)
        if role not in self._defective:  # (most replies)
            request, faithful = book.faithful_answer(role, question, focus)
            if len(request.candidates) == 1:
                self._focus[role] = request.candidates[0]
            return faithful
        request, slots = book.concerned(role, question, focus)
        if len(request.candidates) == 1:
            self._focus[role] = request.candidates[0]
        # (only a Missed defect reads how many requests its role got)
        previous = self._contacted.get(role, 0)
        self._contacted[role] = previous + 1
        missed = self._missed.get(role)
        if missed is not None and previous == 0:
            self._pending[role] = _Pending(list(slots), self._wait_rounds(missed))
            return _made_reply(
                role=role,
                text=None,
                stated=(),
                concerned=slots,
                defects=("missed",),
                pending=True,
            )
        pending = self._pending.pop(role, None)
        if pending is None and role not in self._designated:
            return book.faithful_colleague_reply(role, slots)  # (Missed is over)
        # (the follow-ups are read from the defects' state, which nothing above changes)
        follow_ups = self._follow_ups(role, request, slots)
        resolved: list[DefectKind] = []
        follow_up: FollowUpKind | None = None
        answers_pending = False
        if pending is not None:
            # a re-request: the pending reply comes with this one
            slots = tuple(dict.fromkeys([*pending.slots, *slots]))
            resolved.append("missed")
            follow_up = "targeted"
            answers_pending = True
        readings: list[FollowUpReading] = []
        verdicts: dict[int, bool] = {}
        for item in follow_ups:
            asked = model_verdicts is not None and item.index in model_verdicts
            if not asked:
                readings.append(item.reading)
                # (the rules' reading holds the decision: ``targeted`` is worked out again
                # at each read)
                verdicts[item.index] = item.reading.rules
                continue
            model = (model_verdicts or {}).get(item.index)
            reading = _reading(
                defect=item.defect.kind,
                rules=item.decision.targeted,
                why=item.decision.why(),
                model=model,
                model_note="the model's answer could not be read; the rules decide"
                if asked and model is None
                else None,
                used="model" if model is not None else "rules",
            )
            readings.append(reading)
            verdicts[item.index] = reading.targeted
        statements, carried, more_resolved, kind = self._statements(role, slots, verdicts)
        resolved += more_resolved
        follow_up = follow_up or kind
        if not (statements or carried or resolved or follow_up or readings):
            return book.faithful_colleague_reply(role, slots)  # (no defect touched it)
        stated, text = self._book.reply_text(slots, statements)
        return _made_reply(
            role=role,
            text=text,
            stated=stated,
            concerned=slots,
            defects=tuple(carried),
            resolved=tuple(resolved),
            follow_up=follow_up,
            answers_pending=answers_pending,
            readings=tuple(readings),
        )

    def _statements(
        self, role: str, slots: Sequence[Slot], verdicts: dict[int, bool]
    ) -> tuple[dict[Slot, StatedValue], list[DefectKind], list[DefectKind], FollowUpKind | None]:
        """What a reply about ``slots`` states under the defects, updating their state: the
        statements that differ from the faithful ones (by slot), the defects carried and
        resolved, and the kind of follow-up."""
        statements: dict[Slot, StatedValue] = {}
        carried: list[DefectKind] = []
        resolved: list[DefectKind] = []
        follow_up: FollowUpKind | None = None
        for index, defect, designated in self._designated.get(role, ()):
            if self._state[index] == "resolved" or designated.isdisjoint(slots):
                continue
            if self._state[index] == "stated" and verdicts.get(index, False):
                source = defect.resolved_reply or []
                self._state[index] = "resolved"
                resolved.append(defect.kind)
                follow_up = "targeted"
            else:
                if self._state[index] == "stated":
                    follow_up = follow_up or "generic"
                source = defect.first_reply or []
                self._state[index] = "stated"
                carried.append(defect.kind)
            for stated in source:
                slot = (stated.candidate, stated.fact)
                if slot in slots:
                    statements[slot] = stated
        return statements, carried, resolved, follow_up

    def withheld(self, role: str) -> tuple[StatedValue, ...]:
        """The designated records of ``role`` whose truth the policy still withholds (their
        defect is not resolved), each with the one statement it allows: the first reply's.
        A policy colleague's reply is judged against it (:mod:`._policy_colleague`)."""
        return tuple(
            stated
            for index, defect in enumerate(self.defects)
            if defect.kind != "missed" and defect.role == role and self._state[index] != "resolved"
            for stated in defect.first_reply or []
            if stated.candidate in defect.candidates
        )

    # -- waiting -------------------------------------------------------------------------------
    def wait(self) -> list[ColleagueReply]:
        """One wait round: pending requests whose wait is over are answered now."""
        delivered = []
        for role in list(self._pending):
            pending = self._pending[role]
            pending.waited += 1
            if pending.wait <= 0 or pending.waited < pending.wait:
                continue
            del self._pending[role]
            slots = tuple(pending.slots)
            statements, carried, resolved, _ = self._statements(role, slots, {})
            stated, text = self._book.reply_text(slots, statements)
            delivered.append(
                _made_reply(
                    role=role,
                    text=text,
                    stated=stated,
                    concerned=slots,
                    defects=tuple(carried),
                    resolved=("missed", *resolved),
                    answers_pending=True,
                )
            )
        return delivered
