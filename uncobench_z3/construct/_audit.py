"""Human audit of the construction stages: sample candidates per stage, record verdicts,
report agreement with the automated decisions.

The build writes ``rejected.jsonl`` beside ``groups.jsonl``: one line per rejected candidate
among those it considered (index, domain, operation, scenario, stage, reason), in index order.

**Sampling** (:func:`sample_audit`). For each stage (spec validation, logical verification,
rendering / full-information validation) the population is the retained groups (accepted by
every stage) and the candidates rejected at that stage. Up to ``per_stage`` items are drawn
with a seeded generator, half rejected and half accepted when both suffice (a short side
leaves its share to the other), and listed in index order. Accepted items carry the material
a human judges them by (the rendered task text, the role records and the gold answer; the
structured spec for spec validation; the proof verdicts for logical verification); rejected
items carry the automated reason.

**The audit file** is JSON Lines, one item a line:
``{"item", "stage", "automated", "reason", "material", "human", "note"}``, ``human`` being
``null`` until :func:`record_verdict` sets ``"accepted"`` or ``"rejected"`` (the file is
rewritten atomically). :func:`audit_agreement` gives, per stage and overall, the share of
judged items where the human agrees with the automated decision, a 95% Wilson interval and
the disagreements in both directions.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any, Literal, get_args

from filelock import FileLock, Timeout
from pydantic import BaseModel, ConfigDict, Field

from ..errors import ConfigError, InputError, SpecReadError
from ..settings import TaskGroup
from ..spec import parse_json_text, read_utf8, validate_document, write_text_atomic
from ..stats import wilson_interval
from ._benchfile import GROUPS_FILE, load_groups
from ._candidate import CandidateOutcome, Stage

REJECTED_FILE = "rejected.jsonl"
AUDIT_STAGES: tuple[Stage, ...] = get_args(Stage)  # pipeline order, as in the statistics
ALL_STAGES = "all"
AuditDecision = Literal["accepted", "rejected"]
ACCEPTED_REASON = "retained: passed every stage"


class RejectedCandidate(BaseModel):
    """One line of ``rejected.jsonl``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    index: int
    domain: str
    operation: str
    scenario: str
    stage: Stage
    reason: str


def rejected_text(considered: Sequence[CandidateOutcome]) -> str:
    """``rejected.jsonl``: the rejected candidates among ``considered``, in index order."""
    lines = []
    for outcome in sorted(considered, key=lambda o: o.index):
        if outcome.retained or outcome.stage is None:
            continue
        rejected = RejectedCandidate(
            index=outcome.index,
            domain=outcome.domain,
            operation=outcome.operation,
            scenario=outcome.scenario,
            stage=outcome.stage,
            reason=outcome.reason or "",
        )
        lines.append(rejected.model_dump_json() + "\n")
    return "".join(lines)


def read_rejected(bench: str | Path) -> list[RejectedCandidate] | None:
    """The rejected candidates of a built benchmark; None when it has no ``rejected.jsonl``
    (built before rejections were recorded)."""
    path = Path(bench) / REJECTED_FILE
    if not path.exists():
        return None
    out = []
    for number, line in enumerate(read_utf8(path).splitlines(), start=1):
        if line.strip():
            source = f"{path}:{number}"
            out.append(validate_document(parse_json_text(line, source), RejectedCandidate, source))
    return out


class AuditItem(BaseModel):
    """One candidate to audit at one stage."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    item: str = Field(min_length=1)
    stage: Stage
    automated: AuditDecision
    reason: str
    material: dict[str, Any] = Field(default_factory=dict)
    human: AuditDecision | None = None
    note: str = ""


def audit_item_id(stage: Stage, index: int) -> str:
    return f"{stage}:{index:05d}"


def _accepted_item(group: TaskGroup, position: int, stage: Stage) -> AuditItem:
    provenance = group.provenance
    index = provenance.get("index", position)
    index = index if isinstance(index, int) else position
    rendered = group.rendered or {}
    material: dict[str, Any] = {
        "group_id": group.id,
        "index": index,
        "domain": group.spec.domain,
        "operation": group.spec.rule.operation,
        "scenario": provenance.get("scenario", ""),
        "task_text": rendered.get("task_text", ""),
        "records": rendered.get("records", {}),
        "gold": group.gold.model_dump(mode="json"),
    }
    if stage == "spec_validation":
        material["spec"] = group.spec.model_dump(
            mode="json", exclude={"records"}, exclude_none=True
        )
    if stage == "logical_verification" and group.proofs is not None:
        material["proofs"] = group.proofs.model_dump(mode="json")
    return AuditItem(
        item=audit_item_id(stage, index),
        stage=stage,
        automated="accepted",
        reason=ACCEPTED_REASON,
        material=material,
    )


def _rejected_item(candidate: RejectedCandidate) -> AuditItem:
    return AuditItem(
        item=audit_item_id(candidate.stage, candidate.index),
        stage=candidate.stage,
        automated="rejected",
        reason=candidate.reason,
        material=candidate.model_dump(mode="json", exclude={"stage", "reason"}),
    )


def _shares(per_stage: int, accepted: int, rejected: int) -> tuple[int, int]:
    """How many accepted and rejected items to draw: half each when both suffice."""
    take_rejected = min(rejected, max(per_stage // 2, per_stage - accepted))
    return min(accepted, per_stage - take_rejected), take_rejected


def sample_audit(
    bench: str | Path, per_stage: int = 100, seed: int = 0
) -> tuple[list[AuditItem], bool]:
    """Audit items for every stage of a built benchmark, and whether it recorded its
    rejections (without ``rejected.jsonl`` only accepted candidates can be drawn)."""
    if per_stage < 1:
        raise ConfigError(f"--per-stage must be at least 1, not {per_stage}")
    folder = Path(bench)
    if not (folder / GROUPS_FILE).is_file():
        raise SpecReadError(str(folder), f"is not a built benchmark folder (no {GROUPS_FILE})")
    groups = load_groups(folder)
    rejected = read_rejected(folder)
    items: list[AuditItem] = []
    for stage in AUDIT_STAGES:
        accepted_pool = [_accepted_item(g, i, stage) for i, g in enumerate(groups)]
        rejected_pool = [_rejected_item(r) for r in rejected or [] if r.stage == stage]
        n_accepted, n_rejected = _shares(per_stage, len(accepted_pool), len(rejected_pool))
        rng = random.Random(f"audit:{seed}:{stage}")
        chosen = rng.sample(rejected_pool, n_rejected) + rng.sample(accepted_pool, n_accepted)
        # in index order: by the index itself, since item ids sort as text past 99,999
        # ("...:100000" before "...:99999")
        items += sorted(chosen, key=lambda item: item.material["index"])
    return items, rejected is not None


def audit_text(items: Sequence[AuditItem]) -> str:
    return "".join(_line(item.model_dump(mode="json")) for item in items)


def _line(data: dict[str, Any]) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n"


def write_audit(path: str | Path, items: Sequence[AuditItem], force: bool = False) -> None:
    """Write a new audit file; one holding human verdicts is kept unless ``force``."""
    target = Path(path)
    # (an empty file, made by ``touch`` or ``mktemp``, holds nothing to keep)
    if target.exists() and not force and read_utf8(target).strip():
        judged = [item.item for item in read_audit(target) if item.human is not None]
        if judged:
            raise ConfigError(
                f"{target} already holds {len(judged)} human verdict(s); choose another --out "
                "or pass --force to replace it"
            )
    write_text_atomic(target, audit_text(items))


def _read_lines(path: Path) -> list[tuple[dict[str, Any], AuditItem]]:
    text = read_utf8(path)
    rows: list[tuple[dict[str, Any], AuditItem]] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        source = f"{path}:{number}"
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise SpecReadError(source, f"not valid JSON: {exc.msg} (column {exc.colno})") from None
        except RecursionError:
            raise SpecReadError(source, "not valid JSON: nested too deeply") from None
        item = validate_document(data, AuditItem, source)
        if item.item in seen:
            raise SpecReadError(
                source, f"item {item.item!r} already appears on line {seen[item.item]}", "$.item"
            )
        seen[item.item] = number
        rows.append((data, item))
    if not rows:
        raise SpecReadError(
            str(path), "holds no audit items; make some with `uncobench audit sample`"
        )
    return rows


def read_audit(path: str | Path) -> list[AuditItem]:
    """The items of an audit file (errors name the file, the line and the JSON path)."""
    return [item for _, item in _read_lines(Path(path))]


RECORD_LOCK_WAIT = 60
"""seconds an ``audit record`` waits for another one on the same file"""


def record_verdict(
    path: str | Path, item: str, verdict: AuditDecision, note: str | None = None
) -> AuditItem:
    """Set the human verdict (and, if given, the note) of one item; rewrites the file.

    Read, change and rewrite happen under a lock on ``.<file>.lock`` beside the file, so
    verdicts recorded at the same time on other items are not lost (each waits its turn)."""
    target = Path(path)
    if not target.is_file():  # refused as reading it refuses it, with no lock file beside
        _read_lines(target)
    lock = FileLock(str(target.with_name(f".{target.name}.lock")), timeout=RECORD_LOCK_WAIT)
    try:
        with lock:
            return _record_locked(target, item, verdict, note)
    except Timeout:
        raise InputError(
            f"{target} stayed locked by another `audit record` for {RECORD_LOCK_WAIT} s"
        ) from None


def _record_locked(target: Path, item: str, verdict: AuditDecision, note: str | None) -> AuditItem:
    rows = _read_lines(target)
    for data, found in rows:
        if found.item == item:
            data["human"] = verdict
            if note is not None:
                data["note"] = note
            write_text_atomic(target, "".join(_line(d) for d, _ in rows))
            return AuditItem.model_validate(data)
    example = rows[0][1].item
    raise ConfigError(f"{target} has no item {item!r} (items look like {example!r})")


class StageAgreement(BaseModel):
    """Human and automated decisions at one stage (or over all stages)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    stage: str
    items: int
    judged: int
    agreed: int
    agreement: Fraction | None
    """exact, as every figure (JSON: ``"p/q"``); the interval is the Wilson score interval"""
    ci_low: Fraction | None
    ci_high: Fraction | None
    rejected_but_human_accepted: list[str] = Field(default_factory=list)
    accepted_but_human_rejected: list[str] = Field(default_factory=list)


def _agreement(stage: str, items: Sequence[AuditItem]) -> StageAgreement:
    judged = [item for item in items if item.human is not None]
    agreed = sum(item.human == item.automated for item in judged)
    low, high = wilson_interval(agreed, len(judged)) if judged else (None, None)
    return StageAgreement(
        stage=stage,
        items=len(items),
        judged=len(judged),
        agreed=agreed,
        agreement=Fraction(agreed, len(judged)) if judged else None,
        ci_low=low,
        ci_high=high,
        rejected_but_human_accepted=[
            i.item for i in judged if i.automated == "rejected" and i.human == "accepted"
        ],
        accepted_but_human_rejected=[
            i.item for i in judged if i.automated == "accepted" and i.human == "rejected"
        ],
    )


def audit_agreement(items: Sequence[AuditItem]) -> list[StageAgreement]:
    """Agreement per stage (every stage, in pipeline order), then over all stages."""
    rows = [_agreement(stage, [i for i in items if i.stage == stage]) for stage in AUDIT_STAGES]
    return [*rows, _agreement(ALL_STAGES, items)]
