"""The refs sharing adds, in one place: where a shared session's session commit lives (here and
on the remote) and where what was fetched from a remote is kept.

* ``refs/convgit/_shared/<sid>``: the session commit of shared session ``sid`` (its file and
  sidecar), here the one last made, on the remote the one last pushed;
* ``refs/convgit/<sid>/…``: the session's snapshot and saved-state refs, the same names on the
  remote as here;
* ``refs/convgit/_remote/<remote>/…``: what was fetched from (or pushed to) ``remote``, the names
  after ``refs/convgit/`` kept, so ``_remote/origin/_shared/<sid>`` and ``_remote/origin/<sid>/…``.

No session id starts with ``_``, so none of these is taken for a session's own refs.
"""

from __future__ import annotations

import re

CONVGIT = "refs/convgit/"
SHARED = CONVGIT + "_shared/"
REMOTES = CONVGIT + "_remote/"

# a remote's name as convgit takes it (git allows more; these are the names people give)
REMOTE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


def session_commit(sid: str) -> str:
    """The ref of ``sid``'s session commit, here and on the remote."""
    return SHARED + sid


def session_refs(sid: str) -> str:
    """The prefix of ``sid``'s own refs (snapshots, replaced snapshots, saved states)."""
    return f"{CONVGIT}{sid}/"


def tracking(remote: str, ref: str) -> str:
    """Where ``ref`` (a name under refs/convgit/) of ``remote`` is kept here."""
    return f"{REMOTES}{remote}/{ref[len(CONVGIT) :]}"


def untracked(remote: str, name: str) -> str:
    """The remote's own name of the tracking ref ``name`` (``tracking`` undone)."""
    return CONVGIT + name[len(f"{REMOTES}{remote}/") :]


def fetch_specs(remote: str, sids: list[str] | None) -> list[str]:
    """The refspecs that fetch the session commits (``sids`` None) or the refs of ``sids``."""
    if sids is None:
        return [f"+{SHARED}*:{tracking(remote, SHARED)}*"]
    return [f"+{session_refs(s)}*:{tracking(remote, session_refs(s))}*" for s in sids]
