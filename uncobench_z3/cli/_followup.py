"""``uncobench followup``: how a colleague reads a follow-up, and whether it is targeted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import cast

import click
from rich.markup import escape

from ..construct import load_groups
from ..errors import ConfigError
from ..evaluation import typed_task
from ..settings import (
    SETTING_NAMES,
    Defect,
    FollowUpDecision,
    Request,
    SettingName,
    TaskGroup,
    Vocabulary,
    decide,
    read_request,
)
from ..settings._request import request_json
from ..spec import TypedTask, read_utf8
from ._app import EXIT_OK, cli
from ._output import Output, format_option, output_for


def load_group(target: str) -> TaskGroup:
    """A group file, or ``BENCH#GROUP_ID`` (a benchmark folder or ``.jsonl`` and an id)."""
    path, _, wanted = target.partition("#")
    if not Path(path).exists():
        raise ConfigError(f"{path}: no such file or folder")
    groups = load_groups(path)
    if wanted:
        for group in groups:
            if group.id == wanted:
                return group
        raise ConfigError(f"{path} has no group {wanted!r}")
    if len(groups) != 1:
        raise ConfigError(f"{path} holds {len(groups)} groups: name one as {path}#GROUP_ID")
    return groups[0]


def _messages(messages: tuple[str, ...], file: Path | None) -> list[dict[str, str | None]]:
    """The messages to read: ``--message`` texts, then the lines of ``--messages``."""
    out: list[dict[str, str | None]] = [{"message": m, "role": None} for m in messages]
    if file is None:
        return out
    lines = read_utf8(file).splitlines()  # not UTF-8: one line naming the byte's place
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError:
            raise ConfigError(f"{file}:{number}: not a JSON line") from None
        if isinstance(item, str):
            item = {"message": item}
        if not isinstance(item, dict) or not isinstance(item.get("message"), str):
            raise ConfigError(f'{file}:{number}: expected a string or {{"message": "..."}}')
        for key in ("role", "focus"):
            if item.get(key) is not None and not isinstance(item[key], str):
                raise ConfigError(f"{file}:{number}: {key!r} must be a string")
        out.append({"message": item["message"], "role": item.get("role"),
                    "focus": item.get("focus")})  # fmt: skip
    return out


def _defect_for(defects: list[Defect], role: str) -> Defect | None:
    return next((d for d in defects if d.role == role), None)


def _reading_lines(task: TypedTask, request: Request) -> list[str]:
    def said(key: str) -> str:
        words = request.evidence.get(key)
        return f' ("{escape(words[0])}")' if words else ""

    names = [task.candidate_name(c) + said(f"candidate:{c}") for c in request.candidates]
    if request.all_candidates:
        names.append("all candidates" + said("all candidates"))
    facts = [task.facts[f].label + said(f"fact:{f}") for f in request.facts]
    own = set(task.facts_of(request.role)) if request.role else set(task.facts)
    contexts = [
        f"{escape(m.context)} ({'required' if m.required else 'another context'}"
        f'{", rejected" if m.negated else ""}: "{escape(m.words)}")'
        for m in request.contexts
        if m.fact in own
    ]
    intents = [i + said(i) for i in sorted(request.intents)]
    values = [str(v) for v in request.values]
    return [
        f"  candidates: {', '.join(names) or 'none named (every candidate)'}",
        f"  facts: {', '.join(facts) or 'none named'}",
        f"  contexts (of the role's facts): {'; '.join(contexts) or 'none'}",
        f"  numbers and dates: {', '.join(values) or 'none'}",
        f"  intents: {', '.join(intents) or 'none'}",
    ]


@cli.command("followup")
@click.argument("group_ref", metavar="GROUP")
@click.option(
    "--setting",
    type=click.Choice(SETTING_NAMES),
    required=True,
    help="The setting whose defect the message follows up.",
)
@click.option("--message", "messages", multiple=True, help="A follow-up message (repeatable).")
@click.option(
    "--messages",
    "messages_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help='A JSON Lines file: {"message": "...", "role": "..."} or plain JSON strings.',
)
@click.option("--role", help="The colleague addressed (default: the setting's designated role).")
@click.option("--focus", help="The candidate the conversation is about (for he/she).")
@format_option
def followup_command(
    group_ref: str,
    setting: str,
    messages: tuple[str, ...],
    messages_file: Path | None,
    role: str | None,
    focus: str | None,
    output_format: str,
    as_json: bool,
) -> int:
    """Show how the designated colleague reads follow-up messages, and whether each is targeted.

    GROUP is a group file or BENCH#GROUP_ID. The colleague is taken to have sent its first
    (defective) reply already; each message is read on its own. With --json (or --format
    json), one JSON object a line, one per message.
    """
    output = output_for(output_format, as_json)
    group = load_group(group_ref)
    name = cast("SettingName", setting)
    chosen = group.setting(name)
    if name == "reliable":
        raise ConfigError("the reliable setting has no defect to follow up: choose another")
    if not chosen.available or not chosen.defects:
        raise ConfigError(f"group {group.id} has no {setting} defect ({chosen.reason or 'none'})")
    task = typed_task(group)
    items = _messages(messages, messages_file)
    if not items:
        raise ConfigError("give a --message or a --messages file")
    defects = list(chosen.defects)
    for item in items:
        addressee = item.get("role") or role
        if addressee is None:
            if len(defects) > 1:
                roles = ", ".join(d.role for d in defects)
                raise ConfigError(f"{setting} has defects on {roles}: name one with --role")
            addressee = defects[0].role
        if addressee not in task.roles:
            raise ConfigError(f"unknown role {addressee!r} (roles: {', '.join(task.roles)})")
        item["role"] = addressee
        wanted = item.get("focus") or focus
        if wanted is not None and wanted not in task.candidates:
            raise ConfigError(
                f"unknown candidate {wanted!r} (candidates: {', '.join(task.candidates)})"
            )
        item["focus"] = wanted
        if not (item["message"] or "").strip():
            raise ConfigError("a follow-up message is empty")
    vocabulary = Vocabulary.of(task)
    for item in items:
        addressee = cast("str", item["role"])
        request = read_request(vocabulary, cast("str", item["message"]), addressee, item["focus"])
        defect = _defect_for(defects, addressee)
        decision = decide(task, defect, request) if defect is not None else None
        if output.is_json:
            click.echo(json.dumps(_json(task, setting, request, defect, decision)))
        else:
            _print(output, task, request, defect, decision)
    return EXIT_OK


def _json(
    task: TypedTask,
    setting: str,
    request: Request,
    defect: Defect | None,
    decision: FollowUpDecision | None,
) -> dict[str, object]:
    return {
        "message": request.text,
        "setting": setting,
        "defect": None if defect is None else defect.kind,
        "targeted": decision is not None and decision.targeted,
        "follows_up": decision is not None and decision.follows_up,
        "why": "no defect of this setting is on this role" if decision is None else decision.why(),
        "clauses": []
        if decision is None
        else [
            {"text": c.text, "satisfied": c.satisfied, "because": c.because}
            for c in decision.clauses
        ],
        **request_json(task, request),
    }


def _print(
    output: Output,
    task: TypedTask,
    request: Request,
    defect: Defect | None,
    decision: FollowUpDecision | None,
) -> None:
    role = cast("str", request.role)
    output.say(f"[bold]message:[/] {escape(request.text)}")
    output.say(f"  addressed to: {escape(task.role_name(role))} {escape(f'[{role}]')}")
    for line in _reading_lines(task, request):
        output.say(line)
    if defect is None or decision is None:
        output.say("  [bold]targeted: no[/] - no defect of this setting is on this role")
        return
    what = defect.kind if defect.fact is None else f"{defect.kind} {task.facts[defect.fact].label}"
    output.say(f"  follows up the {escape(what)} defect: {'yes' if decision.follows_up else 'no'}")
    for clause in decision.clauses:
        mark = "[green]yes[/]" if clause.satisfied else "[red]no[/]"
        output.say(f"  - {mark} {escape(clause.text)}: {escape(clause.because)}")
    verdict = "[green]yes[/]" if decision.targeted else "[red]no[/]"
    output.say(f"  [bold]targeted:[/] {verdict}")
