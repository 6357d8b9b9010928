"""``Snapshots``: one session's snapshots (taking and recording them), and the comparisons of files
they allow (status, diff), and side-by-side worktrees of them.

Promises kept here:
* a snapshot never touches HEAD, the index, branches or files, and never loses the snapshot it
  replaces (``replaces`` names it, a ref keeps it);
* one snapshot or restore at a time per session and worktree (its private index's lock);
* a file one side left out (over the size cap, unreadable) is ``left alone`` in a comparison,
  never added or deleted: that side does not know its content.
"""

from __future__ import annotations

import sys
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, overload

from convgit import schema
from convgit.base import faults
from convgit.base.errors import (
    ConvgitError,
    NotFoundError,
    SnapshotSkippedError,
    skipped_words,
)
from convgit.base.valueclass import valueclass
from convgit.conversation.refs import LEAF, is_saved_ref, snapshot_back
from convgit.git import names
from convgit.git.plumbing.paths import and_above
from convgit.session.track import Track, os_words
from convgit.store.config import fsmonitor
from convgit.store.sidecar import (
    Pruned,
    SavedState,
    SnapshotInfo,
)

if TYPE_CHECKING:
    from convgit.session.conversation import Conversation
    from convgit.session.saved_states import SavedStates
    from convgit.workspace import Change, Snapshot, Workspace


@valueclass
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
    # the last turn's snapshot skipped (over the cap), since the last one taken: entry,
    # changed, cap, ts
    snapshot_skipped: dict[str, Any] | None = None
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
            "snapshot_skipped": self.snapshot_skipped,
            "files_error": self.files_error,
            "watcher": self.watcher,
        }


LEFT_ALONE = "left alone"  # a change's status when one side does not know the file's content


class Snapshots:
    """One session's snapshots, and the files compared with them."""

    def __init__(self, conversation: Conversation, track: Track, saved_states: SavedStates) -> None:
        self.conversation = conversation
        self.track = track
        self.saved_states = saved_states

    def take(self, parent: str | None, what: str) -> Snapshot:
        """The working tree now as a commit whose parent is the snapshot commit ``parent``
        (``reused``: the files are that snapshot's), for no entry yet: ``record`` records it
        once the entry exists (the files a user had when sending a prompt the agent has not
        written down). ``what`` goes into the commit message. A turn's: over ``[snapshots]
        max_files_per_turn`` it is skipped (SnapshotSkippedError; ``skip`` records it)."""
        with self.track.lock():
            return self.track.workspace().snapshot(
                self.track.index(),
                message=names.commit_message(f"convgit snapshot {what}", session=self.track.id),
                parent=parent,
                size_cap=self.track.size_cap,
                max_files=self.track.max_files,
            )

    def skip(self, entry: str, changed: int, cap: int) -> str:
        """Record that the snapshot of ``entry``'s turn was skipped (``changed`` new or changed
        files, over the cap ``cap``): the entry has no snapshot, ``status`` and ``restore`` say
        so, and no later turn tries it again. The sentence that says it."""
        sidecar = self.track.sidecar
        said = sidecar.skipped_turns.get(entry)
        if entry not in sidecar.snapshots and (said is None or said is not sidecar.last_skipped):
            self.track.append([schema.snapshot_skipped(entry, changed, cap)])
        return skipped_words(entry, changed, cap)

    def record(self, ref: str, snap: Snapshot) -> SnapshotInfo:
        """Record ``snap`` (from ``take``, or another entry's) as entry ``ref``'s. A snapshot
        the entry had already stays reachable (``replaces`` names it, and a ref under
        ``refs/convgit/<sid>/replaced/`` keeps it unless the new commit descends from it)."""
        target = self.conversation.resolve(ref)
        ws = self.track.workspace()
        existing = self.track.sidecar.snapshots.get(target)
        with self.track.lock():
            if existing is not None and existing.commit != snap.commit:
                kept = names.replaced_ref(self.track.id, target, existing.commit)
                ws.set_ref(kept, existing.commit)
            ws.set_ref(names.snapshot_ref(self.track.id, target), snap.commit)
        return self._record_snapshot(target, snap)

    def _record_snapshot(self, target: str, snap: Snapshot) -> SnapshotInfo:
        """Write the sidecar's record of ``snap`` as ``target``'s snapshot (its ref is set), and
        count its objects for the background packing (``convgit.workspace.background``)."""
        existing = self.track.sidecar.snapshots.get(target)
        replaces = None
        if existing is not None:  # a record of the same commit (what it left out changed) keeps
            replaces = existing.commit if existing.commit != snap.commit else existing.replaces
        skipped = _skipped_record(snap)
        self.track.append(
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
            from convgit.workspace import background

            store, worktree = self.track.location.root, self.track.workspace().root
            background.note(self.track.workspace(), store, snap.written)
            if background.gc_due(store, worktree):  # gc through convgit's own entry (the top floor)
                gc = [sys.executable, "-m", "convgit", "_auto-gc", str(store), str(worktree)]
                background.detached(gc, worktree, "convgit-gc")
        return self.track.sidecar.snapshots[target]

    def status(self) -> Status:
        """Where the conversation is, and which snapshot (if any) the files match right now."""
        interrupted = self.saved_states.interrupted()
        self.conversation.check()
        leaf = self.conversation.tree.leaf
        leaf_snap = self.track.nearest_snapshot(leaf)
        result = Status(
            session=self.track.id,
            name=self.conversation.tree.name,
            leaf=leaf,
            leaf_snapshot=leaf_snap.entry if leaf_snap else None,
            workspace=self.track.location.git is not None,
            sidecar=self.track.snapshots_enabled,
            interrupted=interrupted,
        )
        failed = [
            f
            for f in self.track.sidecar.failed.values()
            if f["entry"] in self.conversation.tree.entries
        ]
        if failed:
            last = max(failed, key=lambda f: str(f.get("ts", "")))
            result.not_recorded = {k: last.get(k) for k in ("entry", "error", "ts")}
        over = self.track.sidecar.last_skipped
        if over is not None and over["entry"] in self.conversation.tree.entries:
            result.snapshot_skipped = {k: over[k] for k in ("entry", "changed", "cap", "ts")}
        if self.track.location.git is None or not self.track.sidecar.snapshots:
            return result
        ws = self.track.workspace()
        size_cap = self.track.size_cap
        try:
            with self.track.lock():
                current, skipped = ws.scan(self.track.index(), size_cap=size_cap)
        except (ConvgitError, OSError) as exc:  # git cannot stage the files (a failing filter)
            result.files_error = exc.message if isinstance(exc, ConvgitError) else os_words(exc)
            return result
        finally:  # how snapshots find what changed
            tracking = ws.tracking()
            setting = fsmonitor(self.track.location)
            result.watcher = {
                "path": tracking.path,
                "setting": setting,
                "note": tracking.note or None,
            }
        result.matches = self._matching_entry(current)
        if leaf_snap is not None:
            now = {s.path: s.reason for s in skipped}
            changes = _compared(ws, leaf_snap.tree_id, _skipped(leaf_snap), current, now)
            result.changed = [c.path for c in changes if c.status != LEFT_ALONE]
            result.left_alone = [
                {"path": c.path, "reason": c.reason} for c in changes if c.status == LEFT_ALONE
            ]
        on_path = set(self.conversation.tree.path()) if leaf else set()
        if result.matches is not None and result.matches not in on_path:
            # the leaf moved up its branch (`resume`, `switch`): the files are further down it
            result.further_down = leaf is not None and leaf in self.conversation.tree.path(
                result.matches
            )
            result.diverged = not result.further_down
        return result

    def files_from(self, entry: str) -> FilesFrom | None:
        """When ``entry``'s snapshot holds the files of a snapshot on another branch (and of none
        above it on its own path): that snapshot's entry, the newest such. What ``status`` calls
        the files being on another branch, said at the moment a turn records them."""
        snapshots = self.track.sidecar.snapshots
        mine = snapshots.get(entry)
        if mine is None:
            return None
        path = set(self.conversation.tree.path(entry))
        same = [  # taken before it: where the files already were
            s
            for s in snapshots.values()
            if s.tree_id == mine.tree_id
            and s.entry != entry
            and s.ts <= mine.ts
            and s.entry in self.conversation.tree.entries
        ]
        if not same or any(s.entry in path for s in same):
            return None
        other = max(same, key=lambda s: s.ts).entry
        from convgit.conversation.shortids import ShortIds

        label = self.conversation.tree.labels.get(other)
        return FilesFrom(other, label, ShortIds(self.conversation.tree.entries).short(other))

    def _matching_entry(self, tree_id: str) -> str | None:
        """An entry whose snapshot tree is ``tree_id``: the nearest on the active path, else the
        most recent snapshot anywhere."""
        snapshots = self.track.sidecar.snapshots
        for ident in reversed(self.conversation.tree.path()) if self.conversation.tree.leaf else []:
            if ident in snapshots and snapshots[ident].tree_id == tree_id:
                return ident
        found = [
            s
            for s in snapshots.values()
            if s.tree_id == tree_id and s.entry in self.conversation.tree.entries
        ]
        return max(found, key=lambda s: s.ts).entry if found else None

    def diff(self, a: str, b: str | None = None) -> list[Change]:
        """Changes from ``a``'s snapshot (or the saved state ``a`` names) to ``b``'s (default:
        the working tree now). A file that one side left out (over the size cap, unreadable)
        is ``left alone``, never added or deleted: that side does not know its content."""
        return _compared(self.track.workspace(), *self._files_of(a), *self._side(b))

    def git_diff(
        self,
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
        ws = self.track.workspace()
        left, left_skipped = (ws.empty_tree(), {}) if a is None else self._files_of(a)
        right, right_skipped = self._side(b)
        changes = _compared(ws, left, left_skipped, right, right_skipped)
        alone = [c.path for c in changes if c.status == LEFT_ALONE]
        shown = ws.git_diff(left, right, stat=stat, patch=patch, colour=colour, leave_out=alone)
        return shown, changes

    def _side(self, ref: str | None) -> tuple[str, dict[str, str]]:
        """``_files_of(ref)``, or for None the tree of the files now and the paths it left out."""
        if ref is not None:
            return self._files_of(ref)
        tree_id, found = self.track.scan()
        return tree_id, {s.path: s.reason for s in found}

    def _files_of(self, ref: str) -> tuple[str, dict[str, str]]:
        """The commit or tree of ``ref`` (a snapshot's entry or a saved state) and the paths
        it left out, with why."""
        if is_saved_ref(ref):
            state = self.saved_states.find(ref)
            return state.commit, state.skipped
        snap = self.require(ref)
        return snap.tree_id, _skipped(snap)

    def require(self, ref: str) -> SnapshotInfo:
        """The snapshot ``ref`` names: its entry's, or with ``REF@{N}`` the one N back that a
        newer snapshot of the entry replaced (kept under ``refs/convgit/<sid>/replaced/``), or the
        one whose commit ``ref`` begins (7 hex digits or more) when no entry matches."""
        base, back = snapshot_back(ref)
        try:
            target = self.conversation.resolve(base)
        except NotFoundError:  # a snapshot's commit, as `snapshots` and the page show it
            by_commit = None if back else self.track.sidecar.snapshot_by_commit(base)
            if by_commit is None:
                gone = self._pruned_commit(base)
                if gone is not None:
                    raise NotFoundError(
                        f"The snapshot {base} was let go by gc on {gone.day}.",
                        "`convgit snapshots` lists what is kept and why",
                    ) from None
                raise
            return by_commit
        snap = self.track.sidecar.snapshots.get(target)
        if snap is None:
            nearest = self.track.nearest_snapshot(target)
            hint = f"its nearest snapshot is at {nearest.entry}" if nearest else "convgit snapshot"
            skipped = self.track.sidecar.skipped_turns.get(target)
            if skipped is not None:  # over the per-turn cap: the files then were never taken
                raise NotFoundError(
                    f"There is no snapshot of entry {target}'s turn: it was skipped, with"
                    f" {skipped['changed']:,} files new or changed, over [snapshots]"
                    f" max_files_per_turn ({skipped['cap']:,}).",
                    f"the nearest earlier snapshot is at {nearest.entry}"
                    if nearest
                    else "no earlier entry has a snapshot",
                )
            gone = self.track.sidecar.let_go.get(target)
            if gone is not None:  # `convgit snapshot` would record today's files as its
                raise NotFoundError(
                    f"Entry {target} has no snapshot now: its snapshot was let go by gc on"
                    f" {gone.day}.",
                    hint if nearest else "`convgit snapshots` lists what gc kept, and why",
                )
            raise NotFoundError(f"Entry {target} has no snapshot.", hint)
        if back:
            earlier = self.track.sidecar.replaced.get(target, [])
            if back > len(earlier):
                pruned = self.track.sidecar.pruned.values()
                let_go = [p for p in pruned if p.entry == target and p.what == "replaced"]
                said = f" kept now (gc let {len(let_go)} go on {let_go[-1].day})" if let_go else ""
                raise NotFoundError(
                    f"The snapshot of {target} replaced {len(earlier)} earlier one"
                    f"{'' if len(earlier) == 1 else 's'}{said}; '{ref}' is not one of them."
                )
            snap = earlier[-back]
        return snap

    def _pruned_commit(self, ref: str) -> Pruned | None:
        """What gc let go whose commit ``ref`` begins (7 hex digits or more), if anything."""
        wanted = ref.strip().lower()
        if len(wanted) < 7:
            return None
        found = [p for c, p in self.track.sidecar.pruned.items() if c.startswith(wanted)]
        return found[0] if len(found) == 1 else None

    def lineage(self) -> dict[str, Lineage]:
        """Each snapshot of the session (by entry) as git holds it: its commit, its parent and
        the files changed since it, read through two ``git cat-file`` (none outside git or
        without snapshots; a commit git lost is left out)."""
        from convgit.workspace import Change

        snaps = self.track.sidecar.snapshots
        if not snaps or self.conversation.location.git is None:
            return {}
        ws = self.track.workspace()
        parents = ws.parents([s.commit for s in snaps.values()])
        found: list[tuple[SnapshotInfo, str | None]] = [
            (s, next(iter(parents[s.commit]), None)) for s in snaps.values() if s.commit in parents
        ]
        deltas = ws.deltas([(parent, snap.commit) for snap, parent in found])
        return {
            snap.entry: Lineage(
                snap.entry, snap.commit, parent, [Change(d.path, d.status) for d in changed]
            )
            for (snap, parent), changed in zip(found, deltas, strict=True)
        }

    def add_worktree(self, ref: str, directory: Path) -> tuple[str | None, str]:
        """Check ``ref``'s snapshot (or the saved state ``ref`` names) out in ``directory`` (a
        detached git worktree), side by side; the main working tree is not touched. Returns
        the entry whose snapshot it is (None for a saved state) and the commit checked out:
        the entry ``ref`` names, even when other entries' snapshots share the commit."""
        if is_saved_ref(ref):
            entry, commit = None, self.saved_states.find(ref).commit
        else:
            snap = self.require(ref)
            entry, commit = snap.entry, snap.commit
        self.track.workspace().add_worktree(commit, directory)
        return entry, commit

    @overload
    def snapshot(
        self,
        ref: str = LEAF,
        *,
        only_if_changed: Literal[False] = False,
        per_turn: bool = False,
    ) -> SnapshotInfo: ...

    @overload
    def snapshot(
        self, ref: str, *, only_if_changed: bool, per_turn: bool = False
    ) -> SnapshotInfo | None: ...

    def snapshot(
        self, ref: str = LEAF, *, only_if_changed: bool = False, per_turn: bool = False
    ) -> SnapshotInfo | None:
        """Record the working tree as a commit for entry ``ref``. Its parent is the snapshot of
        the nearest ancestor that has one, or, when ``ref`` has a snapshot already, that
        snapshot: it is never lost (``replaces`` names it; unchanged files keep it as it is).
        With ``only_if_changed``, nothing is recorded (None) when the files are those of the
        nearest snapshot above. ``per_turn`` (a turn's snapshot, not one asked for by name):
        over ``[snapshots] max_files_per_turn`` it is skipped, recorded as such (``skip``),
        and SnapshotSkippedError says so. Never touches HEAD, the index, branches or files."""
        target = self.conversation.resolve(ref)
        ws = self.track.workspace()
        size_cap = self.track.size_cap
        existing = self.track.sidecar.snapshots.get(target)
        parent = existing or self.track.nearest_snapshot(
            self.conversation.tree.entries[target]["parentId"]
        )
        message = names.commit_message(
            f"convgit snapshot of {target}", session=self.track.id, entry=target
        )
        try:
            with self.track.lock():
                faults.point("snapshot:before-stage")
                snap = ws.snapshot(
                    self.track.index(),
                    message=message,
                    parent=parent.commit if parent else None,
                    size_cap=size_cap,
                    max_files=self.track.max_files if per_turn else 0,
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
                ws.set_ref(names.snapshot_ref(self.track.id, target), snap.commit)
                faults.point("snapshot:before-record")
        except SnapshotSkippedError as exc:
            self.skip(target, exc.changed, exc.cap)
            raise
        return self._record_snapshot(target, snap)


@valueclass(frozen=True)
class Lineage:
    """What git holds for the snapshot of ``entry``: its ``commit``, the commit git has as its
    ``parent`` (the snapshot it follows on the workspace track; None for the first), and the
    files that differ from that parent."""

    entry: str
    commit: str
    parent: str | None
    changes: list[Change]


@valueclass(frozen=True)
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


def _compared(
    ws: Workspace, a: str, a_skipped: dict[str, str], b: str, b_skipped: dict[str, str]
) -> list[Change]:
    from convgit.workspace import Change

    out: list[Change] = []
    for change in ws.changes(a, b):
        lacking = {"added": a_skipped, "deleted": b_skipped}.get(change.status, {})
        why = next((lacking[p] for p in and_above(change.path) if p in lacking), None)
        if why is None:
            out.append(change)
        else:
            out.append(Change(change.path, LEFT_ALONE, _reason_word(why)))
    return out


def _skipped(snap: SnapshotInfo) -> dict[str, str]:
    return {str(s["path"]): str(s.get("reason", "")) for s in snap.skipped}


def _reason_word(reason: str) -> str:
    """A skipped path's reason in a word or two: "size cap" for every file above the cap."""
    return "size cap" if "size cap" in reason else reason


def _skipped_record(snap: Snapshot) -> list[dict[str, str]]:
    """The sidecar's record of the files ``snap`` left out."""
    return [{"path": s.path, "reason": s.reason} for s in snap.skipped]
