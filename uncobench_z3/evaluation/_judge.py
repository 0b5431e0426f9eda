"""Role-agent validity: does a colleague's reply state its records faithfully, and everything
its response policy required?

The programmatic judge of one reply is :func:`~._reply_judge.judge_text` (reading:
:mod:`._reply_reading`); this module applies it to the replies of a run's traces. Which text
is judged: what the colleague wrote (:func:`written_text`: a phrasing model's rejected wording
too, though the agent saw the scripted stand-in). Which replies: every reply with a text, and
every reply of a policy colleague, its silences included (:func:`is_judged`); a silence the
environment kept for a scripted or phrasing colleague is not judged. The reference of a reply
is in its record: ``stated`` (what the scripted policy states for that request), and for a
policy colleague ``pending`` (a prescribed silence) and ``policy.withheld``.

Scripted colleagues score fidelity True and coverage 1 by construction (a test checks it);
the judge exists for colleagues whose wording is not ours. Per cell figures (Table 7) are in
:mod:`._validity`; the LLM judge (:mod:`._judge_llm`) scores the same replies with a model,
for comparison.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from .._textcap import cut_info
from ..construct import Catalog, RenderedTask, parse_catalog
from ..errors import ConfigError, SpecReadError
from ..settings import TaskGroup, group_digest
from ..settings._references import stated_value_problems
from ..spec import TypedTask, load_json
from ._environment import PreparedGroup, ReplyRecord
from ._reply_judge import ReplyJudgement, judge_text
from ._runlog import RUN_FILE
from ._sample import SampleRecord

SCRIPTED_COLLEAGUE = "scripted"


def written_text(reply: ReplyRecord) -> str | None:
    """What the colleague wrote: a phrasing model's rejected wording (the agent saw the
    scripted stand-in), else the reply's text (None: silence)."""
    if reply.fidelity is not None and reply.fidelity.rejected_text is not None:
        return reply.fidelity.rejected_text
    return reply.text


class UnreadableStatement(ValueError):
    """A reply record states a value its group's task has no name or form for (a damaged or
    edited run log): refused where it is read, rather than met as a crash deeper down.

    ``sample_key`` is the key of the sample whose trace holds the reply, once known."""

    sample_key: str | None = None


def check_statements(task: TypedTask, reply: ReplyRecord) -> None:
    """Raise :class:`UnreadableStatement` for the first stated value of ``reply`` that names
    a candidate, fact or context the task lacks, or has no single readable form."""
    for index, stated in enumerate(reply.stated):
        for where, problem in stated_value_problems(task.spec, stated):
            place = "".join(f".{part}" for part in where)
            raise UnreadableStatement(
                f"the reply of {reply.role}: stated[{index}]{place}: {problem}"
            )


def unreadable_sample_error(log: Path, error: UnreadableStatement) -> SpecReadError:
    """``error`` as one line naming the log and the line of the sample (looked for now: a
    refusal is rare, the log may be long)."""
    where = str(log)
    if error.sample_key is not None:
        try:
            with log.open(encoding="utf-8", errors="replace") as handle:
                for number, line in enumerate(handle, 1):
                    if error.sample_key in line and _key_of(line) == error.sample_key:
                        where = f"{log}:{number}"
                        break
        except OSError:
            pass
    return SpecReadError(
        where,
        f"sample {error.sample_key or '?'}: {error}; fix or delete its line, or run "
        "`uncobench eval` again with --force to set it aside",
    )


def _key_of(line: str) -> object:
    try:
        record = json.loads(line)
    except ValueError:
        return None
    return record.get("key") if isinstance(record, dict) else None


def is_judged(reply: ReplyRecord) -> bool:
    """Every reply of a policy colleague is judged (its silences too); other colleagues'
    silences were not theirs to keep (the environment kept them) and are not judged."""
    return reply.policy is not None or reply.text is not None


def judge_reply(task: TypedTask, reply: ReplyRecord, catalog: Catalog) -> ReplyJudgement:
    """Judge one reply of a trace against the role's records and the policy's reference
    (:func:`~._reply_judge.judge_text`; the reference is the record's ``stated``, and for a
    policy colleague also its ``pending`` silence and the records still withheld).

    ``catalog`` is :func:`~uncobench_z3.construct.parse_catalog` of the group's task text.
    """
    if not is_judged(reply):
        raise ValueError(f"the reply of {reply.role} was missed: there is no text to judge")
    policy = reply.policy
    return judge_text(
        task,
        catalog,
        reply.role,
        written_text(reply),
        reply.stated,
        silence_required=policy is not None and reply.pending,
        withheld=policy.withheld if policy is not None else (),
    )


def _reference_key(reply: ReplyRecord) -> tuple[str, str | None, str, bool, str]:
    """What a verdict depends on: the role, the text judged and the reference."""
    policy = reply.policy
    withheld = "" if policy is None else repr(policy.withheld)
    return (reply.role, written_text(reply), repr(reply.stated),
            policy is not None and reply.pending, withheld)  # fmt: skip


@dataclass(frozen=True)
class GroupJudge:
    """What judging the replies of one group needs, derived once.

    Verdicts are remembered by reply content (role, text, reference): the same reply recurs
    across agents and settings, and a verdict is a pure function of it.
    """

    group: TaskGroup
    task: TypedTask
    rendered: RenderedTask
    catalog: Catalog
    _verdicts: dict[tuple[str, str | None, str, bool, str], ReplyJudgement] = field(
        default_factory=dict, compare=False, repr=False
    )

    @classmethod
    def of(cls, group: TaskGroup) -> GroupJudge:
        prepared = PreparedGroup.of(group)
        catalog = parse_catalog(prepared.rendered.task_text)
        return cls(group, prepared.task, prepared.rendered, catalog)

    def judge(self, reply: ReplyRecord) -> ReplyJudgement:
        if reply.policy is not None and reply.text is not None and cut_info(reply.text):
            # the stored text was cut (an enormous reply): the verdict logged when the reply
            # was written judged all of it
            return reply.policy.verdict
        key = _reference_key(reply)
        verdict = self._verdicts.get(key)
        if verdict is None:
            check_statements(self.task, reply)
            verdict = self._verdicts[key] = judge_reply(self.task, reply, self.catalog)
        return verdict


class GroupJudges:
    """Group judges by group content hash (what a sample record names), made when needed."""

    def __init__(self, groups: Iterable[TaskGroup], digests: Iterable[str] | None = None) -> None:
        """``digests``: the groups' content hashes in the same order, when the caller has
        them (:func:`~uncobench_z3.construct.load_benchmark`); computed otherwise."""
        if digests is None:
            self._groups = {group_digest(group): group for group in groups}
        else:
            self._groups = dict(zip(digests, groups, strict=True))
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


def colleague_mode_of(sample: SampleRecord) -> str:
    """``scripted``, or how the colleague model played: ``phrase`` or ``policy``."""
    if colleague_of(sample) == SCRIPTED_COLLEAGUE:
        return SCRIPTED_COLLEAGUE
    return str(getattr(sample, "colleague_mode", "phrase") or "phrase")


def run_benchmark_path(run_dir: str | Path, advice: str = "pass its path with --bench") -> Path:
    """The benchmark a run was made from, as its ``run.json`` names it (relative to the
    working directory, or else to the run directory); not found, the error ends with
    ``advice`` (the option ``uncobench judge`` takes; a command without it says another)."""
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
        f"{folder / RUN_FILE} names the benchmark {benchmark!r}, which is not found; {advice}"
    )
