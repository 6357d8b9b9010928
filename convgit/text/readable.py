"""A message's content as a person reads it: its text, each tool call as ``→ name(args)``, a
tool result's text, an image or a thinking block by what it is; never the raw JSON of its
parts. ``convgit context`` (text) prints messages so, and ``convgit show`` a whole entry."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from convgit.base import codec

if TYPE_CHECKING:
    from convgit.conversation.view import SessionView
    from convgit.store.sidecar import SnapshotInfo

ARGUMENT_WIDTH = 200  # characters of one argument's value a call line shows
LEFT_NAMED = 5  # the paths a snapshot left alone that `show` names (the rest counted)


def content_lines(content: Any) -> list[str]:
    """The lines of a message's content (a string, or a list of parts)."""
    if isinstance(content, str):
        return content.split("\n")
    if not isinstance(content, list):
        return [codec.dumps(content)]
    out: list[str] = []
    for part in content:
        out += part_lines(part)
    return out


def part_lines(part: Any) -> list[str]:
    """One part of a message's content as lines."""
    if not isinstance(part, dict):
        return [codec.dumps(part)]
    kind = part.get("type")
    if kind == "text":
        return str(part.get("text", "")).split("\n")
    if kind == "tool_call":
        return [call_line(part)]
    if kind == "thinking":
        return [f"(thinking) {line}" for line in str(part.get("thinking", "")).split("\n")]
    if kind == "redacted_thinking":
        return ["(thinking, redacted by the provider)"]
    if kind == "image":
        url = part.get("url")
        if isinstance(url, str) and not url.startswith("data:"):
            return [f"[image {url}]"]
        return [f"[image {part.get('mediaType') or 'data'}]"]
    return [f"[{kind} part]"]


def call_line(part: Mapping[str, Any]) -> str:
    """A tool call as ``→ name(key=value, ...)``, each value as JSON, long ones cut."""
    arguments = part.get("input", part.get("arguments"))
    if isinstance(arguments, str):
        shown = _cut(arguments)
    elif isinstance(arguments, dict):
        shown = ", ".join(f"{key}={_cut(codec.dumps(value))}" for key, value in arguments.items())
    else:
        shown = "" if arguments is None else _cut(codec.dumps(arguments))
    return f"→ {part.get('name')}({shown})"


def _cut(text: str) -> str:
    text = text.replace("\n", "\\n")
    return text if len(text) <= ARGUMENT_WIDTH else text[: ARGUMENT_WIDTH - 1] + "…"


def message_lines(message: Mapping[str, Any], call_names: Mapping[str, str]) -> list[str]:
    """A replayed message as ``role: text`` (later lines as they are); a tool result names its
    call's tool (``call_names``: call id -> tool name) and says when it is an error."""
    role = str(message.get("role"))
    if role == "tool":
        call = str(message.get("toolCallId"))
        role = f"tool ({call_names.get(call) or call})"
        if message.get("isError"):
            role += " error"
    lines = content_lines(message.get("content"))
    return [f"{role}: {lines[0] if lines else ''}", *lines[1:]]


def call_names(messages: list[dict[str, Any]]) -> dict[str, str]:
    """Tool call id -> the tool's name, from every call the ``messages`` make."""
    found: dict[str, str] = {}
    for message in messages:
        content = message.get("content")
        for part in content if isinstance(content, list) else []:
            if isinstance(part, dict) and part.get("type") == "tool_call":
                found[str(part.get("id"))] = str(part.get("name"))
    return found


def entry_lines(
    view: SessionView,
    ident: str,
    *,
    snapshot: SnapshotInfo | None,
    previous: SnapshotInfo | None,
    children: list[str],
    let_go: str | None = None,
) -> list[str]:
    """``convgit show``: one entry's fields, then its content, indented as ``git show`` does;
    ``previous`` is the snapshot of the nearest entry above it that has one; ``let_go``: the
    day gc let its snapshot go, if it did."""
    short = view.short_id
    record = view.entries[ident]
    head = f"entry {short(ident)}"
    if ident in view.labels:
        head += f" [{view.labels[ident]}]"
    if ident == view.leaf:
        head += " ← context"
    kind = str(record.get("type"))
    fields = [("kind", kind)]
    if kind == "message":
        role = str(record.get("role"))
        if role == "tool":
            role += f" (the result of call {record.get('toolCallId')})"
            if record.get("isError"):
                role += ", an error"
        fields = [("role", role)]
    fields.append(("time", str(record.get("ts"))))
    parent = record.get("parentId")
    fields.append(("parent", "none (a root)" if parent is None else short(str(parent))))
    if children:
        fields.append(("children", ", ".join(short(child) for child in children)))
    words = _snapshot_words(snapshot, previous, short)
    if snapshot is None and let_go is not None:
        words = f"none: its snapshot was let go by gc on {let_go}"
    fields.append(("snapshot", words))
    out = [head, *(f"{name + ':':<10}{value}" for name, value in fields), ""]
    body = content_lines(record.get("content")) if kind == "message" else _other_lines(record)
    return out + [f"    {line}" if line else "" for line in body]


def _snapshot_words(
    snapshot: SnapshotInfo | None, previous: SnapshotInfo | None, short: Callable[[str], str]
) -> str:
    if snapshot is None:
        return "none"
    words = f"◆ {snapshot.commit[:12]}, {snapshot.files} file{'' if snapshot.files == 1 else 's'}"
    if previous is None:
        words += "; the first on its path"
    else:
        words += f"; the previous on its path is {short(previous.entry)}'s"
    if snapshot.skipped:  # what `git add -A` would have taken and the snapshot did not
        named = [f"{s['path']} ({s['reason']})" for s in snapshot.skipped[:LEFT_NAMED]]
        more = len(snapshot.skipped) - len(named)
        words += "; left alone: " + ", ".join(named) + (f", and {more} more" if more else "")
    return words


def _other_lines(record: Mapping[str, Any]) -> list[str]:
    """An entry that is no message: what it carries, in full."""
    kind = record.get("type")
    if kind == "model":
        return [f"{record.get('provider')}/{record.get('model')}"]
    if kind == "thinking":
        return [f"thinking level {record.get('level')}"]
    if kind == "system":
        text = record.get("text")
        return ["(no system prompt)"] if text is None else str(text).split("\n")
    if kind in ("compaction", "branch_summary"):
        return str(record.get("summary")).split("\n")
    if kind == "note":
        return [f"({record.get('source', 'convgit')})", *str(record.get("text")).split("\n")]
    return [codec.dumps({k: v for k, v in record.items() if k not in ("id", "parentId", "ts")})]
