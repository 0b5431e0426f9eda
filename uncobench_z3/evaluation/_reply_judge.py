"""The programmatic judge of one colleague reply: fidelity to the records and the policy, and
coverage of what the policy required.

The *reference* is what the scripted colleague states for the same request in the same state
(:class:`~._colleagues.ScriptedColleagues`): its items (``required``), whether it stays
silent (``silence_required``, a Missed colleague's first request), and the *withheld*
records - the designated records of the role's defects that are not resolved yet, each with
the one statement the policy allows about it until a targeted follow-up (the defect's first
reply; a reply that states a defect's statement withholds that record too).

* **Silence.** When the policy prescribes silence, the silence is the one required item: a
  silent reply (no text, or :data:`~._policy.SILENCE`) conveys it and is faithful; anything
  else breaks the policy (fidelity fails, coverage 0). A silent reply where the policy
  requires a reply fails fidelity and conveys nothing.
* **Instructions repeated, nothing checkable.** A reply that repeats the prose of a colleague
  prompt (:func:`~._policy.repeats_instructions`) or from which no statement can be read
  fails fidelity and gets coverage 0, whatever records it contains.
* **Fidelity**: no statement contradicts the records (:func:`~._reply_reading.read_reply`:
  the value of the context it names; a range or options contain it; only the role's records)
  and none breaks the policy: a statement about a withheld record must be the allowed
  statement (same context, same exact value, range bounds or options), so leaking the true
  value, or another range, is a breach even though it agrees with the records.
* **Coverage**: the share of the required items that some statement conveys (same candidate,
  fact and context, the same exact value, range bounds or options), an exact
  :class:`~fractions.Fraction`.

Lines that cannot be read are *unverifiable*: listed, not counted against fidelity, as long
as some statement was read.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

from pydantic import BaseModel, ConfigDict

from ..construct import Catalog, Style, statement_text
from ..settings import StatedValue, stated_value
from ..spec import Slot, TypedTask
from ._policy import SILENCE, is_silence, repeats_instructions
from ._reply_reading import conveys, read_reply

SILENCE_ITEM = "no reply (the policy prescribes silence)"


class ReplyJudgement(BaseModel):
    """The programmatic judge's verdict on one reply."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    role: str
    fidelity: bool
    coverage: Fraction
    required: int
    """items the policy required (a prescribed silence is one item)"""
    conveyed: int
    statements: int
    """statements read from the text"""
    contradictions: tuple[str, ...] = ()
    """statements that disagree with the role's records"""
    breaches: tuple[str, ...] = ()
    """what the policy does not allow here: a withheld record stated otherwise, a silence
    broken or not kept, instructions repeated, nothing checkable"""
    missing: tuple[str, ...] = ()
    unverifiable: tuple[str, ...] = ()
    silent: bool = False
    """the colleague stayed silent"""
    silence_required: bool = False
    echo: bool = False
    """the reply repeats its instructions"""

    @property
    def kept(self) -> bool:
        """Faithful and complete: the reply did what the policy prescribed."""
        return self.fidelity and self.conveyed == self.required

    @property
    def problems(self) -> tuple[str, ...]:
        return (
            *(f"breaks the policy: {b}" for b in self.breaches),
            *(f"contradicts the records: {c}" for c in self.contradictions),
            *(f"required but not conveyed: {m}" for m in self.missing),
            *(f"unverifiable: {u!r}" for u in self.unverifiable),
        )


def is_true_record(task: TypedTask, item: StatedValue) -> bool:
    """Whether a statement is the slot's record in the required context, exactly."""
    fact = task.facts[item.fact]
    return (
        item.context == fact.context
        and item.is_exact
        and stated_value(task, item) == task.values[(item.candidate, item.fact)]
    )


def allowed_statements(
    task: TypedTask, required: Sequence[StatedValue], withheld: Sequence[StatedValue]
) -> dict[Slot, StatedValue]:
    """Slot -> the one statement the policy allows about it here: the withheld records, and
    every required item that is not the true record (a defect's statement)."""
    allowed = {(item.candidate, item.fact): item for item in withheld}
    for item in required:
        if not is_true_record(task, item):
            allowed[(item.candidate, item.fact)] = item
    return allowed


def _line(task: TypedTask, item: StatedValue) -> str:
    return statement_text(task, item, Style())


def judge_text(
    task: TypedTask,
    catalog: Catalog,
    role: str,
    text: str | None,
    required: Sequence[StatedValue],
    *,
    silence_required: bool = False,
    withheld: Sequence[StatedValue] = (),
) -> ReplyJudgement:
    """Judge what a colleague wrote (``text``; None: it stayed silent) against the reference
    (module docstring). ``catalog``: :func:`~uncobench_z3.construct.parse_catalog` of the
    group's task text."""
    silent = is_silence(text)
    echo = text is not None and not silent and repeats_instructions(text)
    base = {"role": role, "silent": silent, "silence_required": silence_required, "echo": echo}
    if silence_required:
        reading = None if silent or text is None else read_reply(task, catalog, role, text)
        return ReplyJudgement(
            **base,
            fidelity=silent,
            coverage=Fraction(int(silent)),
            required=1,
            conveyed=int(silent),
            statements=0 if reading is None else reading.statements,
            contradictions=() if reading is None else tuple(reading.contradictions),
            breaches=() if silent else ("replies where the policy prescribes silence",),
            missing=() if silent else (SILENCE_ITEM,),
        )
    expected = [_line(task, item) for item in required]
    if silent or text is None:
        return ReplyJudgement(
            **base, fidelity=False, coverage=Fraction(0), required=len(required), conveyed=0,
            statements=0, breaches=(f"stays silent ({SILENCE}) where the policy requires a "
                                    "reply",), missing=tuple(expected),
        )  # fmt: skip
    reading = read_reply(task, catalog, role, text)
    void = echo or not reading.statements  # nothing the reply states counts
    breaches: list[str] = []
    if echo:
        breaches.append("repeats its instructions")
    if not reading.statements:
        breaches.append("states nothing checkable (no record line could be read)")
    allowed = allowed_statements(task, required, withheld)
    for read in reading.reads:
        item = allowed.get(read.slot)
        if item is not None and not conveys(task, read, item):
            breaches.append(f"{read.text!r}: the policy gives only {_line(task, item)!r} here")
    missing: list[str] = []
    for item, line in zip(required, expected, strict=True):
        if not void and any(conveys(task, read, item) for read in reading.reads):
            continue
        same = [r.text for r in reading.reads if r.slot == (item.candidate, item.fact)]
        missing.append(f"{line!r} ({f'the reply states {same[0]!r}' if same else 'not stated'})")
    conveyed = len(required) - len(missing)
    return ReplyJudgement(
        **base,
        fidelity=not breaches and not reading.contradictions,
        coverage=Fraction(conveyed, len(required)) if required else Fraction(1),
        required=len(required),
        conveyed=conveyed,
        statements=reading.statements,
        contradictions=tuple(reading.contradictions),
        breaches=tuple(breaches),
        missing=tuple(missing),
        unverifiable=tuple(reading.unverifiable),
    )
