"""What of an entry a search looks in, and its kind: one reading of a record, for the index that
finds it and for the line that shows it.

A message's text and thinking, each tool call's name and arguments (as compact JSON), a tool
result's content; a note's text; a compaction's or branch summary's summary; a system prompt.
Settings (model, thinking level) and custom records hold no words of the conversation."""

from __future__ import annotations

from typing import Any

from convgit.base import codec
from convgit.base.errors import ConvgitError

# the kinds `--role` takes: a message's role, or the kind of an entry that is no message
KINDS = ("user", "assistant", "tool", "note", "summary", "system")


def read(record: dict[str, Any]) -> tuple[str | None, str]:
    """``(kind(record), text(record))`` in one look (the index reads a million of them)."""
    if record.get("type") == "message":
        role, content = record.get("role"), record.get("content")
        found = role if type(role) is str else None
        return found, content if type(content) is str else _message(content)
    return kind(record), text(record)


def kind(record: dict[str, Any]) -> str | None:
    """The kind ``--role`` finds the entry by (None: an entry a search does not look in)."""
    found = record.get("type")
    if found == "message":
        role = record.get("role")
        return role if isinstance(role, str) else None
    if found in ("compaction", "branch_summary"):
        return "summary"
    if found in ("note", "system"):
        return str(found)
    return None


def text(record: dict[str, Any]) -> str:
    """The words a search looks in, parts joined by newlines ("" for none)."""
    found = record.get("type")
    if found == "message":
        return _message(record.get("content"))
    if found in ("compaction", "branch_summary"):
        return _str(record.get("summary"))
    if found in ("note", "system"):
        return _str(record.get("text"))
    return ""


def _message(content: Any) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    pieces = []
    for part in content:
        if not isinstance(part, dict):
            continue
        what = part.get("type")
        if what in ("text", "thinking"):
            pieces.append(_str(part.get(what)))
        elif what == "tool_call":
            arguments = part.get("input")
            shown = arguments if isinstance(arguments, str) else _json(arguments)
            # apart, as in the file: a string is never found across the name and the arguments
            pieces += [_str(part.get("name")), shown]
        elif what == "tool_result":  # an agent's result block kept as a part
            pieces.append(_message(part.get("content")))
    return "\n".join(p for p in pieces if p)


def _json(value: Any) -> str:
    try:
        return codec.dumps(value)
    except ConvgitError:
        return ""


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""
