"""``convgit push``: send shared sessions to a remote, only what it lacks.

For each session: the remote's copy last fetched is merged here first (``incoming``), a session
commit of the files as they are then is made (its parents: the one made before, and the remote's
when that is not in it already), and the session commit and every snapshot and saved-state ref
the remote lacks are pushed in one atomic push, none forced. When the remote moved meanwhile
(someone pushed), it is fetched, merged and pushed again, up to ``TRIES`` times.

Nothing is written before the scan: the new lines of the session file (the very bytes the
session commit will carry) and the files and paths of the new snapshots are searched for
secrets (``secrets``; a file the remote holds already through the user's own branches is no
new leak), and the push is refused with the list unless ``allow_secrets``; a refused push
leaves no ref, object or record of what it refused.
"""

from __future__ import annotations

import builtins
import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from convgit.base import faults
from convgit.base.errors import NotFoundError, RefusedError
from convgit.conversation.shortids import ShortIds
from convgit.git import names
from convgit.session import Session
from convgit.sharing import gitnotes, incoming, secrets, session_commit, transport
from convgit.sharing.fetching import fetch_sessions
from convgit.sharing.settings import ShareSettings, shared_ids
from convgit.store import jsonl, stale_copies
from convgit.store.location import StoreLocation
from convgit.store.sessions import find_session
from convgit.workspace import Workspace

if TYPE_CHECKING:
    from convgit.schema.shapes import PushJson

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
    theirs: str | None = None  # the remote's session commit last fetched or pushed
    carried: tuple[builtins.bytes, builtins.bytes] = (b"", b"")  # the file and sidecar scanned
    lacking: dict[str, str] = field(default_factory=dict)  # refs the remote lacks -> commit
    have: list[str] = field(default_factory=list)  # commits the remote has

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
    replaced: list[str] = field(default_factory=list)  # sessions whose stale copy was replaced
    notes: list[str] = field(default_factory=list)  # the git note refs sent (``[share] notes``)

    @property
    def bytes(self) -> int:
        return sum(s.bytes for s in self.sessions)

    def to_json(self) -> PushJson:
        return {
            "remote": self.remote,
            "dry_run": self.dry_run,
            "pushed": self.pushed,
            "tries": self.tries,
            "merged": self.merged,
            "replaced": self.replaced,
            "bytes": self.bytes,
            "sessions": [s.to_json() for s in self.sessions],
            "notes": self.notes,
        }


def chosen(
    location: StoreLocation, session: str | None, every: bool, current: str | None
) -> list[str]:
    """The sessions a push sends: ``session``, every shared one (``every``), or the current one;
    each must be shared. A current session moved to the trash, or deleted from it, is refused as
    every command refuses it (``find_session``), with its hint: ``convgit share`` of it fails."""
    shared = shared_ids(location)
    if every:
        if not shared:
            raise NotFoundError("No session is shared here.", "convgit share SESSION")
        return shared
    sid = session or current
    if sid is None:
        raise NotFoundError("There is no current session to push.", "convgit push --session S")
    if sid not in shared and not location.session_path(sid).exists():
        sid = find_session(location, sid)
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
    replace: bool = False,
) -> PushReport:
    git = Workspace.needed_by(location, transport.SHARED_THROUGH_GIT)
    remote = transport.remote(git, location, given_remote, "sent")
    report = PushReport(remote, dry_run)
    stale = {sid: refs for sid in sids if (refs := stale_copies.of(location, remote, sid))}
    if stale and not replace:
        sid = sorted(stale)[0]
        raise RefusedError(
            f"{remote} still holds session {sid} as it was before it was redacted here;"
            " nothing was sent.",
            f"`convgit push --replace --session {sid} {remote}` replaces it there (a forced"
            " push of this clone's copy, leased on what the remote had)",
        )
    report.replaced = sorted(stale)
    said: list[str] = []
    note_refs = ShareSettings.of(location).note_refs(location)
    for _ in range(TRIES):
        held = functools.cache(lambda: transport.held(git, remote))  # asked once a try, if need be
        report.sessions = [_plan(git, location, remote, sid, report, dry_run, held) for sid in sids]
        found = [f for s in report.sessions for f in s.secrets]
        if found and not allow_secrets:
            named = any(f.kind == secrets.BY_NAME for f in found)
            env = "; a .env file stays a secret by its name until git ignores it"
            paths = any(f.where.startswith(secrets.IN_PATH) for f in found)
            path = "; redact rewrites files, not their names: a name stays in its snapshots"
            raise RefusedError(
                f"The push would send {len(found)} secret(s): {secrets.sentence(found)};"
                " nothing was sent.",
                "redact them first (`convgit redact --secrets --snapshots`), or push with"
                " --allow-secrets" + (env if named else "") + (path if paths else ""),
            )
        for planned in report.sessions:  # scanned: only now is anything written
            _carry(git, planned, dry_run)
        note_specs = gitnotes.push_specs(git, remote, note_refs)
        report.notes = [spec.partition(":")[2] for spec in note_specs]
        if dry_run:
            return report
        specs = [spec for s in report.sessions for spec in s.specs] + note_specs
        if not specs:
            report.pushed = True
            return report
        leases: dict[str, str] = {}
        for planned in report.sessions:  # a stale copy replaced, leased on what it held
            had = stale.get(planned.session)
            if had is None:
                continue
            leases.update({dst: had.get(dst, "") for dst in _destinations(planned.specs)})
            here = set(git.refs_under(names.session_prefix(planned.session)))
            for name, commit in sorted(had.items()):
                leases[name] = commit
                if name not in here and name != names.shared_ref(planned.session):
                    specs.append(f":{name}")  # not here (the redaction renamed it): not there
        faults.point("share:before-push")
        report.tries += 1
        sent = transport.push(git, remote, specs, leases)
        if sent.ok:
            faults.point("share:pushed")
            transport.set_refs(git, _tracked(remote, specs))
            _untrack(git, remote, specs)
            for sid in stale:
                stale_copies.forget(location, remote, sid)
            report.pushed = True
            return report
        if stale:  # leased refs moved: what the remote holds now is the lease of the next try
            for sid in stale:
                now = transport.remote_refs(
                    git, remote, [names.shared_ref(sid), names.session_prefix(sid) + "*"]
                )
                stale_copies.put(location, remote, sid, now)
            raise RefusedError(
                f"{remote}'s copy of {', '.join(sorted(stale))} changed since it was last fetched"
                " here (another clone pushed to it); nothing was replaced.",
                "`convgit push --replace` again replaces what it holds now (its turns stay in the"
                " clone that pushed them)",
            )
        said = sent.said
        fetch_sessions(git, location, remote, sids)  # the remote moved: fetch, merge, again
        gitnotes.fetch_and_merge(git, remote, note_refs)
    last = f" (it said: {'; '.join(said)})" if said else ""
    raise RefusedError(
        f"{remote} moved {TRIES} times while this push was merging it{last}; nothing more was"
        " sent.",
        "push again",
    )


def _tracked(remote: str, specs: list[str]) -> dict[str, str]:
    moved: dict[str, str] = {}
    for spec in specs:
        commit, _, name = spec.partition(":")
        if commit:
            moved[names.tracking_ref(remote, name)] = commit
    return moved


def _untrack(git: Workspace, remote: str, specs: list[str]) -> None:
    """Forget the tracking refs of the refs a push deleted on ``remote``."""
    gone = [names.tracking_ref(remote, s[1:]) for s in specs if s.startswith(":")]
    had = git.refs_under(names.remote_prefix(remote))
    found = {name: had[name] for name in gone if name in had}
    if found:
        git.delete_refs(found)


def _destinations(specs: list[str]) -> list[str]:
    return [spec.partition(":")[2] for spec in specs]


def _plan(
    git: Workspace,
    location: StoreLocation,
    remote: str,
    sid: str,
    report: PushReport,
    dry_run: bool,
    held: Callable[[], list[str]],
) -> SessionPush:
    """What a push of ``sid`` sends, scanned: nothing is written here (the remote's copy is
    merged first, which writes only what the remote has)."""
    session = Session(location, sid)
    session.reload()
    session.conversation.check()
    theirs = _one(git, names.tracking_ref(remote, names.shared_ref(sid)))
    if theirs is not None and not dry_run:
        report.merged += incoming.merge_into(session, git, remote, theirs).entries
    plan = SessionPush(sid, session.conversation.name, theirs=theirs)
    with jsonl.exclusive(location.lock_path(sid), f"session {sid}"):
        plan.carried = session_commit.contents(location, sid)
    their_file = session_commit.read(git, theirs)[0] if theirs else b""
    plan.entries, plan.secrets = _new_records(plan.carried[0], their_file)
    ours = git.refs_under(names.session_prefix(sid))
    tracked = git.refs_under(names.tracking_ref(remote, names.session_prefix(sid)))
    plan.lacking = {
        n: c for n, c in ours.items() if tracked.get(names.tracking_ref(remote, n)) != c
    }
    plan.snapshots = len(plan.lacking)
    plan.have = sorted(set(git.refs_under(names.remote_prefix(remote)).values()))
    tips = sorted(set(plan.lacking.values()))
    plan.secrets += secrets.in_files(git, tips, plan.have, held)
    return plan


def _new_records(own: bytes, theirs: bytes) -> tuple[int, list[secrets.Found]]:
    """How many entries of the session file ``own`` the remote's copy ``theirs`` lacks, and
    the secrets in every line it lacks (entries, labels, names and the rest)."""
    sent = incoming.parse_copy(own)
    there = set(incoming.parse_copy(theirs).entries) if theirs else set()
    had = set(theirs.split(b"\n"))
    short = ShortIds(sent.entries)
    records: list[tuple[str, dict[str, Any]]] = []
    parsed = jsonl.parse_lines(own)
    for number, record in parsed.parsed:
        if not isinstance(record, dict):
            continue
        ident = record.get("id")
        if "parentId" in record and isinstance(ident, str) and ident in sent.entries:
            if ident not in there:
                records.append((f"entry {short.short(ident)}", record))
        elif parsed.raw[number - 1] not in had:
            records.append((f"line {number} of the session file", record))
    return sum(1 for i in sent.entries if i not in there), secrets.in_records(records)


def _carry(git: Workspace, plan: SessionPush, dry_run: bool) -> None:
    """Write the session commit of what ``_plan`` scanned, and the refspecs of the push."""
    sid = plan.session
    if dry_run:
        mine = _one(git, names.shared_ref(sid))
        carried = session_commit.build(git, plan.carried, sid, [mine] if mine else [])
    else:
        carried = _session_commit(git, sid, plan.theirs, plan.carried)
    tips = sorted({carried, *plan.lacking.values()} - set(plan.have))
    plan.bytes = transport.pack_bytes(git, tips, plan.have)
    plan.specs = [f"{c}:{n}" for n, c in sorted(plan.lacking.items())]
    if carried != plan.theirs:
        plan.specs.append(f"{carried}:{names.shared_ref(sid)}")


def _session_commit(
    git: Workspace, sid: str, theirs: str | None, contents: tuple[bytes, bytes]
) -> str:
    """The session commit of ``contents``, kept by ``refs/convgit/_shared/<sid>``."""
    mine = _one(git, names.shared_ref(sid))
    parents = [mine] if mine else []
    if theirs is not None and (mine is None or not session_commit.is_ancestor(git, theirs, mine)):
        parents.append(theirs)
    carried = session_commit.build(git, contents, sid, parents)
    if carried != mine:
        transport.set_refs(git, {names.shared_ref(sid): carried})
    return carried


def _one(git: Workspace, ref: str) -> str | None:
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
