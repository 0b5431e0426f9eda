"""The trace viewer's data: a compact index of every sample and its conversations in chunks,
each gzip-compressed and base64-encoded into the HTML page, decoded in the browser only
when a sample of that chunk is opened (``DecompressionStream('gzip')``).

The index is one row per sample (agent as the tables label it, setting, arm, outcome, label,
epoch, group, rounds), the categories as lists the rows point into. Samples are ordered by
group, setting, agent, arm and epoch: the attempts at one task sit together (to compare
them), and a chunk holds neighbours whose colleagues' texts repeat, which gzip folds (3.5
times smaller than ordering by agent on a real run). A sample's entry holds, per round: each
request and reply (with the defect it carried, the follow-up kind, whether it stayed pending
or arrived after a wait), the answer, errors, the intervention text, the solver's note
(determined yet, records still open), and any other field a newer trace carries (shown as
data). Every text is data: the page sets it with ``textContent``, never as markup.
"""

from __future__ import annotations

import base64
import gzip
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..evaluation import (
    INTERVENTION_ARMS,
    RoundNote,
    SampleRecord,
    configuration_of,
    is_error,
)
from ..settings import SETTING_NAMES
from ._load import BenchmarkGroups, ViewReply, ViewRound
from ._tables import answer_text, gold_text

CHUNK_SIZE = 200
"""samples per compressed chunk (one chunk is decoded to show one sample)"""
OPEN_SHOWN = 12
"""open records listed per round (the rest are counted)"""
EXTRA_CHARACTERS = 4000
"""characters of an unknown trace field kept for the viewer"""
HIDDEN_REPLY_FIELDS = frozenset({"stated", "concerned"})
"""reply fields the viewer leaves out: the reply text says the same"""


def _extras(model: ViewReply | ViewRound, hidden: frozenset[str] = frozenset()) -> dict[str, str]:
    """The fields a trace carries beyond those the viewer lays out, as JSON text."""
    out = {}
    for name, value in (model.model_extra or {}).items():
        if name in hidden or value in (None, [], {}, "", False):
            continue
        text = value if isinstance(value, str) else json.dumps(value, indent=1, default=str)
        out[name] = text[:EXTRA_CHARACTERS] + ("…" if len(text) > EXTRA_CHARACTERS else "")
    return out


@dataclass
class _Entry:
    order: tuple[Any, ...]
    row: tuple[str, str, str, str, str, int, str, int, int]
    payload: bytes


@dataclass
class TraceViewer:
    """A trace visitor (:func:`._load.load_report_data`) collecting the viewer's data."""

    groups: BenchmarkGroups
    entries: list[_Entry] = field(default_factory=list)
    _labels: dict[tuple[str, str, str], str] = field(default_factory=dict)

    def _open_label(self, group_hash: str, candidate: str, fact: str) -> str:
        key = (group_hash, candidate, fact)
        if key not in self._labels:
            task = self.groups.task(group_hash)
            if task is None or fact not in task.facts:
                self._labels[key] = f"{candidate}: {fact}"
            else:
                name = task.candidate_name(candidate)
                info = task.facts[fact]
                self._labels[key] = f"{name}: {info.label} ({info.context})"
        return self._labels[key]

    def _role_name(self, group_hash: str, role: str) -> str:
        key = (group_hash, role, "")
        if key not in self._labels:
            task = self.groups.task(group_hash)
            try:
                self._labels[key] = role if task is None else task.role_name(role)
            except KeyError:
                self._labels[key] = role
        return self._labels[key]

    def _note(self, sample: SampleRecord, note: RoundNote) -> dict[str, Any]:
        shown = [self._open_label(sample.group_hash, c, f) for c, f in note.open[:OPEN_SHOWN]]
        return {"d": note.determined, "rc": note.received, "nd": note.needed, "o": shown,
                "more": max(0, len(note.open) - OPEN_SHOWN), "im": note.imprecise}  # fmt: skip

    def _reply(self, group_hash: str, reply: ViewReply) -> dict[str, Any]:
        return {
            "role": self._role_name(group_hash, reply.role), "rid": reply.role,
            "q": reply.question, "t": reply.text, "d": list(reply.defects),
            "f": reply.follow_up, "res": list(reply.resolved), "p": reply.pending,
            "dl": reply.delivered, "ar": reply.answers_round,
            "x": _extras(reply, HIDDEN_REPLY_FIELDS),
        }  # fmt: skip

    def __call__(self, sample: SampleRecord, trace: Sequence[ViewRound]) -> None:
        notes = {note.round: note for note in sample.notes}
        rounds = []
        for record in trace:
            answer = record.answer or {}
            note = notes.get(record.round)
            rounds.append({
                "n": record.round, "a": record.action,
                "q": [self._reply(sample.group_hash, r) for r in record.replies],
                "ans": " / ".join(str(answer[k]) for k in
                                  ("decision", "candidate", "number", "unit", "text")
                                  if answer.get(k)) or None,
                "err": record.error, "iv": record.intervention,
                "note": None if note is None else self._note(sample, note),
                "x": _extras(record),
            })  # fmt: skip
        score = sample.score
        detail = sample.attribution or sample.justification
        entry = {
            "k": sample.key, "gold": gold_text(sample), "ans": answer_text(sample),
            "ok": None if score is None else [score.decision_ok, score.candidate_ok,
                                              score.number_ok],
            "st": sample.status, "why": None if detail is None else detail.detail,
            "def": list(sample.defects), "min": sample.min_rounds,
            "col": sample.colleague, "seed": sample.seed, "notes": bool(sample.notes),
            "r": rounds,
        }  # fmt: skip
        label = "" if is_error(sample) else _label(sample)
        # the tables' row label: an agent run with another budget or colleagues is a row
        # of its own there, and a choice of its own in the viewer's filter
        agent = configuration_of(sample)
        settings = {name: i for i, name in enumerate(SETTING_NAMES)}
        arms = {name: i for i, name in enumerate(INTERVENTION_ARMS)}
        self.entries.append(
            _Entry(
                order=(
                    sample.group_id,
                    settings.get(sample.setting, 99),
                    sample.setting,
                    agent,
                    arms.get(sample.intervention, 99),
                    sample.intervention,
                    sample.epoch,
                    sample.seed,
                ),
                row=(
                    agent,
                    sample.setting,
                    sample.intervention,
                    str(sample.result),
                    label,
                    sample.epoch,
                    sample.group_id,
                    sample.rounds,
                    sample.seed,
                ),
                payload=json.dumps(entry, separators=(",", ":"), ensure_ascii=False).encode(),
            )
        )

    def payload(self) -> ViewerData:
        """The index and the compressed chunks, samples in viewer order."""
        self.entries.sort(key=lambda e: e.order)
        columns: list[dict[str, int]] = [{} for _ in range(5)]
        rows = []
        for entry in self.entries:
            coded = [columns[i].setdefault(v, len(columns[i])) for i, v in enumerate(entry.row[:5])]
            group = entry.row[6]
            rows.append([*coded, entry.row[5], group, entry.row[7], entry.row[8]])
        names = ["agents", "settings", "arms", "outcomes", "labels"]
        index: dict[str, object] = {n: list(v) for n, v in zip(names, columns, strict=True)}
        index |= {"rows": rows, "chunk": CHUNK_SIZE}
        chunks = [
            encode(b"[" + b",".join(e.payload for e in self.entries[at : at + CHUNK_SIZE]) + b"]")
            for at in range(0, len(self.entries), CHUNK_SIZE)
        ]
        return ViewerData(encode(json.dumps(index, separators=(",", ":")).encode()), chunks,
                          len(self.entries))  # fmt: skip


def _label(sample: SampleRecord) -> str:
    if sample.correct:
        label = "unknown" if sample.justification is None else sample.justification.label
        return "undecided" if label == "unknown" else label
    return "" if sample.attribution is None else sample.attribution.label


def encode(data: bytes) -> str:
    """gzip (no timestamp: the same data gives the same page) then base64."""
    return base64.b64encode(gzip.compress(data, compresslevel=6, mtime=0)).decode("ascii")


def decode(text: str) -> Any:
    """The inverse of :func:`encode`, parsed as JSON (for tests and tools)."""
    return json.loads(gzip.decompress(base64.b64decode(text)))


@dataclass(frozen=True)
class ViewerData:
    index: str
    chunks: list[str]
    samples: int
