"""The wire schema, declared once: every record kind of ``<sid>.jsonl`` and ``<sid>.files.jsonl``.

Records are pure values; identity and order are the store's business. On the wire a record is a
JSON object with camelCase keys; here it is a frozen dataclass. ``FIELDS`` is the same schema as
a table, which ``tree.validate`` checks raw records against without building objects (loading a
million lines must cost little more than parsing them). Unknown kinds and unknown fields are kept
(``Unknown``, ``extra``) so a newer writer's records survive an older reader.
"""

from __future__ import annotations

import os
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
    "snapshot": {
        "entry": (_S, True),
        "commit": (_S, True),
        "tree": (_S, True),
        "ts": (_S, True),
        "files": ((int,), True),
        "skipped": ((list,), True),
    },
    "restore": {
        "entry": (_S, True),
        "before": (_S, True),
        "paths": ((list, type(None)), True),
        "changed": ((dict,), True),
        "ts": (_S, True),
    },
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


def _check_sources() -> tuple[dict[str, str], dict[str, Any]]:
    """One boolean expression per kind, built from the table: loading a million lines must not
    pay a loop and a call per field."""
    namespace: dict[str, Any] = {"_message_parts_error": _message_parts_error, "ROLES": ROLES}
    sources = {}
    for kind, spec in TREE_FIELDS.items():
        terms, optional = [], []
        fields = {**COMMON_TREE_FIELDS, **spec}
        for name, (types, required) in fields.items():
            if kind == "message" and name in ("role", "content"):
                continue  # checked below, with their values
            constant = f"T_{kind}_{name}"
            namespace[constant] = types[0] if len(types) == 1 else frozenset(types)
            value = {"id": "ident := r['id']", "parentId": "parent := r['parentId']"}.get(
                name, f"r[{name!r}]"
            )
            if types == _ANY:
                test = f"{name!r} in r" if required else ""
            elif len(types) == 1:
                test = f"type({value}) is {constant}"
            else:
                test = f"type({value}) in {constant}"
            if required:
                terms.append(test)
            elif test:
                optional.append(f"({name!r} not in r or {test})")
            if name == "id":
                terms.append("ident != ''")
        terms += optional
        if kind == "message":
            terms.append(
                "(role := r['role']) in ROLES and (type(content := r['content']) is str or"
                " type(content) is list and _message_parts_error(content) is None)"
                " and (role != 'tool' or type(r.get('toolCallId')) is str)"
            )
        sources[kind] = " and ".join(terms)
    return sources, namespace


def _compile_checks() -> dict[str, Any]:
    """``CHECK_SOURCES`` as functions, for checking one record at a time."""
    source = [
        f"def check_{kind}(r):\n    try:\n        return {test}\n"
        "    except (KeyError, TypeError):\n        return False\n"
        for kind, test in CHECK_SOURCES.items()
    ]
    namespace = dict(CHECK_NAMESPACE)
    exec("\n".join(source), namespace)  # compiled from the constant schema above, never input
    return {kind: namespace[f"check_{kind}"] for kind in TREE_FIELDS}


def kind_error(record: dict[str, Any]) -> str | None:
    """What is wrong with a raw record's shape, or None. Checks field types and required fields
    of the kinds this version knows; unknown kinds only need the fields every entry has."""
    kind = record.get("type")
    fast = FAST_CHECKS.get(kind) if type(kind) is str else None
    if fast is not None and fast(record):
        return None
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
    """What is wrong with a sidecar record of a kind this version knows, or None."""
    spec = SIDECAR_FIELDS.get(record.get("type"))  # type: ignore[arg-type]
    return None if spec is None else fields_error(record, spec)


def fields_error(record: dict[str, Any], spec: dict[str, FieldSpec]) -> str | None:
    for name, (types, required) in spec.items():
        if name not in record:
            if required:
                return f"lacks the field '{name}'"
            continue
        value = record[name]
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
    return _message_parts_error(content) if isinstance(content, list) else None


def _message_parts_error(content: list[Any]) -> str | None:
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


def tool_call_ids(message: dict[str, Any]) -> list[str]:
    """The ids of the tool calls an assistant message (a record or a replayed message) makes."""
    content = message.get("content")
    if message.get("role") != "assistant" or not isinstance(content, list):
        return []
    return [p["id"] for p in content if p.get("type") == "tool_call"]


def _json_type(value: Any) -> str:
    names = {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}
    return names.get(type(value), "number")


# The fast check of each tree kind as Python source: a boolean expression over a raw record
# ``r`` of that kind, true only when ``kind_error`` would find nothing wrong (false: ask it).
# It binds ``ident`` and ``parent`` to the id and parentId on the way, and raises KeyError or
# TypeError for a missing field or a record that is not an object. Its names are in the namespace.
CHECK_SOURCES, CHECK_NAMESPACE = _check_sources()
FAST_CHECKS = _compile_checks()


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
        if isinstance(self.content, str):
            return self.content
        return "\n".join(
            str(part.get("text", "")) for part in self.content if part.get("type") == "text"
        )

    @property
    def tool_calls(self) -> list[dict[str, Any]]:
        if isinstance(self.content, str):
            return []
        return [part for part in self.content if part.get("type") == "tool_call"]


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
