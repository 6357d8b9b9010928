"""The wire schema, declared once: every record kind of ``<sid>.jsonl`` (the header, entries and
meta records), of ``<sid>.files.jsonl`` (the sidecar) and of the quarantine files; the builders
writers use; and ``text_of`` / ``tool_calls_of``, the one reading of a message's content.

Records are pure values; identity and order are the store's business. On the wire a record is a
JSON object with camelCase keys; here an entry is also a frozen dataclass. The ``*_FIELDS``
tables are the schema ``kind_error`` checks raw records against without building objects. Unknown
kinds and unknown fields are kept (``Unknown``, ``extra``) so a newer writer's records survive an
older reader.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, ClassVar

FORMAT_VERSION = 1
ROLES = ("user", "assistant", "tool")

# -- the schema as a table: kind -> field -> (accepted JSON types, required) -----------------

_S = (str,)
_S_OR_NULL = (str, type(None))
_ANY = (object,)
FieldSpec = tuple[tuple[type, ...], bool]

COMMON_TREE_FIELDS: dict[str, FieldSpec] = {
    "id": (_S, True),
    "parentId": (_S_OR_NULL, True),
    "ts": (_S, True),
}
TREE_FIELDS: dict[str, dict[str, FieldSpec]] = {
    "message": {
        "role": (_S, True),
        "content": ((str, list), True),
        "toolCallId": (_S, False),
        "isError": ((bool,), False),
    },
    "model": {"provider": (_S, True), "model": (_S, True)},
    "thinking": {"level": ((str, int, type(None)), True)},
    "compaction": {"summary": (_S, True), "firstKeptId": (_S_OR_NULL, True)},
    "branch_summary": {"fromId": (_S, True), "summary": (_S, True)},
    "note": {"text": (_S, True), "source": (_S, False)},
    # the system prompt from here on down the path (null: none)
    "system": {"text": (_S_OR_NULL, True)},
    "custom": {"kind": (_S, True), "data": (_ANY, False)},
}
META_FIELDS: dict[str, dict[str, FieldSpec]] = {
    "leaf": {"target": (_S, True), "ts": (_S, True)},
    "label": {"target": (_S, True), "label": (_S_OR_NULL, True), "ts": (_S, True)},
    "name": {"name": (_S, True), "ts": (_S, True)},
    # an agent's record that became no entry, kept with its exact text (convgit.formats.importing)
    "native": {
        "key": (_S, True),
        "at": (_S_OR_NULL, True),
        "text": (_S, False),
        "base64": (_S, False),
        "ts": (_S, True),
    },
    # what a redaction rewrote (the entries changed and how many matches), never the text
    "redaction": {"entries": ((list,), True), "matches": ((int,), True), "ts": (_S, True)},
    # how far an import of an agent's file got, so the next one continues from there
    "import": {
        "agent": (_S, True),
        "source": (_S, True),
        "offset": ((int,), True),
        "state": ((dict,), True),
        "ts": (_S, True),
    },
    # another session of the agent this one mirrors too: resumed from an entry, or forked
    "agent_session": {
        "agent": (_S, True),
        "agentSession": (_S, True),
        "from": (_S_OR_NULL, False),
        "how": (_S, False),
        "ts": (_S, True),
    },
}
HEADER_FIELDS: dict[str, FieldSpec] = {
    "v": ((int,), True),
    "id": (_S, True),
    "created": (_S, True),
    "cwd": (_S, False),
    "forkedFrom": ((dict, type(None)), False),
    "agent": (_S, False),  # the agent whose session this one mirrors, e.g. "claude-code"
    "agentSession": (_S, False),  # and that agent's own session id
}
SIDECAR_FIELDS: dict[str, dict[str, FieldSpec]] = {
    # snapshots on or off for this session from here on
    "sidecar": {"enabled": ((bool,), True), "ts": (_S, True)},
    # the files after ``entry``: ``replaces`` names the entry's previous snapshot commit
    "snapshot": {
        "entry": (_S, True),
        "commit": (_S, True),
        "tree": (_S, True),
        "ts": (_S, True),
        "files": ((int,), True),
        "skipped": ((list,), True),
        "replaces": (_S, False),
    },
    # a snapshot that could not be taken for ``entry`` (``status`` names it until the next one)
    "snapshot_failed": {"entry": (_S, True), "error": (_S, True), "ts": (_S, True)},
    # a restore about to change files: ``before`` is the saved state of the files it changes
    "restore": {
        "entry": (_S, True),
        "before": (_S, True),
        "paths": ((list, type(None)), True),
        "changed": ((dict,), True),
        "ts": (_S, True),
        "saved": (_S_OR_NULL, False),
        "commit": (_S, False),
        "escaped": ((bool,), False),
        "files": ((list,), False),
        "skipped": ((list,), False),
        "undo": ((bool,), False),
    },
    # the restore that saved ``before`` finished; a restore without one was interrupted
    "restored": {"before": (_S, True), "ts": (_S, True)},
}
# The required fields of these kinds are checked: damage there makes the sidecar unreadable (an
# undo could pick a wrong state). Other kinds and optional fields are read leniently: a wrong
# field counts as not written.
SIDECAR_CHECKED = frozenset({"snapshot", "restore"})
_SIDECAR_REQUIRED = {
    kind: {name: spec for name, spec in SIDECAR_FIELDS[kind].items() if spec[1]}
    for kind in SIDECAR_CHECKED
}
# a line moved out of a session or sidecar file by a writer or ``repair``, kept exactly
QUARANTINE_FIELDS: dict[str, FieldSpec] = {
    "ts": (_S, True),
    "reason": (_S, True),
    "line": ((int,), False),
    "text": (_S, False),
    "base64": (_S, False),
}


def now() -> str:
    """ISO 8601 UTC with milliseconds, as every ``ts`` is written."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def new_id(taken: Any = ()) -> str:
    """A random lowercase hex id not in ``taken`` (anything supporting ``in``)."""
    while True:
        candidate = os.urandom(4).hex()  # not `secrets`: it costs every start a hashlib import
        if candidate not in taken:
            return candidate


def kind_error(record: dict[str, Any]) -> str | None:
    """What is wrong with a raw record's shape, or None. Checks field types and required fields
    of the kinds this version knows; unknown kinds only need the fields every entry has."""
    kind = record.get("type")
    if not isinstance(kind, str):
        return "has no string 'type'"
    if kind in META_FIELDS:
        if "parentId" in record:
            return f"is a '{kind}' meta record but has a parentId"
        return fields_error(record, META_FIELDS[kind])
    if kind == "session":
        return "is a second session header"
    if kind not in TREE_FIELDS and "id" not in record and "parentId" not in record:
        return None  # a newer writer's meta record: kept, ignored
    problem = fields_error(record, COMMON_TREE_FIELDS)
    if problem is not None:
        return problem
    if not record["id"]:
        return "has an empty id"
    spec = TREE_FIELDS.get(kind)
    if spec is None:
        return None  # a newer writer's kind: kept, not replayed
    problem = fields_error(record, spec)
    if problem is None and kind == "message":
        problem = _message_error(record)
    return problem


def kind_error_sidecar(record: dict[str, Any]) -> str | None:
    """What is wrong with a sidecar record of a kind in ``SIDECAR_CHECKED``, or None."""
    kind = record.get("type")
    spec = _SIDECAR_REQUIRED.get(kind) if type(kind) is str else None
    return None if spec is None else fields_error(record, spec)


def fields_error(record: dict[str, Any], spec: dict[str, FieldSpec]) -> str | None:
    for name, (types, required) in spec.items():
        if name not in record:
            if required:
                return f"lacks the field '{name}'"
            continue
        value = record[name]
        if types is _ANY:
            continue
        # bool is an int in Python; JSON true is never a valid number or string here
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
            return f"has a '{name}' of the wrong type ({_json_type(value)})"
    return None


def _message_error(record: dict[str, Any]) -> str | None:
    role = record["role"]
    if role not in ROLES:
        return f"has an unknown role {role!r}"
    if role == "tool" and not isinstance(record.get("toolCallId"), str):
        return "is a tool result without a string 'toolCallId'"
    content = record["content"]
    return message_parts_error(content) if isinstance(content, list) else None


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


def _json_type(value: Any) -> str:
    names = {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}
    return names.get(type(value), "number")


# -- reading a message's content ---------------------------------------------------------------


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


# -- the schema as values ----------------------------------------------------------------------


@dataclass(frozen=True)
class Entry:
    """A tree entry. ``extra`` keeps unknown fields so rewriting never loses them."""

    kind: ClassVar[str] = ""
    _wire: ClassVar[dict[str, str]] = {}  # python attribute -> wire key, for kind fields

    id: str
    parent_id: str | None
    ts: str
    extra: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def type(self) -> str:
        return self.kind

    def to_wire(self) -> dict[str, Any]:
        record: dict[str, Any] = {
            "type": self.type,
            "id": self.id,
            "parentId": self.parent_id,
            "ts": self.ts,
        }
        for attr, key in self._wire.items():
            value = getattr(self, attr)
            if value is not None or key in _NULLABLE_REQUIRED:
                record[key] = value
        record.update(self.extra)
        return record


_NULLABLE_REQUIRED = {"firstKeptId", "label", "parentId", "text"}


@dataclass(frozen=True)
class Message(Entry):
    kind: ClassVar[str] = "message"
    _wire: ClassVar[dict[str, str]] = {
        "role": "role",
        "content": "content",
        "tool_call_id": "toolCallId",
        "is_error": "isError",
    }
    role: str = "user"
    content: str | list[dict[str, Any]] = ""
    tool_call_id: str | None = None
    is_error: bool | None = None

    @property
    def text(self) -> str:
        """The message's text parts joined (what a person reads in a listing)."""
        return text_of({"content": self.content})

    @property
    def tool_calls(self) -> list[dict[str, Any]]:
        return tool_calls_of({"content": self.content})


@dataclass(frozen=True)
class ModelChange(Entry):
    kind: ClassVar[str] = "model"
    _wire: ClassVar[dict[str, str]] = {"provider": "provider", "model": "model"}
    provider: str = ""
    model: str = ""


@dataclass(frozen=True)
class ThinkingLevel(Entry):
    kind: ClassVar[str] = "thinking"
    _wire: ClassVar[dict[str, str]] = {"level": "level"}
    level: str | int | None = None


@dataclass(frozen=True)
class Compaction(Entry):
    kind: ClassVar[str] = "compaction"
    _wire: ClassVar[dict[str, str]] = {"summary": "summary", "first_kept_id": "firstKeptId"}
    summary: str = ""
    first_kept_id: str | None = None


@dataclass(frozen=True)
class BranchSummary(Entry):
    kind: ClassVar[str] = "branch_summary"
    _wire: ClassVar[dict[str, str]] = {"from_id": "fromId", "summary": "summary"}
    from_id: str = ""
    summary: str = ""


@dataclass(frozen=True)
class Note(Entry):
    kind: ClassVar[str] = "note"
    _wire: ClassVar[dict[str, str]] = {"text": "text", "source": "source"}
    text: str = ""
    source: str | None = None


@dataclass(frozen=True)
class SystemPrompt(Entry):
    """The system prompt the model is sent from this entry on down its path (None: none)."""

    kind: ClassVar[str] = "system"
    _wire: ClassVar[dict[str, str]] = {"text": "text"}
    text: str | None = None


@dataclass(frozen=True)
class Custom(Entry):
    kind: ClassVar[str] = "custom"
    _wire: ClassVar[dict[str, str]] = {"custom_kind": "kind", "data": "data"}
    custom_kind: str = ""
    data: Any = None


@dataclass(frozen=True)
class Unknown(Entry):
    """A kind this version does not know: kept byte-for-byte in the file, ignored by replay."""

    unknown_type: str = ""

    @property
    def type(self) -> str:
        return self.unknown_type


ENTRY_CLASSES: dict[str, type[Entry]] = {
    cls.kind: cls
    for cls in (
        Message,
        ModelChange,
        ThinkingLevel,
        SystemPrompt,
        Compaction,
        BranchSummary,
        Note,
        Custom,
    )
}


def entry_from_wire(record: dict[str, Any]) -> Entry:
    """Build the value for a validated raw tree record."""
    cls = ENTRY_CLASSES.get(record["type"])
    base = {"id", "parentId", "ts", "type"}
    if cls is None:
        extra = {k: v for k, v in record.items() if k not in base}
        return Unknown(record["id"], record["parentId"], record["ts"], extra, record["type"])
    known = base | set(cls._wire.values())
    kwargs = {attr: record.get(key) for attr, key in cls._wire.items() if key in record}
    extra = {k: v for k, v in record.items() if k not in known}
    return cls(record["id"], record["parentId"], record["ts"], extra, **kwargs)


def header(
    sid: str,
    cwd: str,
    forked_from: dict[str, str] | None = None,
    agent: tuple[str, str] | None = None,
) -> dict[str, Any]:
    """The first line of a session; ``agent`` is (agent name, the agent's session id)."""
    record: dict[str, Any] = {
        "type": "session",
        "v": FORMAT_VERSION,
        "id": sid,
        "created": now(),
        "cwd": cwd,
    }
    if forked_from is not None:
        record["forkedFrom"] = forked_from
    if agent is not None:
        record["agent"], record["agentSession"] = agent
    return record


def leaf(target: str) -> dict[str, Any]:
    return {"type": "leaf", "target": target, "ts": now()}


def label(target: str, name: str | None) -> dict[str, Any]:
    return {"type": "label", "target": target, "label": name, "ts": now()}


def session_name(name: str) -> dict[str, Any]:
    return {"type": "name", "name": name, "ts": now()}


def agent_session(agent: str, agent_session_id: str, start: str | None, how: str) -> dict[str, Any]:
    """``agent``'s session ``agent_session_id`` continues this one from entry ``start``."""
    return {
        "type": "agent_session",
        "agent": agent,
        "agentSession": agent_session_id,
        "from": start,
        "how": how,
        "ts": now(),
    }


# -- the sidecar's records ---------------------------------------------------------------------


def sidecar_switch(enabled: bool) -> dict[str, Any]:
    """Snapshots on or off from here on."""
    return {"type": "sidecar", "enabled": enabled, "ts": now()}


def snapshot(
    entry: str,
    commit: str,
    tree_id: str,
    files: int,
    skipped: list[dict[str, str]],
    *,
    ts: str | None = None,
    replaces: str | None = None,
) -> dict[str, Any]:
    """The files after ``entry``: ``commit`` (whose tree is ``tree_id``) of ``files`` files,
    leaving out ``skipped`` ({"path", "reason"}); ``replaces``: the entry's previous snapshot."""
    record: dict[str, Any] = {
        "type": "snapshot",
        "entry": entry,
        "commit": commit,
        "tree": tree_id,
        "ts": now() if ts is None else ts,
        "files": files,
        "skipped": skipped,
    }
    if replaces is not None:
        record["replaces"] = replaces
    return record


def snapshot_failed(entry: str, error: str) -> dict[str, Any]:
    return {"type": "snapshot_failed", "entry": entry, "error": error, "ts": now()}


def restored(before: str) -> dict[str, Any]:
    """The restore that saved the state ``before`` finished."""
    return {"type": "restored", "before": before, "ts": now()}


def quarantined(line: int | None, raw: bytes, reason: str) -> dict[str, Any]:
    """A line moved aside, kept exactly: as text when it is UTF-8, else as base64."""
    record: dict[str, Any] = {"type": "quarantined", "ts": now(), "reason": reason}
    if line is not None:
        record["line"] = line
    try:
        record["text"] = raw.decode("utf-8")
    except UnicodeDecodeError:
        import base64  # here: only a line that is not UTF-8 needs it

        record["base64"] = base64.b64encode(raw).decode()
    return record
