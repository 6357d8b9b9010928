"""The workspace track of a session: its git working tree, snapshots, status, diff, worktrees.

Promises kept here (``Session.snapshot``, ``status``, ``diff`` and their kin delegate here):
* a snapshot never touches HEAD, the index, branches or files, and never loses the snapshot it
  replaces (``replaces`` names it, a ref keeps it);
* one snapshot or restore at a time per session and worktree (its private index's lock);
* a file one side left out (over the size cap, unreadable) is ``left alone`` in a comparison,
  never added or deleted: that side does not know its content.
"""

from __future__ import annotations

import os
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from convgit import schema
from convgit.base import faults
from convgit.base.errors import ConvgitError, NotFoundError, NoWorkspaceError, RefusedError
from convgit.conversation import tree
from convgit.store.location import find_git, fsmonitor
from convgit.store.sidecar import (
    Pruned,
    SavedState,
    SnapshotInfo,
    is_saved_ref,
    snapshot_back,
)

if TYPE_CHECKING:
    from convgit.session import Session
    from convgit.workspace import Change, Snapshot, Workspace


@dataclass
class Status:
    """Both tracks at once: where the conversation is and where the files are."""

    session: str
    name: str | None
    leaf: str | None
    leaf_snapshot: str | None  # entry id of the nearest snapshot at or above the leaf
    workspace: bool
    sidecar: bool
    matches: str | None = None
    changed: list[str] = field(default_factory=list)
    diverged: bool = False
    further_down: bool = False  # ``matches`` is below the leaf, on its branch (after a resume)
    # the newest restores of the working tree that never finished, one after another, newest
    # first (a restore killed half-way, then its undo killed too): ``--undo`` goes back before
    # the first of them, the last of this list
    interrupted: list[SavedState] = field(default_factory=list)
    left_alone: list[dict[str, str]] = field(default_factory=list)  # path, reason
    not_recorded: dict[str, Any] | None = None  # the last failed snapshot: entry, error, ts
    files_error: str | None = None  # why the files could not be read now
    # how snapshots find what changed: path ("watchman", "hook", "stat"), setting, note
    watcher: dict[str, str | None] | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "session": self.session,
            "name": self.name,
            "leaf": self.leaf,
            "leaf_snapshot": self.leaf_snapshot,
            "workspace": self.workspace,
            "snapshots": self.sidecar,
            "files": {"matches": self.matches, "changed": self.changed},
            "left_alone": self.left_alone,
            "diverged": self.diverged,
            "further_down": self.further_down,
            "interrupted_restore": None
            if not self.interrupted
            else {
                "restores": [state.to_json() for state in self.interrupted],
                "undo_returns_to": self.interrupted[-1].id,
            },
            "not_recorded": self.not_recorded,
            "files_error": self.files_error,
            "watcher": self.watcher,
        }


LEFT_ALONE = "left alone"  # a change's status when one side does not know the file's content


def find_workspace(session: Session) -> Workspace:
    """The git working tree beside ``session``, found (``Session.workspace`` keeps it)."""
    git = session.location.git
    if git is None or git.worktree is None:
        raise NoWorkspaceError(
            "The workspace track needs a git repository with a working tree, and this"
            " session has none.",
            "run convgit inside a git repository",
        )
    check_worktree(session)
    from convgit.workspace import Workspace  # only commands that touch files need git

    found = Workspace.at(git.git_dir, git.worktree)
    if found is None:
        raise NoWorkspaceError("No git working tree was found for this session.")
    found.keep_out(session.location.root)
    found.track_changes(fsmonitor(session.location))
    return found


def append_sidecar(session: Session, records: list[dict[str, Any]]) -> None:
    """Append ``records`` to the sidecar, taking in what other processes appended first."""
    sidecar = session.sidecar  # read first: the append then catches up from where it ended
    for number, theirs in session.sidecar_file.append(records).parsed:
        sidecar.add(number, theirs)
    first = session.sidecar_file.lines - len(records) + 1
    for number, record in enumerate(records, first):
        sidecar.add(number, record)


def nearest_snapshot(session: Session, ident: str | None) -> SnapshotInfo | None:
    """The snapshot of ``ident`` or of its nearest ancestor that has one."""
    snapshots = session.sidecar.snapshots
    node = ident
    while node is not None:
        if node in snapshots:
            return snapshots[node]
        node = session.tree.entries[node]["parentId"]
    return None


def let_go_above(session: Session, ident: str | None) -> Pruned | None:
    """What gc let go of the snapshot that held ``ident``'s files (its own, or the nearest
    above it that had one then), when it let that go; None when the files' snapshot stays."""
    snapshots, let_go = session.sidecar.snapshots, session.sidecar.let_go
    node = ident
    while node is not None:
        if node in snapshots:
            return None
        if node in let_go:
            return let_go[node]
        node = session.tree.entries[node]["parentId"]
    return None


def lost_commits(session: Session) -> list[tree.Problem]:
    sidecar = session.read_sidecar()
    if session.location.git is None or not sidecar.lines:
        return []
    try:
        missing = session.workspace().missing(list(sidecar.lines))
    except ConvgitError:
        return []
    return [
        tree.Problem(
            sidecar.lines[commit],
            f"of the sidecar names the commit {commit[:12]}, which is not in the repository"
            " any more (its ref was deleted and git gc pruned it)",
        )
        for commit in sorted(missing, key=lambda c: sidecar.lines[c])
    ]


def check_worktree(session: Session) -> None:
    """Refuse to act on this worktree's files for a session of another worktree of the
    same repository (its snapshots are of that worktree's files)."""
    home = other_worktree(session, session.tree.header)
    if home is not None:
        raise RefusedError(
            f"Session {session.id} belongs to the worktree at {home}; convgit will not use its"
            " snapshots on the files here.",
            f"run it there: convgit -C {home} …",
        )


def other_worktree(session: Session, header: dict[str, Any] | None) -> Path | None:
    """The other worktree of this repository that a session with ``header`` belongs to, if
    it belongs to one (None: this worktree, or a folder that is no worktree any more)."""
    git = session.location.git
    recorded = (header or {}).get("cwd")
    if git is None or git.worktree is None or not isinstance(recorded, str):
        return None
    home = Path(recorded)
    if home == git.worktree or not (home / ".git").exists():
        return None  # the same worktree, or one that is gone (a moved repository)
    theirs = find_git(home)
    if theirs is not None and theirs.worktree == home and theirs.common_dir == git.common_dir:
        return home
    return None


def take_snapshot(session: Session, parent: str | None, what: str) -> Snapshot:
    with workspace_lock(session):
        return session.workspace().snapshot(
            index(session),
            message=f"convgit snapshot {what}\n\nConvgit-Session: {session.id}\n",
            parent=parent,
            size_cap=session.size_cap,
        )


def record_snapshot(session: Session, ref: str, snap: Snapshot) -> SnapshotInfo:
    target = session.resolve(ref)
    ws = session.workspace()
    existing = session.sidecar.snapshots.get(target)
    with workspace_lock(session):
        if existing is not None and existing.commit != snap.commit:
            kept = f"refs/convgit/{session.id}/replaced/{target}-{existing.commit[:12]}"
            ws.set_ref(kept, existing.commit)
        ws.set_ref(f"refs/convgit/{session.id}/{target}", snap.commit)
    return _record_snapshot(session, target, snap)


def _record_snapshot(session: Session, target: str, snap: Snapshot) -> SnapshotInfo:
    """Write the sidecar's record of ``snap`` as ``target``'s snapshot (its ref is set), and
    count its objects for the background packing (``convgit.workspace.background``)."""
    existing = session.sidecar.snapshots.get(target)
    replaces = None
    if existing is not None:  # a record of the same commit (what it left out changed) keeps
        replaces = existing.commit if existing.commit != snap.commit else existing.replaces
    skipped = _skipped_record(snap)
    append_sidecar(
        session,
        [
            schema.snapshot(
                target,
                snap.commit,
                snap.tree_id,
                snap.files,
                skipped,
                replaces=replaces,
                rules=snap.rules,
            )
        ],
    )
    if not snap.reused:
        from convgit.workspace import background as maintenance

        maintenance.note(session.workspace(), session.location.root, snap.written)
        maintenance.after_turn(session.location.root, session.workspace().root)
    return session.sidecar.snapshots[target]


def index(session: Session) -> Path:
    path = session.location.index_path(session.id)
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def workspace_lock(session: Session) -> AbstractContextManager[None]:
    """One snapshot or restore at a time per session and worktree: its private index's lock."""
    from convgit.git import private_index

    return private_index.locked(index(session))


def status(session: Session, interrupted: list[SavedState]) -> Status:
    """Both tracks now; ``interrupted``: the restores ``Status.interrupted`` names."""
    session.check()
    leaf = session.tree.leaf
    leaf_snap = session.nearest_snapshot(leaf)
    result = Status(
        session=session.id,
        name=session.tree.name,
        leaf=leaf,
        leaf_snapshot=leaf_snap.entry if leaf_snap else None,
        workspace=session.location.git is not None,
        sidecar=session.snapshots_enabled,
        interrupted=interrupted,
    )
    failed = [f for f in session.sidecar.failed.values() if f["entry"] in session.tree.entries]
    if failed:
        last = max(failed, key=lambda f: str(f.get("ts", "")))
        result.not_recorded = {k: last.get(k) for k in ("entry", "error", "ts")}
    if session.location.git is None or not session.sidecar.snapshots:
        return result
    ws = session.workspace()
    size_cap = session.size_cap
    try:
        with workspace_lock(session):
            current, skipped = ws.scan(index(session), size_cap=size_cap)
    except (ConvgitError, OSError) as exc:  # git cannot stage the files (a failing filter)
        result.files_error = exc.message if isinstance(exc, ConvgitError) else os_words(exc)
        return result
    finally:  # what the scan just went by
        path, note = ws.tracking(index(session))
        setting = fsmonitor(session.location)
        result.watcher = {"path": path, "setting": setting, "note": note or None}
    result.matches = _matching_entry(session, current)
    if leaf_snap is not None:
        now = {s.path: s.reason for s in skipped}
        changes = _compared(ws, leaf_snap.tree_id, _skipped(leaf_snap), current, now)
        result.changed = [c.path for c in changes if c.status != LEFT_ALONE]
        result.left_alone = [
            {"path": c.path, "reason": c.reason} for c in changes if c.status == LEFT_ALONE
        ]
    on_path = set(session.tree.path()) if leaf else set()
    if result.matches is not None and result.matches not in on_path:
        # the leaf moved up its branch (`resume`, `switch`): the files are further down it
        result.further_down = leaf is not None and leaf in session.tree.path(result.matches)
        result.diverged = not result.further_down
    return result


@dataclass(frozen=True)
class FilesFrom:
    """A turn recorded files that are another branch's snapshot: ``entry`` (with its
    ``label``, or its ``short`` id) holds the same files, off the turn's path."""

    entry: str
    label: str | None
    short: str

    @property
    def words(self) -> str:
        """The one line an append says (``status`` warns of the same parting)."""
        return f"files: at {self.label or self.short}'s snapshot, recorded as this turn's"

    def to_json(self) -> dict[str, Any]:
        return {"entry": self.entry, "label": self.label}


def files_from(session: Session, entry: str) -> FilesFrom | None:
    """When ``entry``'s snapshot holds the files of a snapshot on another branch (and of none
    above it on its own path): that snapshot's entry, the newest such. What ``status`` calls
    the files being on another branch, said at the moment a turn records them."""
    snapshots = session.sidecar.snapshots
    mine = snapshots.get(entry)
    if mine is None:
        return None
    path = set(session.tree.path(entry))
    same = [  # taken before it: where the files already were
        s
        for s in snapshots.values()
        if s.tree_id == mine.tree_id
        and s.entry != entry
        and s.ts <= mine.ts
        and s.entry in session.tree.entries
    ]
    if not same or any(s.entry in path for s in same):
        return None
    other = max(same, key=lambda s: s.ts).entry
    from convgit.conversation.shortids import ShortIds

    label = session.tree.labels.get(other)
    return FilesFrom(other, label, ShortIds(session.tree.entries).short(other))


def _matching_entry(session: Session, tree_id: str) -> str | None:
    """An entry whose snapshot tree is ``tree_id``: the nearest on the active path, else the
    most recent snapshot anywhere."""
    snapshots = session.sidecar.snapshots
    for ident in reversed(session.tree.path()) if session.tree.leaf else []:
        if ident in snapshots and snapshots[ident].tree_id == tree_id:
            return ident
    found = [
        s for s in snapshots.values() if s.tree_id == tree_id and s.entry in session.tree.entries
    ]
    return max(found, key=lambda s: s.ts).entry if found else None


def diff(session: Session, a: str, b: str | None = None) -> list[Change]:
    return _compared(session.workspace(), *_files_of(session, a), *_side(session, b))


def git_diff(
    session: Session,
    a: str | None,
    b: str | None,
    *,
    stat: int | None = None,
    patch: bool = True,
    colour: bool = False,
) -> tuple[bytes, list[Change]]:
    """What ``git diff`` prints from ``a``'s files (None: no file at all) to ``b``'s (None: the
    files now; see ``Workspace.git_diff``), and the changes, of which those ``left alone``
    (one side does not know the file) are not in git's output."""
    ws = session.workspace()
    left, left_skipped = (ws.empty_tree(), {}) if a is None else _files_of(session, a)
    right, right_skipped = _side(session, b)
    changes = _compared(ws, left, left_skipped, right, right_skipped)
    alone = [c.path for c in changes if c.status == LEFT_ALONE]
    shown = ws.git_diff(left, right, stat=stat, patch=patch, colour=colour, leave_out=alone)
    return shown, changes


def _side(session: Session, ref: str | None) -> tuple[str, dict[str, str]]:
    """``_files_of(ref)``, or for None the tree of the files now and the paths it left out."""
    if ref is not None:
        return _files_of(session, ref)
    with workspace_lock(session):
        tree_id, found = session.workspace().scan(index(session), size_cap=session.size_cap)
    return tree_id, {s.path: s.reason for s in found}


def _files_of(session: Session, ref: str) -> tuple[str, dict[str, str]]:
    """The commit or tree of ``ref`` (a snapshot's entry or a saved state) and the paths
    it left out, with why."""
    if is_saved_ref(ref):
        state = session.saved_state(ref)
        return state.commit, state.skipped
    snap = require_snapshot(session, ref)
    return snap.tree_id, _skipped(snap)


def require_snapshot(session: Session, ref: str) -> SnapshotInfo:
    """The snapshot ``ref`` names: its entry's, or with ``REF@{N}`` the one N back that a
    newer snapshot of the entry replaced (kept under ``refs/convgit/<sid>/replaced/``), or the
    one whose commit ``ref`` begins (7 hex digits or more) when no entry matches."""
    base, back = snapshot_back(ref)
    try:
        target = session.resolve(base)
    except NotFoundError:  # a snapshot's commit, as `snapshots` and the page show it
        by_commit = None if back else session.sidecar.snapshot_by_commit(base)
        if by_commit is None:
            gone = _pruned_commit(session, base)
            if gone is not None:
                raise NotFoundError(
                    f"The snapshot {base} was let go by gc on {gone.day}.",
                    "`convgit snapshots` lists what is kept and why",
                ) from None
            raise
        return by_commit
    snap = session.sidecar.snapshots.get(target)
    if snap is None:
        nearest = session.nearest_snapshot(target)
        hint = f"its nearest snapshot is at {nearest.entry}" if nearest else "convgit snapshot"
        gone = session.sidecar.let_go.get(target)
        if gone is not None:
            raise NotFoundError(
                f"Entry {target} has no snapshot now: its snapshot was let go by gc on {gone.day}.",
                hint,
            )
        raise NotFoundError(f"Entry {target} has no snapshot.", hint)
    if back:
        earlier = session.sidecar.replaced.get(target, [])
        if back > len(earlier):
            pruned = session.sidecar.pruned.values()
            let_go = [p for p in pruned if p.entry == target and p.what == "replaced"]
            said = f" kept now (gc let {len(let_go)} go on {let_go[-1].day})" if let_go else ""
            raise NotFoundError(
                f"The snapshot of {target} replaced {len(earlier)} earlier one"
                f"{'' if len(earlier) == 1 else 's'}{said}; '{ref}' is not one of them."
            )
        snap = earlier[-back]
    return snap


def _pruned_commit(session: Session, ref: str) -> Pruned | None:
    """What gc let go whose commit ``ref`` begins (7 hex digits or more), if anything."""
    wanted = ref.strip().lower()
    if len(wanted) < 7:
        return None
    found = [p for c, p in session.sidecar.pruned.items() if c.startswith(wanted)]
    return found[0] if len(found) == 1 else None


def add_worktree(session: Session, ref: str, directory: Path) -> str:
    if is_saved_ref(ref):
        commit = session.saved_state(ref).commit
    else:
        commit = require_snapshot(session, ref).commit
    session.workspace().add_worktree(commit, directory)
    return commit


def snapshot(
    session: Session, ref: str = "@", *, only_if_changed: bool = False
) -> SnapshotInfo | None:
    target = session.resolve(ref)
    ws = session.workspace()
    size_cap = session.size_cap
    existing = session.sidecar.snapshots.get(target)
    parent = existing or session.nearest_snapshot(session.tree.entries[target]["parentId"])
    message = (
        f"convgit snapshot of {target}\n\nConvgit-Session: {session.id}\nConvgit-Entry: {target}\n"
    )
    with workspace_lock(session):
        faults.point("snapshot:before-stage")
        snap = ws.snapshot(
            index(session),
            message=message,
            parent=parent.commit if parent else None,
            size_cap=size_cap,
        )
        if snap.reused and existing is None and only_if_changed:
            return None
        if (
            snap.reused
            and existing is not None
            and existing.skipped == _skipped_record(snap)
            and existing.rules == (snap.rules or None)
        ):
            return existing  # the same files, left out by the same rules: nothing new
        faults.point("snapshot:before-ref")
        ws.set_ref(f"refs/convgit/{session.id}/{target}", snap.commit)
        faults.point("snapshot:before-record")
    return _record_snapshot(session, target, snap)


def _compared(
    ws: Workspace, a: str, a_skipped: dict[str, str], b: str, b_skipped: dict[str, str]
) -> list[Change]:
    from convgit.workspace import Change

    out: list[Change] = []
    for change in ws.changes(a, b):
        lacking = {"added": a_skipped, "deleted": b_skipped}.get(change.status, {})
        why = next((lacking[p] for p in _and_above(change.path) if p in lacking), None)
        if why is None:
            out.append(change)
        else:
            out.append(Change(change.path, LEFT_ALONE, _reason_word(why)))
    return out


def _skipped(snap: SnapshotInfo) -> dict[str, str]:
    return {str(s["path"]): str(s.get("reason", "")) for s in snap.skipped}


def _and_above(path: str) -> list[str]:
    parts = path.split("/")
    return ["/".join(parts[:i]) for i in range(len(parts), 0, -1)]


def _reason_word(reason: str) -> str:
    """A skipped path's reason in a word or two: "size cap" for every file above the cap."""
    return "size cap" if "size cap" in reason else reason


def os_words(exc: OSError) -> str:
    """An operating system error as one sentence."""
    where = f" ({os.fsdecode(exc.filename)})" if exc.filename is not None else ""
    return f"{exc.strerror or exc}{where}."


def _skipped_record(snap: Snapshot) -> list[dict[str, str]]:
    """The sidecar's record of the files ``snap`` left out."""
    return [{"path": s.path, "reason": s.reason} for s in snap.skipped]
