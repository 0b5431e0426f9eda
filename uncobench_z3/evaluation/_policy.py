"""What a colleague model is told: its response policy as data, and the prompts' own words.

**The response policy** (:class:`ResponsePolicy`) is derived from the group's setting, never
written per setting: the concern rule and the default reply are the scripted colleagues'
(:mod:`._colleagues`), the required context of each of the role's record keys comes from the
task, and each defect of the role becomes an exception - the lines its first reply states
instead of the true ones (the defect's ``first_reply``), what counts as a targeted follow-up
(:func:`~uncobench_z3.settings.rule_text` of its rule), and what that follow-up gets
(``resolved_reply``); a Missed defect becomes a silence and when its reply is due
(``missed_wait``). :func:`policy_text` renders it as indented ``key: value`` lines, the field
names being the keys, so the model reads exactly the data.

**Silence.** A policy colleague that stays silent writes :data:`SILENCE` (or nothing);
:func:`is_silence` recognises it, and the agent then sees no reply.

**Instructions.** :func:`repeats_instructions` tells whether a reply repeats the prose of a
colleague prompt (any run of :data:`ECHO_WORDS` words of it): the judge fails such a reply
whatever records it happens to contain.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from string import Template

from pydantic import BaseModel, ConfigDict

from .._assets import asset_path
from ..construct import Style, statement_text
from ..settings import (
    DEFAULT_MISSED_WAIT,
    Defect,
    DefectKind,
    SettingName,
    StatedValue,
    rule_text,
)
from ..spec import TypedTask

SILENCE = "NO REPLY"
"""What a colleague model writes to stay silent."""
PHRASE_PROMPT = "colleague.md"
POLICY_PROMPT = "policy_colleague.md"
ECHO_WORDS = 8
"""A reply that shares a run of this many words with a prompt's own prose repeats it."""

CONCERN = (
    "a request concerns the candidates it names (every candidate when it names none) and the "
    "record keys of yours it names (all of your record keys when it names none)"
)
DEFAULT_REPLY = (
    "state every record the request concerns, each in the required context of its record key, "
    "one line per record, written as in your records"
)
OTHER_FOLLOW_UPS = "the lines of the first reply again (not the true records)"
MISSED_FIRST = f"no reply at all: write exactly {SILENCE}"
MISSED_RECORDS = "all of yours: the first message you receive, whatever it asks"


DUE_PREFIX = "(No new message"
DUE = (
    f"{DUE_PREFIX}: the coordinator has waited. Your reply to the message you left "
    'unanswered is due now. That message was: "$question")'
)
"""What a policy colleague is told when the reply it held back is due after a wait."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class DefectPolicy(_Frozen):
    """One exception to the default reply: a defect of this role, as the model is told it."""

    defect: DefectKind
    records: str
    """the designated records, in words"""
    first_request_gets: tuple[str, ...] | str
    """record lines instead of the true ones, or (Missed) the silence"""
    a_targeted_follow_up: str | None = None
    a_targeted_follow_up_gets: tuple[str, ...] | None = None
    """(and every later request about these records)"""
    any_other_follow_up_gets: str | None = None
    that_reply_comes: str | None = None
    """Missed: when the unanswered request is answered"""


class ResponsePolicy(_Frozen):
    """The response policy of one role in one setting (module docstring)."""

    role: str
    setting: SettingName
    which_records_a_request_concerns: str = CONCERN
    default_reply: str = DEFAULT_REPLY
    required_contexts: dict[str, str]
    """record key label -> the context the task needs"""
    exceptions: tuple[DefectPolicy, ...] = ()


def _names(task: TypedTask, candidates: Sequence[str]) -> str:
    names = [task.candidate_name(c) for c in candidates]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + f" and {names[-1]}"


def _reply_due(wait: int) -> str:
    later = "with your reply to their next request (then answer both requests)"
    if wait <= 0:
        return f"only {later}; from then on, answer normally"
    rounds = "1 round" if wait == 1 else f"{wait} rounds"
    return (
        f"when the coordinator has waited {rounds} (you are told so), or {later}, whichever "
        "comes first; from then on, answer normally"
    )


def defect_policy(
    task: TypedTask, defect: Defect, style: Style, missed_wait: int | None = None
) -> DefectPolicy:
    """One defect as an exception to the default reply (``missed_wait``: the run's override)."""
    if defect.kind == "missed" or defect.fact is None:
        wait = missed_wait if missed_wait is not None else defect.missed_wait
        return DefectPolicy(
            defect=defect.kind,
            records=MISSED_RECORDS,
            first_request_gets=MISSED_FIRST,
            that_reply_comes=_reply_due(DEFAULT_MISSED_WAIT if wait is None else wait),
        )
    designated = set(defect.candidates)

    def lines(items: Iterable[StatedValue]) -> tuple[str, ...]:
        return tuple(statement_text(task, s, style) for s in items if s.candidate in designated)

    label = task.facts[defect.fact].label
    return DefectPolicy(
        defect=defect.kind,
        records=f"the {label} of {_names(task, defect.candidates)}",
        first_request_gets=lines(defect.first_reply or []),
        a_targeted_follow_up=rule_text(task, defect.targeted_follow_up),
        a_targeted_follow_up_gets=lines(defect.resolved_reply or []),
        any_other_follow_up_gets=OTHER_FOLLOW_UPS,
    )


def response_policy(
    task: TypedTask,
    role: str,
    setting: SettingName,
    defects: Sequence[Defect],
    style: Style,
    missed_wait: int | None = None,
) -> ResponsePolicy:
    """The policy of ``role`` in a setting with ``defects`` (those of other roles are left out)."""
    return ResponsePolicy(
        role=task.role_name(role),
        setting=setting,
        required_contexts={
            task.facts[fact].label: task.facts[fact].context for fact in task.facts_of(role)
        },
        exceptions=tuple(
            defect_policy(task, d, style, missed_wait) for d in defects if d.role == role
        ),
    )


def _render(value: object, indent: int) -> list[str]:
    pad = "  " * indent
    if isinstance(value, dict):
        out: list[str] = []
        for key, item in value.items():
            if item is None:
                continue
            name = str(key).replace("_", " ")
            if isinstance(item, str | int):
                out.append(f"{pad}{name}: {item}")
            elif not item:
                out.append(f"{pad}{name}: none")
            else:
                out += [f"{pad}{name}:", *_render(item, indent + 1)]
        return out
    if isinstance(value, list | tuple):
        out = []
        for item in value:
            inner = _render(item, indent + 1)
            first = inner[0].lstrip() if inner else ""
            out += [f"{pad}- {first}", *inner[1:]]
        return out
    return [f"{pad}{value}"]


def policy_text(policy: ResponsePolicy) -> str:
    """The policy as indented ``key: value`` lines (field names as keys, lists as ``-``)."""
    return "\n".join(_render(policy.model_dump(exclude={"role"}), 0))


def is_silence(text: str | None) -> bool:
    """An empty reply, or :data:`SILENCE` (any case, quotes and punctuation around it)."""
    if text is None:
        return True
    # only what is neither a letter nor a digit goes (a reply of just "60000" or "是的" says
    # something; it is not an empty one)
    core = re.sub(r"[\W_]+", " ", text.lower()).strip()
    return core in ("", SILENCE.lower())


# -- the prompts' own words ------------------------------------------------------------------
@functools.cache
def colleague_prompt(name: str) -> Template:
    """A colleague prompt template (``evaluators/<name>``)."""
    return Template((asset_path("evaluators") / name).read_text(encoding="utf-8"))


_WORD = re.compile(r"[a-z0-9]+")
_PLACEHOLDER = re.compile(r"\$(?:\w+|\{\w+\})")


def _shingles(text: str) -> set[tuple[str, ...]]:
    words = _WORD.findall(text.lower())
    return {tuple(words[i : i + ECHO_WORDS]) for i in range(len(words) - ECHO_WORDS + 1)}


@functools.cache
def _instruction_shingles() -> frozenset[tuple[str, ...]]:
    """Every run of ECHO_WORDS words inside the prose of the colleague prompts and of the
    policy's fixed wording (never across a placeholder: records and requests are not prose)."""
    fragments = [CONCERN, DEFAULT_REPLY, OTHER_FOLLOW_UPS, MISSED_RECORDS, *_PLACEHOLDER.split(DUE)]
    for name in (PHRASE_PROMPT, POLICY_PROMPT):
        fragments += _PLACEHOLDER.split(colleague_prompt(name).template)
    return frozenset(s for fragment in fragments for s in _shingles(fragment))


def repeats_instructions(text: str) -> bool:
    """Whether ``text`` repeats a run of :data:`ECHO_WORDS` words of a colleague prompt."""
    return not _shingles(text).isdisjoint(_instruction_shingles())
