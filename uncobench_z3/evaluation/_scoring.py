"""Reading an agent's answer tolerantly, and scoring it against gold exactly.

Parsing is deterministic and documented rule by rule:

* **Structured fields win.** An answer action's ``decision`` / ``candidate`` / ``number``
  fields are read first; a missing field is taken from the free ``text``, where a labelled
  line (``Decision: ...``, ``Candidate: ...``, ``<rule label>: ...``, ``Number:`` /
  ``Amount:`` / ``Total:`` / ``Result:``; markdown bold and bullets ignored) wins over the
  rest of the text.
* **Decision.** Case and punctuation are ignored, contractions expanded ("don't" -> "do
  not", "can't" and "cannot" -> "can not"). The negative phrase of the task, "not <positive
  phrase>", "no eligible candidate", "no candidate", "nobody", "no one", "none of the
  candidates" mean the negative decision; the positive phrase (where it is not part of a
  negative one) the positive decision. When both occur, the earliest wins. A field that is
  just "none", "null" or "n/a" is negative. With no decision phrase at all, a named
  candidate implies the positive decision and an explicitly empty candidate field the
  negative one (``decision_inferred``); nothing at all leaves the decision unknown (wrong).
* **Candidate.** By full name (any case), by id, or by a last name only one candidate has
  (capitalised, in free text); a candidate field may also hold any one word (3+ letters) of
  exactly one candidate's name ("Geelong"). "none", "null", "n/a", "nobody" or an empty
  field mean no candidate. In free text the first candidate named after the positive
  decision phrase is taken (else the first named); after a negative decision only a labelled
  ``Candidate:`` line counts (names elsewhere are explanations).
* **Number.** Currency signs and codes (also against the number, "AUD60,000": any three
  capitals in a number field, the rule's unit in free text), units, thousands separators
  (``,`` ``'`` ``_``, no-break and thin spaces; plain spaces too inside a number field) and
  a ``k`` / ``thousand`` / ``million`` / ``billion`` suffix are understood; "null", "none", "n/a",
  "-" mean no number. Decimal commas ("60.000,50") are not supported: ``,`` is always a
  thousands separator. In a number field: the first number after the last ``=`` if there is
  one, else the first number. In free text: the labelled line, else the first number after
  the last ``=``, else the numbers written with the rule's unit or a currency sign when they
  agree, else the only number; several unmarked numbers give no number. Numbers inside
  candidate names and dates are ignored.

**Scoring.** Correct when the decision, the candidate and the number all match gold. For a
"no eligible candidate" gold answer: the negative decision, no candidate and no number. For
an eligible gold answer: the positive decision, the gold candidate, and the parsed number
*rounded to the rule's digits with the rule's mode* equal to the gold number (exact
fractions: for a gold 46.67 at two decimals, an unrounded 46.6666 is right, 46.66 is not).
The unit is recorded but not scored (no conversions).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

from pydantic import BaseModel, ConfigDict

from .._plain_reads import plain_reads_of_subclasses
from .._trusted import trusted_maker
from ..spec import Answer, RoundingMode, TypedTask, format_fraction, round_fraction
from ._protocol import AnswerAction

DecisionKind = Literal["positive", "negative"]
_NULLS = {"", "none", "null", "n a", "na", "nil", "nobody", "no one", "no candidate", "-"}
_GENERIC_NEGATIVES = (
    "no eligible candidate",
    "no candidate",
    "nobody",
    "no one",
    "none of the candidates",
)
_NUMBER_LABELS = ("number", "amount", "total", "result", "value", "final number")
_CURRENCY = "$€£¥₹"
_SEPARATORS = ",'_\u00a0\u202f\u2009"
_SCALE = {"k": 1000, "thousand": 1000, "million": 10**6, "bn": 10**9, "billion": 10**9}
_NUMBER_TEXT = (
    # (not inside a word, nor after a digit and a separator: "60,000" glued to a word,
    # "AUD60,000", is no "000")
    r"(?<![\w.])(?<!\d[" + _SEPARATORS + r"])"
    r"([-−]?)(\d{1,3}(?:[" + _SEPARATORS + r"]\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
    r"(?:\s*(k|thousand|million|bn|billion)\b)?"
)
_NUMBER = re.compile(_NUMBER_TEXT, re.IGNORECASE)
_GLUED_CODE = re.compile(r"\b([A-Z]{3})(?=[-−]?\d)")
"""a currency code written against its number ("AUD60,000"): a space is put between them"""
_UNIT_CODE = re.compile(r"[A-Za-z]{3}\b")
_MONTHS = "january|february|march|april|may|june|july|august|september|october|november|december"
_DATES = re.compile(
    r"\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2} (?:"
    + _MONTHS
    + r") \d{4}\b|\b(?:"
    + _MONTHS
    + r") \d{1,2},? \d{4}\b",
    re.IGNORECASE,
)


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    __pydantic_init_subclass__ = plain_reads_of_subclasses  # (see _plain_reads.py)


@dataclass(frozen=True)
class AnswerKey:
    """What the parser needs to know about a task (nothing about its answer)."""

    positive: str
    negative: str
    candidates: dict[str, str]
    """candidate id -> name, in directory order"""
    label: str
    unit: str
    digits: int
    mode: RoundingMode

    @classmethod
    def from_task(cls, task: TypedTask) -> AnswerKey:
        return cls(
            positive=task.spec.decision.positive,
            negative=task.spec.decision.negative,
            candidates={c: task.candidate_name(c) for c in task.candidates},
            label=task.rule.label,
            unit=task.rule.unit,
            digits=task.rule.digits,
            mode=task.rule.mode,
        )


class ParsedAnswer(_Frozen):
    decision: DecisionKind | None = None
    decision_inferred: bool = False
    candidate: str | None = None
    """candidate id"""
    number: str | None = None
    """the number as written, exactly (a decimal string), before rounding"""
    unit: str | None = None
    problems: tuple[str, ...] = ()


class AnswerScore(_Frozen):
    correct: bool
    decision_ok: bool
    candidate_ok: bool
    number_ok: bool
    parsed: ParsedAnswer
    rounded_number: str | None = None


_parsed_answer = trusted_maker(ParsedAnswer)
_answer_score = trusted_maker(AnswerScore)


# -- text helpers -----------------------------------------------------------------------------
_WONT_CANT = re.compile(r"\b(won|can)'t\b", re.IGNORECASE)
_CANNOT = re.compile(r"\b(can)(not)\b", re.IGNORECASE)
_NOT = re.compile(r"\b(\w+)n't\b", re.IGNORECASE)
_OTHER_CHARACTERS = re.compile(r"[^0-9A-Za-z%]+")


def _norm_cased(text: str) -> str:
    """Contractions expanded, every run of other characters one space, padded; case kept.

    Only ASCII letters and digits survive, so lower-casing the result keeps every offset.
    """
    text = text.replace("’", "'").replace("‘", "'")
    if "'" in text:  # (a contraction has one)
        text = _WONT_CANT.sub(lambda m: "will not" if m[1].lower() == "won" else "can not", text)
        text = _NOT.sub(r"\1 not", text)
    # "cannot appoint" is "not <positive phrase>", as "do not appoint" is
    text = _CANNOT.sub(r"\1 \2", text)
    return " " + " ".join(_OTHER_CHARACTERS.sub(" ", text).split()) + " "


@functools.lru_cache(maxsize=4096)
def _norm(text: str) -> str:
    return _norm_cased(text).lower()


@functools.lru_cache(maxsize=1024)
def _phrase_text(phrase: str) -> str | None:
    """A phrase's words as they start in a normalised text (its leading space, no trailing
    one: its last word may be inflected); None for a phrase without words."""
    words = _norm(phrase).split()
    if not words:
        return None
    return " " + " ".join(words)


_INFLECTIONS = tuple(f"{ending} " for ending in ("s", "es", "d", "ed", "ing"))
"""the endings a phrase's last word may take, each with the space that must follow"""


def _spans(haystack: str, phrase: str) -> list[tuple[int, int]]:
    """Spans of ``phrase`` in a normalised text; its last word may be inflected ("appoint"
    also finds "appointed", "appoints", "appointing").

    Each span is where the pattern ``" <words>(?:s|es|d|ed|ing)? "`` matches, searched from
    the last span's closing space on, found with ``str.find`` (no pattern compiled for each
    task's phrases): at most one ending fits at a position, each being followed by a space
    and no two starting alike but "es" and "ed"."""
    text = _phrase_text(phrase)
    if text is None:
        return []
    found = []
    start = haystack.find(text)
    while start >= 0:
        after = start + len(text)
        end = after + 1 if haystack.startswith(" ", after) else 0
        if not end:
            for ending in _INFLECTIONS:
                if haystack.startswith(ending, after):
                    end = after + len(ending)
                    break
        if end:
            found.append((start, end))
            start = haystack.find(text, end - 1)  # the separating space may start the next
        else:
            start = haystack.find(text, start + 1)
    return found


def _labelled(text: str, labels: tuple[str, ...]) -> str | None:
    """The value of the first line ``<label>: value`` whose label starts with one of labels."""
    wanted = [_norm(label).strip() for label in labels]
    for line in text.splitlines():
        head, sep, value = line.partition(":")
        if not sep:
            continue
        label = _norm(head).strip()
        if any(label == w or label.startswith(w + " ") for w in wanted if w):
            return value.strip().strip("*").strip()
    return None


@functools.lru_cache(maxsize=256)
def _negative_phrases(negative: str, positive: str) -> tuple[str, ...]:
    """The phrases that state the negative decision, in the order searched (the phrases of
    a task are a few of a domain's: made once a pair)."""
    return (negative, f"not {positive}", *_GENERIC_NEGATIVES)


def parse_decision(text: str, key: AnswerKey, field: bool = False) -> DecisionKind | None:
    """The decision a text states; ``field``: the text is a decision field, where a bare
    "none" or "null" is an answer too."""
    return _decision_of(text, key.negative, key.positive, field)


@functools.lru_cache(maxsize=1024)
def _decision_of(text: str, negative: str, positive: str, field: bool) -> DecisionKind | None:
    """:func:`parse_decision`, remembered by what it reads: a task's decision phrases are a
    few of a domain's, and agents mostly write one of them, so a group's first answer finds
    its decision read already for another group."""
    haystack = _norm(text)
    if field and haystack.strip() in _NULLS and haystack.strip():
        return "negative"
    negatives: list[tuple[int, int]] = []
    for phrase in _negative_phrases(negative, positive):
        negatives += _spans(haystack, phrase)
    positives = [
        start
        for start, _ in _spans(haystack, positive)
        if not any(low <= start < high for low, high in negatives)
    ]
    first_negative = min((low for low, _ in negatives), default=None)
    first_positive = min(positives, default=None)
    if first_negative is None and first_positive is None:
        return None
    if first_positive is None or (first_negative is not None and first_negative < first_positive):
        return "negative"
    return "positive"


def _candidate_mentions(text: str, key: AnswerKey) -> list[tuple[int, str]]:
    """(position, candidate id) of every candidate mention, by name, id or unique last name."""
    found: list[tuple[int, str]] = []
    cased = _norm_cased(text)
    haystack = cased.lower()
    last_names: dict[str, list[str]] = {}
    for cid, name in key.candidates.items():
        parts = name.split()
        if len(parts) > 1 and len(parts[-1]) >= 3:
            last_names.setdefault(parts[-1], []).append(cid)
    for cid, name in key.candidates.items():
        positions = [start for start, _ in _spans(haystack, name)]
        last = name.split()[-1]
        if last_names.get(last) == [cid]:
            # a bare last name counts only when capitalised ("Ruiz", not "ruiz")
            positions += [m.start() for m in re.finditer(" " + re.escape(last) + " ", cased)]
        found += [(p, cid) for p in positions]
    return sorted(found)


@functools.lru_cache(maxsize=1024)
def _name_words(candidates: tuple[tuple[str, str], ...]) -> dict[str, list[str]]:
    """Each word of 3+ letters of a name of ``candidates`` ((id, name) in directory order) ->
    the candidates whose name has it: what a candidate field that is no whole name or id may
    hold. Made once a directory."""
    tokens: dict[str, list[str]] = {}
    for cid, name in candidates:
        for token in _norm(name).split():
            if len(token) >= 3:
                tokens.setdefault(token, []).append(cid)
    return tokens


def parse_candidate_field(text: str, key: AnswerKey) -> tuple[str | None, bool]:
    """(candidate id or None, whether the field was understood)."""
    field = _norm(text).strip()
    if field in _NULLS:
        return None, True
    # the first candidate in order whose name or id it is (most fields name one: the others
    # are not normalised, nor the directory's words tabled, for a group's first answer)
    for cid, name in key.candidates.items():
        if _norm(name).strip() == field or _norm(cid).strip() == field:
            return cid, True
    tokens = _name_words(tuple(key.candidates.items()))
    if len(tokens.get(field, [])) == 1:  # one word of one candidate's name ("Geelong")
        return tokens[field][0], True
    mentions = {cid for _, cid in _candidate_mentions(text, key)}
    if len(mentions) == 1:
        return mentions.pop(), True
    return None, False


def _scaled(match: re.Match[str]) -> Fraction:
    digits = match.group(2)
    for sep in _SEPARATORS:
        digits = digits.replace(sep, "")
    # digits with an optional fraction part (the pattern's): Fraction(digits), from ints
    whole, point, part = digits.partition(".")
    value = Fraction(int(whole + part), 10 ** len(part)) if point else Fraction(int(whole))
    suffix = match.group(3)
    if suffix:
        value *= _SCALE.get(suffix.lower(), 1)
    return -value if match.group(1) else value


def parse_number_field(text: str) -> tuple[Fraction | None, bool]:
    """(number or None, whether the field was understood) for a field holding one number."""
    stripped = text.strip()
    if _norm(stripped).strip() in _NULLS or stripped in ("—", "–"):
        return None, True
    # inside a number field a plain space can only be a thousands separator, and three
    # capitals before the number a currency code
    compact = _GLUED_CODE.sub(r"\1 ", re.sub(r"(?<=\d) (?=\d{3}\b)", "", stripped))
    if "=" in compact:  # "45,000 + 15,000 = 60,000": the result follows the last "="
        compact = compact.rsplit("=", 1)[1]
    numbers = list(_NUMBER.finditer(compact))
    if not numbers:
        return None, False
    return _scaled(numbers[0]), True  # "60,000 AUD (45,000 + 15,000)": the first one


def _free_numbers(text: str, key: AnswerKey) -> list[tuple[re.Match[str], str]]:
    cleaned = _DATES.sub(" ", text)
    # the rule's currency code against its number ("AUD60,000"); only the rule's, since in
    # free text three capitals and digits are often a name ("ISO9001")
    code = _UNIT_CODE.match(key.unit.strip())
    if code:
        glued = r"(?<![A-Za-z])(" + code[0] + r")(?=[-−]?\d)"
        cleaned = re.sub(glued, r"\1 ", cleaned, flags=re.IGNORECASE)
    for name in key.candidates.values():
        cleaned = re.sub(re.escape(name), " ", cleaned, flags=re.IGNORECASE)
    return [(m, cleaned) for m in _NUMBER.finditer(cleaned)]


def parse_number_text(text: str, key: AnswerKey) -> tuple[Fraction | None, str | None]:
    """The result number of a free text (see the module docstring), with a problem if any."""
    if "=" in text:
        after = text.rsplit("=", 1)[1]
        found = _free_numbers(after, key)
        if found:
            return _scaled(found[0][0]), None
    found = _free_numbers(text, key)
    if not found:
        return None, None
    unit = key.unit.strip().lower()
    marked = []
    for match, source in found:
        before = source[max(0, match.start() - 5) : match.start()].lower()
        after = source[match.end() : match.end() + len(unit) + 2].lower()
        if any(sign in before for sign in _CURRENCY) or (unit and unit in before + after):
            marked.append(_scaled(match))
    if marked and len(set(marked)) == 1:
        return marked[0], None
    values = {_scaled(m) for m, _ in found}
    if len(values) == 1:
        return values.pop(), None
    return None, "several numbers and none marked as the result"


def parse_answer(answer: AnswerAction | str, key: AnswerKey) -> ParsedAnswer:
    """Read an answer action (or a bare text) as decision, candidate id and number."""
    action = answer if isinstance(answer, AnswerAction) else AnswerAction(text=answer)
    text = action.text or ""
    problems: list[str] = []

    decision_text = action.decision or _labelled(text, ("decision",))
    if decision_text is not None:
        decision = parse_decision(decision_text, key, field=True)
    else:
        decision = parse_decision(text, key)

    candidate: str | None = None
    candidate_text = (
        action.candidate
        if action.candidate is not None
        else _labelled(text, ("candidate", "eligible candidate"))
    )
    if candidate_text is not None:
        candidate, understood = parse_candidate_field(candidate_text, key)
        if not understood:
            problems.append(f"candidate not recognised: {candidate_text!r}")
    elif decision != "negative" and text:
        mentions = _candidate_mentions(text, key)
        positive_at = min((start for start, _ in _spans(_norm(text), key.positive)), default=None)
        if mentions:
            after = [cid for pos, cid in mentions if positive_at is None or pos >= positive_at]
            candidate = (after or [mentions[0][1]])[0]
            if len({cid for _, cid in mentions}) > 1:
                problems.append("several candidates named; took the one after the decision")

    number: Fraction | None = None
    number_text = (
        action.number
        if action.number is not None
        else _labelled(text, (key.label, *_NUMBER_LABELS))
    )
    if number_text is not None:
        number, understood = parse_number_field(number_text)
        if not understood:
            problems.append(f"number not recognised: {number_text!r}")
    elif decision != "negative" and text:
        number, problem = parse_number_text(text, key)
        if problem:
            problems.append(problem)

    inferred = False
    if decision is None and candidate is not None:
        decision, inferred = "positive", True
    elif (
        decision is None and candidate_text is not None and _norm(candidate_text).strip() in _NULLS
    ):
        decision, inferred = "negative", True  # "candidate: none" and nothing else
    if decision is None:
        problems.append("no decision found")
    return _parsed_answer(  # (built from checked parts: no validation pass)
        decision=decision,
        decision_inferred=inferred,
        candidate=candidate,
        number=None if number is None else format_fraction(number),
        unit=action.unit,
        problems=tuple(problems),
    )


def score_answer(parsed: ParsedAnswer, gold: Answer, key: AnswerKey) -> AnswerScore:
    """Decision, candidate and number against gold (number after the rule's rounding)."""
    rounded: Fraction | None = None
    if parsed.number is not None:
        rounded = round_fraction(Fraction(parsed.number), key.digits, key.mode)
    if not gold.eligible:
        decision_ok = parsed.decision == "negative"
        candidate_ok = parsed.candidate is None
        number_ok = parsed.number is None
    else:
        decision_ok = parsed.decision == "positive"
        candidate_ok = parsed.candidate == gold.candidate
        number_ok = rounded is not None and rounded == gold.number_value()
    return _answer_score(  # (built from checked parts: no validation pass)
        correct=decision_ok and candidate_ok and number_ok,
        decision_ok=decision_ok,
        candidate_ok=candidate_ok,
        number_ok=number_ok,
        parsed=parsed,
        rounded_number=None if rounded is None else format_fraction(rounded, max(key.digits, 0)),
    )
