"""The scripted colleagues' readings of the built-in agents' messages, frozen: ``outcomes.json``
holds, for every message read, a digest of its reading (``request_json``, the evidence in the
order it was noted, and whether it said "all candidates").

``messages.json.gz`` holds what was read: every (task, addressee, message, candidate in focus)
the colleagues read while the six built-in agents played, in every setting, the first 150
groups of a 1,000-group build (``uncobench build --groups 1000``, round 22's
``/tmp/r22/b1000``) and the example groups; the tasks' specs are kept without their records,
which no reading looks at. Collected with ``python tests/data/readings/record_agent_readings.py
collect BENCH``. The mutants are made from those messages by seeded random edits: typos in
long words, words swapped or a sentence's words shuffled, numbers, dates and periods written
in the ways the reader knows, the task's own names, labels, contexts and members put in with
"not the", "latest", "all candidates" or a pronoun, intent phrases, case and punctuation
changed, the message cut short; each read by its role, another role or none, with its focus,
another candidate or none.

``tests/test_agent_readings.py`` reads them again, in one process and in order (so each is
read with what the readings before it remembered). A deliberate change to the reader changes
some readings: look at them, then record the file again with
``python tests/data/readings/record_agent_readings.py`` and say in the commit what changed.
Recorded from main at 07a5413.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import random
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent.parent
MESSAGES = HERE / "messages.json.gz"
OUTCOMES = HERE / "outcomes.json"
SEED = 20261204
MUTANTS = 2500
AGENTS = ("careful", "naive", "patient", "optimist", "midpoint", "face-value")
GROUPS = 150

# (spec index, role or None, message, candidate in focus or None)
Row = tuple[int, str | None, str, str | None]

NUMBERS = ("12", "3.5", "1,250", "40k", "2.5 million", "-3", "0.75", "1,000,000", "7 years")
DATES = ("1 August 2026", "2026-03-01", "3/4/2026", "March 5, 2026", "end of June 2026",
         "5th of May 2025", "Sept. 30, 2026", "middle of Oct 2026")  # fmt: skip
PERIODS = ("FY26", "fy 2026", "Q3 2026", "2026-27", "third quarter", "quarter 2", "first half",
           "rev C", "rev. 2", "v2", "Mar 2026", "dec 2025", "H1", "2025")  # fmt: skip
INTENTS = ("exact", "a single figure", "narrow it down", "which one is it?", "pass or fail?",
           "wrong period", "that's the April one", "that range", "you said",
           "those options", "precisely", "Did he pass?", "is it at least 12?")  # fmt: skip
MARKS = ("?", ".", ":", " - ", ";", "\n", "'s", "n't", "--", "!")
LEADS = ("not the", "rather than", "ignore", "the latest", "the earliest", "the previous",
         "all candidates", "every candidate", "he", "she", "they", "his", "their", "for",
         "and", "or")  # fmt: skip


def _load() -> tuple[list[Any], list[Row]]:
    """The typed tasks and the rows read by the agents' colleagues."""
    from uncobench_z3.spec import TaskSpec, check_structure

    data = json.loads(gzip.decompress(MESSAGES.read_bytes()))
    tasks = []
    for spec in data["specs"]:
        task = check_structure(TaskSpec.model_validate(spec)).task
        assert task is not None
        tasks.append(task)
    texts = data["texts"]
    rows = [(spec, role, texts[text], focus) for spec, role, text, focus in data["rows"]]
    return tasks, rows


def _names(task: Any) -> list[str]:
    """The task's own words a message may name: names, labels, contexts, members."""
    found = []
    for candidate in task.candidates:
        name = task.candidate_name(candidate)
        found += [name, name.split()[0], name.split()[-1]]
    for fact in task.facts.values():
        found += [fact.label, *fact.synonyms, fact.context, *fact.other_contexts, *fact.members]
    return [w for w in found if w and w.strip()]


def _typo(word: str, rng: random.Random) -> str:
    i = rng.randrange(1, len(word) - 1)
    how = rng.randrange(4)
    if how == 0:
        return word[:i] + word[i] + word[i:]  # a letter doubled
    if how == 1:
        return word[:i] + word[i + 1 :]  # dropped
    if how == 2:
        return word[:i] + word[i + 1] + word[i] + word[i + 2 :]  # swapped
    return word[:i] + rng.choice("aeiourst") + word[i + 1 :]  # changed


def _mutate(text: str, task: Any, rng: random.Random) -> str:
    words = text.split()
    how = rng.randrange(11)
    at = rng.randrange(len(words) + 1)
    if how == 0:
        long = [i for i, w in enumerate(words) if len(w) >= 5 and w.isalpha()]
        if long:
            i = rng.choice(long)
            words[i] = _typo(words[i], rng)
    elif how == 1 and len(words) >= 2:
        i = rng.randrange(len(words) - 1)
        words[i], words[i + 1] = words[i + 1], words[i]
    elif how == 2:
        rng.shuffle(words)
    elif how == 3:
        words.insert(at, rng.choice(NUMBERS))
    elif how == 4:
        words.insert(at, rng.choice(DATES))
    elif how == 5:
        words.insert(at, rng.choice(PERIODS))
    elif how == 6:
        name = rng.choice(_names(task))
        words.insert(at, rng.choice((f"{rng.choice(LEADS)} {name}", f"{name}:", f"{name}'s")))
    elif how == 7:
        words.insert(at, rng.choice(INTENTS))
    elif how == 8:
        return rng.choice((str.lower, str.upper, str.title))(text)
    elif how == 9:
        words.insert(at, rng.choice(MARKS))
    else:
        return " ".join(words[:at])
    return " ".join(words)


def mutants() -> list[tuple[str, tuple[Any, Row]]]:
    """(name, (task, row)): every row the agents' colleagues read, then the mutants."""
    tasks, rows = _load()
    out: list[tuple[str, tuple[Any, Row]]] = [
        (f"agent {i}", (tasks[row[0]], row)) for i, row in enumerate(rows)
    ]
    rng = random.Random(SEED)
    for i in range(MUTANTS):
        spec, role, text, focus = rng.choice(rows)
        task = tasks[spec]
        for _ in range(rng.choice((1, 1, 2, 3))):
            text = _mutate(text, task, rng)
        role = rng.choice((role, role, None, rng.choice(task.roles)))
        focus = rng.choice((focus, None, rng.choice(task.candidates)))
        out.append((f"mutant {i}", (task, (spec, role, text, focus))))
    return out


def outcome(item: tuple[Any, Row]) -> str:
    """A digest of the reading (every field of ``request_json``, the evidence in order)."""
    from uncobench_z3.settings import Vocabulary, read_request
    from uncobench_z3.settings._request import request_json

    task, (_, role, text, focus) = item
    request = read_request(Vocabulary.of(task), text, role, focus)
    found = dict(request_json(task, request), said_all=request.all_candidates)
    written = json.dumps(found, ensure_ascii=False)
    return hashlib.sha256(written.encode("utf-8")).hexdigest()[:16]


def _collect(bench: str) -> None:
    """Play the six agents over the first :data:`GROUPS` groups of ``bench`` and the
    examples, and keep every reading the colleagues made (:data:`MESSAGES`)."""
    from uncobench_z3.cli import main
    from uncobench_z3.evaluation import _colleagues

    read: Callable[..., Any] = _colleagues.RecordBook.read
    tasks: dict[int, Any] = {}
    reads: list[tuple[int, str | None, str, str | None]] = []

    def recording(book: Any, role: str | None, question: str, focus: str | None = None) -> Any:
        tasks.setdefault(id(book.task), book.task)
        reads.append((id(book.task), role, question, focus))
        return read(book, role, question, focus)

    _colleagues.RecordBook.read = recording  # type: ignore[method-assign]
    examples = sorted((ROOT / "examples/groups").glob("*.group.json"))
    targets = [(bench, ["--limit", str(GROUPS)])] + [(str(p), []) for p in examples]
    for target, more in targets:
        out = Path(tempfile.mkdtemp()) / "run"
        agents = [a for agent in AGENTS for a in ("--agent", f"builtin/{agent}")]
        try:
            main(["eval", target, "--out", str(out), "--no-progress", *agents, *more])
        except SystemExit as exc:
            assert not exc.code, exc.code
    specs: dict[str, int] = {}
    texts: dict[str, int] = {}
    rows: dict[tuple[int, str | None, int, str | None], None] = {}
    for key, role, question, focus in reads:
        spec = tasks[key].spec.model_dump(mode="json") | {"records": []}
        index = specs.setdefault(json.dumps(spec, sort_keys=True), len(specs))
        rows[(index, role, texts.setdefault(question, len(texts)), focus)] = None
    data = {
        "specs": [json.loads(spec) for spec in specs],
        "texts": list(texts),
        "rows": [list(row) for row in rows],
    }
    MESSAGES.write_bytes(gzip.compress(json.dumps(data).encode("utf-8"), mtime=0))
    print(f"wrote {MESSAGES}: {len(rows)} readings of {len(texts)} messages, {len(specs)} tasks")


if __name__ == "__main__":
    if sys.argv[1:2] == ["collect"]:
        _collect(sys.argv[2])
    else:
        found = {name: outcome(item) for name, item in mutants()}
        OUTCOMES.write_text(json.dumps(found, indent=0) + "\n", encoding="utf-8")
        print(f"wrote {OUTCOMES}: {len(found)} readings")
