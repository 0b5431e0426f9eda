"""Record lines written by the short paths the colleagues take are the general path's text:
numbers, a step's decimals, record frames, faithful lines, and the replies' making."""

from __future__ import annotations

import dataclasses
import inspect
import random
import re
from fractions import Fraction

import pytest

from uncobench_z3.construct import rendered_of, statement_text
from uncobench_z3.construct._render import ExactLines
from uncobench_z3.construct._text import (
    _SINGULAR_IN_S,
    DATE_STYLES,
    RECORD_FRAMES,
    Style,
    _line_writer,
    _plural_word,
    candidate_writers,
    format_number,
    format_typed,
    label_head,
    label_is_plural,
    possessive,
    record_line,
    singular_unit,
    step_decimals,
    value_writer,
)
from uncobench_z3.evaluation import RecordBook, example_groups, typed_task
from uncobench_z3.evaluation._colleagues import ColleagueReply, _made_reply
from uncobench_z3.settings import StatedValue
from uncobench_z3.spec import Slot, TypedTask, Value, format_fraction


def general_number(value: Fraction | int, decimals: int) -> str:
    """A number as the general path writes it: exact decimals, then thousands separated."""
    text = format_fraction(Fraction(value), decimals)
    sign = "-" if text.startswith("-") else ""
    whole, _, frac = text.lstrip("-").partition(".")
    return f"{sign}{int(whole):,}" + (f".{frac}" if frac else "")


def test_numbers_are_written_as_the_general_path_writes_them() -> None:
    rng = random.Random(13)
    values: list[Fraction | int] = [0, 1, -1, 999, 1000, -1000, 1234567, Fraction(-1, 2)]
    for _ in range(3000):
        numerator = rng.randint(-(10 ** rng.randint(0, 9)), 10 ** rng.randint(0, 9))
        denominator = rng.choice([1, 2, 3, 4, 5, 8, 10, 100, 1000, 7])
        values.append(numerator if denominator == 1 else Fraction(numerator, denominator))
    for value in values:
        for decimals in (0, 1, 2, 3):
            try:
                expected = general_number(value, decimals)
            except ValueError:  # not a finite decimal ("1/3"): no number to write either way
                with pytest.raises(ValueError):
                    format_number(value, decimals)
                continue
            assert format_number(value, decimals) == expected, value


def test_a_steps_decimals_are_the_fewest_that_write_its_multiples() -> None:
    def defined(step: Fraction) -> int:
        decimals = 0
        while (step * 10**decimals).denominator != 1:
            decimals += 1
            if decimals > 12:
                break
        return decimals

    steps = [Fraction(n, d) for n in (1, 3, 7, 25) for d in range(1, 130)]
    steps += [Fraction(1, 10**12), Fraction(1, 10**13), Fraction(1, 2**13)]
    for step in steps:
        assert step_decimals(step) == defined(step), step


def test_the_record_frames_are_the_books_wording() -> None:
    """The frames are what the writers write of the fields' names (``_text`` writes each
    phrase once, in its writers): built benchmarks store lines in these words, and the
    reader parses them."""
    assert RECORD_FRAMES == (
        "{candidate} — {label} ({context}): {value}",
        "{label} for {candidate} ({context}): {value}",
        "({context}) {candidate}, {label}: {value}",
        "{candidate}'s {label} ({context}) is {value}.",
    )


@pytest.mark.parametrize("frame", range(len(RECORD_FRAMES)))
def test_record_lines_put_the_possessive_and_the_copula_in_the_frame(frame: int) -> None:
    style = Style(frame=frame)
    for candidate in ("Marcus Vance", "Steelspan Structures"):
        for label in ("field allowance", "dialysis patients in the catchment"):
            expected = style.record_frame.replace("{candidate}'s", possessive(candidate))
            if label_is_plural(label):
                expected = expected.replace(") is {value}", ") are {value}")
            expected = expected.format(candidate=candidate, label=label, context="c", value="7")
            assert record_line(candidate, label, "c", "7", style) == expected


def test_faithful_lines_are_the_faithful_statements_lines() -> None:
    for group in example_groups():
        task = typed_task(group)
        style = rendered_of(group, task).style
        book = RecordBook(task, style)
        assert book.faithful
        for slot, stated in book.faithful.items():
            assert book.faithful_line(slot) == statement_text(task, stated, style)
            assert book.line(stated) == book.faithful_line(slot)


def _examples_with_other_values() -> list[tuple[object, Style]]:
    """Every example task with a style of each frame and date style, and its values and
    alternatives; plus each fact with values around its edges (1, 0, negatives, thousands)."""
    return [
        (typed_task(group), Style(frame=frame, verb=0, dates=dates))
        for group in example_groups()
        for frame in range(len(RECORD_FRAMES))
        for dates in DATE_STYLES
    ]


def exact_line(task: TypedTask, slot: Slot, context: str, value: Value, style: Style) -> str:
    """A record's exact line, the plain definition :class:`ExactLines` writes faster."""
    fact = task.facts[slot[1]]
    return record_line(
        task.candidate_name(slot[0]), fact.label, context, format_typed(fact, value, style), style
    )


def test_exact_lines_are_exact_line_s_lines() -> None:
    """``ExactLines`` (a fact's and a candidate's parts worked out once) writes what
    ``exact_line`` writes, for every record and alternative of the examples in every frame and
    date style, and for edge values of every fact (the singular unit after 1, thousands,
    negatives, both possessives)."""
    written, endings = 0, set()
    for task, style in _examples_with_other_values():
        endings |= {c.name.endswith("s") for c in task.spec.candidates}  # type: ignore[attr-defined]
        lines = ExactLines(task, style)  # type: ignore[arg-type]
        for (candidate, key), value in task.values.items():  # type: ignore[attr-defined]
            fact = task.facts[key]  # type: ignore[attr-defined]
            slot = (candidate, key)
            values = [value, *task.alternatives.get(slot, {}).values()]  # type: ignore[attr-defined]
            if fact.type == "int":
                values += [0, 1, -1, 999, 1000, -12345, 10**7]
            elif fact.type == "decimal":
                values += [0, 1, Fraction(-1), fact.step, -fact.step, 1000 + fact.step, 10**6]
            elif fact.type == "bool":
                values += [True, False]
            for context in (fact.context, "another context"):
                for each in values:
                    expected = exact_line(task, slot, context, each, style)  # type: ignore[arg-type]
                    assert lines(slot, context, each) == expected, (slot, each, style)
                    assert value_writer(fact, style)(each) == format_typed(fact, each, style)
                    written += 1
    assert written > 1000 and endings == {True, False}  # (both possessives written)


def test_a_facts_writers_are_the_line_writers_of_its_frame_and_number() -> None:
    """``candidate_writers`` (one shared mapping per frame and label number, made once) is
    the plain mapping of each possessive ending to its line writer, and writes the line
    ``record_line`` writes, for every frame, a singular and a plural label, both endings."""
    labels = ("building permit status", "dialysis patients in the catchment")
    assert [label_is_plural(label) for label in labels] == [False, True]
    for frame in range(len(RECORD_FRAMES)):
        style = Style(frame=frame, verb=0, dates=DATE_STYLES[0])
        for label in labels:
            plain = {
                ending: _line_writer(style.record_frame, ending, label_is_plural(label))
                for ending in ("'", "'s")
            }
            writers = candidate_writers(label, style)
            assert writers == plain
            for name, ending in (("Ada Moss", "'"), ("Ada Stone", "'s")):
                line = writers[ending](name, label, "the 2024 census", "12")
                assert line == record_line(name, label, "the 2024 census", "12", style)


def test_a_reply_made_directly_equals_the_class_made_one() -> None:
    names = [f.name for f in dataclasses.fields(ColleagueReply)]
    assert list(inspect.signature(_made_reply).parameters) == names
    stated = (StatedValue(candidate="c", fact="f", context="x", value=1),)
    fields = dict(
        role="r",
        text="t",
        stated=stated,
        concerned=(("c", "f"),),
        defects=("misaligned",),
        resolved=("missed",),
        follow_up="generic",
        pending=False,
        answers_pending=True,
        readings=(),
    )
    made, expected = _made_reply(**fields), ColleagueReply(**fields)  # type: ignore[arg-type]
    assert made == expected and hash(made) == hash(expected) and vars(made) == vars(expected)
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.text = "other"  # type: ignore[misc]


@pytest.mark.parametrize(
    ("label", "head"),
    [
        ("years of experience", "years"),
        ("groundworks and hardstanding cost", "cost"),
        ("cost (excluding VAT) of works", "cost"),
        ("(net) incidents recorded", "incidents"),
        ("patients (adults)", "patients"),
        ("(all)", "(all)"),
        ("rate (per 1,000) in the area", "rate"),
        ("open ( bracket only", "only"),
        ("close ) bracket only", "only"),
        ("owner's (stated) homes passed", "homes"),
        ("a (b (c) d) e", "e"),
        ("", ""),
    ],
)
def test_a_labels_head_leaves_out_what_is_in_brackets(label: str, head: str) -> None:
    """``label_head`` takes the brackets' pattern only to a label with a parenthesis (most
    have none): the heads the pattern taken to every label gave (before, inside or after
    brackets, unbalanced ones too)."""
    assert label_head(label) == head


def test_every_example_labels_head_is_its_head_without_brackets() -> None:
    tasks = [typed_task(group) for group in example_groups()]
    labels = {fact.label for task in tasks for fact in task.facts.values()}
    labels |= {task.rule.label for task in tasks}
    assert len(labels) > 20
    for label in labels:
        assert label_head(label) == label_head(re.sub(r"\([^)]*\)", " ", label)), label


def plain_plural_word(word: str) -> bool:
    lowered = word.lower()
    if lowered in _SINGULAR_IN_S or not re.fullmatch(r"[a-z-]+s", lowered):
        return False
    return not lowered.endswith(("ss", "us", "is"))


def plain_singular_unit(unit: str) -> str:
    if re.fullmatch(r"[a-z]+s", unit) and not unit.endswith("ss"):
        return unit[:-1]
    return unit


@pytest.mark.parametrize(
    "word",
    ["follow-ups", "x-rays", "man-hours", "patients", "Units", "hours", "status", "glass",
     "ppm", "AUD/day", "per 100000 hours", "km2s", "s", "-s", ""],
)  # fmt: skip
def test_the_plural_patterns_are_the_plain_definitions(word: str) -> None:
    """The patterns compiled once read a word's number and a unit's singular as
    ``re.fullmatch`` with the pattern written out did (hyphens: in a label's head, not in a
    unit)."""
    assert _plural_word(word) == plain_plural_word(word)
    assert singular_unit(word) == plain_singular_unit(word)
