"""Opening a session: the current one (or the one named), or a new one started in a store.

Promises kept here (for ``Session.open`` and ``Session.create``):
* a new session gets an id no session in the store has, and a header naming where it runs;
* snapshots default to on inside git, and are refused outside it or at a home or root folder.
"""

from __future__ import annotations

import os
from pathlib import Path

from convgit import schema
from convgit.base.errors import NoWorkspaceError, UsageError
from convgit.store import jsonl, sessions
from convgit.store.location import StoreLocation


def find(location: StoreLocation, session: str | None) -> str | None:
    """The id of ``session`` (default: ``CONVGIT_SESSION``, else the one ``init`` made current),
    None when none is set; a session named is looked up (an empty name is refused)."""
    # CONVGIT_SESSION="" is none set
    sid = (os.environ.get("CONVGIT_SESSION") or location.current()) if session is None else session
    return None if sid is None else sessions.find_session(location, sid)


def start(
    location: StoreLocation,
    *,
    name: str | None = None,
    snapshots: bool | None = None,
    forked_from: dict[str, str] | None = None,
    agent: tuple[str, str] | None = None,
) -> str:
    """Write the file of a new session in ``location`` (its header) and return its id;
    refused (before anything is written) outside git when ``snapshots``, at a home or root
    folder, or with an empty ``name``. In git, snapshots are switched on in its sidecar first
    (unless ``snapshots`` is False): the session appears with them on, whenever the process
    that makes it is killed."""
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
    if location.git is not None and snapshots is not False:
        sidecar = location.sidecar_path(sid)
        sidecar.unlink(missing_ok=True)  # a session's made before its file was: none is one
        jsonl.create(sidecar, schema.sidecar_switch(True))
    jsonl.create(location.session_path(sid), schema.header(sid, cwd, forked_from, agent))
    from convgit.store import userstore  # here: only a new session adds its store to the list

    userstore.remember_store(location.root)
    return sid


def check_name(name: str) -> None:
    """A session's name names it (``--session NAME``): an empty one would name nothing."""
    if not name.strip():
        raise UsageError("A session's name cannot be empty; give a few words.")


def _check_workspace_root(worktree: Path | None) -> None:
    if worktree is None:
        return
    from convgit.workspace import refuse_home_or_root

    refuse_home_or_root(
        worktree, hint="run convgit inside a project's own repository, or use --no-snapshots"
    )
