"""A message's content, read once: its text, its tool calls and the check of its parts, for
replay, render and the exporters alike (the parts themselves: ``convgit.conversation.parts``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def message_parts_error(content: list[Any]) -> str | None:
    for number, part in enumerate(content, 1):
        if not isinstance(part, dict) or not isinstance(part.get("type"), str):
            return f"has content part {number} that is not an object with a 'type'"
        if part["type"] in ("text", "thinking") and not isinstance(part.get(part["type"]), str):
            return f"has a {part['type']} part {number} without a string '{part['type']}'"
        if part["type"] == "tool_call" and not (
            isinstance(part.get("id"), str) and isinstance(part.get("name"), str)
        ):
            return f"has a tool_call part {number} without a string 'id' and 'name'"
    return None


def text_of(message: Mapping[str, Any]) -> str:
    """What a person reads of a message (a record or a replayed message): its content when that
    is a string, else its text parts joined by newlines."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "\n".join(
        str(part.get("text", ""))
        for part in content
        if isinstance(part, dict) and part.get("type") == "text"
    )


def tool_calls_of(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The ``tool_call`` parts of a message's content, in order (only an assistant's are calls
    that results answer: see ``tool_call_ids``)."""
    content = message.get("content")
    if not isinstance(content, list):
        return []
    return [p for p in content if isinstance(p, dict) and p.get("type") == "tool_call"]


def tool_call_ids(message: Mapping[str, Any]) -> list[str]:
    """The ids of the tool calls an assistant message (a record or a replayed message) makes."""
    if message.get("role") != "assistant":
        return []
    return [part["id"] for part in tool_calls_of(message)]
