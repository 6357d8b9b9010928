"""Gemini CLI chat files (``~/.gemini/tmp/<project>/chats/session-<time>-<id>.json``).

Gemini CLI keeps a session as one JSON document that it rewrites whole after every change, so
an import always reads the whole document and keeps only what the session does not have yet
(by message id). Newer versions write the same messages as JSON lines instead
(``session-*.jsonl``): a line of metadata, then each message as it is written or updated (again
whole, under its id), ``{"$rewindTo": id}`` where the user rewound and ``{"$set": {...}}`` for
metadata (with ``messages``: the whole list again). Either way the messages are a line, each
after the one before:

* a ``user`` message is a user entry with the message's id;
* a ``gemini`` message is an assistant entry with its id (its ``thoughts`` as thinking parts,
  then its text), followed by one assistant entry per tool call and then one tool entry per
  call that has its ``result``: Gemini records the call and its result inside the message;
  a ``model`` entry comes first when the model differs from the one before;
* ``info``, ``warning`` and ``error`` messages are what Gemini CLI showed the user, not the
  model: ``custom`` entries, kept and not replayed.

A list of messages (a document's, a ``$set``'s) is read as Gemini CLI's own loader reads it
back, a map by id: a message without an id is skipped, and one with the id of a message before it
takes that one's place (Gemini 0.61 writes a call's answers twice so, at a second resume begun in
a later minute than the file's name). Either is named in the report, its text kept, and the rest
imports.

A resumed session's history, which Gemini CLI writes again whole (a ``$set`` of every message:
a call's message with the call as a part instead of its ``toolCalls``, and its answers again as
a ``user`` message ``<id>_response``), stays one line: the echo makes no entry, and a message
written again with less keeps the deepest entry it had.

What a message gains later (a tool call, a result) hangs below that message's last entry;
messages after a rewind branch from the last message the rewind kept, so the rewound ones stay
as the branch left behind. Every message keeps its exact text; a message whose text changed
keeps the new text beside the first.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from convgit.agents.gemini import NAME, TITLE
from convgit.agents.reading import (
    Batch,
    Cursor,
    Importer,
    ImportReport,
    Known,
    Read,
    Record,
    derived_id,
    entry_id,
    kept_record,
    native_field,
    read_document,
    read_jsonl,
)
from convgit.base import codec
from convgit.base.errors import NotAGeminiSessionError

SHOWN_TO_USER = ("info", "warning", "error")  # message types the model never sees
PROVIDER = "google"


def session_id(data: bytes) -> str | None:
    """The ``sessionId`` of a whole chat file (a document, or the first of its lines), or None
    when it is none."""
    data = data.removeprefix(_BOM)
    for text in (data, data.split(b"\n", 1)[0]):
        try:
            value = codec.decode(text)
        except ValueError:
            continue
        if type(value) is dict and type(value.get("sessionId")) is str:
            return str(value["sessionId"])
    return None


def parse(data: bytes, cursor: Cursor, known: Known) -> Batch:
    """The batch for a whole chat file; see the module docstring."""
    chat = _Chat(known)
    lines = _lines(data)
    if lines is None:
        document, messages = _read(data)
        envelope = {k: v for k, v in document.items() if k != "messages"}
        raw = codec.dumps(envelope).encode()
        chat.keep(Record(1, 0, raw, envelope), "session", _stamp(document.get("startTime")))
        chat.document(messages)
    else:
        chat.log(lines.records)
        if lines.torn is not None:
            chat.report.note(
                lines.torn,
                "is incomplete (Gemini may still be writing it): left for the next import",
            )
    return Batch(chat.out, Cursor(), leaf=chat.new[-1] if chat.new else None, report=chat.report)


IMPORTER = Importer(agent=NAME, title=TITLE, session_id=session_id, parse=parse, appends=False)

_EPOCH = "1970-01-01T00:00:00.000Z"
_BOM = b"\xef\xbb\xbf"


def _lines(data: bytes) -> Read | None:
    """The records of a chat written as JSON lines, or None for a chat document (whose first
    line is not a whole object, or is the whole document)."""
    first = data.removeprefix(_BOM).split(b"\n", 1)[0]
    try:
        value = codec.decode(first)
    except ValueError:
        return None
    if type(value) is not dict or type(value.get("sessionId")) is not str or "messages" in value:
        return None
    return read_jsonl(data.removeprefix(_BOM))


class _Chat:
    """The messages of one import in the order the chat has them, and the entries they make:
    ``out`` (what the batch emits), ``new`` (ids the session does not have)."""

    def __init__(self, known: Known) -> None:
        self.known = known
        self.report = ImportReport()
        self.out: list[dict[str, Any]] = []
        self.new: list[str] = []
        self.made: dict[str, str | None] = {}  # entries made by this import: id -> parent
        self.order: list[str] = []  # the chat's messages now, by id
        self.tails: dict[str, str | None] = {}  # message -> the entry the next one hangs below
        self.models: dict[str, str | None] = {}  # message -> the model in force after it
        self.ts = _EPOCH

    def keep(self, record: Record, key: str, ts: str | None = None, at: str = "") -> None:
        """Keep ``record`` as it is, at entry ``at`` (default: where the chat is now)."""
        if not at:
            at = (self.tails.get(self.order[-1]) if self.order else None) or ""
        self.out.append(kept_record(record, key, at or None, ts or self.ts))

    def document(self, messages: list[Record], within: str | None = None) -> None:
        """A whole list of messages (a document's, or a ``$set`` line's: ``within`` is its
        key): the chat is them, in their order, read as Gemini CLI reads them back (a map by
        id): a message without an id is skipped, and one whose id came before takes the
        earlier one's place. Either is named in the report; its text is kept (a ``$set`` line
        keeps it whole)."""
        self.order = []
        seen: dict[str, int] = {}
        for number, record in enumerate(messages, 1):
            value = record.value
            where = f"message {number} of {'the list' if within else 'the document'}"
            if value is None or type(value.get("id")) is not str or not value["id"]:
                if within is None:
                    self.keep(record, derived_id(record, "x"))
                self.report.keep("message without an id", record.line)
                self.report.note(
                    record.line,
                    f"has {where} without an id: skipped, as Gemini CLI skips it; kept as it is",
                )
                continue
            ident = value["id"]
            if ident in seen:
                if within is None:  # its text, beside the earlier one's
                    self.keep(record, derived_id(record, "u"), at=entry_id(ident))
                self.report.note(
                    record.line,
                    f"has {where} with the id of message {seen[ident]} ({ident}): read in"
                    " its place, as Gemini CLI reads it; the earlier one's entries stay",
                )
            else:
                seen[ident] = number
            self.message(value, record, within)

    def log(self, records: list[Record]) -> None:
        """A chat written as JSON lines, applied line by line as Gemini CLI reads it back."""
        for number, record in enumerate(records):
            value = record.value
            stamp = None if value is None else _stamp(value.get("lastUpdated"))
            if number == 0:
                self.keep(record, "session", _stamp(value and value.get("startTime")))
            elif value is None:
                self.keep(record, derived_id(record, "x"))
                self.report.note(record.line, f"{record.problem}: kept as it is, not interpreted")
            elif type(value.get("$rewindTo")) is str:
                self.keep(record, derived_id(record, "w"))
                target = value["$rewindTo"]
                self.order = self.order[: self.order.index(target)] if target in self.order else []
            elif type(value.get("$set")) is dict:
                self.keep(record, derived_id(record, "m"), stamp)
                messages = value["$set"].get("messages")
                if type(messages) is list:
                    elements = [Record(record.line, n, codec.dumps(m).encode(), m)
                                if type(m) is dict else Record(record.line, n, b"", None)
                                for n, m in enumerate(messages)]  # fmt: skip
                    self.document(elements, within=derived_id(record, "m"))
            elif type(value.get("id")) is str and value["id"]:
                again = value["id"] in self.order
                self.message(value, record, None)
                if again:  # written again, whole: its new text kept beside the first
                    self.keep(record, derived_id(record, "u"), at=entry_id(value["id"]))
            else:
                self.keep(record, derived_id(record, "x"))
                self.report.keep("line", record.line)
                self.report.note(record.line, "is no message, rewind or metadata: kept")

    def message(self, value: dict[str, Any], record: Record, within: str | None) -> None:
        ident = entry_id(value["id"])
        if value["id"] not in self.order:
            self.order.append(value["id"])
        position = self.order.index(value["id"])
        before = self.order[position - 1] if position else None
        if before is not None and _echoes(value, before):
            # the answers of the call before it, which a resumed session's history repeats:
            # no entry (its call's results are); its text kept (a ``$set`` line keeps it whole)
            if within is None:
                self.keep(record, derived_id(record, "r"))
            self.tails[value["id"]] = self.tails.get(before)
            self.models[value["id"]] = self.models.get(before)
            return
        stamp = _stamp(value.get("timestamp"))
        self.ts = stamp or self.ts
        made, model = _entries(value, record, self.models.get(before) if before else None,
                               self.report)  # fmt: skip
        if within is not None:
            for entry in made:
                entry["native"] = {"key": entry["id"], "in": within}
        if ident in self.made or ident in self.known.entries:
            made = [e for e in made if e["type"] != "model"]  # its model was decided before
        tail = self._chain(made, self.tails.get(before) if before else None)
        earlier = self.tails.get(value["id"])
        if earlier is not None and self._has(earlier) and self._below(earlier, tail):
            tail = earlier  # written again with less (a resumed history): what it had stays
        self.tails[value["id"]] = tail
        self.models[value["id"]] = model

    def _chain(self, made: list[dict[str, Any]], previous: str | None) -> str | None:
        """Give a message's entries their parents and emit them; returns the entry the next
        message hangs below. Entries there already keep their parents; new ones hang below the
        message's deepest entry there already (or the one before the message)."""
        tail = previous
        for entry in made:
            ident = entry["id"]
            apart = tail is None or not self._below(tail, ident)
            if self._has(ident) and (self._below(ident, tail) or apart):
                # there already, below the message before or apart from it (a file convgit
                # wrote, which Gemini CLI gave a context message of its own first): the next
                # message hangs below it
                tail = ident
        for entry in made:
            ident = entry["id"]
            if ident in self.made:
                continue  # made by this import from an earlier line
            had = self.known.entries.get(ident)
            if had is not None:
                entry["parentId"] = had.get("parentId")  # emitted for ``fresh``, which drops it
            else:
                entry["parentId"] = tail
                tail = ident
                self.new.append(ident)
                self.made[ident] = entry["parentId"]
            entry["ts"] = self.ts
            self.out.append(entry)
        return tail

    def _has(self, ident: str) -> bool:
        return ident in self.made or ident in self.known.entries

    def _parent(self, ident: str) -> str | None:
        if ident in self.made:
            return self.made[ident]
        parent = self.known.entries[ident].get("parentId")
        return parent if isinstance(parent, str) else None

    def _below(self, ident: str, tail: str | None) -> bool:
        """Whether entry ``ident`` is ``tail`` or below it (a message's entries grow down)."""
        node: str | None = ident
        for _ in range(len(self.made) + len(self.known.entries) + 1):
            if node == tail:
                return True
            if node is None or not self._has(node):
                return tail is None
            node = self._parent(node)
        return False


def _echoes(value: Mapping[str, Any], before: str) -> bool:
    """Whether message ``value`` is the answers to the calls of message ``before`` written
    again under ``<before>_response``, as Gemini CLI rebuilds a resumed session's history."""
    content = value.get("content")
    return (
        value.get("type") == "user"
        and value.get("id") == f"{before}_response"
        and isinstance(content, list)
        and bool(content)
        and all(type(p) is dict and "functionResponse" in p for p in content)
    )


def _stamp(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


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
    value: dict[str, Any], record: Record, model: str | None, report: ImportReport
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


def recognises(records: list[dict[str, Any]], data: bytes) -> bool:
    """A chat: one JSON document with ``sessionId`` and ``messages``, or JSON lines whose first
    is the chat's ``{"sessionId", "projectHash", ...}`` without a ``uuid`` or a ``type``."""
    if not records:
        return _document(data)
    first = records[0]
    return isinstance(first.get("sessionId"), str) and "uuid" not in first and "type" not in first


def _document(data: bytes) -> bool:
    if not data.lstrip().startswith(b"{") or b'"sessionId"' not in data[:4096]:
        return False
    try:
        value = codec.decode(data)
    except ValueError:
        return False
    return (
        isinstance(value, dict)
        and isinstance(value.get("sessionId"), str)
        and isinstance(value.get("messages"), list)
    )
