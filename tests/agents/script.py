"""What a test scripts the model to say, and what it reads back from the requests it was sent.

A script is a list of `Reply`s, one per model request that carries tools (the agent's own loop);
a reply is text, tool calls, or both. `Item`s are one agent-neutral reading of a request's
conversation, so that a test can assert what the model was sent whichever wire format carried it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

JsonObject = dict[str, Any]


@dataclass(frozen=True)
class Call:
    """One tool call. ``input`` is the tool's arguments; a string is a Codex custom tool's input
    (``apply_patch``). ``id`` defaults to one the server makes unique per request."""

    name: str
    input: JsonObject | str
    id: str | None = None


@dataclass(frozen=True)
class Reply:
    """One model turn: text (possibly empty) then tool calls; with calls the turn stops for tool
    use (``tool_use``, ``tool_calls``), without them it ends (``end_turn``, ``stop``)."""

    text: str = ""
    calls: tuple[Call, ...] = field(default=())

    def __post_init__(self) -> None:
        if not self.text and not self.calls:
            raise ValueError("a Reply needs text, calls or both")


def say(text: str) -> Reply:
    """A reply of text alone: the agent's turn ends."""
    return Reply(text=text)


def call(name: str, input: JsonObject | str, *, id: str | None = None, text: str = "") -> Reply:
    """A reply that calls one tool (after optional text)."""
    return Reply(text=text, calls=(Call(name, input, id),))


@dataclass(frozen=True)
class Item:
    """One piece of the conversation a request carried, in order.

    kind: ``prompt`` (a user's text), ``context`` (text the agent injected as user or developer:
    it starts with ``<``, or has the developer role), ``text`` (an assistant reply), ``call`` (an
    assistant tool call: ``name``, ``input``, ``call_id``), ``result`` (a tool's output: ``text``,
    ``call_id``)."""

    kind: str
    text: str = ""
    name: str = ""
    input: object = None
    call_id: str = ""
