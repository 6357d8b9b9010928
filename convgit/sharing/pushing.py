"""``convgit push``: send shared sessions to a remote, only what it lacks.

For each session: the remote's copy last fetched is merged here first (``incoming``), a session
commit of the files as they are then is made (its parents: the one made before, and the remote's
when that is not in it already), and the session commit and every snapshot and saved-state ref
the remote lacks are pushed in one atomic push, none forced. When the remote moved meanwhile
(someone pushed), it is fetched, merged and pushed again, up to ``TRIES`` times.

Nothing is sent before the scan: the new entries and the files of the new snapshots are searched
for secrets (``secrets``), and the push is refused with the list unless ``allow_secrets``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from convgit.base import faults
from convgit.base.errors import NotFoundError, RefusedError
from convgit.git import names
from convgit.git.run import Git
from convgit.session import Session
from convgit.sharing import gitnotes, incoming, secrets, session_commit, transport
from convgit.sharing.fetching import fetch_sessions
from convgit.sharing.settings import ShareSettings, shared_ids
from convgit.store import jsonl
from convgit.store.location import StoreLocation

TRIES = 5


@dataclass
class SessionPush:
    """One session's part of a push: what is new to the remote and whether it went."""

    session: str
    name: str | None
    entries: int = 0  # entries the remote lacks
    snapshots: int = 0  # snapshot and saved-state refs the remote lacks or has elsewhere
    bytes: int = 0  # the pack that carries what the remote lacks
    specs: list[str] = field(default_factory=list)
    secrets: list[secrets.Found] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "session": self.session,
            "name": self.name,
            "entries": self.entries,
            "snapshots": self.snapshots,
            "bytes": self.bytes,
            "refs": len(self.specs),
        }


@dataclass
class PushReport:
    remote: str
    dry_run: bool
    sessions: list[SessionPush] = field(default_factory=list)
    tries: int = 0  # pushes made (more than one: the remote moved and was merged)
    merged: int = 0  # entries the remote had that were merged here on the way
    pushed: bool = False
    notes: list[str] = field(default_factory=list)  # the git note refs sent (``[share] notes``)

    @property
    def bytes(self) -> int:
        return sum(s.bytes for s in self.sessions)

    def to_json(self) -> dict[str, Any]:
        return {
            "remote": self.remote,
            "dry_run": self.dry_run,
            "pushed": self.pushed,
            "tries": self.tries,
            "merged": self.merged,
            "bytes": self.bytes,
            "sessions": [s.to_json() for s in self.sessions],
            "notes": self.notes,
        }


def chosen(
    location: StoreLocation, session: str | None, every: bool, current: str | None
) -> list[str]:
    """The sessions a push sends: ``session``, every shared one (``every``), or the current one;
    each must be shared."""
    shared = shared_ids(location)
    if every:
        if not shared:
            raise NotFoundError("No session is shared here.", "convgit share SESSION")
        return shared
    sid = session or current
    if sid is None:
        raise NotFoundError("There is no current session to push.", "convgit push --session S")
    if sid not in shared:
        raise RefusedError(
            f"Session {sid} is not shared; nothing was sent.", f"convgit share {sid}"
        )
    return [sid]


def push(
    location: StoreLocation,
    given_remote: str | None,
    sids: list[str],
    *,
    dry_run: bool = False,
    allow_secrets: bool = False,
) -> PushReport:
    git = transport.git_of(location)
    remote = transport.remote(git, location, given_remote, "sent")
    report = PushReport(remote, dry_run)
    note_refs = ShareSettings.of(location).note_refs(location)
    for _ in range(TRIES):
        report.sessions = [_plan(git, location, remote, sid, report, dry_run) for sid in sids]
        found = [f for s in report.sessions for f in s.secrets]
        if found and not allow_secrets:
            raise RefusedError(
                f"The push would send {len(found)} secret(s): {secrets.sentence(found)};"
                " nothing was sent.",
                "redact them first (`convgit redact --secrets`), or push with --allow-secrets",
            )
        note_specs = gitnotes.push_specs(git, remote, note_refs)
        report.notes = [spec.partition(":")[2] for spec in note_specs]
        if dry_run:
            return report
        specs = [spec for s in report.sessions for spec in s.specs] + note_specs
        if not specs:
            report.pushed = True
            return report
        faults.point("share:before-push")
        report.tries += 1
        sent = transport.push(git, remote, specs)
        if sent.ok:
            faults.point("share:pushed")
            transport.set_refs(git, _tracked(remote, specs))
            report.pushed = True
            return report
        fetch_sessions(git, location, remote, sids)  # the remote moved: fetch, merge, again
        gitnotes.fetch_and_merge(git, remote, note_refs)
    raise RefusedError(
        f"{remote} moved {TRIES} times while this push was merging it; nothing more was sent.",
        "push again",
    )


def _tracked(remote: str, specs: list[str]) -> dict[str, str]:
    moved: dict[str, str] = {}
    for spec in specs:
        commit, _, name = spec.partition(":")
        moved[names.tracking_ref(remote, name)] = commit
    return moved


def _plan(
    git: Git, location: StoreLocation, remote: str, sid: str, report: PushReport, dry_run: bool
) -> SessionPush:
    session = Session(location, sid)
    session.reload()
    session.conversation.check()
    theirs = _one(git, names.tracking_ref(remote, names.shared_ref(sid)))
    if theirs is not None and not dry_run:
        report.merged += incoming.merge_into(session, git, remote, theirs).entries
    plan = SessionPush(sid, session.conversation.name)
    there = incoming.parse_copy(session_commit.read(git, theirs)[0]) if theirs else None
    known = set() if there is None else set(there.entries)
    view = session.view()
    new = [(i, r) for i, r in session.conversation.tree.entries.items() if i not in known]
    plan.entries = len(new)
    plan.secrets = secrets.in_records((f"entry {view.short_id(i)}", r) for i, r in new)
    ours = git.refs_under(names.session_prefix(sid))
    tracked = git.refs_under(names.tracking_ref(remote, names.session_prefix(sid)))
    lacking = {n: c for n, c in ours.items() if tracked.get(names.tracking_ref(remote, n)) != c}
    plan.snapshots = len(lacking)
    have = sorted(set(git.refs_under(names.remote_prefix(remote)).values()))
    plan.secrets += secrets.in_files(git, sorted(set(lacking.values())), have)
    if dry_run:
        mine = _one(git, names.shared_ref(sid))
        carried = session_commit.build(git, location, sid, [mine] if mine else [])
    else:
        carried = _session_commit(git, location, sid, theirs)
    tips = sorted({carried, *lacking.values()} - set(have))
    plan.bytes = transport.pack_bytes(git, tips, have)
    plan.specs = [f"{c}:{n}" for n, c in sorted(lacking.items())]
    if carried != theirs:
        plan.specs.append(f"{carried}:{names.shared_ref(sid)}")
    return plan


def _session_commit(git: Git, location: StoreLocation, sid: str, theirs: str | None) -> str:
    """The session commit of the files now, kept by ``refs/convgit/_shared/<sid>``."""
    mine = _one(git, names.shared_ref(sid))
    parents = [mine] if mine else []
    if theirs is not None and (mine is None or not session_commit.is_ancestor(git, theirs, mine)):
        parents.append(theirs)
    with jsonl.exclusive(location.lock_path(sid), f"session {sid}"):
        carried = session_commit.build(git, location, sid, parents)
    if carried != mine:
        transport.set_refs(git, {names.shared_ref(sid): carried})
    return carried


def _one(git: Git, ref: str) -> str | None:
    found = git.refs_under(ref)
    return found.get(ref)


def on_push(location: StoreLocation, args: list[str], refs_pushed: str) -> PushReport | None:
    """The ``pre-push`` hook's part (``REMOTE URL``, and git's ref lines on stdin): with
    ``[share] on_push = true``, every shared session goes to the remote ``git push`` pushes to
    (a remote named: a URL alone is not one of convgit's); otherwise nothing."""
    from convgit.sharing.settings import ShareSettings

    if not ShareSettings.of(location).on_push or not args:
        return None
    sids = shared_ids(location)
    if not sids or not transport.REMOTE_NAME.fullmatch(args[0]):
        return None
    return push(location, args[0], sids)
