"""The LLM judge of role-agent validity, beside the programmatic one (:mod:`._judge`).

A model reads the role's records, the request, the items the policy required and the reply
(prompt ``evaluators/judge.md``) and answers through a forced ``submit_judgement`` call:
``{"fidelity": bool, "coverage": number, "notes": str}`` (the coverage read as the exact
decimal it is written as). Each verdict, with the programmatic
judge's on the same reply, is appended to ``judge.jsonl`` beside the run's samples (one whole
line per write, flushed and fsynced), keyed by reply (``<sample key>:<round>:<index>``), so an
interrupted judging resumes where it stopped; a crash's torn last line is kept aside and
dropped, an unterminated one terminated (:mod:`uncobench_z3.spec._jsonl`).
:func:`judge_agreement` compares the two judges: fidelity agreement and the mean absolute
difference of coverage, exact fractions. A policy colleague's silence is judged too (the
prompt says whether silence was required, and which records the policy withholds).
"""

from __future__ import annotations

import asyncio
import functools
import os
import random
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from string import Template
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from .._assets import asset_path
from .._outdir import lock_output
from ..construct import statement_text
from ..errors import ConfigError, ResumeError, SpecReadError
from ..models import ChatMessage, Model, ModelOutput, ToolDef, ToolFunction
from ..settings import TaskGroup
from ..spec import open_for_append, read_jsonl_log, repair_log
from ._environment import ReplyRecord
from ._judge import (
    SCRIPTED_COLLEAGUE,
    GroupJudge,
    GroupJudges,
    ReplyRef,
    colleague_mode_of,
    colleague_of,
    is_judged,
    sample_replies,
    written_text,
)
from ._reply_judge import ReplyJudgement
from ._runlog import SAMPLES_FILE, LogNotWritten, read_log
from ._sample import SampleRecord

JUDGE_FILE = "judge.jsonl"
JUDGE_PROMPT_FILE = "judge.md"


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


JUDGE_TOOL = ToolDef(
    name="submit_judgement",
    description="Submit your judgement of the colleague's reply.",
    parameters={
        "type": "object",
        "properties": {
            "fidelity": {
                "type": "boolean",
                "description": "true when every value the reply states agrees with the "
                "colleague's records for the context the reply names",
            },
            "coverage": {
                "type": "number",
                "minimum": 0,
                "maximum": 1,
                "description": "the share of the required items that the reply conveys",
            },
            "notes": {"type": "string", "description": "what is wrong, briefly; or empty"},
        },
        "required": ["fidelity", "coverage", "notes"],
    },
)


def _decimal(value: Any) -> Any:
    """A JSON number as the exact decimal it is written as (0.1 is 1/10, not a binary float)."""
    if isinstance(value, float):
        return Fraction(repr(value))
    return value


DecimalFraction = Annotated[Fraction, BeforeValidator(_decimal)]


class LLMVerdict(BaseModel):
    """What the judge model submitted (keys it adds beyond these are ignored)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    fidelity: bool
    coverage: DecimalFraction = Field(ge=0, le=1)
    notes: str = ""


class JudgeLine(_Frozen):
    """One line of ``judge.jsonl``: both judges' verdicts on one reply."""

    key: str
    sample_key: str
    group_id: str
    setting: str
    agent: str
    colleague: str
    colleague_mode: str | None = None
    """``scripted``, ``phrase`` or ``policy`` (None: a line written before modes existed)"""
    round: int
    index: int
    role: str
    judge_model: str
    programmatic: ReplyJudgement
    llm: LLMVerdict | None = None
    error: str | None = None
    """why the model's answer gave no verdict (then ``llm`` is None)"""

    @property
    def row(self) -> str:
        """The colleague as Table 7 names it (:attr:`~._validity.ValidityCell.row`)."""
        if self.colleague == SCRIPTED_COLLEAGUE or self.colleague_mode == SCRIPTED_COLLEAGUE:
            return self.colleague
        return f"{self.colleague} ({self.colleague_mode or 'phrase'})"


@functools.cache
def judge_prompt() -> Template:
    """The judge prompt template (asset ``evaluators/judge.md``)."""
    return Template((asset_path("evaluators") / JUDGE_PROMPT_FILE).read_text(encoding="utf-8"))


def judge_messages(judge: GroupJudge, reply: ReplyRecord) -> list[ChatMessage]:
    """The judge prompt filled in for one reply: the role's records, the request, the items
    the policy required (as record lines) and the reply."""
    style = judge.rendered.style
    required = [f"- {statement_text(judge.task, item, style)}" for item in reply.stated]
    policy = reply.policy
    withheld = [] if policy is None else policy.withheld
    written = written_text(reply)
    if policy is not None and reply.pending:
        required = ["(no reply: the policy prescribes silence for this request)"]
    text = judge_prompt().substitute(
        role_name=judge.task.role_name(reply.role),
        records="\n".join(judge.rendered.records[reply.role]),
        question=reply.question,
        required="\n".join(required) or "(nothing)",
        withheld="\n".join(f"- {statement_text(judge.task, item, style)}" for item in withheld)
        or "(none)",
        reply="(no reply: the colleague stayed silent)" if written is None else written,
    )
    return [ChatMessage.user(text)]


def parse_verdict(output: ModelOutput) -> tuple[LLMVerdict | None, str | None]:
    """The verdict of a judge's answer, or why there is none."""
    calls = [call for call in output.tool_calls if call.function == JUDGE_TOOL.name]
    if not calls:
        return None, f"no {JUDGE_TOOL.name} tool call"
    call = calls[0]
    if call.parse_error:
        return None, f"the arguments are not a JSON object: {call.parse_error}"
    try:
        # the coverage as written (0.66666666666666666667), not as the float JSON parsing made
        return LLMVerdict.model_validate(call.exact_arguments()), None
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        where = ".".join(str(part) for part in first["loc"]) or "arguments"
        return None, f"{where}: {first['msg']}"


def read_judgements(path: Path, repair: bool = True) -> list[JudgeLine]:
    """The lines of a judge log. A torn last line (a crash) is skipped and, with ``repair``,
    kept aside and removed from the file; an unterminated last line is kept and terminated.
    Any other line that is not a judgement is refused with its line number."""
    contents = read_jsonl_log(path, JudgeLine.model_validate_json)
    if contents.bad:
        number, _ = contents.bad[0]
        raise SpecReadError(
            f"{path}:{number}",
            f"not a judgement line ({contents.reason}); fix or delete that line (the "
            f"{len(contents.records)} "
            "valid judgement(s) are kept) or choose another --out",
        )
    if repair and contents.damaged:
        repair_log(path, contents)
    return contents.records


def _append(path: Path, line: JudgeLine) -> None:
    try:
        with open_for_append(path) as handle:
            handle.write(line.model_dump_json() + "\n")
            handle.flush()
            os.fsync(handle.fileno())
    except OSError as exc:
        if exc.filename is not None:  # (opening names the file already)
            raise
        raise LogNotWritten.of(path, exc, "judgements") from exc


class JudgeAgreement(_Frozen):
    """How the LLM judge agrees with the programmatic judge over judge lines."""

    lines: int
    compared: int
    """lines with an LLM verdict"""
    no_verdict: int
    fidelity_agreed: int
    fidelity_agreement: Fraction | None
    only_llm_faithful: int
    """the LLM judge found the reply faithful, the programmatic judge did not"""
    only_program_faithful: int
    mean_coverage_difference: Fraction | None
    """mean absolute difference of the two coverages"""
    llm_fidelity_rate: Fraction | None
    llm_mean_coverage: Fraction | None


def judge_agreement(lines: Sequence[JudgeLine]) -> JudgeAgreement:
    pairs = [(line.programmatic, line.llm) for line in lines if line.llm is not None]
    n = len(pairs)
    agreed = sum(p.fidelity == v.fidelity for p, v in pairs)

    def mean(values: Iterable[Fraction | int]) -> Fraction | None:
        total = Fraction(0)
        for value in values:
            total += value
        return total / n if n else None

    return JudgeAgreement(
        lines=len(lines),
        compared=n,
        no_verdict=len(lines) - n,
        fidelity_agreed=agreed,
        fidelity_agreement=mean(int(p.fidelity == v.fidelity) for p, v in pairs),
        only_llm_faithful=sum(v.fidelity and not p.fidelity for p, v in pairs),
        only_program_faithful=sum(p.fidelity and not v.fidelity for p, v in pairs),
        mean_coverage_difference=mean(abs(p.coverage - v.coverage) for p, v in pairs),
        llm_fidelity_rate=mean(int(v.fidelity) for _, v in pairs),
        llm_mean_coverage=mean(v.coverage for _, v in pairs),
    )


def select_replies(
    samples: Iterable[SampleRecord], judges: GroupJudges, limit: int | None, seed: int
) -> list[ReplyRef]:
    """The replies to judge, in key order: every given reply of a known group, or a seeded
    sample of ``limit`` of them."""
    refs = sorted(
        (
            ref
            for ref in sample_replies(samples)
            if is_judged(ref.reply) and judges.get(ref.sample.group_hash) is not None
        ),
        key=lambda ref: ref.key,
    )
    if limit is not None and limit < len(refs):
        refs = sorted(random.Random(f"judge:{seed}").sample(refs, limit), key=lambda r: r.key)
    return refs


@dataclass(repr=False)
class JudgeRun:
    out: Path
    lines: list[JudgeLine]
    """every line of the log (earlier ones included), in key order"""
    judged: int
    reused: int
    agreement: JudgeAgreement


async def judge_run(
    run_dir: str | Path,
    model: Model,
    groups: Iterable[TaskGroup],
    *,
    limit: int | None = None,
    seed: int = 0,
    out: str | Path | None = None,
    concurrency: int = 4,
    judge_name: str | None = None,
) -> JudgeRun:
    """Ask ``model`` to judge the replies of a run (or a seeded sample of ``limit``).

    Lines already in the log (``out``, default ``<run_dir>/judge.jsonl``) are not redone; a
    log written by another judge model is refused. ``judge_name`` names the judge in the log
    (default: the model's name): the command passes the name with its generation settings,
    so a judge called with other settings is another judge, refused rather than mixed in. A
    model error stops the judging with the finished lines kept.
    """
    if limit is not None and limit < 1:
        raise ConfigError(f"--limit must be at least 1, not {limit}")
    if concurrency < 1:
        raise ConfigError(f"--concurrency must be at least 1, not {concurrency}")
    folder = Path(run_dir)
    samples, _ = read_log(folder / SAMPLES_FILE)
    if not samples:
        raise ConfigError(f"{folder} holds no samples ({SAMPLES_FILE}); run `uncobench eval`")
    target = Path(out) if out is not None else folder / JUDGE_FILE
    with lock_output(target.parent, "judge"):
        return await _judge(
            target, model, judge_name or model.name, samples, groups, limit, seed, concurrency
        )


async def _judge(
    target: Path,
    model: Model,
    judge_name: str,
    samples: list[SampleRecord],
    groups: Iterable[TaskGroup],
    limit: int | None,
    seed: int,
    concurrency: int,
) -> JudgeRun:
    """The judging itself, inside the log folder's lock."""
    done = {line.key: line for line in read_judgements(target)}
    others = sorted({line.judge_model for line in done.values()} - {judge_name})
    if others:
        raise ResumeError(
            f"{target} holds judgements by {', '.join(others)}; choose another --out for "
            f"{judge_name}"
        )
    judges = GroupJudges(groups)
    queue = deque(
        ref for ref in select_replies(samples, judges, limit, seed) if ref.key not in done
    )
    reused = len(done)
    failures: list[BaseException] = []

    async def worker() -> None:
        while queue and not failures:
            ref = queue.popleft()
            judge = judges.get(ref.sample.group_hash)
            assert judge is not None  # select_replies keeps known groups only
            try:
                output = await model.generate(
                    judge_messages(judge, ref.reply),
                    tools=[JUDGE_TOOL],
                    tool_choice=ToolFunction(name=JUDGE_TOOL.name),
                )
            except Exception as exc:  # the judging stops; finished lines are kept
                failures.append(exc)
                return
            verdict, error = parse_verdict(output)
            line = JudgeLine(
                key=ref.key, sample_key=ref.sample.key, group_id=ref.sample.group_id,
                setting=ref.sample.setting, agent=ref.sample.agent,
                colleague=colleague_of(ref.sample),
                colleague_mode=colleague_mode_of(ref.sample), round=ref.round, index=ref.index,
                role=ref.reply.role, judge_model=judge_name,
                programmatic=judge.judge(ref.reply), llm=verdict, error=error,
            )  # fmt: skip
            if any(isinstance(failure, LogNotWritten) for failure in failures):
                return  # (after a failed write, a line could follow a cut one)
            try:
                _append(target, line)
            except LogNotWritten as exc:  # the judging stops, as on a model error
                failures.append(exc)
                return
            done[line.key] = line

    await asyncio.gather(*(worker() for _ in range(min(concurrency, len(queue)) or 1)))
    if failures:
        raise failures[0]
    lines = sorted(done.values(), key=lambda line: line.key)
    return JudgeRun(target, lines, len(done) - reused, reused, judge_agreement(lines))
