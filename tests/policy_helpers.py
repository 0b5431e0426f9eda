"""A policy colleague model for tests (``--colleague-mode policy``): it keeps the policy by
replaying its own conversation through the scripted colleagues, and words replies its own way.
Plain function of the messages, so any mock model (the project's, inspect's) can serve it."""

from __future__ import annotations

from collections.abc import Callable

from uncobench_z3.evaluation import DUE_PREFIX, SILENCE, PreparedGroup, ScriptedColleagues
from uncobench_z3.models import ChatMessage, ToolDef
from uncobench_z3.settings import TaskGroup

__all__ = ["Responder", "oracle"]

Responder = Callable[[list[ChatMessage], list[ToolDef]], str]


def oracle(group: TaskGroup, leak: bool = False) -> Responder:
    """A colleague that follows the policy: it replays its own conversation through the
    scripted policy (the setting read from its prompt) and words the reply its own way;
    ``leak`` states the true records where the policy withholds them."""
    prepared = PreparedGroup.of(group)
    names = {card.name: card.id for card in prepared.rendered.role_directory}

    def respond(messages: list[ChatMessage], tools: list[ToolDef]) -> str:
        system = messages[0].content
        role = next(i for n, i in names.items() if system.startswith(f"You are {n} in"))
        setting = system.split("\nsetting: ", 1)[1].split("\n", 1)[0]
        colleagues = ScriptedColleagues(
            prepared.task, group.setting(setting).defects, prepared.rendered.style, prepared.book
        )
        reply = None
        for message in messages[1:]:
            if message.role != "user":
                continue
            if message.content.startswith(DUE_PREFIX):
                reply = next(r for r in colleagues.wait() if r.role == role)
            else:
                reply = colleagues.reply(role, message.content)
        assert reply is not None
        if reply.text is None:
            return f'"{SILENCE}"'
        stated = [
            prepared.book.faithful[(s.candidate, s.fact)] if leak else s for s in reply.stated
        ]
        lines = [prepared.book.line(s) for s in stated]
        return "Here is what I have on file:\n" + "\n".join(f"- {line}" for line in lines)

    return respond
