"""``convgit fetch`` and ``convgit pull``: what a remote has of the shared sessions.

``fetch`` brings the remote's session commits and the refs of their sessions into the tracking
refs (``refs/convgit/_remote/<remote>/…``, only objects this clone lacks), makes here every
session this clone does not have (and shares it: it came from the remote), and says how many
entries each session here is behind. ``pull`` fetches, then merges each remote copy into the
session here (``incoming.merge_into``). Both merge the remote's git notes of attribution
(``[share] notes``) into this clone's, this clone's note winning on a commit both have one for.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from convgit.git import names
from convgit.session import Session
from convgit.sharing import gitnotes, incoming, session_commit, transport
from convgit.sharing.settings import ShareSettings, set_shared
from convgit.store import stale_copies
from convgit.store.location import StoreLocation
from convgit.store.sessions import SESSION_ID
from convgit.workspace import Workspace

if TYPE_CHECKING:
    from convgit.schema.shapes import FetchJson


@dataclass
class Fetched:
    """One session a remote has: made here (``new``), merged, or how far behind this is."""

    session: str
    new: bool = False
    merged: bool = False
    entries: int = 0  # entries made or merged here; for a fetch of a session here, behind
    snapshots: int = 0
    differ: int = 0  # entries whose snapshot differs here (ours kept)
    trashed: bool = False  # the session here is in the trash: nothing was made
    stale: bool = False  # redacted here: the remote's copy holds what was removed; not fetched

    def to_json(self) -> dict[str, Any]:
        return {
            "session": self.session,
            "new": self.new,
            "merged": self.merged,
            "entries": self.entries,
            "snapshots": self.snapshots,
            "differ": self.differ,
            "trashed": self.trashed,
            "stale": self.stale,
        }


@dataclass
class FetchReport:
    remote: str
    merge: bool
    sessions: list[Fetched] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # the git note refs that changed here

    def to_json(self) -> FetchJson:
        return {
            "remote": self.remote,
            "merged": self.merge,
            "sessions": [s.to_json() for s in self.sessions],
            "notes": self.notes,
        }


def fetch_sessions(
    git: Workspace, location: StoreLocation, remote: str, only: list[str] | None = None
) -> list[str]:
    """Fetch the remote's session commits, then the refs of its sessions (``only`` these);
    the sessions fetched. A session whose copy there is stale (it holds what a redaction here
    removed) is never fetched: its text would be back here."""
    stale = sorted(stale_copies.read(location).get(remote, {}))
    transport.fetch(git, remote, transport.fetch_specs(remote, None, stale))
    prefix = names.tracking_ref(remote, names.SHARED_PREFIX)
    found = sorted(
        name[len(prefix) :]
        for name in git.refs_under(prefix)
        if SESSION_ID.fullmatch(name[len(prefix) :])
    )
    found = [sid for sid in found if sid not in stale]
    if only is not None:
        found = [sid for sid in found if sid in only]
    transport.fetch(git, remote, transport.fetch_specs(remote, found))
    return found


def fetch(location: StoreLocation, given_remote: str | None, *, merge: bool) -> FetchReport:
    git = Workspace.needed_by(location, transport.SHARED_THROUGH_GIT)
    remote = transport.remote(git, location, given_remote, "fetched")
    report = FetchReport(remote, merge)
    trashed = set(location.trashed_ids())
    for sid in sorted(stale_copies.read(location).get(remote, {})):
        report.sessions.append(Fetched(sid, stale=True))
    for sid in fetch_sessions(git, location, remote):
        ref = names.tracking_ref(remote, names.shared_ref(sid))
        commit = git.refs_under(ref)[ref]
        row = Fetched(sid)
        if location.session_path(sid).exists():
            session = Session(location, sid)
            if merge:
                done = incoming.merge_into(session, git, remote, commit)
                row.merged, row.entries = True, done.entries
                row.snapshots, row.differ = done.snapshots, done.differ
            else:
                session.reload()
                data = session_commit.read(git, commit)[0]
                row.entries = incoming.entries_behind(session.conversation.tree, data)
        elif sid in trashed:
            row.trashed = True
        else:
            done = incoming.create_from(location, git, sid, remote, commit)
            set_shared(location, sid, True)
            row.new, row.entries, row.snapshots = True, done.entries, done.snapshots
        report.sessions.append(row)
    report.notes = gitnotes.fetch_and_merge(
        git, remote, ShareSettings.of(location).note_refs(location)
    )
    return report
