"""What the scripted colleagues of one task share, derived once per group and shared by every
episode (:class:`RecordBook`: the vocabulary, the readings of requests, the faithful lines and
replies), and the replies they give (:class:`ColleagueReply`, with the readings of the
follow-ups it answered). The rules the colleagues follow are :mod:`._colleagues`'.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, TypeVar, cast

from pydantic import BaseModel, ConfigDict

from .._memo import remember
from .._trusted import made_frozen, trusted_maker
from ..construct import Style, statement_text
from ..construct._render import ExactLines
from ..settings import (
    Defect,
    DefectKind,
    ParsedMessage,
    Request,
    Setting,
    SettingName,
    StatedValue,
    Vocabulary,
    parse_message,
    read_request,
    same_defect,
)
from ..spec import Slot, TypedTask, to_json_scalar

FollowUpKind = Literal["targeted", "generic"]
READINGS_KEPT = 4096
"""readings a record book remembers (per group; cleared when full)"""
FollowUpReader = Literal["rules", "model"]
T = TypeVar("T")
_faithful_statement = trusted_maker(StatedValue)
"""(a faithful statement is made from the typed task's own checked values, without
validation: a test compares it with ``StatedValue(...)``)"""


class FollowUpReading(BaseModel):
    """How one follow-up to a stated defect was read: by the rules and, optionally, a model."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    defect: DefectKind
    rules: bool
    """the rules' decision: targeted or not"""
    why: str
    model: bool | None = None
    """the model's decision (``--followup-reader model``); None when not asked or unreadable"""
    model_note: str | None = None
    """what went wrong with the model's reading, if anything (the rules' decision is used)"""
    used: FollowUpReader = "rules"

    @property
    def targeted(self) -> bool:
        return self.model if self.used == "model" and self.model is not None else self.rules


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
    pending: bool = False
    """The request got no reply and is pending (a Missed defect)."""
    answers_pending: bool = False
    """The reply also answers (or, after waiting, only answers) an earlier pending request."""
    readings: tuple[FollowUpReading, ...] = ()


def _made_reply(
    role: str,
    text: str | None,
    stated: tuple[StatedValue, ...],
    concerned: tuple[Slot, ...],
    defects: tuple[DefectKind, ...] = (),
    resolved: tuple[DefectKind, ...] = (),
    follow_up: FollowUpKind | None = None,
    pending: bool = False,
    answers_pending: bool = False,
    readings: tuple[FollowUpReading, ...] = (),
) -> ColleagueReply:
    """``ColleagueReply(...)`` with the same fields, made without the frozen class's
    ``__init__`` (:func:`~uncobench_z3._trusted.made_frozen`). Every request gets a reply; a
    test keeps the two alike."""
    return made_frozen(
        ColleagueReply,
        {
            "role": role,
            "text": text,
            "stated": stated,
            "concerned": concerned,
            "defects": defects,
            "resolved": resolved,
            "follow_up": follow_up,
            "pending": pending,
            "answers_pending": answers_pending,
            "readings": readings,
        },
    )


_DEFECTS_KEPT = 8
"""distinct defects a record book keeps of one kind, role and fact (a group has a few)"""


class RecordBook:
    """What the colleagues of one task need, derived once: vocabulary, faithful lines.

    Shared by every episode of the group: it only ever adds a faithful line to its cache
    (a pure function of the slot), so sharing cannot change a reply.
    """

    def __init__(
        self,
        task: TypedTask,
        style: Style,
        stored: tuple[Mapping[str, Sequence[str]], Mapping[str, Sequence[int]]] | None = None,
    ) -> None:
        """``stored``: a template-rendered group's records and the places of their faithful
        lines (:attr:`~uncobench_z3.construct.RenderedTask.faithful`), which are then read
        from them (the template's lines: a renderer model's records are not given)."""
        self.task = task
        self.style = style
        self.vocabulary = Vocabulary.of(task)
        self.facts_of = {role: tuple(task.facts_of(role)) for role in task.roles}
        # Every record's faithful statement, made once per group (a group's preparation):
        # without validation, which checks only that the fields are strings and a value a
        # JSON scalar, as a typed task's ids and ``to_json_scalar``'s values always are (half
        # of the book's own making; a test compares them with validated statements)
        contexts = task.required_contexts
        values = task.values
        self.faithful: dict[Slot, StatedValue] = {
            slot: _faithful_statement(
                candidate=slot[0],
                fact=slot[1],
                context=contexts[slot[1]],
                value=to_json_scalar(values[slot]),
            )
            for slot in task.all_slots()
        }
        self._lines: dict[Slot, str] = {}  # faithful lines, found when first needed
        self._stored = stored
        # (its call as a bound method: calling an instance goes through its type's ``__call__``)
        self._exact_lines = ExactLines(task, style).__call__
        # Reading a message costs milliseconds and agents repeat their questions (across
        # settings, epochs and agents, and the minimum-rounds search asks what careful asks):
        # a reading depends only on the text, the role and the candidate in focus.
        self._readings: dict[tuple[str, str | None, str | None], Request] = {}
        # The addressee-free part of the last message read: a message sent to several
        # colleagues is read for each in turn. Only the last is kept: parses are many small
        # objects, and keeping them all made the garbage collector's passes cost more than
        # the parsing saved.
        self._last_parsed: ParsedMessage | None = None
        # Every reply derives the records its request concerns from the reading, and a reply
        # that no defect touches is the faithful lines of those records: both are pure
        # functions of the reading (resp. of the records), remembered like the readings.
        self._concerned: dict[tuple[str, str, str | None], tuple[Request, tuple[Slot, ...]]] = {}
        self._faithful_replies: dict[tuple[Slot, ...], tuple[tuple[StatedValue, ...], str]] = {}
        # A defect's statements are the group's data, stated again in every episode that
        # triggers the defect: their lines are remembered by identity (the statement is kept,
        # so its id cannot be reused while remembered).
        self._other_lines: dict[int, tuple[StatedValue, str]] = {}
        # A reply that no defect, follow-up or pending request touches is the faithful reply
        # of its role and records, in every setting and episode of the group: made once
        # (a frozen value), and known by identity (:meth:`is_faithful`), so that what is made
        # from it alone can be remembered too (the environment's trace records).
        self._faithful_colleague: dict[tuple[str, tuple[Slot, ...]], ColleagueReply] = {}
        self._faithful_ids: dict[int, ColleagueReply] = {}
        # (and the reading and faithful reply of a question, by the reading's key: a role with
        # no defect answers a question it was asked before in one lookup, cleared with them)
        self._faithful_answers: dict[
            tuple[str, str, str | None], tuple[Request, ColleagueReply]
        ] = {}
        self._defect_tables: dict[int, tuple[Sequence[Defect], object]] = {}
        # A follow-up's decision is a function of the defect and the reading of the request:
        # an agent asks the same follow-up again, in the same episode and in another setting
        # that has the same defect (by identity: both are kept with it, so that neither id
        # is reused meanwhile).
        self._follow_ups: dict[tuple[int, int], tuple[Defect, Request, object]] = {}
        # A setting's defect is often another setting's too (a mixed setting's are those of
        # the settings with one defect), read from the group file as an equal but separate
        # object: each is taken as the first one like it (:func:`same_defect`), so that what
        # is remembered by a defect's identity or its statements' (the follow-ups' decisions,
        # the defects' lines, the scoring's readings) is made once per group, not per setting
        self._defects: dict[tuple[str, str, str | None], list[Defect]] = {}
        # (a built group stores which defects are the same, :meth:`take_shared_defects`:
        # setting's list -> its defects, each as the first one like it, without comparing)
        self._shared: dict[int, tuple[Sequence[Defect], list[Defect]]] = {}

    def defect_tables(self, defects: Sequence[Defect], make: Callable[[Sequence[Defect]], T]) -> T:
        """``make(defects)``, each defect as the group's stored map gives it
        (:meth:`take_shared_defects`) or else :meth:`shared_defect`, remembered by the
        identity of ``defects`` (a setting's list, the group's data, kept with the tables so
        that its id is not reused): what the scripted colleagues sort out of a setting's
        defects, once per setting of the group."""
        found = self._defect_tables.get(id(defects))
        if found is not None and found[0] is defects:
            return cast(T, found[1])
        shared = self._shared.get(id(defects))
        if shared is not None and shared[0] is defects:
            made = make(shared[1])
        else:
            made = make([self.shared_defect(defect) for defect in defects])
        remember(self._defect_tables, id(defects), (defects, made), READINGS_KEPT)
        return made

    def take_shared_defects(
        self,
        settings: Sequence[Setting],
        shared: Mapping[SettingName, Sequence[tuple[SettingName, int] | None]],
    ) -> None:
        """Take the group's stored map of the same defects (``proofs.shared_defects``, which
        ``uncobench verify`` recomputes with the full comparison) for :meth:`defect_tables`
        instead of comparing the defects: a defect it names is taken as the earlier one it
        names. Not taken unless it fits ``settings`` (the group's): every setting it names
        exists with as many defects, and every defect named is in range, of the same kind,
        role and fact."""
        by_name = {setting.name: setting.defects for setting in settings}
        taken: dict[int, tuple[Sequence[Defect], list[Defect]]] = {}
        for name, sources in shared.items():
            defects = by_name.get(name)
            if defects is None or len(sources) != len(defects):
                return
            made = []
            for defect, source in zip(defects, sources, strict=True):
                if source is not None:
                    earlier = by_name.get(source[0])
                    if earlier is None or not 0 <= source[1] < len(earlier):
                        return
                    first, fields = earlier[source[1]].__dict__, defect.__dict__
                    if (first["kind"], first["role"], first["fact"]) != (
                        fields["kind"],
                        fields["role"],
                        fields["fact"],
                    ):
                        return
                    defect = earlier[source[1]]
                made.append(defect)
            taken[id(defects)] = (defects, made)
        for defects in by_name.values():  # (the others' defects are the first like them)
            taken.setdefault(id(defects), (defects, list(defects)))
        self._shared = taken

    def shared_defect(self, defect: Defect) -> Defect:
        """The first defect given to the book that is the same as ``defect`` in every field
        (:func:`same_defect`; ``defect`` itself when it is the first)."""
        fields = defect.__dict__
        if fields["kind"] == "missed":  # (nothing of a Missed defect is remembered by it)
            return defect
        key = (fields["kind"], fields["role"], fields["fact"])
        alike = self._defects.get(key)
        if alike is None:
            alike = self._defects[key] = []
        for earlier in alike:
            if earlier is defect or same_defect(earlier, defect):
                return earlier
        if len(alike) < _DEFECTS_KEPT:  # (kept: a defect is the group's, a few of each)
            alike.append(defect)
        return defect

    def follow_up(
        self, defect: Defect, request: Request, make: Callable[[TypedTask, Defect, Request], T]
    ) -> T:
        """``make(task, defect, request)``, remembered by the identities of ``defect`` and
        ``request`` (see ``_follow_ups``): how the scripted colleagues decide a follow-up."""
        key = (id(defect), id(request))
        found = self._follow_ups.get(key)
        if found is not None and found[0] is defect and found[1] is request:
            return cast(T, found[2])
        made = make(self.task, defect, request)
        remember(self._follow_ups, key, (defect, request, made), READINGS_KEPT)
        return made

    def line(self, stated: StatedValue) -> str:
        slot = (stated.candidate, stated.fact)
        if self.faithful.get(slot) is stated:
            return self.faithful_line(slot)
        return self.statement_line(stated)  # a defect's statement

    def faithful_line(self, slot: Slot) -> str:
        """The line of ``slot``'s faithful statement (its true value in the required context),
        found when first needed: read from the stored records (``stored``), else written from
        the typed value itself, which is what the statement's value reads back as
        (:func:`~uncobench_z3.settings.stated_value`), without reading it."""
        text = self._lines.get(slot)
        if text is None and self._stored is not None:
            # (the colleagues state nearly every faithful line of a group: writing them was
            # 1.5% of a first pass over 80 built groups, reading them far less)
            self._read_stored_lines()
            text = self._lines.get(slot)
        if text is None:
            task = self.task
            context = task.required_contexts[slot[1]]
            text = self._lines[slot] = self._exact_lines(slot, context, task.values[slot])
        return text

    def _read_stored_lines(self) -> None:
        """Every faithful line the stored records hold, read where the table places it (a
        role whose table does not fit its records, which verify refutes, is left out: its
        lines are written)."""
        assert self._stored is not None
        records, places = self._stored
        self._stored = None
        candidates = self.task.candidates
        facts_of = self.facts_of
        table = self._lines
        for role, found in places.items():
            lines = records.get(role, ())
            # (a role's records in ``slots_of`` order, candidates then the role's facts: its
            # places checked by the least and the greatest, then taken a record at a time.
            # Through ``slots_of`` and a zip, the tables of a first pass over 80 built groups
            # cost 11.0 M instructions counted alone; so, 5.5 M)
            facts = facts_of.get(role)
            if facts is None:  # (not a role of the task: it has no records)
                facts = tuple(self.task.facts_of(role))
            if len(found) != len(candidates) * len(facts) or (
                found and (min(found) < 0 or max(found) >= len(lines))
            ):
                continue
            place = iter(found).__next__
            for candidate in candidates:
                for fact in facts:
                    table[candidate, fact] = lines[place()]

    def statement_line(self, stated: StatedValue) -> str:
        """The line of any statement (a defect's), remembered by identity."""
        found = self._other_lines.get(id(stated))
        if found is not None and found[0] is stated:
            return found[1]
        slot = (stated.candidate, stated.fact)
        faithful = self.faithful.get(slot)
        if faithful is not None and faithful.__dict__ == stated.__dict__:
            # (a resolved reply states the truth: 3,504 of the 4,672 defect statements of a
            # first pass over 320 benchmark groups; their line is the faithful one. Their
            # fields compared as pydantic's ``==`` compares them first, without its checks of
            # class, private and extra state: a line is written from the fields alone)
            text = self.faithful_line(slot)
        else:
            text = statement_text(self.task, stated, self.style)
        return remember(self._other_lines, id(stated), (stated, text), READINGS_KEPT)[1]

    def reply_text(
        self, slots: tuple[Slot, ...], statements: dict[Slot, StatedValue]
    ) -> tuple[tuple[StatedValue, ...], str]:
        """The statements of a reply about ``slots`` (``statements`` where the defects put
        theirs, the faithful ones elsewhere), in order, and its text. A defect's statement is
        written as itself, even one equal to the faithful statement: the same line."""
        if not statements:
            return self.faithful_reply(slots)
        # (one loop, each line looked up where the book keeps it, a method called only when
        # it is not there yet: a defect's line by its statement's identity, as
        # :meth:`statement_line` remembers it, a faithful one by its slot. Counted alone over
        # a first pass over 80 built groups, as the colleagues' method, 21.81 to 17.13 M
        # instructions)
        faithful = self.faithful
        lines = self._lines
        other = self._other_lines
        ordered = []
        written = []
        for slot in slots:
            stated = statements.get(slot)
            if stated is None:
                ordered.append(faithful[slot])
                line = lines.get(slot)
                if line is None:
                    line = self.faithful_line(slot)
            else:
                ordered.append(stated)
                found = other.get(id(stated))
                if found is not None and found[0] is stated:
                    line = found[1]
                else:
                    line = self.statement_line(stated)
            written.append(line)
        return tuple(ordered), "\n".join(written)

    def faithful_reply(self, slots: tuple[Slot, ...]) -> tuple[tuple[StatedValue, ...], str]:
        """The faithful statements of ``slots``, in order, and the reply text they make."""
        found = self._faithful_replies.get(slots)
        if found is None:
            stated = tuple(map(self.faithful.__getitem__, slots))
            # (the lines taken in C where the book has them all, as a group's stored records
            # give them: the 483 new replies of a first pass over 80 built groups, counted
            # alone without the stored lines' reading, 8.7 M with a :meth:`faithful_line`
            # call a line, 7.4 M so)
            if self._stored is not None:
                self._read_stored_lines()
            try:
                text = "\n".join(map(self._lines.__getitem__, slots))
            except KeyError:  # (a line not found yet: written)
                text = "\n".join([self.faithful_line(slot) for slot in slots])
            found = remember(self._faithful_replies, slots, (stated, text), READINGS_KEPT)
        return found

    def faithful_colleague_reply(self, role: str, slots: tuple[Slot, ...]) -> ColleagueReply:
        """The reply of ``role`` that states ``slots`` faithfully, with nothing else to it
        (made once: :meth:`is_faithful` knows it)."""
        key = (role, slots)
        found = self._faithful_colleague.get(key)
        if found is None:
            stated, text = self.faithful_reply(slots)
            found = _made_reply(role=role, text=text, stated=stated, concerned=slots)
            if len(self._faithful_colleague) >= READINGS_KEPT:
                self._faithful_colleague.clear()
                self._faithful_ids.clear()
                self._faithful_answers.clear()
            self._faithful_colleague[key] = self._faithful_ids[id(found)] = found
        return found

    def faithful_answer(
        self, role: str, question: str, focus: str | None = None
    ) -> tuple[Request, ColleagueReply]:
        """The reading of ``question`` to ``role`` and the role's faithful reply to it
        (:meth:`concerned`, then :meth:`faithful_colleague_reply` of its records), remembered
        by the reading's key: what a role with no defect answers (1,405 of the 1,888 faithful
        replies of a first pass over 80 built groups are asked again)."""
        key = (question, role, focus)
        found = self._faithful_answers.get(key)
        if found is None:
            request, slots = self.concerned(role, question, focus)
            found = (request, self.faithful_colleague_reply(role, slots))
            # (after the reply: making it may clear the answers, with the replies they hold)
            remember(self._faithful_answers, key, found, READINGS_KEPT)
        return found

    def is_faithful(self, reply: ColleagueReply) -> bool:
        """Whether ``reply`` is one of :meth:`faithful_colleague_reply`'s (by identity: a
        remembered reply is kept, so its id cannot be another's meanwhile)."""
        return self._faithful_ids.get(id(reply)) is reply

    def read(self, role: str | None, question: str, focus: str | None = None) -> Request:
        """The reading of ``question`` to ``role`` (remembered: see ``_readings``)."""
        key = (question, role, focus)
        found = self._readings.get(key)
        if found is None:  # (bounded for long runs of unique LLM questions)
            parsed = self._last_parsed
            if parsed is None or parsed.text != question:
                parsed = self._last_parsed = parse_message(self.vocabulary, question)
            request = read_request(self.vocabulary, question, role, focus, parsed)
            found = remember(self._readings, key, request, READINGS_KEPT)
        return found

    def named_candidates(self, text: str) -> list[str]:
        """Candidates a text names (full name, first name or surname, any case)."""
        return list(self.read(None, text).candidates)

    def slots(self, role: str, request: Request) -> list[Slot]:
        """The records of ``role`` a request concerns (see the module docstring): the
        candidates it concerns (:meth:`~uncobench_z3.settings.Request.concerned_candidates`)
        by the role's facts it names, or all of the role's facts if it names none. (Loops,
        not comprehensions: a comprehension is a call, and a reading concerns three records
        on average, each reading its own: 718 of the 723 of a first pass over 80 built
        groups are distinct. Counted alone over that pass, 9.32 to 5.72 M instructions)"""
        everyone = request.concerns_all()  # (the request's rule, kept in one place)
        fields = request.__dict__
        named = fields["candidates"]
        asked = fields["facts"]
        own = self.facts_of[role]
        facts: Sequence[str] = own
        if asked:
            chosen = []
            for fact in own:
                if fact in asked:
                    chosen.append(fact)
            if chosen:
                facts = chosen
        found: list[Slot] = []
        for candidate in self.task.candidates:
            if everyone or candidate in named:
                for fact in facts:
                    found.append((candidate, fact))
        return found

    def concerned_slots(self, role: str, question: str, focus: str | None = None) -> list[Slot]:
        return list(self.concerned(role, question, focus)[1])

    def concerned(
        self, role: str, question: str, focus: str | None = None
    ) -> tuple[Request, tuple[Slot, ...]]:
        """The reading of ``question`` to ``role`` and the records it concerns (remembered)."""
        key = (question, role, focus)
        found = self._concerned.get(key)
        if found is None:
            request = self.read(role, question, focus)
            found = (request, tuple(self.slots(role, request)))
            remember(self._concerned, key, found, READINGS_KEPT)
        return found


def named_candidates(task: TypedTask, text: str) -> list[str]:
    """Candidates a text names (the colleagues' rule; see :class:`RecordBook`)."""
    return list(read_request(Vocabulary.of(task), text).candidates)
