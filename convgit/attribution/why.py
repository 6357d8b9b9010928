"""``convgit why COMMIT``: the conversation that led to a commit, and which snapshot its files
match. The commit's trailers (``trailers``) name the session and entry; else its git notes of
attribution do (``commit_notes``: of the entries that wrote its lines, the one its session wrote
last); a commit with neither is looked up by its files (a snapshot of any session of the store
with that very tree). A commit made before the session began that its files were found in is
said to predate it: the session started from those files, and no conversation led there."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from convgit.attribution import Author, Lines, commit_notes, trailers
from convgit.base.errors import NotFoundError
from convgit.git import names
from convgit.session import Session
from convgit.sharing.transport import SHARED_THROUGH_GIT
from convgit.store.location import StoreLocation
from convgit.workspace import Workspace


@dataclass
class Why:
    commit: str
    subject: str
    found_by: str  # "trailers", "notes" or "files"
    match: trailers.Match
    session: Session
    path: list[str] = field(default_factory=list)  # root to the entry
    predates: bool = False  # made before the session's first entry: it started from these files

    def to_json(self) -> dict[str, Any]:
        return {
            "commit": self.commit,
            "subject": self.subject,
            "found_by": self.found_by,
            **self.match.to_json(),
            "path": [self.session.conversation.record(i) for i in self.path],
            "predates": self.predates,
        }


def why(location: StoreLocation, rev: str) -> Why:
    git = Workspace.needed_by(location, SHARED_THROUGH_GIT)
    commit, tree_id = git.commit_and_tree(rev)
    subject = git.run("log", "-1", "--format=%s", commit, "--").stdout.decode().strip()
    made = git.run("log", "-1", "--format=%cI", commit, "--").stdout.decode().strip()
    named = trailers.read(git, commit)
    sid, entry = named.get(names.SESSION_TRAILER), named.get(names.ENTRY_TRAILER)
    found_by = "trailers"
    if not (sid and entry):
        sid, entry = _from_notes(location, commit_notes.Reader(git).trace(commit) or {})
        found_by = "notes"
    if sid and entry and location.session_path(sid).exists():
        session = Session(location, sid)
        session.reload()
        if entry in session.conversation.tree.entries:
            snap = session.track.nearest_snapshot(entry)
            if snap is not None:
                differ = trailers.differing(git, tree_id, snap.tree_id)
                found = trailers.Match(sid, entry, snap.commit, differ)
                return Why(
                    commit,
                    subject,
                    found_by,
                    found,
                    session,
                    session.conversation.path_ids(entry),
                )
    for other in location.session_ids():
        session = Session(location, other)
        session.reload()
        for snap in session.track.read_sidecar().snapshots.values():
            if snap.tree_id == tree_id and snap.entry in session.conversation.tree.entries:
                found = trailers.Match(other, snap.entry, snap.commit, 0)
                return Why(
                    commit,
                    subject,
                    "files",
                    found,
                    session,
                    session.conversation.path_ids(snap.entry),
                    predates=_before(
                        made, session, at_start=len(session.conversation.path_ids(snap.entry)) == 1
                    ),
                )
    if sid:
        raise NotFoundError(
            f"Commit {commit[:12]} names session {sid}, entry {entry} (in its {found_by}), which"
            " this store does not have.",
            "`convgit fetch` brings the shared sessions of a remote",
        )
    raise NotFoundError(
        f"Commit {commit[:12]} names no conversation, and no snapshot here has its files.",
        "`convgit hooks install git` writes the git notes that name it for the commits made"
        " from now on",
    )


def _from_notes(location: StoreLocation, lines: Lines[Author]) -> tuple[str | None, str | None]:
    """The session and entry a commit's notes name: of the entries that wrote its lines, in
    the sessions this store has, the one written last (the first named when none is here)."""
    named = [
        (a.session, a.entry) for f in lines.values() for a in f.values() if a.session and a.entry
    ]
    if not named:
        return None, None
    best: tuple[int, str, str] | None = None
    for sid, entry in dict.fromkeys(named):
        if sid is None or entry is None or not location.session_path(sid).exists():
            continue
        session = Session(location, sid)
        session.reload()
        line = session.conversation.tree.lines.get(entry)
        if line is not None and (best is None or line > best[0]):
            best = (line, sid, entry)
    return (best[1], best[2]) if best is not None else named[0]


def _before(made: str, session: Session, *, at_start: bool) -> bool:
    """Whether a commit made at ``made`` (git's ISO 8601 time) came before ``session``'s first
    entry was written. git keeps whole seconds: a commit of that entry's second counts as before
    it only when its files are the first entry's snapshot (``at_start``: the files the session
    began from), never a later turn's."""
    times = [str(e["ts"]) for e in session.conversation.tree.entries.values() if e.get("ts")]
    if not times or not made:
        return False
    try:
        first = datetime.fromisoformat(min(times).replace("Z", "+00:00"))
        when, start = datetime.fromisoformat(made), first.replace(microsecond=0)
        return when < start or (at_start and when == start)
    except ValueError:
        return False
