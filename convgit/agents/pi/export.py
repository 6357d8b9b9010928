"""A root-to-leaf path as a pi v3 session file, the one ``pi --session FILE`` continues.

An entry imported from pi is written back from the record it keeps, byte for byte, when that
record already says what the path says (a v3 entry with the same parent); otherwise from the
kept record with its id and parent put in (v1 entries, which had none; a v2 ``hookMessage``
becomes v3's ``custom``). Any other entry is converted: messages, model and thinking changes,
compactions and branch summaries as pi's own entries, a note as a ``custom_message`` the model
sees, anything else as a ``custom`` entry pi keeps and never replays. The last line is the
path's last entry, which pi continues from.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from convgit.agents.reading import kept_text
from convgit.base import codec
from convgit.conversation.replay import NOTE_PREFIX
from convgit.schema import tool_calls_of

VERSION = 3
# pi needs usage on an assistant message; a converted one has no token counts of its own
NO_USAGE = {
    "input": 0,
    "output": 0,
    "cacheRead": 0,
    "cacheWrite": 0,
    "totalTokens": 0,
    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
}


WRITES = "pi v3"  # what `convgit export` says it wrote


def export(
    header: Mapping[str, Any],
    path: Sequence[Mapping[str, Any]],
    kept: Mapping[str, Mapping[str, Any]],
) -> bytes:
    """The pi file for ``path`` (the entries' raw records, root first) of the session whose
    header is ``header`` and whose kept records are ``kept`` (by key)."""
    from_pi = header.get("agent") == "pi"
    lines = [_header(header, kept.get("session") if from_pi else None)]
    writer = _Writer()
    for record in path:
        lines.append(writer.line(record, from_pi))
    return b"".join(line + b"\n" for line in lines)


def _header(header: Mapping[str, Any], kept: Mapping[str, Any] | None) -> bytes:
    text = None if kept is None else kept_text(kept)
    value = _decode(text)
    if value is not None and value.get("type") == "session" and isinstance(value.get("id"), str):
        if value.get("version") == VERSION:
            return text  # type: ignore[return-value]
        upgraded = {"type": "session", "version": VERSION}
        upgraded.update((k, v) for k, v in value.items() if k not in ("type", "version"))
        return codec.encode(upgraded).rstrip(b"\n")
    made: dict[str, Any] = {
        "type": "session",
        "version": VERSION,
        "id": str(uuid.uuid5(uuid.NAMESPACE_URL, f"convgit:{header.get('id')}")),
        "timestamp": header.get("created"),
        "cwd": header.get("cwd") or ".",
    }
    return codec.encode(made).rstrip(b"\n")


def _decode(text: bytes | None) -> dict[str, Any] | None:
    if text is None:
        return None
    try:
        value = codec.decode(text)
    except ValueError:
        return None
    return value if type(value) is dict else None


class _Writer:
    """Walks the path in order: pi's ids of the entries written so far, the model in force
    and the tool calls made, which converted entries need."""

    def __init__(self) -> None:
        self.ids: dict[str, str] = {}  # convgit id -> the id written for it
        self.model: tuple[str, str] | None = None
        self.tools: dict[str, str] = {}  # call id -> tool name

    def line(self, record: Mapping[str, Any], from_pi: bool) -> bytes:
        self._follow(record)
        parent = record.get("parentId")
        parent_id = None if parent is None else self.ids.get(str(parent), str(parent))
        kept = _decode(kept_text(record.get("native") or {})) if from_pi else None
        if kept is not None and _is_pi_entry(kept):
            ident = kept["id"] if isinstance(kept.get("id"), str) else str(record["id"])
            self.ids[str(record["id"])] = ident
            if kept.get("id") == ident and kept.get("parentId", 0) == parent_id and not is_v2(kept):
                return kept_text(record["native"]) or b""  # the very bytes pi wrote
            first = record.get("firstKeptId")
            first_id = ident if first is None else self.ids.get(str(first), str(first))
            return _encode(upgraded(kept, ident, parent_id, first_id))
        ident = str(record["id"])
        self.ids[ident] = ident
        base = {"id": ident, "parentId": parent_id, "timestamp": record.get("ts")}
        return _encode(self._convert(record, base))

    def _follow(self, record: Mapping[str, Any]) -> None:
        if record.get("type") == "model":
            self.model = (str(record.get("provider")), str(record.get("model")))
        if record.get("role") == "assistant":
            for part in tool_calls_of(record):
                self.tools[str(part.get("id"))] = str(part.get("name"))

    def _convert(self, record: Mapping[str, Any], base: dict[str, Any]) -> dict[str, Any]:
        kind = record.get("type")
        if kind == "message":
            return {"type": "message", **base, "message": self._message(record)}
        if kind == "model":
            return {
                "type": "model_change",
                **base,
                "provider": record["provider"],
                "modelId": record["model"],
            }
        if kind == "thinking":
            return {"type": "thinking_level_change", **base, "thinkingLevel": record["level"]}
        if kind == "compaction":
            kept = record.get("firstKeptId")
            first = base["id"] if kept is None else self.ids.get(str(kept), str(kept))
            return {
                "type": "compaction",
                **base,
                "summary": record["summary"],
                "firstKeptEntryId": first,
                "tokensBefore": 0,
            }
        if kind == "branch_summary":
            source = str(record["fromId"])
            return {
                "type": "branch_summary",
                **base,
                "fromId": self.ids.get(source, source),
                "summary": record["summary"],
            }
        if kind == "note":
            return {
                "type": "custom_message",
                **base,
                "customType": "convgit-note",
                "content": NOTE_PREFIX + str(record["text"]),
                "display": True,
            }
        if kind == "custom":
            return {
                "type": "custom",
                **base,
                "customType": record["kind"],
                "data": record.get("data"),
            }
        data = {k: v for k, v in record.items() if k not in ("id", "parentId", "ts", "native")}
        return {"type": "custom", **base, "customType": f"convgit-{kind}", "data": data}

    def _message(self, record: Mapping[str, Any]) -> dict[str, Any]:
        role, content = record["role"], record["content"]
        stamp = _millis(record.get("ts"))
        if role == "tool":
            call = str(record.get("toolCallId"))
            return {
                "role": "toolResult",
                "toolCallId": call,
                "toolName": self.tools.get(call, "tool"),
                "content": _blocks(content),
                "isError": bool(record.get("isError")),
                "timestamp": stamp,
            }
        if role == "user":
            return {"role": "user", "content": _blocks(content), "timestamp": stamp}
        blocks = _blocks(content)
        provider, model = self.model or ("convgit", "unknown")
        calls = any(block.get("type") == "toolCall" for block in blocks)
        return {
            "role": "assistant",
            "content": blocks,
            "api": "convgit",
            "provider": provider,
            "model": model,
            "usage": NO_USAGE,
            "stopReason": "toolUse" if calls else "stop",
            "timestamp": stamp,
        }


def _is_pi_entry(value: Mapping[str, Any]) -> bool:
    return isinstance(value.get("type"), str) and value.get("type") != "session"


def is_v2(value: Mapping[str, Any]) -> bool:
    message = value.get("message")
    return isinstance(message, dict) and message.get("role") == "hookMessage"


def upgraded(
    value: Mapping[str, Any], ident: str, parent: str | None, first_kept: str
) -> dict[str, Any]:
    """A kept pi record with the path's id and parent, in v3's words (``first_kept``: the
    entry a compaction keeps from, itself when it keeps nothing)."""
    out: dict[str, Any] = {"type": value["type"], "id": ident, "parentId": parent}
    out.update((k, v) for k, v in value.items() if k not in ("type", "id", "parentId"))
    if value["type"] == "compaction" and "firstKeptEntryIndex" in out:
        del out["firstKeptEntryIndex"]
        out["firstKeptEntryId"] = first_kept
    if is_v2(out):
        out["message"] = {**out["message"], "role": "custom"}
    return out


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    blocks: list[dict[str, Any]] = []
    for part in content:
        kind = part.get("type")
        if kind == "text":
            blocks.append({"type": "text", "text": part["text"]})
        elif kind == "thinking":
            block = {"type": "thinking", "thinking": part["thinking"]}
            if isinstance(part.get("signature"), str):
                block["thinkingSignature"] = part["signature"]
            blocks.append(block)
        elif kind == "tool_call":
            blocks.append(
                {
                    "type": "toolCall",
                    "id": part["id"],
                    "name": part["name"],
                    "arguments": part.get("input", {}),
                }
            )
        elif kind == "image" and isinstance(part.get("source"), dict):
            source = part["source"]
            if source.get("type") == "base64":
                blocks.append(
                    {
                        "type": "image",
                        "data": source.get("data"),
                        "mimeType": source.get("media_type"),
                    }
                )
    return blocks


def _millis(ts: Any) -> int:
    try:
        return int(datetime.fromisoformat(str(ts).replace("Z", "+00:00")).timestamp() * 1000)
    except ValueError:
        return 0


def _encode(value: Mapping[str, Any]) -> bytes:
    return codec.encode(dict(value)).rstrip(b"\n")
