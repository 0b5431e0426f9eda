"""A vocabulary merges the indexes of each fact's entries and of each fact's contexts, made
once and shared by the tasks that have the same fact (``_vocabulary._Chunk``), instead of
indexing every entry again for every task. Every vocabulary must equal the one the plain
path makes: each entry of the task, in order, added one by one (the definition below, the
building as it was before the merging), in every index and in every index's order."""

from __future__ import annotations

from pathlib import Path

import pytest

from uncobench_z3.construct import build_benchmark, load_groups
from uncobench_z3.settings._phrases import GENERIC_WORDS
from uncobench_z3.settings._vocabulary import (
    Entry,
    Vocabulary,
    _context_entries,
    _fact_shape,
    _fact_words,
    _single_entry,
)
from uncobench_z3.spec import TypedTask, check_structure

_ROOT = Path(__file__).resolve().parent.parent
_GROUPS = sorted((_ROOT / "examples" / "groups").glob("*.group.json"))
_BUILT_GROUPS = 60
"""groups built for the test below"""


def _task_entries(vocabulary: Vocabulary) -> list[Entry]:
    """The definition: every entry of the task, in the order the building adds them (its
    candidates', then each fact's label, synonyms, single words, unit and members, then each
    fact's contexts)."""
    task = vocabulary.task
    task_words: set[str] = set()
    for fact in task.facts.values():
        task_words |= _fact_words(fact.label, fact.synonyms, fact.context,
                                  fact.other_contexts, fact.members)  # fmt: skip
    candidates = Vocabulary(task)
    candidates._candidates(task_words)
    added = list(candidates.entries)
    shapes = {
        key: _fact_shape(key, fact.label, tuple(fact.synonyms), fact.unit, tuple(fact.members))
        for key, fact in task.facts.items()
    }
    users: dict[str, set[str]] = {}
    for key, shape in shapes.items():
        for word in shape.alone:
            users.setdefault(word, set()).add(key)
    for key, shape in shapes.items():
        added += shape.phrases
        for word in shape.singles:
            distinctive = users[word] == {key} and word not in GENERIC_WORDS
            if not distinctive and (len(word) < 3 and not word.isdigit()):
                continue
            added.append(_single_entry(key, word, distinctive))
        added += shape.rest
    for key, fact in task.facts.items():
        added += _context_entries(key, (fact.context, *fact.other_contexts))[0]
    return added


def _plain(task: TypedTask) -> Vocabulary:
    """The vocabulary of ``task`` made the plain way: every entry added on its own."""
    plain = Vocabulary(task)
    for entry in _task_entries(plain):
        plain._add(entry)
    for key, fact in task.facts.items():
        _, context_words, order = _context_entries(key, (fact.context, *fact.other_contexts))
        plain.context_words[key] = context_words
        if order is not None:
            plain.order[key] = list(order)
    return plain


_INDEXES = (
    "by_stem", "starting", "starting_words", "starting_word", "unordered_by_first", "starting_rows",
    "long_words", "context_words", "order",
)  # fmt: skip


def _assert_as_plain(task: TypedTask) -> None:
    built = Vocabulary(task)
    built._build()
    plain = _plain(task)
    assert built.entries == plain.entries
    assert built.unordered_entries == plain.unordered_entries
    assert built.unordered_rows == plain.unordered_rows
    assert built._known == plain._known
    for name in _INDEXES:  # in order
        assert list(getattr(built, name).items()) == list(getattr(plain, name).items()), name
    # the words a typo is read as, and what is read for a typo of one
    for word in built.long_words:
        typo = word[:-2] + word[-1] + word[-2]
        assert built.corrected(typo, typo) == plain.corrected(typo, typo)


def _typed(group_tasks: list[TypedTask | None]) -> list[TypedTask]:
    return [task for task in group_tasks if task is not None]


def test_example_groups_vocabularies_equal_the_plain_path() -> None:
    assert _GROUPS
    tasks = _typed([check_structure(group.spec).task for p in _GROUPS for group in load_groups(p)])
    assert tasks
    for task in tasks:
        _assert_as_plain(task)
        _assert_as_plain(task)  # the second time from the shared parts


def test_built_groups_vocabularies_equal_the_plain_path(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """Groups as ``uncobench build`` makes them, built here (a scratch benchmark on one machine,
    before: the test was skipped everywhere else)."""
    out = tmp_path_factory.mktemp("vocabularies") / "bench"
    build_benchmark(out, groups=_BUILT_GROUPS, seed=19, workers=1)
    tasks = _typed([check_structure(group.spec).task for group in load_groups(out)])
    assert len(tasks) == _BUILT_GROUPS
    for task in tasks:
        _assert_as_plain(task)


def test_an_entry_added_after_the_building_leaves_the_shared_parts_alone() -> None:
    """The merged indexes share the chunks' lists: an entry added to a built vocabulary goes
    into its own lists only, and the next vocabulary of the task is as before."""
    task = _typed([check_structure(group.spec).task for group in load_groups(_GROUPS[0])])[0]
    built = Vocabulary(task)
    built._build()
    for priority, name in enumerate(("by_stem", "starting_word", "starting_words"), 90):
        index = getattr(built, name)
        first = next(key for key, entries in reversed(index.items()) if entries)
        extra = index[first][0]._replace(priority=priority)
        built._add(extra)
        assert built.by_stem[first][-1] == extra
    # an entry for each first word of the rows (most lists of a word of one fact are its
    # chunk's own): added to the vocabulary's rows alone
    for first, rows in list(built.starting_rows.items()):
        extra = rows[0][-1][0]._replace(priority=95)
        built._add(extra)
        assert built.starting_rows[first][-1][-1][0] == extra
    _assert_as_plain(task)
