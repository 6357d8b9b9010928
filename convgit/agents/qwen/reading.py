"""Qwen Code's chat files (``~/.qwen/projects/<cwd, each character not a letter or digit a
"-">/chats/<session id>.jsonl``, ``$QWEN_HOME`` honoured), as Qwen Code 0.24 writes them: one
record a line, ``{"uuid", "parentUuid", "sessionId", "timestamp", "type", ...}``, a tree by
``parentUuid`` (as Claude Code's), the messages in the Gemini API's shape (``message.parts``).

Every record is an entry with its ``uuid``, below the entry of its ``parentUuid``, so the tree is
Qwen's tree: a ``/rewind`` makes the next turn a branch where Qwen re-rooted it. What each is:

* ``user``: a user entry (text parts; any other part kept as ``qwen.part``);
* ``assistant``: an assistant entry (``thought`` parts as thinking, text, ``functionCall`` parts
  as tool calls), a ``model`` entry first where its ``model`` changes;
* ``tool_result``: a tool entry per ``functionResponse`` (the second of one record is
  ``<uuid>_2``, below the first), an error where ``toolCallResult.status`` says so;
* ``system``: a ``custom qwen.<subtype>`` entry (telemetry, attribution snapshots, rewinds,
  the session's model...), kept in the tree, not replayed; a ``chat_compression`` is a
  compaction whose summary is the history Qwen went on with.

A record written again under its uuid (Qwen's fragments of one message) is read as Qwen reads it
back: its parts after the first's, as an entry below it. The active leaf is the last record
that is no artifact, as Qwen resumes it. Tolerated, each noted by line: a torn last line (left
for the next import), a line that is not JSON or a record without a uuid (kept as it is), a
parent that is not in the file (the entry is a root). A file whose first record has no
``uuid`` and ``sessionId`` is refused.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from convgit.agents.qwen import NAME, TITLE
from convgit.agents.reading import (
    Batch,
    Cursor,
    Importer,
    ImportReport,
    Known,
    Record,
    derived_id,
    entry_id,
    kept_record,
    kept_text,
    native_field,
    part_id,
    read_jsonl,
)
from convgit.base import codec
from convgit.base.errors import NotAQwenSessionError

PROVIDER = "qwen"
TYPES = ("user", "assistant", "tool_result", "system")
# records that are not the conversation: never the leaf Qwen resumes from
ARTIFACTS = frozenset(
    {
        "session_artifact_event",
        "session_artifact_snapshot",
        "session_sources_snapshot",
        "managed_session_header_v1",
        "managed_session_event_v1",
        "managed_session_commit_v1",
    }
)
_EPOCH = "1970-01-01T00:00:00.000Z"
_BOM = b"\xef\xbb\xbf"


def session_id(data: bytes) -> str | None:
    """The ``sessionId`` of the first record of a whole chat file, or None."""
    first = _first(data.removeprefix(_BOM).split(b"\n", 1)[0])
    return None if first is None else str(first["sessionId"])


def _first(line: bytes) -> dict[str, Any] | None:
    try:
        value = codec.decode(line.strip())
    except ValueError:
        return None
    if type(value) is not dict or not _record(value):
        return None
    return value


def _record(value: Mapping[str, Any]) -> bool:
    """Whether ``value`` is a record of Qwen's chat file, as Qwen validates one."""
    return (
        type(value.get("uuid")) is str
        and bool(value["uuid"])
        and (value.get("parentUuid") is None or type(value.get("parentUuid")) is str)
        and "parentUuid" in value
        and type(value.get("sessionId")) is str
        and bool(value["sessionId"])
    )


def parse(data: bytes, cursor: Cursor, known: Known) -> Batch:
    """The batch for ``data``, the chat file from ``cursor.offset``; see the module docstring."""
    data = data.removeprefix(_BOM) if cursor.offset == 0 else data
    read = read_jsonl(data, cursor)
    reader = _Reader(dict(cursor.state), known)
    records = read.records
    if cursor.offset == 0:
        if not records or records[0].value is None or not _record(records[0].value):
            raise NotAQwenSessionError(
                f"This file is not a {TITLE} chat: its first line is not a record with a uuid"
                " and a sessionId.",
                "Qwen Code writes ~/.qwen/projects/<project>/chats/<session id>.jsonl",
            )
        reader.state.update(ts=_EPOCH, model=None, tails={}, last=None)
    for record in records:
        reader.take(record)
    if read.torn is not None:
        reader.report.note(
            read.torn, f"is incomplete ({TITLE} may still be writing it): left for the next import"
        )
    leaf = reader.state.get("last") if reader.new else None
    return Batch(
        reader.out,
        Cursor(read.offset, read.line, read.index, reader.state),
        leaf=leaf if isinstance(leaf, str) else None,
        report=reader.report,
    )


IMPORTER = Importer(agent=NAME, title=TITLE, session_id=session_id, parse=parse)


class _Reader:
    """One pass over a chat file's lines; ``state`` carries what the next import needs: the
    entry each record's children hang below when it is not the record's own (``tails``: a
    record of several entries, a message in fragments), the last record Qwen would resume
    from (``last``), the last time and model seen."""

    def __init__(self, state: dict[str, Any], known: Known) -> None:
        self.state = state
        self.known = known
        self.report = ImportReport()
        self.out: list[dict[str, Any]] = []
        self.new: list[str] = []
        self.made: set[str] = set()

    def take(self, record: Record) -> None:
        value = record.value
        if value is None or not _record(value):
            why = record.problem or "is no record with a uuid, a parentUuid and a sessionId"
            at = self.state.get("last")
            key = derived_id(record, "x")
            self.out.append(kept_record(record, key, at if isinstance(at, str) else None,
                                        str(self.state["ts"])))  # fmt: skip
            self.report.keep("line that is no record", record.line)
            self.report.note(record.line, f"{why}: kept as it is")
            return
        ts = value.get("timestamp")
        if type(ts) is str and ts:
            self.state["ts"] = ts
        uuid = str(value["uuid"])
        ident = entry_id(uuid)
        tails: dict[str, str] = self.state.setdefault("tails", {})
        if ident in self.made or (ident in self.known.entries and not self._same(ident, value)):
            self._fragment(record, value, ident)
            return
        parent = self._parent(value.get("parentUuid"), record, ident)
        made = self._entries(value, record, ident)
        tail = self._chain(made, parent)
        if tail is not None and tail != ident:
            tails[uuid] = tail
        if _conversation(value):
            self.state["last"] = tail

    def _same(self, ident: str, value: dict[str, Any]) -> bool:
        """Whether the session's entry ``ident`` was made from this record, whatever session
        it names (a chat file ``convgit resume`` wrote copies the records under its own)."""
        had = self.known.entries.get(ident) or {}
        native = had.get("native")
        text = kept_text(native) if isinstance(native, dict) else None
        if text is None:
            return True
        try:
            before = codec.decode(text)
        except ValueError:
            return False
        ignored = ("sessionId",)
        return type(before) is dict and {k: v for k, v in before.items() if k not in ignored} == {
            k: v for k, v in value.items() if k not in ignored
        }

    def _fragment(self, record: Record, value: dict[str, Any], ident: str) -> None:
        """A record under a uuid read before: its parts after the first's, below it (each
        fragment the same entry at every import: found again by its text)."""
        uuid = str(value["uuid"])
        tails: dict[str, str] = self.state["tails"]
        number = 2
        while True:
            fragment = part_id(ident, number)
            had = self.known.entries.get(fragment)
            if fragment not in self.made and (had is None or self._same(fragment, value)):
                break
            number += 1
        made = [e for e in self._entries(value, record, fragment) if e["type"] != "model"]
        tail = self._chain(made, tails.get(uuid, ident))
        if tail is not None:
            tails[uuid] = tail
        self.report.note(record.line, f"is more of the message {uuid}: read after it, as Qwen does")
        if _conversation(value):
            self.state["last"] = tail

    def _parent(self, above: Any, record: Record, ident: str) -> str | None:
        if above is None:
            return None
        found = self.state["tails"].get(above, entry_id(str(above)))
        if found in self.made or found in self.known.entries:
            return str(found)
        self.report.note(
            record.line,
            f"(entry {ident}) has a parent {above} that is not in the file: a root",
        )
        return None

    def _chain(self, made: list[dict[str, Any]], parent: str | None) -> str | None:
        """Emit a record's entries, each below the one before; the last one's id."""
        tail = parent
        ts = str(self.state["ts"])
        for entry in made:
            ident = entry["id"]
            had = self.known.entries.get(ident)
            entry["parentId"] = had.get("parentId") if had is not None else tail
            entry["ts"] = ts
            self.out.append(entry)
            self.made.add(ident)
            if had is None:
                self.new.append(ident)
            tail = ident
        return tail

    # -- records as entries ---------------------------------------------------------------------

    def _entries(self, value: dict[str, Any], record: Record, ident: str) -> list[dict[str, Any]]:
        native = native_field(record, ident)
        kind = value.get("type")
        found = value.get("message")
        message: dict[str, Any] = found if isinstance(found, dict) else {}
        parts = [p for p in message.get("parts") or [] if p is not None]
        if kind == "user":
            content = [_user_part(p) for p in parts]
            return [{"type": "message", "id": ident, "role": "user", "content": content,
                     "native": native}]  # fmt: skip
        if kind == "assistant":
            return self._assistant(value, parts, ident, native)
        if kind == "tool_result":
            made = _results(value, parts, ident)
            if made:
                made[0]["native"] = native
                return made
        elif kind == "system" and value.get("subtype") == "chat_compression":
            summary = _compressed(value.get("systemPayload"))
            if summary:
                return [{"type": "compaction", "id": ident, "summary": summary,
                         "firstKeptId": None, "native": native}]  # fmt: skip
        what = f"{kind}/{value['subtype']}" if type(value.get("subtype")) is str else str(kind)
        if kind not in TYPES:
            self.report.keep(what, record.line)
        return [{"type": "custom", "id": ident, "kind": f"qwen.{what}", "data": None,
                 "native": native}]  # fmt: skip

    def _assistant(
        self, value: dict[str, Any], parts: list[Any], ident: str, native: dict[str, Any]
    ) -> list[dict[str, Any]]:
        made: list[dict[str, Any]] = []
        model = value.get("model")
        if type(model) is str and model and model != self.state.get("model"):
            self.state["model"] = model
            key = f"model-{ident}"
            if ident not in self.known.entries:
                made.append({"type": "model", "id": key, "provider": PROVIDER, "model": model,
                             "native": {"key": key, "in": ident}})  # fmt: skip
        content = [_assistant_part(p, ident, n) for n, p in enumerate(parts)]
        made.append({"type": "message", "id": ident, "role": "assistant", "content": content,
                     "native": native})  # fmt: skip
        return made


def _conversation(value: Mapping[str, Any]) -> bool:
    """Whether Qwen would resume from this record (it is no artifact)."""
    return not (value.get("type") == "system" and value.get("subtype") in ARTIFACTS)


def _user_part(part: Any) -> dict[str, Any]:
    if type(part) is dict and type(part.get("text")) is str and not part.get("thought"):
        return {"type": "text", "text": part["text"]}
    return {"type": "qwen.part", "value": part}


def _assistant_part(part: Any, message: str, number: int) -> dict[str, Any]:
    if type(part) is not dict:
        return {"type": "qwen.part", "value": part}
    if type(part.get("text")) is str:
        if part.get("thought"):
            return {"type": "thinking", "thinking": part["text"]}
        return {"type": "text", "text": part["text"]}
    call = part.get("functionCall")
    if type(call) is dict:
        ident = call.get("id")
        name = call.get("name")
        return {
            "type": "tool_call",
            "id": ident if type(ident) is str and ident else f"{message}-call{number + 1}",
            "name": name if type(name) is str and name else "tool",
            "input": call.get("args") if type(call.get("args")) is dict else {},
        }
    return {"type": "qwen.part", "value": part}


def _results(value: Mapping[str, Any], parts: list[Any], ident: str) -> list[dict[str, Any]]:
    """A tool entry per ``functionResponse`` of a ``tool_result`` record."""
    result = value.get("toolCallResult")
    failed = type(result) is dict and result.get("status") == "error"
    made: list[dict[str, Any]] = []
    for part in parts:
        answer = part.get("functionResponse") if type(part) is dict else None
        if type(answer) is not dict:
            continue
        key = part_id(ident, len(made) + 1)
        response = answer.get("response")
        text, error = _response_text(response)
        call = answer.get("id")
        made.append(
            {
                "type": "message",
                "id": key,
                "role": "tool",
                "toolCallId": call if type(call) is str and call else key,
                "isError": failed or error,
                "content": text,
                "native": {"key": key, "in": ident},
            }
        )
    return made


def _response_text(response: Any) -> tuple[str, bool]:
    """What a tool answered, as Qwen sent it back: its ``output``, else its ``error``."""
    if type(response) is dict:
        if type(response.get("output")) is str:
            return str(response["output"]), False
        if type(response.get("error")) is str:
            return str(response["error"]), True
    return codec.dumps(response), False


def _compressed(payload: Any) -> str:
    """The texts of the history Qwen went on with after compressing the chat."""
    history = payload.get("compressedHistory") if type(payload) is dict else None
    texts = []
    for content in history if type(history) is list else []:
        parts = content.get("parts") if type(content) is dict else None
        for part in parts if type(parts) is list else []:
            if type(part) is dict and type(part.get("text")) is str and part["text"].strip():
                texts.append(part["text"])
    return "\n\n".join(texts)


def recognises(records: list[dict[str, Any]], data: bytes) -> bool:
    """A chat file: records with ``uuid``, ``parentUuid`` and ``sessionId`` whose messages are
    in the Gemini API's shape (``message.parts``, the role ``model``), or Qwen's own
    ``provenance`` on a record; asked before Claude Code's, whose lines also carry ``uuid`` and
    ``sessionId``."""
    for record in records[:8]:
        if not _record(record):
            continue
        message = record.get("message")
        if isinstance(message, dict) and "parts" in message and "content" not in message:
            return True
        if isinstance(record.get("provenance"), str) and record.get("type") in TYPES:
            return True
    return False
