"""Can an agent score without following up? Two agents that bet on the defect-location cue.

    python benchmarks/cue_shortcut.py eval bench/ --agent cue/bet --agent cue/flip --out runs/cue
    python benchmarks/cue_shortcut.py leaderboard runs/builtin runs/cue --out board/

The arguments are ``uncobench``'s: the script registers the agent prefix ``cue/`` and runs the
command line. Both agents ask every colleague once as ``builtin/careful`` does and ask a
silent colleague again as it does, but they never follow up a reply in another context or an
imprecise one. They read such a reply as a cue instead: a defect must change (or open) the
answer, so it mostly falls on the gold candidate, and a wrong-context value mostly says the
opposite of the truth about its condition.

* ``cue/bet`` answers that the cued candidate (the one with the most such replies; a seeded
  pick among a tie) is the one, with the number computed from its operands, a cued operand
  taken at face value (the other context's value, a range's midpoint, the first option).
* ``cue/flip`` takes each cued condition record to give the opposite of what its face value
  gives, the other conditions as ``careful`` reads them, and decides as ``careful`` does.

Every right answer of theirs in a defective setting is *lucky* (justified accuracy 0%): see
docs/build.md, "Validity targets" for what they score.
"""

from __future__ import annotations

import sys
from collections import Counter
from fractions import Fraction
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from uncobench_z3.cli import main  # noqa: E402
from uncobench_z3.construct import ReadTask, Statement  # noqa: E402
from uncobench_z3.evaluation import (  # noqa: E402
    Action,
    AnswerAction,
    CarefulAgent,
    Conversation,
    decide,
    face_value,
    register_agent_prefix,
)
from uncobench_z3.spec import Value, format_fraction  # noqa: E402


def _positive(read: ReadTask, values: dict[tuple[str, str], Value], chosen: str) -> AnswerAction:
    """The positive answer naming ``chosen``, with its number when every operand is known."""
    number = None
    operands = [values.get((chosen, key)) for key in read.rule.operands]
    if all(isinstance(v, int | Fraction) and not isinstance(v, bool) for v in operands):
        try:
            result = read.rule.rounded([Fraction(v) for v in operands])  # type: ignore[arg-type]
            number = format_fraction(result, max(read.rule.digits, 0))
        except ZeroDivisionError:
            pass
    return AnswerAction(
        decision=read.positive, candidate=chosen, number=number, unit=read.rule.unit
    )


class CueAgent(CarefulAgent):
    """``careful`` that bets on the cue instead of following up a defective reply."""

    flip = False

    async def act(self, conversation: Conversation) -> Action:
        read = self.read(conversation)
        if not conversation.turns:
            return self.first_questions_of(read)
        latest: dict[tuple[str, str], Statement] = self.latest_of(conversation, read)
        problems = self.problems(read, latest)
        missing = [p for p in problems if p.kind == "missing"]
        if missing and conversation.rounds_left > 1:
            return self.follow_ups(read, missing)
        values = self.believed(read, latest)
        faces = {}
        for p in problems:
            if p.kind != "missing":
                value = face_value(latest[(p.candidate, p.fact)])
                if value is not None:
                    faces[(p.candidate, p.fact)] = value
        if not faces:
            return decide(read, values, self.tie_breaker(conversation))
        if self.flip:
            possible = [
                name
                for name in read.catalog.candidates
                if all(
                    (not c.holds(faces[(name, c.fact)]))
                    if (name, c.fact) in faces
                    else (name, c.fact) not in values or c.holds(values[(name, c.fact)])
                    for c in read.conditions
                )
            ]
            if not possible:
                return AnswerAction(decision=read.negative, candidate=None, number=None)
        else:
            counts = Counter(name for name, _ in faces)
            top = max(counts.values())
            possible = [name for name in read.catalog.candidates if counts.get(name) == top]
        chosen = (
            possible[0] if len(possible) == 1 else self.tie_break(conversation).choice(possible)
        )
        return _positive(read, {**values, **faces}, chosen)


class FlipAgent(CueAgent):
    flip = True


def _agent(name: str, seed: int) -> CueAgent:
    kinds = {"cue/bet": CueAgent, "cue/flip": FlipAgent}
    if name not in kinds:
        raise SystemExit(f"unknown agent {name!r}: cue/bet or cue/flip")
    return kinds[name](seed)


if __name__ == "__main__":
    register_agent_prefix("cue", _agent)
    sys.argv[0] = "uncobench"
    main()
