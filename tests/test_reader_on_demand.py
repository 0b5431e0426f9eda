"""A reading's contexts, intents and evidence are made the first time one is read
(:func:`uncobench_z3.settings._request._rest_of_reading`). Before and after that, a reading
compares, prints, copies and pickles as the ``Request(...)`` of its fields does: the same
pickle bytes, the same fields in the same order once read, equal either way round.

The readings are of the follow-up corpus (``tests/data/followups``, whose recorded digests
check what each reading holds), to the message's role with the group's first candidate in
focus.
"""

from __future__ import annotations

import copy
import dataclasses
import dis
import pickle
import runpy
import sys
from functools import cache
from pathlib import Path

import pytest

from uncobench_z3.construct import load_groups
from uncobench_z3.evaluation import typed_task
from uncobench_z3.settings import Request, Vocabulary, read_request
from uncobench_z3.settings._vocabulary import _entry
from uncobench_z3.spec import TypedTask

ROOT = Path(__file__).resolve().parent.parent
RECORDER = runpy.run_path(str(ROOT / "tests/data/followups/record_readings.py"))
FIELDS = [f.name for f in dataclasses.fields(Request)]
MADE_ON_DEMAND = ("contexts", "intents", "evidence")


@cache
def _vocabularies() -> dict[str, Vocabulary]:
    groups = load_groups(ROOT / "tests/data/followups/groups.jsonl")
    return {group.id: Vocabulary.of(typed_task(group)) for group in groups}


@cache
def _messages() -> list[tuple[Vocabulary, str, str, str]]:
    """(vocabulary, message, role, focus) of every 7th message of the corpus, and of every one
    that names a context or rejects one (the readings' contexts are what is made on demand)."""
    out = []
    for index, (_, _, row) in enumerate(RECORDER["corpus"]()):
        vocabulary = _vocabularies()[str(row["group"])]
        case = (vocabulary, str(row["message"]), str(row["role"]), vocabulary.task.candidates[0])
        if index % 7 == 0 or _read(case).contexts:
            out.append(case)
    return out


def _read(case: tuple[Vocabulary, str, str, str]) -> Request:
    vocabulary, message, role, focus = case
    return read_request(vocabulary, message, role, focus)


def _made(reading: Request) -> Request:
    """The ``Request(...)`` of a reading's fields."""
    return Request(**{name: getattr(reading, name) for name in FIELDS})


def test_the_corpus_reads_contexts_intents_and_evidence() -> None:
    cases = _messages()
    readings = [_read(case) for case in cases]
    assert len(cases) > 1000
    assert sum(bool(r.contexts) for r in readings) > 300
    assert sum(any(m.negated for m in r.contexts) for r in readings) > 30
    assert sum("mismatch" in r.intents for r in readings) > 30


def test_a_reading_is_the_request_of_its_fields_before_and_after_they_are_read() -> None:
    for case in _messages():
        made = _made(_read(case))
        assert _read(case) == made and made == _read(case)
        assert repr(_read(case)) == repr(made)
        assert dataclasses.asdict(_read(case)) == dataclasses.asdict(made)
        changed = dataclasses.replace(_read(case), role="other")
        assert changed == dataclasses.replace(made, role="other")
        with pytest.raises(TypeError, match="unhashable"):
            hash(_read(case))
        for first in MADE_ON_DEMAND:  # (reading any of them makes the three)
            reading = _read(case)
            getattr(reading, first)
            assert list(vars(reading).items()) == list(vars(made).items())
            assert list(vars(reading)) == FIELDS


def test_a_reading_pickles_and_copies_as_the_request_of_its_fields() -> None:
    for case in _messages()[::3]:
        made = _made(_read(case))
        for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
            assert pickle.dumps(_read(case), protocol) == pickle.dumps(made, protocol)
        loaded = pickle.loads(pickle.dumps(_read(case)))
        assert list(vars(loaded).items()) == list(vars(made).items())
        for copied in (copy.copy(_read(case)), copy.deepcopy(_read(case))):
            assert list(vars(copied).items()) == list(vars(made).items())


def test_a_reading_has_no_other_attribute() -> None:
    (case, *_) = _messages()
    reading = _read(case)
    for name in ("evidnce", "__setstate__", "__deepcopy__"):
        assert not hasattr(reading, name)
        with pytest.raises(AttributeError) as raised:
            getattr(reading, name)
        assert raised.value.name == name and raised.value.obj is reading
    assert list(vars(reading))[: FIELDS.index("contexts")] == FIELDS[: FIELDS.index("contexts")]
    assert reading.evidence and list(vars(reading)) == FIELDS  # (what it was made from: gone)
    made = _made(_read(case))  # one made with every field makes none on demand
    assert not hasattr(made, "_rest") and vars(made) == vars(_made(made))


def test_a_weak_word_is_read_for_the_fact_of_the_context_not_rejected() -> None:
    """The reading decides its facts without making its contexts: a weak word two facts of
    the role have names the one whose context the message names without rejecting it, the
    rejected context's fact otherwise (read first, by its words)."""
    task = next(t for t in _tasks() if any(len(t.facts_of(r)) > 1 for r in t.roles))
    role = next(r for r in task.roles if len(task.facts_of(r)) > 1)
    first, second = list(task.facts_of(role))[:2]
    vocabulary = Vocabulary(task)
    vocabulary._add_all(
        [
            _entry("fact", (first,), ("zorblax",), 1, weak=True),
            _entry("fact", (second,), ("zorblax",), 1, weak=True),
            _entry("context", (first, "Plumbus"), ("plumbus",), 6),
            _entry("context", (second, "Grumbo"), ("grumbo",), 6),
        ]
    )
    text = "Not the grumbo one. The zorblax for plumbus."
    reading = read_request(vocabulary, text, role)
    assert reading.facts == (first,)
    assert [(m.fact, m.negated) for m in reading.contexts] == [(second, True), (first, False)]
    assert reading.evidence[f"fact:{first}"] == ("zorblax",)
    assert read_request(vocabulary, "Not the grumbo one. The zorblax.", role).facts == (second,)


@cache
def _tasks() -> list[TypedTask]:
    return [
        typed_task(group)
        for path in sorted((ROOT / "examples/groups").glob("*.group.json"))
        for group in load_groups(path)
    ]


def test_a_reading_made_without_its_rest_has_none_of_the_fields() -> None:
    """A field made on demand read of a reading that holds neither it nor what it is made
    from, or of the class, fails as a missing attribute does."""
    empty = object.__new__(Request)
    for name in MADE_ON_DEMAND:
        with pytest.raises(AttributeError, match=f"'Request' object has no attribute '{name}'"):
            getattr(empty, name)
        assert not hasattr(empty, name)
        with pytest.raises(
            AttributeError, match=f"type object 'Request' has no attribute '{name}'"
        ):
            getattr(Request, name)
        assert not hasattr(Request, name)
    assert vars(empty) == {}


@pytest.mark.skipif(
    sys.implementation.name != "cpython" or sys.version_info[:2] != (3, 11),
    reason="the specialised reads of CPython 3.11",
)
def test_a_readings_fields_are_read_as_plain_attributes() -> None:
    """The fields made on demand are descriptors of the class, not a ``__getattr__`` hook:
    with one, 3.11 specialises no read of a reading's attributes (9,065 in the first pass over
    80 built groups)."""
    assert "__getattr__" not in vars(Request) and "__getattribute__" not in vars(Request)
    readings = [_read(case) for case in _messages()[:40]]
    namespace: dict[str, object] = {}
    exec("def read(r):\n    return r.text, r.facts", namespace)  # (a new code object)
    read = namespace["read"]
    for _ in range(50):
        for reading in readings:
            read(reading)  # type: ignore[operator]
    loads = [i.opname for i in dis.get_instructions(read, adaptive=True) if "ATTR" in i.opname]
    assert loads == ["LOAD_ATTR_WITH_HINT", "LOAD_ATTR_WITH_HINT"]
