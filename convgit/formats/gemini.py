"""Gemini CLI chat files (``~/.gemini/tmp/<project>/chats/session-<time>-<id>.json``).

Gemini CLI keeps a session as one JSON document that it rewrites whole after every change, so
an import always reads the whole document and keeps only what the session does not have yet
(by message id). Its messages are a line, each after the one before:

* a ``user`` message is a user entry with the message's id;
* a ``gemini`` message is an assistant entry with its id (its ``thoughts`` as thinking parts,
  then its text), followed by one assistant entry per tool call and then one tool entry per
  call that has its ``result``: Gemini records the call and its result inside the message;
  a ``model`` entry comes first when the model differs from the one before;
* ``info``, ``warning`` and ``error`` messages are what Gemini CLI showed the user, not the
  model: ``custom`` entries, kept and not replayed.

A newer version of the document adds what is new where it belongs: a tool call or result that
a message gained hangs below that message's last entry; messages after a rewind branch from the
last message the rewind kept. Every message keeps its exact text; a message whose text changed
keeps the new text beside the first.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from convgit import codec
from convgit.errors import RefusedError
from convgit.formats.importing import (
    Batch,
    Cursor,
    Importer,
    Known,
    Record,
    Report,
    entry_id,
    kept_record,
    native_field,
    read_document,
)

SHOWN_TO_USER = ("info", "warning", "error")  # message types the model never sees
PROVIDER = "google"


class NotAGeminiSessionError(RefusedError):
    """The file is not a Gemini CLI chat this convgit can read."""


def session_id(data: bytes) -> str | None:
    """The ``sessionId`` of a whole chat file, or None when it is none."""
    try:
        value = codec.decode(data.removeprefix(b"\xef\xbb\xbf"))
    except ValueError:
        return None
    if type(value) is dict and type(value.get("sessionId")) is str:
        return str(value["sessionId"])
    return None


def parse(data: bytes, cursor: Cursor, known: Known) -> Batch:
    """The batch for a whole chat file; see the module docstring."""
    document, messages = _read(data)
    report = Report()
    out: list[dict[str, Any]] = []
    ts = document.get("startTime") if type(document.get("startTime")) is str else None
    envelope = {k: v for k, v in document.items() if k != "messages"}
    raw = codec.dumps(envelope).encode()
    out.append(kept_record(Record(1, 0, raw, envelope), "session", None, ts or _EPOCH))
    seen: dict[str, int] = {}
    previous: str | None = None
    model: str | None = None
    new: list[str] = []
    for number, record in enumerate(messages, 1):
        value = record.value
        if value is None or type(value.get("id")) is not str or not value["id"]:
            raise NotAGeminiSessionError(
                f"Message {number} of this Gemini CLI chat (line {record.line}) has no id;"
                " convgit cannot tell it from the others when Gemini rewrites the file."
            )
        if value["id"] in seen:
            raise NotAGeminiSessionError(
                f"Messages {seen[value['id']]} and {number} of this Gemini CLI chat have the"
                f" same id {value['id']}."
            )
        seen[value["id"]] = number
        stamp = value.get("timestamp") if type(value.get("timestamp")) is str else None
        ts = stamp or ts or _EPOCH
        made, model = _entries(value, record, model, report)
        previous = _chain(made, previous, known, ts, out, new)
    return Batch(out, Cursor(), leaf=new[-1] if new else None, report=report)


IMPORTER = Importer(
    agent="gemini", title="Gemini CLI", session_id=session_id, parse=parse, appends=False
)

_EPOCH = "1970-01-01T00:00:00.000Z"


def _read(data: bytes) -> tuple[dict[str, Any], list[Record]]:
    try:
        document, messages = read_document(data.removeprefix(b"\xef\xbb\xbf"), "messages")
    except UnicodeDecodeError:
        raise NotAGeminiSessionError(
            "This file is not a Gemini CLI chat: it is not UTF-8."
        ) from None
    except (ValueError, IndexError):
        text = data.strip()
        if text.startswith(b"{") and not text.endswith(b"}"):
            raise NotAGeminiSessionError(
                "This Gemini CLI chat stops before the end of its JSON document.",
                "Gemini CLI may be rewriting it: import it again when it is done",
            ) from None
        raise NotAGeminiSessionError(
            "This file is not a Gemini CLI chat: it is not one JSON object."
        ) from None
    if type(document.get("messages")) is not list:
        raise NotAGeminiSessionError("This file is not a Gemini CLI chat: it has no messages list.")
    return document, messages


def _entries(
    value: dict[str, Any], record: Record, model: str | None, report: Report
) -> tuple[list[dict[str, Any]], str | None]:
    """The entries one message makes, in order, without parents; and the model after it."""
    key = entry_id(value["id"])
    kind = value.get("type")
    native = native_field(record, key)
    if kind == "user":
        return [
            {
                "type": "message",
                "id": key,
                "role": "user",
                "content": _content(value),
                "native": native,
            }
        ], model
    if kind in SHOWN_TO_USER:
        return [
            {"type": "custom", "id": key, "kind": f"gemini.{kind}", "data": None, "native": native}
        ], model
    if kind != "gemini":
        report.keep(f"message type {kind}", record.line)
        report.note(record.line, f"is a message of type {kind!r}: kept, not replayed")
        return [
            {"type": "custom", "id": key, "kind": f"gemini.{kind}", "data": None, "native": native}
        ], model
    made: list[dict[str, Any]] = []
    name = value.get("model")
    if type(name) is str and name and name != model:
        made.append(
            {
                "type": "model",
                "id": f"model-{key}",
                "provider": PROVIDER,
                "model": name,
                "native": {"key": f"model-{key}", "in": key},
            }
        )
        model = name
    parts = [_thought(t) for t in value.get("thoughts") or [] if type(t) is dict]
    text = _content(value)
    parts += (
        [{"type": "text", "text": text}]
        if isinstance(text, str) and text
        else (text if isinstance(text, list) else [])
    )
    made.append(
        {"type": "message", "id": key, "role": "assistant", "content": parts, "native": native}
    )
    calls = [c for c in value.get("toolCalls") or [] if type(c) is dict]
    ids = [_call_id(call, key, n) for n, call in enumerate(calls)]
    for call, ident in zip(calls, ids, strict=True):
        part: dict[str, Any] = {
            "type": "tool_call",
            "id": ident,
            "name": str(call.get("name", "tool")),
            "input": call.get("args") if type(call.get("args")) is dict else {},
        }
        made.append(
            {
                "type": "message",
                "id": _part_id("call", ident),
                "role": "assistant",
                "content": [part],
                "native": {"key": _part_id("call", ident), "in": key},
            }
        )
    for call, ident in zip(calls, ids, strict=True):
        if call.get("result") is None:
            continue
        result = _part_id("result", ident)
        made.append(
            {
                "type": "message",
                "id": result,
                "role": "tool",
                "toolCallId": ident,
                "isError": call.get("status") == "error",
                "content": _result_text(call),
                "native": {"key": result, "in": key},
            }
        )
    return made, model


def _chain(
    made: list[dict[str, Any]],
    previous: str | None,
    known: Known,
    ts: str,
    out: list[dict[str, Any]],
    new: list[str],
) -> str | None:
    """Give the message's entries their parents and add them to ``out``; returns the entry the
    next message hangs below. Entries the session has keep their parents; new ones hang below
    the message's last entry the session has (or the one before the message)."""
    tail = previous
    for entry in made:  # the deepest entry the session has of this message
        had = known.entries.get(entry["id"])
        if had is not None:
            entry["parentId"] = had.get("parentId")
            tail = entry["id"] if _below(entry["id"], tail, known) else tail
    for entry in made:
        if entry["id"] not in known.entries:
            entry["parentId"] = tail
            tail = entry["id"]
            new.append(entry["id"])
        entry["ts"] = ts
        out.append(entry)
    return tail


def _below(ident: str, tail: str | None, known: Known) -> bool:
    """Whether known entry ``ident`` is ``tail`` or below it (the message's chain grows down)."""
    node: Any = ident
    for _ in range(len(known.entries) + 1):
        if node == tail:
            return True
        if node is None or node not in known.entries:
            return tail is None
        node = known.entries[node].get("parentId")
    return False


def _part_id(kind: str, call: str) -> str:
    """The id of a call's entry or its result's: short, and the same for the same call (Gemini's
    call ids are long and share their start: ``read_file-<time>-<random>``)."""
    return f"{kind}-{hashlib.blake2b(call.encode(), digest_size=4).hexdigest()}"


def _call_id(call: Mapping[str, Any], message: str, number: int) -> str:
    ident = call.get("id")
    return ident if type(ident) is str and ident else f"{message}-call{number + 1}"


def _content(value: Mapping[str, Any]) -> str | list[dict[str, Any]]:
    content = value.get("content")
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts: list[dict[str, Any]] = []
    for part in content:
        if type(part) is dict and type(part.get("text")) is str:
            parts.append({"type": "text", "text": part["text"]})
        else:
            parts.append({"type": "gemini.part", "value": part})
    return parts


def _thought(thought: Mapping[str, Any]) -> dict[str, Any]:
    subject, description = thought.get("subject"), thought.get("description")
    text = str(description) if description is not None else ""
    if isinstance(subject, str) and subject:
        text = f"**{subject}**\n\n{text}" if text else f"**{subject}**"
    return {"type": "thinking", "thinking": text}


def _result_text(call: Mapping[str, Any]) -> str:
    """What the tool answered, as Gemini sent it back to the model (``functionResponse``)."""
    texts = []
    result = call.get("result")
    for part in result if isinstance(result, list) else [result]:
        response = part.get("functionResponse", {}).get("response") if type(part) is dict else None
        if type(response) is dict:
            found = response.get("output", response.get("error"))
            texts.append(found if isinstance(found, str) else codec.dumps(response))
        elif type(part) is dict and type(part.get("text")) is str:
            texts.append(part["text"])
    if texts:
        return "\n".join(texts)
    display = call.get("resultDisplay")
    return display if isinstance(display, str) else codec.dumps(result)
