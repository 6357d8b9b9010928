"""Claude Code's message content (the Anthropic API's blocks, as its transcript lines hold
them) as convgit message parts: text, thinking with its signature, ``tool_use`` as
``tool_call``, a ``tool_result`` block as a tool message, images and other blocks as they are.
Each function returns None for content it cannot read, so the caller keeps the line instead."""

from __future__ import annotations

from typing import Any

_LOCAL_COMMAND = ("<command-name>", "<local-command-", "<command-message>")


def field_of(value: dict[str, Any], name: str, key: str) -> Any:
    inner = value.get(name)
    return inner.get(key) if isinstance(inner, dict) else None


def assistant_message(content: str | list[dict[str, Any]]) -> dict[str, Any]:
    return {"type": "message", "role": "assistant", "content": content}


def mirrored_message(value: dict[str, Any]) -> dict[str, Any] | None:
    """The subagent message an ``agent_progress`` line carries, if it carries one."""
    data = value.get("data")
    if not isinstance(data, dict) or data.get("type") != "agent_progress":
        return None
    inner = data.get("message")
    if not isinstance(inner, dict) or not isinstance(inner.get("uuid"), str):
        return None
    return inner


def queued_prompt(value: dict[str, Any]) -> list[dict[str, Any]] | None:
    """A prompt the user sent while a turn was running, which Claude hands the model inside
    that turn (a ``queued_command`` attachment), as a user message; None for any other line."""
    attachment = value.get("attachment")
    if not isinstance(attachment, dict) or attachment.get("type") != "queued_command":
        return None
    if attachment.get("commandMode", "prompt") != "prompt":
        return None
    made = user_messages(attachment.get("prompt"))
    if made is None or any(m["role"] != "user" for m in made):
        return None
    return made


def user_messages(content: Any) -> list[dict[str, Any]] | None:
    """A user line's content as convgit messages: a tool message per ``tool_result`` block,
    then a user message with the rest; None when it is not a string or a list of blocks."""
    if isinstance(content, str):
        return [{"type": "message", "role": "user", "content": content}]
    if not isinstance(content, list) or not all(isinstance(b, dict) for b in content):
        return None
    made: list[dict[str, Any]] = []
    rest: list[dict[str, Any]] = []
    for block in content:
        if block.get("type") == "tool_result":
            call = block.get("tool_use_id")
            if not isinstance(call, str):
                return None
            result = content_parts(block.get("content"))
            if result is None:
                return None
            made.append(
                {
                    "type": "message",
                    "role": "tool",
                    "toolCallId": call,
                    "isError": bool(block.get("is_error")),
                    "content": result,
                }
            )
        else:
            rest.append(block)
    if rest or not made:
        rest_parts = content_parts(rest)
        if rest_parts is None:
            return None
        made.append({"type": "message", "role": "user", "content": rest_parts})
    return made


def content_parts(content: Any) -> str | list[dict[str, Any]] | None:
    """Claude's content blocks as convgit parts: text and images in convgit's shape, others as they
    are."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return None
    parts: list[dict[str, Any]] = []
    for block in content:
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            return None
        if block["type"] == "text":
            if not isinstance(block.get("text"), str):
                return None
            parts.append({"type": "text", "text": block["text"]})
        elif block["type"] in ("thinking", "tool_call"):
            return None  # a user block cannot be these
        elif block["type"] == "image":
            parts.append(image_part(block))
        else:
            parts.append(block)
    return parts


def image_part(block: dict[str, Any]) -> dict[str, Any]:
    """Claude's image block (``source``: base64 or url) as convgit's image part; a source of
    another kind stays as it came (kept, and reported by the exporters, never sent half-read)."""
    source = block.get("source")
    if isinstance(source, dict):
        if source.get("type") == "base64" and isinstance(source.get("data"), str):
            return {"type": "image", "mediaType": source.get("media_type"), "data": source["data"]}
        if source.get("type") == "url" and isinstance(source.get("url"), str):
            return {"type": "image", "url": source["url"]}
    return block


def assistant_content(content: Any) -> str | list[dict[str, Any]] | None:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return None
    parts: list[dict[str, Any]] = []
    for block in content:
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            return None
        kind = block["type"]
        if kind == "text":
            if not isinstance(block.get("text"), str):
                return None
            parts.append({"type": "text", "text": block["text"]})
        elif kind == "thinking":
            if not isinstance(block.get("thinking"), str):
                return None
            part = {"type": "thinking", "thinking": block["thinking"]}
            if isinstance(block.get("signature"), str):
                part["signature"] = block["signature"]
            parts.append(part)
        elif kind == "tool_use":
            if not isinstance(block.get("id"), str) or not isinstance(block.get("name"), str):
                return None
            parts.append(
                {
                    "type": "tool_call",
                    "id": block["id"],
                    "name": block["name"],
                    "input": block.get("input", {}),
                }
            )
        elif kind == "tool_call":
            return None
        else:
            parts.append(block)
    return parts


def plain_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(b.get("text", ""))
            for b in content
            if isinstance(b, dict) and b.get("type") == "text"
        )
    return ""


def is_local_command(content: Any) -> bool:
    text = content if isinstance(content, str) else plain_text(content)
    return text.lstrip().startswith(_LOCAL_COMMAND)
