"""The parts of a message's content: what each kind carries, checked strictly for what a writer
appends. Loading stays lenient (a part of a kind this version does not know is kept, and the
exporters report what they cannot send); these are the shapes a writer must give:

* ``text``: ``{"type": "text", "text": str}``
* ``image``: ``{"type": "image", "mediaType": "image/png", "data": <base64>}`` or
  ``{"type": "image", "url": "https://..." | "data:image/png;base64,..."}``; in user messages and
  tool results
* ``thinking``: ``{"type": "thinking", "thinking": str, "signature": str}`` (the signature is
  optional: only a provider's own signed thinking can be sent back to it)
* ``redacted_thinking``: ``{"type": "redacted_thinking", "data": str}``
* ``tool_call``: ``{"type": "tool_call", "id": str, "name": str, "input": object}``; a writer may
  give ``arguments`` (OpenAI's name, a JSON string or an object) instead, stored as ``input``

Thinking and tool calls belong to assistant messages.
"""

from __future__ import annotations

import re
from typing import Any

IMAGE_MEDIA_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")
ASSISTANT_ONLY = frozenset({"thinking", "redacted_thinking", "tool_call"})
_DATA_URL = re.compile(r"data:(image/[a-z+.-]+);base64,(.*)", re.DOTALL)


class PartError(ValueError):
    """A part a writer may not append; the message completes "Entry N ..."."""


def normalised_content(role: str, content: str | list[Any]) -> str | list[Any]:
    """``content`` as it is stored: every known part checked, ``arguments`` turned into
    ``input``. Raises ``PartError`` naming the first part that is wrong."""
    if isinstance(content, str):
        return content
    out: list[Any] = []
    for number, part in enumerate(content, 1):
        kind = part["type"]
        if kind in ASSISTANT_ONLY and role != "assistant":
            raise PartError(f"has a {kind} part {number} in a {role} message (only assistants)")
        if kind == "image" and role == "assistant":
            raise PartError(
                f"has an image part {number} in an assistant message (images belong in user"
                " messages and tool results)"
            )
        problem = _part_problem(part)
        if problem is not None:
            raise PartError(f"has a {kind} part {number} {problem}")
        if kind == "tool_call" and "arguments" in part:
            arguments = tool_input(part)
            part = {k: v for k, v in part.items() if k != "arguments"}
            part["input"] = arguments
        out.append(part)
    return out


def _part_problem(part: dict[str, Any]) -> str | None:
    kind = part["type"]
    if kind == "text":
        return None if isinstance(part.get("text"), str) else "without a string 'text'"
    if kind == "thinking":
        if "signature" in part and not isinstance(part["signature"], str):
            return "whose 'signature' is not a string"
        return None if isinstance(part.get("thinking"), str) else "without a string 'thinking'"
    if kind == "redacted_thinking":
        return None if isinstance(part.get("data"), str) else "without a string 'data'"
    if kind == "image":
        return _image_problem(part)
    if kind == "tool_call":
        if not (_non_empty(part.get("id")) and _non_empty(part.get("name"))):
            return "without a non-empty string 'id' and 'name'"
        if "input" in part and "arguments" in part:
            return "that gives both 'input' and 'arguments'"
        if "input" not in part and "arguments" not in part:
            return "without an 'input' object"
        if tool_input(part) is None:
            key = "input" if "input" in part else "arguments"
            return f"whose '{key}' is not a JSON object"
    return None  # a kind this version does not know: kept


def _image_problem(part: dict[str, Any]) -> str | None:
    url, data = part.get("url"), part.get("data")
    if (url is None) == (data is None):
        return "that needs either a 'url' or base64 'data' with a 'mediaType'"
    if url is not None:
        if not isinstance(url, str) or not url.startswith(("https://", "http://", "data:")):
            return "whose 'url' is not an http(s) or data: URL"
        return None if image_source(part) is not None else "whose data: URL is not base64 image"
    if part.get("mediaType") not in IMAGE_MEDIA_TYPES:
        return f"whose 'mediaType' is not one of {', '.join(IMAGE_MEDIA_TYPES)}"
    return None if _base64(data) else "whose 'data' is not base64"


def _non_empty(value: Any) -> bool:
    return isinstance(value, str) and value != ""


def _base64(data: Any) -> bool:
    import base64

    if not isinstance(data, str) or not data:
        return False
    try:
        base64.b64decode(data, validate=True)
    except ValueError:  # binascii.Error, and non-ASCII text
        return False
    return True


def tool_input(part: dict[str, Any]) -> dict[str, Any] | None:
    """A tool call's arguments as an object: ``input``, else ``arguments`` (an object or a JSON
    string of one); None when they are not an object. A call with neither has ``{}``."""
    if "input" in part:
        value = part["input"]
    elif "arguments" in part:
        value = part["arguments"]
        if isinstance(value, str):
            import json

            try:
                value = json.loads(value)
            except ValueError:
                return None
    else:
        return {}
    return value if isinstance(value, dict) else None


def image_source(part: dict[str, Any]) -> tuple[str, str] | str | None:
    """An image part as ``(media type, base64 data)``, or an http(s) URL as a string; None when
    it is neither (a data: URL counts as base64 data)."""
    url, data, media = part.get("url"), part.get("data"), part.get("mediaType")
    if isinstance(url, str):
        if url.startswith(("https://", "http://")):
            return url
        found = _DATA_URL.fullmatch(url)
        if found and found.group(1) in IMAGE_MEDIA_TYPES and _base64(found.group(2)):
            return found.group(1), found.group(2)
        return None
    if media in IMAGE_MEDIA_TYPES and isinstance(data, str) and data:
        return media, data
    return None
