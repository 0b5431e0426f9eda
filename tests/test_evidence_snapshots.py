"""The evidence reader's snapshots, made from what the previous one kept (round 43).

:meth:`uncobench_z3.evaluation._evidence.EvidenceReader.evidence` makes a snapshot's set of
exact pairs from the previous snapshot's and the pairs added since, and makes it again from
all of them when a record left the exact ones (stated at a second value). Here every
snapshot's signature, read round by round and all at once, is compared with the pairs and
statement keys of its exact and imprecise evidence made from scratch; and a gold number read
from its digits with :class:`fractions.Fraction`'s own reading of the text.
"""

from __future__ import annotations

from fractions import Fraction

from hypothesis import given
from hypothesis import strategies as st

from tests.test_eval_evidence import TASKS, _is_true, _round, _statements
from uncobench_z3.evaluation import RoundRecord
from uncobench_z3.evaluation._evidence import (
    EvidenceReader,
    FaceValueEvidence,
    ReadingTable,
    evidence_by_round,
    statement_key,
)
from uncobench_z3.settings import StatedValue
from uncobench_z3.spec import Answer, TypedTask


def _made_at_once(evidence: FaceValueEvidence) -> tuple[object, ...]:
    """The signature of ``evidence``, made from its exact values and imprecise statements."""
    pairs = frozenset((slot, repr(value)) for slot, value in evidence.exact.items())
    keys = frozenset((slot, statement_key(stated)) for slot, stated in evidence.imprecise)
    return pairs, keys


def _conflicting_rounds(index: int) -> list[tuple[StatedValue, ...]]:
    """Rounds that state new records, then a record already in a snapshot at a second value
    (it leaves the exact ones), then new records again, an imprecise statement among them."""
    task = TASKS[index]
    pool = _statements(index)
    exact = [s for s in pool if s.is_exact]
    true = [s for s in exact if _is_true(index, s)]
    other = [s for s in pool if not s.is_exact]
    rounds: list[tuple[StatedValue, ...]] = [tuple(true[:3]), tuple(true[3:5])]
    for stated in exact:
        slot = (stated.candidate, stated.fact)
        if not _is_true(index, stated) and slot == (true[0].candidate, true[0].fact):
            rounds.append((stated, *true[5:7]))  # (the first record, signed, leaves)
            break
    rounds += [tuple(true[7:9]), tuple(other[:1]), tuple(true[9:11]), (true[0],)]
    assert len(rounds) == 7 and task.values
    return rounds


def _check(task: TypedTask, trace: list[RoundRecord], table: ReadingTable | None) -> int:
    left = 0
    reader = EvidenceReader(task, table)
    before: FaceValueEvidence | None = None
    for number, snapshot in enumerate(evidence_by_round(task, trace, table), start=1):
        assert snapshot.signature == _made_at_once(snapshot)
        assert reader.read_up_to(trace[:number]) == snapshot  # (one reader, round by round)
        if before is not None and not before.exact.keys() <= snapshot.exact.keys():
            left += 1
        before = snapshot
    whole = EvidenceReader(task, table).read_up_to(trace)
    assert whole.signature == _made_at_once(whole)
    assert before is None or whole == before
    return left


def test_each_snapshots_pairs_are_its_exact_values_when_a_record_leaves() -> None:
    """A record in one snapshot, stated at a second value in a later round: the later
    snapshots' signatures lose its pair (the set is made again), and keep the others'."""
    left = 0
    for index, task in enumerate(TASKS):
        trace = [_round(n, s) for n, s in enumerate(_conflicting_rounds(index), start=1)]
        for table in (None, ReadingTable()):
            left += _check(task, trace, table)
    assert left >= len(TASKS)  # (each group's trace has a record leave)


@given(
    st.integers(0, len(TASKS) - 1), st.lists(st.lists(st.integers(0, 400), max_size=4), min_size=1)
)
def test_each_snapshots_signature_is_made_at_once(index: int, rounds: list[list[int]]) -> None:
    task, pool = TASKS[index], _statements(index)
    stated = [tuple(pool[i % len(pool)] for i in chosen) for chosen in rounds]
    trace = [_round(number, s) for number, s in enumerate(stated, start=1)]
    _check(task, trace, ReadingTable())


def test_a_plain_decimal_number_reads_as_fraction_reads_its_text() -> None:
    texts = ["1234.56", "-0.5", "0", "-12", "12.", "007.10", "-0.000", "1" * 40 + ".25"]
    others = ["+1.5", "1e3", "1_0.5", " 1.5", "\u0663.5", ".5", "-.5", "1/2", "1.2.3", "-"]
    for text in texts + others + ["\u00b2", "--1", "1.-5", "1. 5"]:
        answer = Answer(decision="d", eligible=True, candidate="c", number=text)
        try:
            expected: object = Fraction(text)
        except ValueError:
            expected = ValueError
        try:
            found: object = answer.number_value()
        except ValueError:
            found = ValueError
        assert found == expected and type(found) is type(expected), text
    assert Answer(decision="d", eligible=False).number_value() is None


@given(st.decimals(allow_nan=False, allow_infinity=False, places=4))
def test_any_decimal_number_reads_as_fraction_reads_it(value: object) -> None:
    text = str(value)
    answer = Answer(decision="d", eligible=True, candidate="c", number=text)
    assert answer.number_value() == Fraction(text)
