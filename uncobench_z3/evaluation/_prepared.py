"""What every episode of a group derives from it, made once per group and shared read-only:
:class:`PreparedGroup` (the typed task, the rendered text, the colleagues' record book, the
briefings, the scores of answers, what agents see of replies)."""

from __future__ import annotations

from dataclasses import dataclass, field

from .._kept_property import kept_property
from .._memo import remember
from .._trusted import (
    SharedFieldsSet,
    new_model,
    set_model_extra,
    set_model_fields_set,
    set_model_private,
    set_model_state,
)
from ..construct import RenderedTask, rendered_of, template_rendered
from ..models import ToolDef
from ..settings import TaskGroup
from ..spec import TypedTask
from ._colleagues import ColleagueReply, RecordBook
from ._inputs import typed_task
from ._protocol import (
    AnswerAction,
    Briefing,
    ReplyView,
    default_instructions,
    tool_definitions,
)
from ._scoring import AnswerKey, AnswerScore, parse_answer, score_answer
from ._trace import ReplyRecord

_SCORES_KEPT = 256
"""answers a prepared group remembers the scores of (then it starts again)"""
_VIEWS_KEPT = 4096
"""reply views and faithful replies' records a prepared group remembers"""
# A reply's view and a faithful reply's record are written out where they are made, as a
# trusted maker's compiled call makes them for the same keywords (every field given): the
# state in field order, a fields set shared by the models of the class (frozen: it never
# changes), no extra, no private state (tests/test_environment_models.py compares them with
# the makers').
_EVERY_VIEW_FIELD = SharedFieldsSet(ReplyView.model_fields)
_EVERY_REPLY_FIELD = SharedFieldsSet(ReplyRecord.model_fields)
"""a reply record's fields set, every field given (a faithful reply's here, a round's reply
records in ._environment)"""
_FaithfulRecord = tuple[ColleagueReply, ReplyRecord, ReplyView]
"""a faithful reply of the record book, its trace record and its view"""


@dataclass(frozen=True)
class PreparedGroup:
    """What every episode of a group derives from it: the typed task and the rendered text.

    Deriving them costs milliseconds (structure check, rendering), more than a whole episode
    of scripted replies, so a runner prepares each group once and shares it read-only.
    """

    group: TaskGroup
    task: TypedTask
    rendered: RenderedTask
    book: RecordBook
    tools: tuple[ToolDef, ...] = ()
    _scores: dict[AnswerAction, AnswerScore] = field(
        default_factory=dict, init=False, compare=False, repr=False
    )
    _briefings: dict[tuple[int, str | None], Briefing] = field(
        default_factory=dict, init=False, compare=False, repr=False
    )
    _views: dict[tuple[str, str | None], ReplyView] = field(
        default_factory=dict, init=False, compare=False, repr=False
    )
    """(role, text) -> what the agent sees of a reply (frozen: shared by every episode)"""
    _faithful_records: dict[tuple[int, str], _FaithfulRecord] = field(
        default_factory=dict, init=False, compare=False, repr=False
    )
    """(id of a faithful reply of the book, question) -> the reply (kept, so that its id is
    not reused), its trace record and its view: a function of the two alone"""

    def reply_view(self, role: str, text: str | None) -> ReplyView:
        """What the agent sees of a reply of ``role`` (made once per role and text)."""
        key = (role, text)
        found = self._views.get(key)
        if found is None:
            found = new_model(ReplyView)
            set_model_state(found, {"role": role, "role_name": self.role_names[role], "text": text})
            set_model_fields_set(found, _EVERY_VIEW_FIELD)
            set_model_extra(found, None)
            set_model_private(found, None)
            remember(self._views, key, found, _VIEWS_KEPT)
        return found

    def faithful_record(self, question: str, reply: ColleagueReply) -> _FaithfulRecord | None:
        """The trace record and view of ``reply`` to ``question``, scripted, in a round with
        no pending reply to it, when it is a faithful reply of the book (its
        :meth:`~._record_book.RecordBook.is_faithful`; else None): remembered, since an agent
        asks its questions again in every setting of a group."""
        key = (id(reply), question)
        found = self._faithful_records.get(key)
        if found is not None and found[0] is reply:
            return found
        if not self.book.is_faithful(reply):
            return None
        record = new_model(ReplyRecord)
        set_model_state(
            record,
            {
                "role": reply.role,
                "question": question,
                "text": reply.text,
                "stated": reply.stated,
                "concerned": reply.concerned,
                "defects": (),
                "resolved": (),
                "follow_up": None,
                "fidelity": None,
                "policy": None,
                "pending": False,
                "answers_round": None,
                "delivered": False,
                "readings": (),
            },
        )
        set_model_fields_set(record, _EVERY_REPLY_FIELD)
        set_model_extra(record, None)
        set_model_private(record, None)
        found = (reply, record, self.reply_view(reply.role, reply.text))
        return remember(self._faithful_records, key, found, _VIEWS_KEPT)

    def briefing(self, budget: int, instructions: str | None = None) -> Briefing:
        """What the agent is shown first, for a round budget and instructions (None: the
        default ones). Made once per group and budget (it was once per sample: the default
        instructions read from their file, the briefing validated); it is immutable."""
        found = self._briefings.get((budget, instructions))
        if found is None:
            rendered = self.rendered
            found = Briefing(
                task_text=rendered.task_text,
                roles=tuple(rendered.role_directory),
                budget=budget,
                instructions=instructions if instructions is not None else default_instructions(),
                tools=self.tools or tool_definitions(rendered.role_directory),
            )
            remember(self._briefings, (budget, instructions), found, _SCORES_KEPT)
        return found

    @kept_property
    def role_names(self) -> dict[str, str]:
        """Role id -> name (do not change it)."""
        return {card.id: card.name for card in self.rendered.role_directory}

    def score(self, answer: AnswerAction) -> AnswerScore:
        """``answer`` parsed and scored against the group's gold. Remembered: a score is a
        function of the answer's fields alone, and an agent tends to give the same answer in
        every setting and epoch of a group."""
        found = self._scores.get(answer)
        if found is None:  # (bounded for agents whose answers are all different)
            key = AnswerKey.from_task(self.task)
            found = score_answer(parse_answer(answer, key), self.group.gold, key)
            remember(self._scores, answer, found, _SCORES_KEPT)
        return found

    @classmethod
    def of(cls, group: TaskGroup, task: TypedTask | None = None) -> PreparedGroup:
        """``task``: the group's typed task, when the caller has made it already (one of
        another spec, or without values, is not used)."""
        if task is None or task.spec is not group.spec or not task.has_values:
            task = typed_task(group)  # (which says why a group without values is unusable)
        rendered = rendered_of(group, task)
        # the faithful lines are read from the records where they are the template's (a
        # group without stored text is rendered now, by the template)
        stored = None
        if rendered.faithful is not None and (group.rendered is None or template_rendered(group)):
            stored = (rendered.records, rendered.faithful)
        book = RecordBook(task, rendered.style, stored)
        # (the build's map of the same defects, instead of comparing them: an older group's
        # defects are compared)
        shared = group.proofs.shared_defects if group.proofs is not None else None
        if shared is not None:
            book.take_shared_defects(group.settings, shared)
        return cls(
            group=group,
            task=task,
            rendered=rendered,
            book=book,
            tools=tool_definitions(rendered.role_directory),
        )
