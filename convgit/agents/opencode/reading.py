"""OpenCode sessions, as ``opencode export ID`` writes them: one JSON document
``{"info": SESSION, "messages": [{"info": MESSAGE, "parts": [PART, ...]}, ...]}`` (OpenCode keeps
them as rows of its SQLite database; ``opencode.transcript`` writes the same document from it).

An OpenCode session is a line of messages, each after the one before:
* a ``user`` message is a user entry with the message's id (its text parts);
* an ``assistant`` message (one per model request) is an assistant entry with the message's id
  (its ``reasoning`` parts as thinking, its text, its ``tool`` parts as tool calls), followed by
  one tool entry per call that has finished (``completed``: its output; ``error``: its error),
  with the tool part's id. ``step-start``, ``step-finish``, ``patch`` and the like are
  OpenCode's bookkeeping: kept in the message's text, not content;
* the session's info is kept (without its counts and times, which change every turn), under
  the session's id;
* an assistant message OpenCode is still writing (no ``time.completed`` nor ``error``) and
  whatever follows it are left for the next import; one that a finished assistant message
  follows was left so for good (OpenCode was stopped while writing it, then went on): it is
  imported as it is, as OpenCode itself sends it to the model again (its calls that never
  ended unanswered), followed by a ``custom`` entry ``opencode.interrupted``, and noted.

The document is read whole every time (``appends=False``): a message the session has is
skipped by its id. A message that ``convgit resume`` copied into a new OpenCode session has an
id made from the original's and that session's (``copy_id``): it is the original's entry, so
the copy's new messages hang below the entry resumed at.
"""

from __future__ import annotations

import hashlib
from datetime import datetime, timezone
from typing import Any

from convgit.agents.opencode import NAME, TITLE
from convgit.agents.reading import (
    Batch,
    Cursor,
    Importer,
    ImportReport,
    Known,
    Record,
    entry_id,
    kept_record,
    native_field,
    read_document,
)
from convgit.base import codec
from convgit.base.errors import NotAnOpenCodeSessionError

_EPOCH = "1970-01-01T00:00:00.000Z"
_BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_TIME_DIGITS = 12  # the hex digits of an OpenCode id that say when it was made
INTERRUPTED = "opencode.interrupted"  # the custom entry after a reply OpenCode never finished
BOOKKEEPING = ("step-start", "step-finish", "patch", "snapshot", "retry", "compaction")


def copy_id(original: str, session: str) -> str:
    """The id ``convgit resume`` gives the copy of OpenCode's message or part ``original`` in
    the new OpenCode session ``session``: the same prefix and time digits (so the copies sort
    as the originals did, before anything OpenCode adds), then 14 characters of a digest."""
    prefix, _, rest = original.partition("_")
    digest = int.from_bytes(hashlib.sha1(f"{original} {session}".encode()).digest(), "big")
    tail = ""
    for _ in range(14):
        digest, digit = divmod(digest, 62)
        tail += _BASE62[digit]
    return f"{prefix}_{rest[:_TIME_DIGITS]}{tail}"


def session_id(data: bytes) -> str | None:
    """The session id of a whole export, or None when it is not one."""
    try:
        value = codec.decode(data)
    except ValueError:
        return None
    info = value.get("info") if type(value) is dict else None
    if type(info) is dict and type(info.get("id")) is str and type(value.get("messages")) is list:
        return str(info["id"])
    return None


def parse(data: bytes, cursor: Cursor, known: Known) -> Batch:
    """The batch for a whole export; see the module docstring."""
    document, messages = _read(data)
    session = document["info"]
    reader = _Reader(known, str(session.get("id", "")))
    envelope = {"info": stable(session)}
    raw = codec.dumps(envelope).encode()
    created = envelope["info"].get("time", {}).get("created")
    key = str(session["id"])
    reader.out.append(kept_record(Record(1, 0, raw, envelope), key, None, _iso(created)))
    finished = [n for n, record in enumerate(messages) if _finished_reply(record.value)]
    last_finished = finished[-1] if finished else -1
    for number, record in enumerate(messages):
        if not reader.message(record, abandoned=number < last_finished):
            break
    leaf = reader.last if reader.new else None
    return Batch(reader.out, Cursor(), leaf=leaf, report=reader.report)


IMPORTER = Importer(agent=NAME, title=TITLE, session_id=session_id, parse=parse, appends=False)


# what a session's info gains turn by turn: left out of the record kept of it (kept once)
VOLATILE = ("cost", "tokens", "summary", "revert", "share", "time_compacting")


def stable(info: dict[str, Any]) -> dict[str, Any]:
    """A session's info without what changes every turn (its creation time stays)."""
    kept = {k: v for k, v in info.items() if k not in VOLATILE and k != "time"}
    times = info.get("time")
    if type(times) is dict and "created" in times:
        kept["time"] = {"created": times["created"]}
    return kept


def recognises(records: list[dict[str, Any]], data: bytes) -> bool:
    """An export: one JSON document whose ``info`` is a session (``ses_`` id, ``slug``,
    ``version``) beside ``messages``."""
    head = data.lstrip()[:4096]
    if not head.startswith(b"{") or b'"messages"' not in data or b'"ses_' not in head:
        return False
    try:
        value = codec.decode(data)
    except ValueError:
        return False
    info = value.get("info") if type(value) is dict else None
    return (
        type(info) is dict
        and str(info.get("id", "")).startswith("ses_")
        and "slug" in info
        and type(value.get("messages")) is list
    )


def _read(data: bytes) -> tuple[dict[str, Any], list[Record]]:
    try:
        document, messages = read_document(data.removeprefix(b"\xef\xbb\xbf"), "messages")
    except UnicodeDecodeError:
        raise NotAnOpenCodeSessionError("This file is not an OpenCode export: not UTF-8.") from None
    except (ValueError, IndexError):
        raise NotAnOpenCodeSessionError(
            "This file is not an OpenCode export: it is not one whole JSON object.",
            "write it with: opencode export SESSION_ID > FILE",
        ) from None
    info = document.get("info")
    if type(info) is not dict or type(info.get("id")) is not str:
        raise NotAnOpenCodeSessionError("This file is not an OpenCode export: it has no session.")
    if type(document.get("messages")) is not list:
        raise NotAnOpenCodeSessionError("This OpenCode export has no messages list.")
    return document, messages


class _Reader:
    """The messages in order, and the entries they make: ``out`` (the batch), ``new`` (ids
    the session does not have), ``last`` (the entry the next message hangs below)."""

    def __init__(self, known: Known, session: str) -> None:
        self.known, self.session = known, session
        self.report = ImportReport()
        self.out: list[dict[str, Any]] = []
        self.new: list[str] = []
        self.last: str | None = None
        self.seen: set[str] = set()
        self._copies: dict[str, str] | None = None

    def ident(self, native: str) -> str:
        """The entry id for OpenCode's id ``native``: the original's entry for a copy that
        ``convgit resume`` made in this session."""
        made = entry_id(native)
        if made in self.known.entries or made in self.seen:
            return made
        if self._copies is None:
            self._copies = {}
            for ident, entry in self.known.entries.items():
                key = (entry.get("native") or {}).get("key")
                if isinstance(key, str) and key[:4] in ("msg_", "prt_"):
                    self._copies[copy_id(key, self.session)] = ident
                for prefix in ("msg_", "prt_"):  # an entry resume wrote as OpenCode's
                    self._copies[copy_id(prefix + ident, self.session)] = ident
        return self._copies.get(native, made)

    def emit(self, entry: dict[str, Any]) -> None:
        if entry["id"] in self.seen:
            self.report.note(None, f"repeats the id {entry['id']}: the second was left out")
            return
        self.seen.add(entry["id"])
        if entry["id"] not in self.known.entries:
            self.new.append(entry["id"])
        self.out.append(entry)
        self.last = entry["id"]

    def message(self, record: Record, abandoned: bool = False) -> bool:
        """The entries of one message; False when it is unfinished (the import stops there),
        unless it is ``abandoned`` (a finished reply follows it): then it is interrupted."""
        value = record.value or {}
        info, parts = value.get("info"), value.get("parts")
        if type(info) is not dict or type(info.get("id")) is not str or type(parts) is not list:
            raise NotAnOpenCodeSessionError(
                f"This OpenCode export has a message (line {record.line}) without an info id"
                " and parts."
            )
        native, role = info["id"], info.get("role")
        times = obj(info.get("time"))
        ts = _iso(times.get("created"))
        interrupted = role == "assistant" and "completed" not in times and "error" not in info
        if interrupted and not abandoned:
            self.report.note(
                record.line,
                f"(message {native}) is not finished (OpenCode may still be writing it):"
                " left for the next import",
            )
            return False
        if interrupted:
            self.report.note(
                record.line,
                f"(message {native}) never finished (OpenCode stopped while writing it, and a"
                " later reply finished): imported as interrupted",
            )
        base = {"id": self.ident(native), "parentId": self.last, "ts": ts}
        good = [p for p in parts if type(p) is dict and type(p.get("type")) is str]
        if role == "user":
            content = [_content(p) for p in good if p["type"] not in BOOKKEEPING]
            self.emit(
                {
                    "type": "message",
                    **base,
                    "role": "user",
                    "content": [c for c in content if c is not None],
                    "native": native_field(record, native),
                }
            )
            return True
        if role != "assistant":
            self.report.keep(f"message ({role})", record.line)
            self.out.append(kept_record(record, native, self.last, ts))
            return True
        content = [_content(p) for p in good if p["type"] not in BOOKKEEPING]
        if "error" in info and type(info["error"]) is dict:
            content.append({"type": "opencode.error", "value": info["error"]})
        reply: dict[str, Any] = {
            "type": "message",
            **base,
            "role": "assistant",
            "content": [c for c in content if c is not None],
            "native": native_field(record, native),
        }
        self.emit(reply)
        for part in good:
            if part["type"] == "tool":
                self._result(part, native, ts)
        if interrupted:
            self.emit(
                {
                    "type": "custom",
                    "id": entry_id(reply["id"], "interrupted"),
                    "parentId": self.last,
                    "ts": ts,
                    "kind": INTERRUPTED,
                    "data": {"message": native},
                }
            )
        return True

    def _result(self, part: dict[str, Any], message: str, ts: str) -> None:
        state = obj(part.get("state"))
        status = state.get("status")
        if status not in ("completed", "error") or type(part.get("callID")) is not str:
            return  # never ran to its end (an interrupted turn): the call stays unanswered
        ident = str(part["id"]) if type(part.get("id")) is str else f"{message}-{part['callID']}"
        said = state.get("output") if status == "completed" else state.get("error")
        end = obj(state.get("time")).get("end")
        self.emit(
            {
                "type": "message",
                "id": self.ident(ident),
                "parentId": self.last,
                "ts": _iso(end) if end is not None else ts,
                "role": "tool",
                "toolCallId": part["callID"],
                "isError": status == "error",
                "content": [{"type": "text", "text": said if isinstance(said, str) else ""}],
                "native": {"key": ident, "in": message},
            }
        )


def _finished_reply(value: Any) -> bool:
    """Whether a message of the export is an assistant message OpenCode finished writing."""
    info = obj(obj(value).get("info"))
    return info.get("role") == "assistant" and (
        "completed" in obj(info.get("time")) or "error" in info
    )


def _content(part: dict[str, Any]) -> dict[str, Any] | None:
    kind = part["type"]
    if kind == "text" and isinstance(part.get("text"), str):
        return None if part.get("ignored") is True else {"type": "text", "text": part["text"]}
    if kind == "reasoning" and isinstance(part.get("text"), str):
        return {"type": "thinking", "thinking": part["text"]}
    if kind == "tool" and isinstance(part.get("callID"), str) and isinstance(part.get("tool"), str):
        state = obj(part.get("state"))
        return {
            "type": "tool_call",
            "id": part["callID"],
            "name": part["tool"],
            "input": state.get("input", {}),
        }
    return {"type": f"opencode.{kind}", "value": part}  # a file, an agent...: kept, not replayed


def obj(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty one."""
    return value if type(value) is dict else {}


def _iso(millis: Any) -> str:
    if isinstance(millis, (int, float)) and not isinstance(millis, bool):
        moment = datetime.fromtimestamp(millis / 1000, timezone.utc)
        return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return _EPOCH
