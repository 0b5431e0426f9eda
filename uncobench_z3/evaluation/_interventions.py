"""Causal interventions: five nested arms that tell the agent progressively more about a defect.

``none`` says nothing; ``existence`` that some request needs a follow-up; ``location`` which
one; ``diagnosis`` what is wrong with its reply; ``action`` what to do about it. Each arm says
everything the previous one says. A defect is told of once, with the observation of the
round in which it first shows (a defective reply, or a silence), so the task, the records,
the history up to that point, the tools, the decoding and the budget are the same in every
arm; the answer is never revealed. Mixed's three defects may show in different rounds: each
is told of when it shows (``existence`` says its sentence once, with the first), so what an
arm tells does not depend on the order in which the agent asks. (For language-model agents,
keep the response cache on so that the history before the intervention is identical across
arms.)
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from typing import Any, Literal

from .._assets import asset_path
from ..construct._render import stated_value_text
from ..construct._text import Style
from ..settings import Defect
from ..spec import TypedTask

InterventionArm = Literal["none", "existence", "location", "diagnosis", "action"]
INTERVENTION_ARMS: tuple[InterventionArm, ...] = (
    "none",
    "existence",
    "location",
    "diagnosis",
    "action",
)
INTERVENTIONS_FILE = "interventions.json"


@functools.cache
def intervention_texts() -> dict[str, Any]:
    """The arm templates (asset ``evaluators/interventions.json``)."""
    path = asset_path("evaluators") / INTERVENTIONS_FILE
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def _fields(task: TypedTask, defect: Defect, style: Style) -> dict[str, str]:
    candidate = defect.candidates[0] if defect.candidates else None
    given = ""
    stated = ""
    fact = task.facts[defect.fact] if defect.fact else None
    for item in defect.first_reply or []:
        if item.candidate == candidate and fact is not None:
            given = item.context
            stated = stated_value_text(task, item, style)
    return {
        "role": task.role_name(defect.role),
        "candidate": task.candidate_name(candidate) if candidate else "",
        "fact": fact.label if fact else "",
        "required": fact.context if fact else "",
        "given": given,
        "stated": stated,
    }


def intervention_text(
    arm: InterventionArm,
    task: TypedTask,
    defects: Sequence[Defect],
    style: Style,
    first: bool = True,
) -> str | None:
    """What the ``arm`` tells the agent about ``defects`` (None for the ``none`` arm): the
    ``first`` text of an episode opens with the existence sentence, a later one (a defect
    of Mixed met after another) with ``existence_again``, and the ``existence`` arm says
    nothing more after its first."""
    if arm == "none" or not defects or (arm == "existence" and not first):
        return None
    texts = intervention_texts()
    level = INTERVENTION_ARMS.index(arm)
    parts = [str(texts["existence" if first else "existence_again"])]
    for defect in defects:
        fields = _fields(task, defect, style)
        for name in INTERVENTION_ARMS[2 : level + 1]:
            parts.append(str(texts[name][defect.kind]).format(**fields))
    return " ".join(parts)
