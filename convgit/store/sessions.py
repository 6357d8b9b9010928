"""The sessions of a store, from its files alone: find one by id, prefix or name, list them with
what a listing shows, and find the one that mirrors an agent's session. Every session is read
through ``convgit.store.load``; nothing here writes a session file.
"""

from __future__ import annotations

import re
from pathlib import Path, PurePath
from typing import Any

from convgit.base import codec
from convgit.base.errors import AmbiguousRefError, ConvgitError, NotFoundError, UsageError
from convgit.conversation.tree import Tree
from convgit.store import jsonl, load
from convgit.store.location import StoreLocation, locate, write_pointer
from convgit.store.sidecar import Sidecar

SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")


def session_file(location: StoreLocation, sid: str, *, fsync: bool = False) -> jsonl.JsonlFile:
    """Session ``sid``'s file and its lock."""
    return jsonl.JsonlFile(location.session_path(sid), location.lock_path(sid), fsync=fsync)


def sidecar_file(location: StoreLocation, sid: str, *, fsync: bool = False) -> jsonl.JsonlFile:
    """Session ``sid``'s sidecar file and its lock (its records carry file names)."""
    return jsonl.JsonlFile(
        location.sidecar_path(sid), location.lock_path(sid + ".files"), fsync=fsync, names=True
    )


def read_tree(location: StoreLocation, sid: str) -> Tree:
    """Session ``sid``'s tree, as ``Session`` loads it."""
    return load.session(session_file(location, sid), sid)[1]


def read_sidecar(location: StoreLocation, sid: str) -> Sidecar:
    return load.sidecar(sidecar_file(location, sid))[1]


def find_session(location: StoreLocation, ref: str) -> str:
    """The id of the session ``ref`` names: its id, a unique prefix of it, or its unique name.
    An empty ``ref`` names none: refused, never taken for the current session."""
    if not ref.strip():
        raise UsageError("An empty session names none; give its id, a prefix of it or its name.")
    if SESSION_ID.fullmatch(ref):
        if location.session_path(ref).exists():
            return ref
        matches = [s for s in location.session_ids() if s.startswith(ref)]
        if len(matches) == 1:
            return matches[0]
        if len(matches) > 1:
            raise AmbiguousRefError(
                f"'{ref}' matches {len(matches)} sessions.", "give more characters of the id"
            )
    named = [row["id"] for row in rows(location) if row.get("name") == ref]
    if not named:
        refuse_trashed(location, ref)
    if len(named) > 1:
        raise AmbiguousRefError(
            f"{len(named)} sessions are named '{ref}'.", "give the session's id (convgit sessions)"
        )
    if not named:
        raise no_session(location, f"There is no session '{ref}' here.")
    return str(named[0])


def refuse_trashed(location: StoreLocation, ref: str) -> None:
    """Refuse (NotFoundError) a session ``ref`` names in the trash (by a prefix of its id, or
    its name): it is not used until ``convgit sessions restore`` brings it back."""
    trashed = [sid for sid in location.trashed_ids() if sid.startswith(ref)] if ref else []
    if not trashed:
        trashed = trashed_named(location, ref)
    if len(trashed) == 1:
        raise NotFoundError(
            f"Session {trashed[0]} is in the trash.",
            f"`convgit sessions restore {trashed[0]}` brings it back",
        )


def trashed_named(location: StoreLocation, name: str) -> list[str]:
    """The sessions in the trash whose display name is ``name``."""
    found = []
    for sid in location.trashed_ids():
        try:
            named = read_tree(location.in_trash(sid), sid).name
        except ConvgitError:  # a damaged file is named by its id alone
            continue
        if named == name:
            found.append(sid)
    return found


def use(path: str | Path, ref: str, store_dir: str | Path | None = None) -> str:
    """Make the session ``ref`` names (id, prefix or unique name) current here; its id."""
    location = locate(path, store_dir)
    sid = find_session(location, ref)
    location.set_current(sid)
    return sid


def list_sessions(
    path: str | Path = ".", store_dir: str | Path | None = None
) -> list[dict[str, Any]]:
    """Every session of the store, with what a listing shows; a corrupt one says why."""
    return rows(locate(path, store_dir))


def rows(location: StoreLocation) -> list[dict[str, Any]]:
    """``list_sessions`` for a store already located."""
    current = location.current()
    found: list[dict[str, Any]] = []
    for sid in location.session_ids():
        row: dict[str, Any] = {
            "id": sid,
            "path": str(location.session_path(sid)),
            "current": sid == current,
        }
        try:
            t = read_tree(location, sid)
            header = t.header or {}
            row.update(
                entries=len(t.entries),
                leaf=t.leaf,
                name=t.name,
                created=header.get("created"),
                agent=header.get("agent"),
                agent_session_id=header.get("agentSession"),
                agent_sessions=sorted(ident for _, ident in t.agent_sessions),
                source=header.get("forkedFrom"),
                snapshots=location.git is not None and _checked_sidecar(location, sid).enabled,
                error=t.fatal[0].sentence() if t.fatal else None,
            )
        except ConvgitError as exc:
            row.update(
                entries=0,
                leaf=None,
                name=None,
                created=None,
                agent=None,
                agent_session_id=None,
                agent_sessions=[],
                source=None,
                error=exc.message,
            )
        found.append(row)
    return found


def _checked_sidecar(location: StoreLocation, sid: str) -> Sidecar:
    sidecar = read_sidecar(location, sid)
    sidecar.check(sid)
    return sidecar


def no_session(location: StoreLocation, sentence: str) -> NotFoundError:
    """Not found (exit 1), with the sessions there are; reading them may find the store
    damaged instead (exit 3)."""
    found = list_sessions(location.root, location.root)
    if not found:
        return NotFoundError(sentence, "convgit init")
    shown = [s["id"] + (f" ({s['name']})" if s.get("name") else "") for s in found[:10]]
    more = f" and {len(found) - 10} more" if len(found) > 10 else ""
    return NotFoundError(sentence, f"the sessions here: {', '.join(shown)}{more}")


def agent_session(
    location: StoreLocation, agent: str, agent_session_id: str, pointer: Path
) -> str | None:
    """The session that mirrors ``agent``'s session: the one whose header names it (the
    pointer's, else found by reading every header), else one whose file records it as
    continuing (``importing.mirror_agent_session``); the pointer is written again when it was
    wrong."""
    try:
        hinted: str | None = pointer.read_text().strip()
    except OSError:
        hinted = None
    candidates = [hinted] if hinted else []
    candidates += [sid for sid in location.session_ids() if sid != hinted]
    candidates = [sid for sid in candidates if SESSION_ID.fullmatch(sid)]
    for sid in candidates:
        header = jsonl.read_header(location.session_path(sid)) or {}
        if header.get("agent") == agent and header.get("agentSession") == agent_session_id:
            if sid != hinted:
                write_pointer(pointer, sid)
            return sid
    marker = b'"agentSession":' + codec.dumps(agent_session_id).encode()
    for sid in candidates:
        try:
            data = jsonl.read_bytes(location.session_path(sid))
        except ConvgitError:
            continue
        if marker not in data:
            continue
        if (agent, agent_session_id) in read_tree(location, sid).agent_sessions:
            if sid != hinted:
                write_pointer(pointer, sid)
            return sid
    return None


def imported_from(location: StoreLocation, agent: str, path: str) -> str | None:
    """The session of ``agent`` imported from the file at ``path`` (as the agent wrote the
    path, maybe on another machine): the same path, else a file of the same name in a folder
    of the same name (the agent's session folder, copied)."""
    wanted = PurePath(path.replace("\\", "/"))
    for sid in location.session_ids():
        header = jsonl.read_header(location.session_path(sid)) or {}
        if header.get("agent") != agent:
            continue
        for kind, imported in read_tree(location, sid).imports:
            got = PurePath(imported)
            if kind == agent and (str(got) == str(wanted) or got.parts[-2:] == wanted.parts[-2:]):
                return sid
    return None
