"""The records of a session file, ``<sid>.jsonl``: the header, the entries of the tree and the
meta records, as field tables ``kind_error`` checks raw records against without building
objects, and the builders writers use for the header and the meta records."""

from __future__ import annotations

from typing import Any

from convgit.schema.content import message_parts_error
from convgit.schema.fields import ANY, STR, STR_OR_NULL, FieldSpec, fields_error, now

FORMAT_VERSION = 1
ROLES = ("user", "assistant", "tool")

COMMON_TREE_FIELDS: dict[str, FieldSpec] = {
    "id": (STR, True),
    "parentId": (STR_OR_NULL, True),
    "ts": (STR, True),
}
TREE_FIELDS: dict[str, dict[str, FieldSpec]] = {
    "message": {
        "role": (STR, True),
        "content": ((str, list), True),
        "toolCallId": (STR, False),
        "isError": ((bool,), False),
    },
    "model": {"provider": (STR, True), "model": (STR, True)},
    "thinking": {"level": ((str, int, type(None)), True)},
    "compaction": {"summary": (STR, True), "firstKeptId": (STR_OR_NULL, True)},
    "branch_summary": {"fromId": (STR, True), "summary": (STR, True)},
    # ``saved``: a restore's note names the saved state of the newest restore it tells of
    "note": {"text": (STR, True), "source": (STR, False), "saved": (STR, False)},
    # the system prompt from here on down the path (null: none)
    "system": {"text": (STR_OR_NULL, True)},
    "custom": {"kind": (STR, True), "data": (ANY, False)},
}
META_FIELDS: dict[str, dict[str, FieldSpec]] = {
    "leaf": {"target": (STR, True), "ts": (STR, True)},
    "label": {"target": (STR, True), "label": (STR_OR_NULL, True), "ts": (STR, True)},
    "name": {"name": (STR, True), "ts": (STR, True)},
    # an agent's record that became no entry, kept with its exact text (convgit.agents.reading)
    "native": {
        "key": (STR, True),
        "at": (STR_OR_NULL, True),
        "text": (STR, False),
        "base64": (STR, False),
        "ts": (STR, True),
    },
    # what a redaction rewrote (the entries changed and how many matches), never the text
    "redaction": {"entries": ((list,), True), "matches": ((int,), True), "ts": (STR, True)},
    # how far an import of an agent's file got, so the next one continues from there
    "import": {
        "agent": (STR, True),
        "source": (STR, True),
        "offset": ((int,), True),
        "state": ((dict,), True),
        "ts": (STR, True),
    },
    # another session of the agent this one mirrors too: resumed from an entry, or forked
    "agent_session": {
        "agent": (STR, True),
        "agentSession": (STR, True),
        "from": (STR_OR_NULL, False),
        "how": (STR, False),
        # a file convgit wrote for the agent: each entry its import makes of it, with the entry
        # of this session it stands for; the keys of the records it keeps of it
        "copies": ((dict,), False),
        "skip": ((list,), False),
        "ts": (STR, True),
    },
}
HEADER_FIELDS: dict[str, FieldSpec] = {
    "v": ((int,), True),
    "id": (STR, True),
    "created": (STR, True),
    "cwd": (STR, False),
    "forkedFrom": ((dict, type(None)), False),
    "agent": (STR, False),  # the agent whose session this one mirrors, e.g. "claude-code"
    "agentSession": (STR, False),  # and that agent's own session id
}


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


def _message_error(record: dict[str, Any]) -> str | None:
    role = record["role"]
    if role not in ROLES:
        return f"has an unknown role {role!r}"
    if role == "tool" and not isinstance(record.get("toolCallId"), str):
        return "is a tool result without a string 'toolCallId'"
    content = record["content"]
    return message_parts_error(content) if isinstance(content, list) else None


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


def label(target: str, name: str | None, *, ts: str | None = None) -> dict[str, Any]:
    """Entry ``target`` is labelled ``name`` (None: its label is removed) at ``ts`` (now)."""
    return {"type": "label", "target": target, "label": name, "ts": now() if ts is None else ts}


def session_name(name: str, *, ts: str | None = None) -> dict[str, Any]:
    return {"type": "name", "name": name, "ts": now() if ts is None else ts}


def redaction(entries: list[str], matches: int, snapshots: list[str], by: str) -> dict[str, Any]:
    """A redaction rewrote ``entries`` and the commits of ``snapshots`` (refs below the
    session's), ``matches`` matches in all, found ``by`` "secrets" or "pattern"; never the text."""
    return {
        "type": "redaction",
        "entries": entries,
        "matches": matches,
        "snapshots": snapshots,
        "by": by,
        "ts": now(),
    }


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
