"""An OpenCode session as the document ``opencode export ID`` prints, read straight from OpenCode's
SQLite database: what ``convgit hook opencode`` imports, since OpenCode keeps no session file
(running ``opencode export`` would start a second OpenCode, seconds a turn).

OpenCode keeps one database (WAL) in its data folder (``$XDG_DATA_HOME/opencode``, else
``~/.local/share/opencode``): ``opencode.db`` for its released builds, ``opencode-<channel>.db``
for others; ``OPENCODE_DB`` names another, absolute or relative to that folder. Its ``message``
and ``part`` rows hold each message's and part's JSON without the ids, which the export adds
after the rest (as here). It is opened read-only: the hook runs while OpenCode waits for it, so
nothing is half written.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from convgit.base.errors import NotFoundError

if TYPE_CHECKING:
    from convgit.store.location import StoreLocation


class SubagentSessionError(ValueError):
    """The session is a subagent's (OpenCode's ``task`` tool), which convgit does not record."""


def file(location: StoreLocation, session: str) -> Path:
    """The file of convgit's where OpenCode's session ``session`` is written: beside the
    pointer to the convgit session that mirrors it (``agents/opencode/<id>.export.json``)."""
    pointer = location.agent_pointer("opencode", session)
    return pointer.with_name(pointer.name + ".export.json")


def write(location: StoreLocation, session: str) -> Path | None:
    """Write OpenCode's session ``session`` to its ``file`` (when it changed), and return it;
    None for a subagent's session (not recorded) or a database kept in memory."""
    found = databases()
    if not found:
        return None
    try:
        data = export(found, session)
    except SubagentSessionError:
        return None
    path = file(location, session)
    try:
        same = path.read_bytes() == data
    except OSError:
        same = False
    if not same:
        from convgit.agents import settings

        settings.write_atomically(path, data, 0o600)
    return path


def databases(env: Mapping[str, str] = os.environ) -> list[Path]:
    """Where OpenCode's database may be for the environment ``env`` (OpenCode's own: the hook
    inherits it), the likeliest first: ``OPENCODE_DB`` alone when it is set (none when it is
    kept in memory); else ``opencode.db`` (the released builds'), then the database of each
    other channel OpenCode has used (``opencode-<channel>.db``)."""
    data = env.get("XDG_DATA_HOME") or os.path.join(env.get("HOME") or "~", ".local", "share")
    folder = Path(data).expanduser() / "opencode"
    named = env.get("OPENCODE_DB")
    if named == ":memory:":
        return []
    if named:
        return [Path(named) if os.path.isabs(named) else folder / named]
    return [folder / "opencode.db", *sorted(folder.glob("opencode-*.db"))]


def export(found: list[Path], session: str) -> bytes:
    """The export document of OpenCode's session ``session``, from the first of the databases
    ``found`` that holds it."""
    for db in found:
        if not db.is_file():
            continue
        with sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True, timeout=2) as connection:
            data = _export(connection, session)
        if data is not None:
            return data
    where = ", ".join(str(db) for db in found) or "memory"
    raise NotFoundError(f"OpenCode's database ({where}) has no session {session}.")


def _export(connection: sqlite3.Connection, session: str) -> bytes | None:
    connection.row_factory = sqlite3.Row
    row = connection.execute("SELECT * FROM session WHERE id = ?", (session,)).fetchone()
    if row is None:
        return None
    if row["parent_id"]:
        raise SubagentSessionError(f"session {session} is a subagent's (of {row['parent_id']})")
    parts: dict[str, list[dict[str, Any]]] = {}
    for part in connection.execute(
        "SELECT id, message_id, data FROM part WHERE session_id = ? ORDER BY id", (session,)
    ):
        value = {**json.loads(part["data"]), "id": part["id"], "sessionID": session}
        value["messageID"] = part["message_id"]
        parts.setdefault(part["message_id"], []).append(value)
    messages = []
    for message in connection.execute(
        "SELECT id, data FROM message WHERE session_id = ? ORDER BY time_created, id", (session,)
    ):
        info = {**json.loads(message["data"]), "id": message["id"], "sessionID": session}
        messages.append({"info": info, "parts": parts.get(message["id"], [])})
    document = {"info": _info(row), "messages": messages}
    return json.dumps(document, ensure_ascii=False, indent=2).encode() + b"\n"


def _info(row: sqlite3.Row) -> dict[str, Any]:
    """The session's info as the export has it."""

    def loaded(text: Any) -> Any:
        return None if text is None else json.loads(text)

    info: dict[str, Any] = {
        "id": row["id"],
        "slug": row["slug"],
        "projectID": row["project_id"],
        "directory": row["directory"],
        "path": row["path"],
        "title": row["title"],
    }
    if row["parent_id"]:
        info["parentID"] = row["parent_id"]
    for key in ("agent", "model", "permission", "revert"):
        value = loaded(row[key]) if key != "agent" else row[key]
        if value is not None:
            info[key] = value
    info["version"] = row["version"]
    info["summary"] = {
        "additions": row["summary_additions"] or 0,
        "deletions": row["summary_deletions"] or 0,
        "files": row["summary_files"] or 0,
    }
    info["cost"] = row["cost"]
    info["tokens"] = {
        "input": row["tokens_input"],
        "output": row["tokens_output"],
        "reasoning": row["tokens_reasoning"],
        "cache": {"read": row["tokens_cache_read"], "write": row["tokens_cache_write"]},
    }
    info["time"] = {"created": row["time_created"], "updated": row["time_updated"]}
    return info
