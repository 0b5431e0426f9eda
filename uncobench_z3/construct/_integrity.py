"""Does a stored group show agents what its spec says?

The solver proves the *spec*; agents are shown the *stored text* (``group.rendered``). Unless
the two are tied together, an edited threshold in the task text (with the manifest's hash
recomputed) would pass ``verify`` and silently change what agents are scored against.
:func:`check_rendering` ties them:

* a template-rendered group's stored text must be exactly what :func:`render_task` makes of
  the spec and the group's seed (task text, role directory, style, every record line and,
  when stored, the places of the faithful lines, which the scripted colleagues read);
* a model-rendered group (its provenance names the renderer model) cannot be re-rendered:
  its program-written task text (everything but the question line) and its role directory
  must be the template's, and every record must keep its candidate, context and value in the
  role's text (the renderer's own acceptance check), and it stores no places of faithful
  lines (the colleagues write the template's);
* the full-information reader must recover the gold answer from the stored text (three
  shuffled readings), for template-rendered groups (the reader reads the template grammar).
"""

from __future__ import annotations

from pydantic import ValidationError

from ..settings import TaskGroup
from ..solver import CheckResult, Verdict, VerificationReport, combine
from ..spec import TypedTask, check_structure
from ._full_information import validate_rendering
from ._llm_stages import surviving_problems
from ._render import RenderedTask, render_task

CHECK_NAME = "rendering-identical"
_OFFLINE_RENDERERS = ("offline", "template")


def _result(verdict: Verdict, summary: str) -> CheckResult:
    return CheckResult(name=CHECK_NAME, kind="consistency", verdict=verdict, summary=summary)


def _first_difference(stored: list[str], expected: list[str]) -> str:
    for number, (have, want) in enumerate(zip(stored, expected, strict=False), start=1):
        if have != want:
            return f"line {number} reads {have[:120]!r}, the spec renders {want[:120]!r}"
    return f"{len(stored)} line(s) stored, the spec renders {len(expected)}"


def _template_differences(stored: RenderedTask, expected: RenderedTask) -> str | None:
    if stored.task_text != expected.task_text:
        where = _first_difference(stored.task_text.split("\n"), expected.task_text.split("\n"))
        return f"the task text differs: {where}"
    if stored.role_directory != expected.role_directory:
        return "the role directory differs from the spec's roles"
    if stored.style != expected.style:
        return "the rendering style differs from the one the group's seed gives"
    if stored.records.keys() != expected.records.keys():
        return "the records are held by other roles than the spec's"
    for role, lines in expected.records.items():
        if stored.records[role] != lines:
            where = _first_difference(stored.records[role], lines)
            return f"the records of {role!r} differ: {where}"
    # (a group built before the places were stored has none: its lines are written)
    if stored.faithful is not None and stored.faithful != expected.faithful:
        return "the stored places of the faithful lines are not where the rendering put them"
    return None


def _model_rendered_differences(
    task: TypedTask, stored: RenderedTask, expected: RenderedTask
) -> str | None:
    have, want = stored.task_text.split("\n"), expected.task_text.split("\n")
    question = task.spec.question
    same_shape = len(have) == len(want) and all(
        h == w for h, w in zip(have, want, strict=True) if w != question
    )
    if not same_shape:
        return f"the program-written task text differs: {_first_difference(have, want)}"
    if stored.role_directory != expected.role_directory:
        return "the role directory differs from the spec's roles"
    if stored.records.keys() != expected.records.keys():
        return "the records are held by other roles than the spec's"
    if stored.faithful is not None:
        return "a model's records store places of the template's faithful lines"
    for role, lines in stored.records.items():
        lost = surviving_problems(task, role, "\n".join(lines))
        if lost:
            return lost[0]
    return None


def template_rendered(group: TaskGroup) -> bool:
    """Whether the group's stored text, if any, is the template's (:func:`render_task` of its
    spec and seed, as :func:`check_rendering` proves), not a renderer model's."""
    return str(group.provenance.get("renderer", "offline")) in _OFFLINE_RENDERERS


def check_rendering(group: TaskGroup, task: TypedTask | None = None) -> CheckResult:
    """Whether the group's stored text is what its spec renders to (see the module)."""
    task = task or check_structure(group.spec).task
    if task is None or not task.has_values:
        return _result(Verdict.REFUTED, "the spec is not a structurally valid instance")
    if group.rendered is None:
        return _result(Verdict.PROVED, "no stored text: agents see the text rendered from the spec")
    try:
        stored = RenderedTask.model_validate(group.rendered)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        return _result(Verdict.REFUTED, f"the stored text is malformed: {first['msg']}")
    expected = render_task(task, group.seed)
    renderer = str(group.provenance.get("renderer", "offline"))
    offline = template_rendered(group)
    problem = (
        _template_differences(stored, expected)
        if offline
        else _model_rendered_differences(task, stored, expected)
    )
    if problem is None and offline:
        read = validate_rendering(task, stored, task.outcome(), group.seed)
        problem = f"the full-information reader: {read[0]}" if read else None
    if problem is not None:
        return _result(Verdict.REFUTED, problem)
    if offline:
        return _result(
            Verdict.PROVED,
            "the stored task text and records are exactly what the spec renders to, and the "
            "full-information reader recovers gold from them",
        )
    return _result(
        Verdict.PROVED,
        f"model-rendered ({renderer}): the program-written text is the spec's and every record "
        "survives in its role's text",
    )


def with_rendering_check(
    report: VerificationReport, group: TaskGroup, task: TypedTask | None = None
) -> VerificationReport:
    """``report`` with :func:`check_rendering` added (and its verdict recombined); ``task``
    as for :func:`check_rendering`."""
    return with_check(report, check_rendering(group, task))


def with_check(report: VerificationReport, check: CheckResult) -> VerificationReport:
    """``report`` with ``check`` added and its verdict recombined."""
    checks = [*report.checks, check]
    return report.model_copy(
        update={"checks": checks, "verdict": combine([c.verdict for c in checks])}
    )
