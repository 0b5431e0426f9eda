"""Scripted colleagues: deterministic replies from a role's records under the setting's policy.

The policy is the group's data (:class:`~uncobench_z3.settings.Defect`); this module only
executes it. The rules (also in the README):

* **What a question concerns.** The candidates it names (a full name, case-insensitively, or
  a last name that only one candidate has, written with its capital) and the role's facts
  it names (label, key, or a label word no other fact uses: the phrases of
  :func:`~uncobench_z3.settings.fact_phrases`). No candidate named: every candidate. None of
  the role's facts named: every fact of the role.
* **A faithful reply** states each concerned record in the *required* context, one line per
  record (:func:`~uncobench_z3.construct.statement_text`), candidates in directory order.
* **Misaligned / Incomplete.** The first reply that concerns a designated record (the
  defect's fact for one of its candidates) states the defect's ``first_reply`` for the
  concerned candidates of that fact - whatever the question says. A later request that
  concerns it again is a follow-up: if it is targeted
  (:func:`~uncobench_z3.settings.is_targeted` with the defect's rule) it gets
  ``resolved_reply`` and the defect is resolved for good; otherwise (a generic follow-up) the
  first reply is repeated.
* **Missed.** The first request addressed to the role gets no reply at all; every later
  request is answered as if the role were reliable.

State changes only with the requests received, so the same conversation always gets the
same replies.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from ..construct import Style, statement_text
from ..settings import Defect, DefectKind, StatedValue, fact_phrases, is_targeted
from ..settings._followup import normalise
from ..spec import Slot, TypedTask, to_json_scalar

FollowUpKind = Literal["targeted", "generic"]
_DefectState = Literal["armed", "stated", "resolved"]


@dataclass(frozen=True)
class ColleagueReply:
    """One reply, with what it carried (for the trace; the agent sees only ``text``)."""

    role: str
    text: str | None
    stated: tuple[StatedValue, ...]
    concerned: tuple[Slot, ...]
    """The records the question concerns (by the rule above), answered or not."""
    defects: tuple[DefectKind, ...] = ()
    """Defects this reply carried (``missed`` for a silence)."""
    resolved: tuple[DefectKind, ...] = ()
    """Defects this request resolved (it was a targeted follow-up)."""
    follow_up: FollowUpKind | None = None
    """Whether the request followed up an outstanding defect, and how."""


class RecordBook:
    """What the colleagues of one task need, derived once: phrases, names, faithful lines.

    Shared by every episode of the group: it only ever adds a faithful line to its cache
    (a pure function of the slot), so sharing cannot change a reply.
    """

    def __init__(self, task: TypedTask, style: Style) -> None:
        self.task = task
        self.style = style
        self.facts_of = {role: tuple(task.facts_of(role)) for role in task.roles}
        self.phrases = {
            key: tuple(p for p in (normalise(x) for x in fact_phrases(task, key)) if p.strip())
            for key in task.facts
        }
        self.names = {c: normalise(task.candidate_name(c)) for c in task.candidates}
        lasts: dict[str, list[str]] = {}
        for candidate in task.candidates:
            parts = task.candidate_name(candidate).split()
            if len(parts) > 1 and len(parts[-1]) >= 3 and parts[-1][0].isupper():
                lasts.setdefault(parts[-1], []).append(candidate)
        self.last_names = {
            found[0]: (last, re.compile(r"(?<![\w])" + re.escape(last) + r"(?![\w])"))
            for last, found in lasts.items()
            if len(found) == 1
        }
        self.faithful: dict[Slot, StatedValue] = {
            slot: StatedValue(
                candidate=slot[0],
                fact=slot[1],
                context=task.facts[slot[1]].context,
                value=to_json_scalar(task.values[slot]),
            )
            for slot in task.all_slots()
        }
        self._lines: dict[Slot, str] = {}  # faithful lines, written when first needed

    def line(self, stated: StatedValue) -> str:
        slot = (stated.candidate, stated.fact)
        faithful = self.faithful.get(slot)
        if faithful is None or (faithful is not stated and faithful != stated):
            return statement_text(self.task, stated, self.style)  # a defect's statement
        text = self._lines.get(slot)
        if text is None:
            text = self._lines[slot] = statement_text(self.task, faithful, self.style)
        return text

    def named_candidates(self, text: str, normalised: str | None = None) -> list[str]:
        """Candidates a text names: full name (any case) or a unique last name (capitalised).

        ``normalised`` may pass ``normalise(text)`` when the caller has it already.
        """
        normalised = normalise(text) if normalised is None else normalised
        found = []
        for candidate, name in self.names.items():
            if name in normalised:
                found.append(candidate)
                continue
            last = self.last_names.get(candidate)
            # the substring test first: most questions name nobody, and it is much cheaper
            if last is not None and last[0] in text and last[1].search(text):
                found.append(candidate)
        return found

    def concerned_slots(self, role: str, question: str) -> list[Slot]:
        """The records of ``role`` a question concerns (see the module docstring)."""
        normalised = normalise(question)
        candidates = self.named_candidates(question, normalised) or list(self.task.candidates)
        own = self.facts_of[role]
        facts = [f for f in own if any(p in normalised for p in self.phrases[f])] or list(own)
        return [(c, f) for c in candidates for f in facts]


def named_candidates(task: TypedTask, text: str) -> list[str]:
    """Candidates a text names (the colleagues' rule; see :class:`RecordBook`)."""
    return RecordBook(task, Style()).named_candidates(text)


class ScriptedColleagues:
    """Every colleague of one task in one setting."""

    def __init__(
        self,
        task: TypedTask,
        defects: Sequence[Defect],
        style: Style,
        book: RecordBook | None = None,
    ) -> None:
        self.task = task
        self.book = book if book is not None and book.task is task else RecordBook(task, style)
        self.defects = list(defects)
        self._state: dict[int, _DefectState] = {
            i: "armed" for i, d in enumerate(self.defects) if d.kind != "missed"
        }
        self._contacted: dict[str, int] = {}

    def concerned_slots(self, role: str, question: str) -> list[Slot]:
        return self.book.concerned_slots(role, question)

    # -- one request -------------------------------------------------------------------------
    def reply(self, role: str, question: str) -> ColleagueReply:
        if role not in self.task.roles:
            raise KeyError(role)
        previous = self._contacted.get(role, 0)
        self._contacted[role] = previous + 1
        slots = self.concerned_slots(role, question)
        missed = [d for d in self.defects if d.kind == "missed" and d.role == role]
        if missed and previous == 0:
            return ColleagueReply(
                role=role, text=None, stated=(), concerned=tuple(slots), defects=("missed",)
            )
        resolved: list[DefectKind] = []
        follow_up: FollowUpKind | None = None
        if missed and previous == 1 and is_targeted(missed[0].targeted_follow_up, question):
            resolved.append("missed")
            follow_up = "targeted"
        statements: dict[Slot, StatedValue] = {slot: self.book.faithful[slot] for slot in slots}
        carried: list[DefectKind] = []
        for index, defect in enumerate(self.defects):
            if defect.kind == "missed" or defect.role != role:
                continue
            designated = {(c, defect.fact) for c in defect.candidates}
            if not designated.intersection(slots):
                continue
            state = self._state[index]
            if state == "resolved":
                continue
            if state == "stated" and is_targeted(defect.targeted_follow_up, question):
                source = defect.resolved_reply or []
                self._state[index] = "resolved"
                resolved.append(defect.kind)
                follow_up = "targeted"
            else:
                if state == "stated":
                    follow_up = follow_up or "generic"
                source = defect.first_reply or []
                self._state[index] = "stated"
                carried.append(defect.kind)
            for stated in source:
                slot = (stated.candidate, stated.fact)
                if slot in statements:
                    statements[slot] = stated
        ordered = [statements[slot] for slot in slots]
        text = "\n".join(self.book.line(s) for s in ordered)
        return ColleagueReply(
            role=role,
            text=text,
            stated=tuple(ordered),
            concerned=tuple(slots),
            defects=tuple(carried),
            resolved=tuple(resolved),
            follow_up=follow_up,
        )
