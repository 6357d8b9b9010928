"""Stale copies: what a remote still holds of a session that a redaction here rewrote. Kept in
``<store>/stale-copies.json`` as ``{remote: {session: {ref: commit}}}``: the remote's refs of
the session as last fetched or pushed, and the commit each pointed at (ids only, never text).

``convgit redact`` writes it when it drops this clone's copies of what the remote had (the
refs under ``refs/convgit/_remote/<remote>/``, which held the text it removed); ``convgit
push`` refuses a session with a stale copy at the remote unless ``--replace``, which replaces
the remote's refs with a forced push leased on these very commits (a ref another clone moved
since is never overwritten), then forgets them. Read here, in the store, because redaction
(in ``session``) writes it and sharing reads it."""

from __future__ import annotations

import os
from typing import Any

from convgit.base import codec
from convgit.base.errors import CorruptStoreError
from convgit.store.location import StoreLocation

FILE = "stale-copies.json"
Copies = dict[str, dict[str, dict[str, str]]]  # remote -> session -> ref -> commit


def read(location: StoreLocation) -> Copies:
    path = location.root / FILE
    try:
        data: Any = codec.decode(path.read_bytes())
    except FileNotFoundError:
        return {}
    except ValueError:
        data = None
    if not isinstance(data, dict) or not all(
        isinstance(sessions, dict)
        and all(
            isinstance(refs, dict) and all(isinstance(c, str) for c in refs.values())
            for refs in sessions.values()
        )
        for sessions in data.values()
    ):
        raise CorruptStoreError(
            f"{path} is not the record of stale copies convgit writes.",
            "remove it; then `convgit fetch` and `convgit redact` again find what a remote holds",
        )
    return data


def of(location: StoreLocation, remote: str, sid: str) -> dict[str, str]:
    """The refs ``remote`` holds of ``sid`` as they were before a redaction here (none: its
    copy is not stale)."""
    return dict(read(location).get(remote, {}).get(sid, {}))


def add(location: StoreLocation, remote: str, sid: str, refs: dict[str, str]) -> None:
    """Record (or widen) the stale copy of ``sid`` at ``remote``."""
    copies = read(location)
    copies.setdefault(remote, {}).setdefault(sid, {}).update(refs)
    _write(location, copies)


def put(location: StoreLocation, remote: str, sid: str, refs: dict[str, str]) -> None:
    """Record ``refs`` as what ``remote`` holds of ``sid`` now (in place of what was)."""
    copies = read(location)
    copies.setdefault(remote, {})[sid] = dict(refs)
    _write(location, copies)


def forget(location: StoreLocation, remote: str, sid: str) -> None:
    """``remote``'s copy of ``sid`` was replaced: it is stale no more."""
    copies = read(location)
    if copies.get(remote, {}).pop(sid, None) is None:
        return
    if not copies[remote]:
        del copies[remote]
    _write(location, copies)


def _write(location: StoreLocation, copies: Copies) -> None:
    path = location.root / FILE
    if not copies:
        path.unlink(missing_ok=True)
        return
    temporary = path.with_name(f".{FILE}.{os.getpid()}")
    with open(temporary, "wb") as out:
        out.write(codec.dumps(copies).encode())
        out.flush()
        os.fsync(out.fileno())
    os.replace(temporary, path)
