"""Role-agent validity: does a colleague's reply state its records faithfully, and everything
its response policy required?

**Programmatic judge** (:func:`judge_reply`). The reply text is cut into statements, each
read with the record-line grammar (:func:`~uncobench_z3.construct.parse_statement` against
the catalog of the task text): its lines; a line's sentences when it names more than one
candidate; a sentence's clauses where a second candidate or record key begins. A clause
without a candidate takes the last one named (so a candidate may head a list of its
records); one without a record key takes the previous clause's key and context.

* ``fidelity``: every statement read agrees with the role's records in the context it names:
  an exact value equals the record of that context; a range or a set of options contains it.
  A statement about a record the role does not hold (a fact of another role, a context its
  records lack) contradicts them. Lines that cannot be read are *unverifiable*: listed, not
  counted against fidelity (so a reply in free prose needs the LLM judge).
* ``coverage``: the share of the items the policy required (the reply record's ``stated``)
  that some statement conveys: same candidate, fact and context, and the same exact value,
  the same range bounds or the same set of options.

Missed replies (no text) are not judged. Scripted colleagues score fidelity True and
coverage 1.0 by construction; the judge exists for colleagues whose wording is not ours.

The LLM judge (:mod:`._judge_llm`) scores the same replies with a model, for comparison.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from ..construct import (
    Catalog,
    ReadError,
    RenderedTask,
    Statement,
    Style,
    parse_catalog,
    parse_statement,
    statement_text,
)
from ..construct._reader import parenthesised
from ..errors import ConfigError, SpecReadError
from ..settings import StatedValue, TaskGroup, stated_imprecision, stated_value
from ..spec import Slot, TypedTask, Value, load_json, to_json_scalar
from ._environment import PreparedGroup, ReplyRecord
from ._runlog import RUN_FILE
from ._sample import SampleRecord, group_digest

SCRIPTED_COLLEAGUE = "scripted"
_SENTENCE_END = re.compile(r"(?<=[.;!?])\s+")


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ReplyJudgement(_Frozen):
    """The programmatic judge's verdict on one reply."""

    role: str
    fidelity: bool
    coverage: float
    required: int
    """items the policy required (the reply record's ``stated``)"""
    conveyed: int
    statements: int
    """statements read from the text"""
    contradictions: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    unverifiable: tuple[str, ...] = ()

    @property
    def problems(self) -> tuple[str, ...]:
        return (
            *(f"contradicts the records: {c}" for c in self.contradictions),
            *(f"required but not conveyed: {m}" for m in self.missing),
            *(f"unverifiable: {u!r}" for u in self.unverifiable),
        )


def _normal(text: str) -> str:
    return " ".join(text.lower().split())


@functools.lru_cache(maxsize=256)
def _label_pattern(labels: tuple[str, ...]) -> re.Pattern[str]:
    """Any of the labels, the longest first (so a label inside a longer one never wins)."""
    ordered = sorted(labels, key=len, reverse=True)
    return re.compile("|".join(re.escape(label) for label in ordered), re.IGNORECASE)


def _inside_parentheses(text: str, position: int) -> bool:
    return text.count("(", 0, position) > text.count(")", 0, position)


@dataclass(frozen=True)
class _Anchor:
    position: int
    kind: str
    """``candidate`` or ``label``"""
    text: str


def _anchors(sentence: str, catalog: Catalog, names: Sequence[str]) -> list[_Anchor]:
    """Candidate names and record-key labels written in a sentence (outside contexts)."""
    pattern = _label_pattern(tuple(entry.label for entry in catalog.keys.values()))
    found = [
        _Anchor(m.start(), "label", m.group(0))
        for m in pattern.finditer(sentence)
        if not _inside_parentheses(sentence, m.start())
    ]
    for name in names:
        position = sentence.find(name)
        while position >= 0:
            if not _inside_parentheses(sentence, position):
                found.append(_Anchor(position, "candidate", name))
            position = sentence.find(name, position + len(name))
    return sorted(found, key=lambda anchor: anchor.position)


def _leads_into(sentence: str, candidate: _Anchor, label: _Anchor) -> bool:
    """Whether a candidate name belongs to the label after it ("Lee's rent"): nothing but
    words lies between them (no value, no context)."""
    between = sentence[candidate.position + len(candidate.text) : label.position]
    return not any(char.isdigit() or char in "()" for char in between)


def _context_start(sentence: str, start: int, cut: int) -> int:
    """Where the next statement begins when it opens with its context ("(April 2026) Lee,
    rent: ..."): at a parenthesised group just before the cut, if the clause has a group of
    its own before it."""
    head = sentence[start:cut].rstrip()
    if not head.endswith(")"):
        return cut
    depth, opening = 0, len(head) - 1
    for opening in range(len(head) - 1, -1, -1):
        depth += (head[opening] == ")") - (head[opening] == "(")
        if depth == 0:
            break
    return start + opening if "(" in head[:opening] else cut


def _clauses(sentence: str, anchors: list[_Anchor]) -> list[tuple[str, list[_Anchor]]]:
    """Cut a sentence where a second candidate or a second label begins; a candidate that
    leads into the new label ("..., Lee's rent ...") goes with it."""
    cuts: list[int] = [0]
    groups: list[list[_Anchor]] = [[]]
    for anchor in anchors:
        current = groups[-1]
        if any(a.kind == anchor.kind for a in current):
            moved: list[_Anchor] = []
            last = current[-1]
            if (
                anchor.kind == "label"
                and last.kind == "candidate"
                and len(current) > 1
                and _leads_into(sentence, last, anchor)
            ):
                moved = [current.pop()]
            cut = moved[0].position if moved else anchor.position
            cuts.append(_context_start(sentence, cuts[-1], cut))
            groups.append(moved)
        groups[-1].append(anchor)
    cuts.append(len(sentence))
    return [(sentence[cuts[i] : cuts[i + 1]], groups[i]) for i in range(len(groups))]


def _statements(text: str, catalog: Catalog, names: Sequence[str]) -> Iterator[str]:
    """The statements of a reply text, each as a line ``parse_statement`` can read (see the
    module docstring); a missing candidate or record key is written in front of the clause."""
    named: str | None = None
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        sentences = [line]
        if sum(line.count(name) for name in names) > 1:
            sentences = [part.strip() for part in _SENTENCE_END.split(line) if part.strip()]
        for sentence in sentences:
            label: str | None = None
            context: str | None = None
            for raw, anchors in _clauses(sentence, _anchors(sentence, catalog, names)):
                clause = raw.strip().lstrip("-*• ").strip()
                if not clause:
                    continue
                own = {a.kind: a.text for a in anchors}
                group = parenthesised(clause)
                prefix = ""
                if "label" in own:
                    label, context = own["label"], group[0] if group else context
                elif label is not None and "candidate" in own:
                    prefix = label if group or context is None else f"{label} ({context})"
                if "candidate" in own:
                    named = own["candidate"]
                elif named is not None and "label" in own:
                    prefix = named
                yield f"{prefix}: {clause}" if prefix else clause


def _contexts(task: TypedTask, slot: Slot) -> dict[str, tuple[str, Value]]:
    """The records of one slot: normalised context -> (context, value)."""
    fact = task.facts[slot[1]]
    known = {_normal(fact.context): (fact.context, task.values[slot])}
    for context, value in task.alternatives.get(slot, {}).items():
        known[_normal(context)] = (context, value)
    return known


def _resolve_context(segment: str, named: str, known: dict[str, tuple[str, Value]]) -> str:
    """The context a statement names: its parenthesised one if the records know it, else the
    longest known context written anywhere in the segment (free wording), else the named one."""
    key = _normal(named)
    if key in known:
        return key
    text = _normal(segment)
    written = [context for context in known if context in text]
    return max(written, key=len) if written else key


def _agrees(statement: Statement, record: Value) -> bool:
    try:
        if statement.value is not None:
            return bool(statement.value == record)
        if statement.options is not None:
            return record in statement.options
        assert statement.low is not None and statement.high is not None
        return bool(statement.low <= record <= statement.high)  # type: ignore[operator]
    except TypeError:  # a value of another type than the record's
        return False


@dataclass(frozen=True)
class _Read:
    text: str
    slot: Slot
    context: str
    statement: Statement


def _conveys(task: TypedTask, read: _Read, item: StatedValue) -> bool:
    if read.slot != (item.candidate, item.fact) or read.context != _normal(item.context):
        return False
    statement = read.statement
    if item.is_exact:
        return statement.value is not None and statement.value == stated_value(task, item)
    imprecision = stated_imprecision(task, item)
    if imprecision.options is not None:
        return statement.options is not None and set(statement.options) == set(imprecision.options)
    return statement.low is not None and (statement.low, statement.high) == (
        imprecision.low,
        imprecision.high,
    )


def _record_text(task: TypedTask, slot: Slot, context: str, value: Value) -> str:
    stated = StatedValue(
        candidate=slot[0], fact=slot[1], context=context, value=to_json_scalar(value)
    )
    return statement_text(task, stated, Style())


def judge_reply(task: TypedTask, reply: ReplyRecord, catalog: Catalog) -> ReplyJudgement:
    """Judge one reply's text against the role's records and the policy's required items.

    ``catalog`` is :func:`~uncobench_z3.construct.parse_catalog` of the group's task text.
    """
    if reply.text is None:
        raise ValueError(f"the reply of {reply.role} was missed: there is no text to judge")
    # An LLM colleague's wording that failed its own check was replaced by the scripted
    # wording before the agent saw it; the judge of the colleague judges what the model wrote.
    text = (
        reply.fidelity.rejected_text
        if reply.fidelity and reply.fidelity.rejected_text
        else reply.text
    )
    ids = {task.candidate_name(c): c for c in task.candidates}
    owned = set(task.facts_of(reply.role))
    reads: list[_Read] = []
    unverifiable: list[str] = []
    contradictions: list[str] = []
    statements = 0
    for segment in _statements(text, catalog, list(ids)):
        try:
            statement = parse_statement(segment, catalog)
        except ReadError:
            unverifiable.append(segment)
            continue
        statements += 1
        candidate = ids.get(statement.candidate)
        if candidate is None:
            contradictions.append(f"{segment!r} names no candidate of the task")
            continue
        slot = (candidate, statement.fact)
        label = catalog.keys[statement.fact].label
        if statement.fact not in owned:
            contradictions.append(f"{segment!r}: {reply.role} keeps no {label} records")
            continue
        known = _contexts(task, slot)
        context = _resolve_context(segment, statement.context, known)
        reads.append(_Read(segment, slot, context, statement))
        if context not in known:
            contradictions.append(
                f"{segment!r}: the records hold no {label} for {statement.context!r}"
            )
        elif not _agrees(statement, known[context][1]):
            record = _record_text(task, slot, *known[context])
            contradictions.append(f"{segment!r}: the record is {record!r}")
    missing: list[str] = []
    for item in reply.stated:
        if any(_conveys(task, read, item) for read in reads):
            continue
        expected = statement_text(task, item, Style())
        same = [r.text for r in reads if r.slot == (item.candidate, item.fact)]
        found = f"the reply states {same[0]!r}" if same else "not stated"
        missing.append(f"{expected!r} ({found})")
    required = len(reply.stated)
    return ReplyJudgement(
        role=reply.role,
        fidelity=not contradictions,
        coverage=(required - len(missing)) / required if required else 1.0,
        required=required,
        conveyed=required - len(missing),
        statements=statements,
        contradictions=tuple(contradictions),
        missing=tuple(missing),
        unverifiable=tuple(unverifiable),
    )


@dataclass(frozen=True)
class GroupJudge:
    """What judging the replies of one group needs, derived once.

    Verdicts are remembered by reply content (role, text, required items): the same reply
    recurs across agents and settings, and a verdict is a pure function of it.
    """

    group: TaskGroup
    task: TypedTask
    rendered: RenderedTask
    catalog: Catalog
    _verdicts: dict[tuple[str, str, str], ReplyJudgement] = field(
        default_factory=dict, compare=False, repr=False
    )

    @classmethod
    def of(cls, group: TaskGroup) -> GroupJudge:
        prepared = PreparedGroup.of(group)
        catalog = parse_catalog(prepared.rendered.task_text)
        return cls(group, prepared.task, prepared.rendered, catalog)

    def judge(self, reply: ReplyRecord) -> ReplyJudgement:
        key = (reply.role, reply.text or "", repr(reply.stated))
        verdict = self._verdicts.get(key)
        if verdict is None:
            verdict = self._verdicts[key] = judge_reply(self.task, reply, self.catalog)
        return verdict


class GroupJudges:
    """Group judges by group content hash (what a sample record names), made when needed."""

    def __init__(self, groups: Iterable[TaskGroup]) -> None:
        self._groups = {group_digest(group): group for group in groups}
        self._made: dict[str, GroupJudge] = {}

    def get(self, group_hash: str) -> GroupJudge | None:
        if group_hash not in self._made:
            group = self._groups.get(group_hash)
            if group is None:
                return None
            self._made[group_hash] = GroupJudge.of(group)
        return self._made[group_hash]


@dataclass(frozen=True)
class ReplyRef:
    """One reply of one sample, by its place in the trace."""

    sample: SampleRecord
    round: int
    index: int
    reply: ReplyRecord

    @property
    def key(self) -> str:
        return f"{self.sample.key}:{self.round}:{self.index}"


def sample_replies(samples: Iterable[SampleRecord]) -> Iterator[ReplyRef]:
    for sample in samples:
        for record in sample.trace:
            for index, reply in enumerate(record.replies):
                yield ReplyRef(sample, record.round, index, reply)


def colleague_of(sample: SampleRecord) -> str:
    """Who played the colleagues: the model a sample names (a ``colleague`` field), else
    the scripted colleagues."""
    named = getattr(sample, "colleague", None)
    return str(named) if named else SCRIPTED_COLLEAGUE


class ColleagueValidity(_Frozen):
    """The programmatic judge over every reply of one kind of colleague."""

    colleague: str
    judged: int
    missed: int
    """replies not given (not judged)"""
    unmatched: int
    """replies whose group is not among the groups given (not judged)"""
    faithful: int
    full_coverage: int
    mean_coverage: float | None
    unverifiable_lines: int

    @property
    def fidelity_rate(self) -> float | None:
        return self.faithful / self.judged if self.judged else None


def role_validity(
    samples: Iterable[SampleRecord], groups: Iterable[TaskGroup] | GroupJudges
) -> list[ColleagueValidity]:
    """Judge every reply of ``samples``; one summary per colleague kind, in order of appearance."""
    judges = groups if isinstance(groups, GroupJudges) else GroupJudges(groups)
    counts: dict[str, dict[str, float]] = {}
    for ref in sample_replies(samples):
        row = counts.setdefault(
            colleague_of(ref.sample),
            dict.fromkeys(("judged", "missed", "unmatched", "faithful", "full", "coverage",
                           "unverifiable"), 0.0),
        )  # fmt: skip
        judge = judges.get(ref.sample.group_hash)
        if ref.reply.text is None:
            row["missed"] += 1
            continue
        if judge is None:
            row["unmatched"] += 1
            continue
        verdict = judge.judge(ref.reply)
        row["judged"] += 1
        row["faithful"] += verdict.fidelity
        row["full"] += verdict.coverage == 1.0
        row["coverage"] += verdict.coverage
        row["unverifiable"] += len(verdict.unverifiable)
    return [
        ColleagueValidity(
            colleague=name,
            judged=int(row["judged"]),
            missed=int(row["missed"]),
            unmatched=int(row["unmatched"]),
            faithful=int(row["faithful"]),
            full_coverage=int(row["full"]),
            mean_coverage=row["coverage"] / row["judged"] if row["judged"] else None,
            unverifiable_lines=int(row["unverifiable"]),
        )
        for name, row in counts.items()
    ]


def run_benchmark_path(run_dir: str | Path) -> Path:
    """The benchmark a run was made from, as its ``run.json`` names it (relative to the
    working directory, or else to the run directory)."""
    folder = Path(run_dir)
    if not (folder / RUN_FILE).is_file():
        raise ConfigError(f"{folder} is not a run directory (no {RUN_FILE}); run `uncobench eval`")
    meta = load_json(folder / RUN_FILE)
    config = meta.get("config") if isinstance(meta, dict) else None
    benchmark = config.get("benchmark") if isinstance(config, dict) else None
    if not isinstance(benchmark, str) or not benchmark:
        raise SpecReadError(str(folder / RUN_FILE), "names no benchmark", "$.config.benchmark")
    for candidate in (Path(benchmark), folder / benchmark):
        if candidate.exists():
            return candidate
    raise ConfigError(
        f"{folder / RUN_FILE} names the benchmark {benchmark!r}, which is not found; "
        "pass its path with --bench"
    )
