"""Opening a session: the current one (or the one named), or a new one started in a store.

Promises kept here (``Session.open`` and ``Session.create`` delegate here):
* a new session gets an id no session in the store has, and a header naming where it runs;
* snapshots default to on inside git, and are refused outside it or at a home or root folder.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from convgit import schema
from convgit.base.errors import NoWorkspaceError, UsageError
from convgit.store import jsonl, sessions
from convgit.store.location import StoreLocation, locate

if TYPE_CHECKING:
    from convgit.session import Session


def open(
    cls: type[Session],
    path: str | Path = ".",
    create: bool = False,
    *,
    session: str | None = None,
    store_dir: str | Path | None = None,
    fsync: bool = False,
) -> Session:
    location = locate(path, store_dir)
    # a session given is looked up (an empty one is refused); CONVGIT_SESSION="" is none set
    sid = (os.environ.get("CONVGIT_SESSION") or location.current()) if session is None else session
    if sid is None:
        if create:
            return cls.create(path, store_dir=store_dir, fsync=fsync)
        raise sessions.no_session(location, "There is no current convgit session here.")
    opened = cls(location, sessions.find_session(location, sid), fsync=fsync)
    opened.reload()
    return opened


def start(
    cls: type[Session],
    location: StoreLocation,
    *,
    name: str | None = None,
    snapshots: bool | None = None,
    fsync: bool = False,
    forked_from: dict[str, str] | None = None,
    agent: tuple[str, str] | None = None,
    make_current: bool = True,
) -> Session:
    if snapshots and location.git is None:
        raise NoWorkspaceError(
            "Snapshots need a git repository, and this folder is not in one.",
            "run `git init` first, or use --no-snapshots",
        )
    if location.git is not None and snapshots is not False:
        _check_workspace_root(location.git.worktree)
    if name is not None:
        check_name(name)  # before the session exists: a refused name leaves nothing behind
    sid = schema.new_id(set(location.session_ids()), size=schema.SESSION_ID_BYTES)
    cwd = str(location.git.worktree if location.git and location.git.worktree else Path.cwd())
    jsonl.create(location.session_path(sid), schema.header(sid, cwd, forked_from, agent))
    session = cls(location, sid, fsync=fsync)
    session.reload()
    if location.git is not None and snapshots is not False:
        session.sidecar_file.append([schema.sidecar_switch(True)])
    if name is not None:
        session.rename(name)
    if make_current:
        location.set_current(sid)
    return session


def check_name(name: str) -> None:
    """A session's name names it (``--session NAME``): an empty one would name nothing."""
    if not name.strip():
        raise UsageError("A session's name cannot be empty; give a few words.")


def _check_workspace_root(worktree: Path | None) -> None:
    if worktree is None:
        return
    from convgit.git.run import refuse_home_or_root

    refuse_home_or_root(
        worktree, hint="run convgit inside a project's own repository, or use --no-snapshots"
    )
