"""Restore as one operation: under the private index's one lock, stage the files now, plan the
restore against them, save them (the saved state, with the exact bytes of what will change,
kept by a ref), and apply the plan. The caller records the restore between ``save`` and
``apply``, so a restore killed half-way is visible and undoable::

    with restoring(git, index, RestoreRequest(target, size_cap=cap)) as restore:
        if restore.changes:
            saved = restore.save(ref, message)
            ...  # record the restore, naming ``saved``
            restore.apply()

Nothing changes on disk before ``apply``; a dry run is the block without it.

What a restore promises: the files git sees (tracked, and untracked but not ignored) become
the target's; files outside that view (ignored, skipped by the size cap, inside nested
repositories, outside the sparse checkout) are never written or deleted and are listed in
``left_alone``; a hostile target tree (``..``, ``.git``, duplicate names, a path below a
symlink or a file that is not part of the view) is refused before anything changes. A file
absent from the target is deleted only when the target accounts for it: not when its snapshot
left that path out (``target_skipped``), nor when the target's own ignore rules match it.
Nothing inside convgit's store is ever written or deleted. What it overwrites or deletes is
what it saved: each path is looked at again just before it changes (``restoreguard``), and one
that another writer changed since the plan is left alone and listed, as is one the file system
will not let this user change. Each file is written whole beside its place (by git, in the git
dir) and moved in by one rename: whatever stops a restore (a full disk, a kill), no file is
left half-written. Every git it starts holds the restore's locks with it, and is stopped and
waited for if the restore is interrupted.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from convgit.base import codec, faults, locks
from convgit.base.errors import DENIED, RefusedError
from convgit.git import rules
from convgit.git.index.kept_out import STORE_REASON
from convgit.git.index.private_index import LOCK_TIMEOUT, PrivateIndex, forget_files, set_entries
from convgit.git.plumbing.objects import BLOB, EXEC, GITLINK, LINK, Change, Delta, Objects, diff
from convgit.git.plumbing.paths import folders_above
from convgit.git.plumbing.run import WHOLE_INDEX, Git, git_words, stopped_on_the_way_out
from convgit.git.restore import exact
from convgit.git.restore import plan as restoreplan
from convgit.git.restore.guard import REFUSED, Guard
from convgit.git.restore.keeps import Keeps
from convgit.git.restore.plan import LeftAlone, lstat

CHUNK = 16 << 20  # bytes of files git writes beside their places before they are moved in
SCRATCH = "convgit-restore-files"  # in the git dir, beside the restore's lock
_FULL = 1 << 20  # free bytes under which a git that could not write a file met a full disk
SPARSE_REASON = "outside the sparse checkout; left alone"


class RestoreChanges(list[Change]):
    """The changes a restore made (or would make), plus the paths it left alone on purpose
    (ignored or skipped files that differ from the snapshot, paths inside nested repositories,
    files the snapshot does not account for, convgit's store) and, for an undo, the files it
    replaced that had changed since the restore it undid."""

    def __init__(
        self,
        changes: Sequence[Change],
        left_alone: Sequence[LeftAlone] = (),
        replaced: Sequence[str] = (),
    ) -> None:
        super().__init__(changes)
        self.left_alone: tuple[LeftAlone, ...] = tuple(left_alone)
        self.replaced: tuple[str, ...] = tuple(replaced)


@dataclass(frozen=True)
class RestoreRequest:
    """One restore, as the session asks it of the workspace track, passed whole from
    ``Workspace.restoring`` to the plan: the working tree (or only ``paths``: files or folders
    relative to the root) to the tree of commit ``target``, files above ``size_cap`` bytes
    judged as a snapshot would.

    ``exact_from``: undoing a restore that went to that commit, ``target`` being the state it
    saved: the files that restore changed are compared and written byte for byte, and the
    files that changed since it are listed in ``replaced``. ``target_skipped``: path -> why,
    for what the target's snapshot left out. ``target_rules``: the id of the ignore rules
    outside the working tree recorded with the target's snapshot (``convgit.git.rules``; None:
    today's judge it). ``keeps``: what is left alone for the session's sake
    (``convgit.git.restore.keeps``)."""

    target: str
    size_cap: int
    paths: tuple[str, ...] | None = None
    exact_from: str | None = None
    target_skipped: Mapping[str, str] = field(default_factory=dict)
    target_rules: str | None = None
    keeps: Keeps = field(default_factory=Keeps)


@contextmanager
def restoring(
    git: Git,
    index: PrivateIndex,
    request: RestoreRequest,
    rules_then: Mapping[str, bytes] | None = None,
) -> Iterator[RestorePlan]:
    """The restore ``request`` asks, planned with ``index`` locked for the block;
    ``rules_then``: the rules ``request.target_rules`` names (name -> bytes), None when today's
    judge it."""
    with ExitStack() as held:
        held.enter_context(index.locked())
        held.enter_context(worktree_locked(git))
        objects = held.enter_context(git.objects())
        yield RestorePlan(git, index, objects, request, rules_then)


def _worktree_lock(git: Git) -> Path:
    return git.git_dir / "convgit-restore.flock"


@contextmanager
def worktree_locked(git: Git) -> Iterator[None]:
    """Hold the working tree's restore lock for the block: one restore (or undo) at a time in
    a working tree, whichever session makes it. The git that writes a restore's files holds
    it too, until it ends (see ``locks``): a restore killed while git writes keeps the next
    one waiting until that git is done."""
    try:
        with locks.held(_worktree_lock(git), LOCK_TIMEOUT):
            yield
    except locks.LockTimeout:
        waited = locks.limit(LOCK_TIMEOUT)
        raise RefusedError(
            f"Another restore of this working tree has been running for over {waited:.0f} s;"
            " nothing was restored.",
            hint="a convgit process or the git it started is still running",
        ) from None


class RestorePlan:
    """A planned restore: ``changes`` (current -> target, with ``left_alone`` and
    ``replaced``), and ``skipped``, what the files now leave out. See ``restoring``."""

    def __init__(
        self,
        git: Git,
        index: PrivateIndex,
        objects: Objects,
        request: RestoreRequest,
        rules_then: Mapping[str, bytes] | None = None,
    ) -> None:
        self._git, self._index, self._objects = git, index, objects
        exact_from = request.exact_from
        paths = None if request.paths is None else list(request.paths)
        self._target_tree_id = objects.peel(request.target, "tree")
        self._keeps = request.keeps
        if exact_from is not None and self._keeps.held is not None:
            # an undo deletes what the restore it undoes wrote: its target's files
            held = [objects.peel(exact_from, "tree"), *self._keeps.held]
            self._keeps = replace(self._keeps, held=held)
        # the plan compares with the files now
        self._current_tree_id, self.skipped, _ = index.stage(request.size_cap)
        self._target_skipped = dict(request.target_skipped)
        self._target_rules = rules_then
        self._exact: set[str] = set()
        self._created: list[str] = []
        self._undone: list[str] = []  # every path the restore an undo goes back over changed
        self.saved: str | None = None
        self.applying = False  # ``apply`` began: files may have changed
        self.done = 0  # the changes made so far
        self._deltas = self._plan(paths, exact_from)

    def _plan(self, paths: list[str] | None, exact_from: str | None) -> list[Delta]:
        objects, current, target = self._objects, self._current_tree_id, self._target_tree_id
        ignore_case = self._git.run(
            "config", "--type=bool", "--get", "core.ignorecase", check=False
        )
        deltas = diff(
            objects,
            current,
            target,
            validate=True,
            ignore_case=ignore_case.stdout.strip() == b"true",
        )
        if exact_from is not None:
            deltas = self._with_exact_files(deltas, exact_from)
        if paths is not None:
            deltas = restoreplan.select(
                deltas, paths, lambda p: any(objects.lookup(t, p) for t in (current, target))
            )
        kept_out = self._index.kept_out
        ours = [d for d in deltas if kept_out.above(os.fsencode(d.path)) is not None]
        deltas = [d for d in deltas if d not in ours]
        settings = [d for d in deltas if self._keeps.setting(d.path) is not None]
        deltas = [d for d in deltas if d not in settings]
        sparse = rules.outside_sparse(self._git, self._index.rule_files(), [d.path for d in deltas])
        deltas = [d for d in deltas if d.path not in sparse]
        deltas, left_alone = restoreplan.plan(
            self._git.root, deltas, self._ignored, self._unaccounted, self._holds_target
        )
        aside = [LeftAlone(d.path, f"{STORE_REASON}; left alone") for d in ours]
        aside += [LeftAlone(d.path, self._keeps.setting(d.path) or "") for d in settings]
        aside += [LeftAlone(path, SPARSE_REASON) for path in sorted(sparse)]
        aside += self._unseen(paths)
        if aside:
            left_alone = sorted([*left_alone, *aside], key=_by_path)
        replaced: list[str] = []
        if exact_from is not None:
            restored_tree_id = objects.peel(exact_from, "tree")
            replaced = [d.path for d in deltas if objects.lookup(restored_tree_id, d.path) != d.old]
        self.changes = RestoreChanges(
            [Change(d.path, d.status) for d in deltas], left_alone, replaced
        )
        return deltas

    def _unseen(self, paths: list[str] | None) -> list[LeftAlone]:
        """The files on disk that another snapshot of the session held and that neither the
        target nor git's view of the files now holds (ignored since, or over the size cap now):
        left where they are, and said (``convgit.git.restore.keeps``)."""
        found = self._keeps.held_elsewhere(
            self._objects, self._target_tree_id, self._current_tree_id
        )
        if paths is not None:
            wanted = [restoreplan.relative_path(p) for p in paths]
            if "" not in wanted:
                found = [f for f in found if any(f == w or f.startswith(w + "/") for w in wanted)]
        kept_out, root = self._index.kept_out, self._git.root
        found = [
            path
            for path in found
            if kept_out.above(os.fsencode(path)) is None
            and (info := lstat(root / path)) is not None
            and not stat.S_ISDIR(info.st_mode)
        ]
        if not found:
            return []
        by_git = self._ignored(found)
        return [
            LeftAlone(
                path,
                f"{'ignored by git' if path in by_git else 'outside the snapshots now'};"
                " the snapshot lacks it, left alone",
            )
            for path in found
        ]

    def _with_exact_files(self, deltas: list[Delta], exact_from: str) -> list[Delta]:
        """``deltas`` plus the files the undone restore changed whose bytes or exec bit differ
        from the target though git's view of them does not (a file git converts or whose mode
        it ignores). Notes the files it was to create, which the target lacks."""
        objects, target = self._objects, self._target_tree_id
        undone = diff(objects, objects.peel(exact_from, "tree"), target)
        self._exact = {d.path for d in undone if d.new is not None and d.new[0] in (BLOB, EXEC)}
        self._created = [d.path for d in undone if d.new is None]
        self._undone = [d.path for d in undone]
        listed = {d.path for d in deltas}
        extra: list[Delta] = []
        for path in sorted(self._exact - listed):
            new = objects.lookup(target, path)
            raw = exact.on_disk(self._git, path)
            if new is None or (raw is not None and raw[:2] == new):
                continue
            extra.append(Delta(path, "modified", objects.lookup(self._current_tree_id, path), new))
        return sorted([*deltas, *extra], key=lambda d: d.path) if extra else deltas

    def _holds_target(self, delta: Delta) -> bool:
        raw = exact.on_disk(self._git, delta.path)
        return raw is not None and raw[:2] == delta.new

    def _ignored(self, paths: list[str]) -> set[str]:
        """The paths git's ignore rules match (whether or not any index tracks them)."""
        proc = self._git.run(
            "check-ignore", "-z", "--no-index", "--stdin",
            stdin=b"\0".join(map(os.fsencode, paths)) + b"\0", check=False,
        )  # fmt: skip
        return {os.fsdecode(p) for p in proc.stdout.split(b"\0") if p}

    def _unaccounted(self, paths: list[str]) -> dict[str, str]:
        """Why the target does not account for each of ``paths`` (files it lacks), if it
        does not: its snapshot left the path (or a folder above it) out, or the rules in force
        when it was taken (its .gitignore files, the ignore rules outside the working tree
        and the sparse checkout recorded with it: ``convgit.git.rules``) left it out."""
        found: dict[str, str] = {}
        skipped = self._target_skipped
        for path in paths:
            for lead in (path, *folders_above(path)):
                why = skipped.get(lead) or skipped.get(codec.shown(lead))  # records show names
                if why is not None:
                    found[path] = f"not in the snapshot: {why}"
                    break
        rest = [p for p in paths if p not in found]
        found.update(
            rules.unaccounted(
                self._git, self._objects, self._target_tree_id, self._current_tree_id,
                self._target_rules, rest,
            )
        )  # fmt: skip
        rest = [p for p in rest if p not in found]
        found.update(self._keeps.never_held(self._objects, rest))
        return dict(sorted(found.items()))

    # -- saving and applying --

    def save(self, ref: str | None, message: str) -> str:
        """Save the files now as a commit kept by ``ref`` (the saved state, with the exact
        bytes of every file about to change): the saved state's commit."""
        git = self._git
        commit = git.commit_tree(self._current_tree_id, [], message)
        self._index.remember_snapshot(commit, self._current_tree_id)
        faults.point("restore:before-saved-state-ref")
        if ref is not None:
            git.set_ref(ref, commit)
        saved = exact.preserve(git, self._objects, commit, [d.path for d in self._deltas])
        if saved != commit and ref is not None:
            git.set_ref(ref, saved)
        self.saved = saved
        return saved

    def apply(self) -> None:
        """Change the files as planned (``save`` first, when there are changes)."""
        _clear(_scratch(self._git))  # what git wrote for a killed restore, never moved in
        if self._deltas:
            if self.saved is None:
                raise RuntimeError("a restore applied without saving the files first")
            self._write(self._deltas)
        # a restore killed half-way may have left a file it was writing beside its place, and
        # made folders for files it never wrote: both go with the restore (the files now,
        # those included, are in the state saved before)
        exact.sweep(self._git.root, self._undone)
        for path in self._created:
            self._prune(path)

    def _write(self, deltas: list[Delta]) -> None:
        # The files no longer match the index's tree. Its entries stay as they were (it is a
        # stat cache): the next snapshot sees every restored file as changed and rehashes it
        # through git's filters, a restored .gitignore included (which rechecks the ignore
        # rules for every tracked file).
        self.applying = True
        guard = Guard(self._git, self._index.path, self._objects, deltas)
        self._index.files_changed()
        for delta in deltas:
            if delta.new is None:
                faults.point("restore:remove")
                if guard.changed(delta) is None:
                    why = _refused(self._remove, delta.path)
                    if why is not None:
                        guard.leave(delta.path, REFUSED.format("delete", why))
                        continue
                    self.done += 1
        for delta in deltas:
            if delta.new is None:
                self._prune(delta.path)
        exact_ones = [
            d for d in deltas if d.path in self._exact and d.new is not None and d.new[0] != LINK
        ]
        gone = {d.path for d in exact_ones}
        writes = [d for d in deltas if d.new is not None and d.path not in gone]
        faults.point("restore:before-checkout")
        if writes:
            self._check_out(writes, guard)
        # and the exact files byte for byte, bypassing git's filters
        contents = self._objects.blobs([d.new[1] for d in exact_ones if d.new is not None])
        for delta, data in zip(exact_ones, contents, strict=True):
            assert delta.new is not None
            if guard.changed(delta) is not None:
                continue
            executable = delta.new[0] == EXEC
            why = _refused(exact.write, self._git.root, delta.path, data, executable=executable)
            if why is not None:
                guard.leave(delta.path, REFUSED.format("write", why))
                continue
            self.done += 1
        self._leave_late(guard)

    def _leave_late(self, guard: Guard) -> None:
        """What changed since the plan was left alone: list it there, not among the changes."""
        late = guard.left_alone(c.path for c in self.changes)
        if not late:
            return
        paths = {path for path, _ in late}
        changes = self.changes
        changes[:] = [c for c in changes if c.path not in paths]
        changes.left_alone = tuple(
            sorted([*changes.left_alone, *(LeftAlone(p, why) for p, why in late)], key=_by_path)
        )
        changes.replaced = tuple(p for p in changes.replaced if p not in paths)

    def _check_out(self, deltas: list[Delta], guard: Guard) -> None:
        """Write these entries' files as `git checkout` would (filters, line endings, modes),
        from a small index of just them, without rewriting the private index: git writes them
        beside convgit's lock, in the git dir (``SCRATCH``), a few MiB at a time, and each is
        then moved into its place, checked by ``guard`` just before. A file git could not
        write whole (a full disk) never replaces the user's; every git holds the restore's
        locks with convgit until it ends."""
        writes = Path(f"{self._index.path}.restore")
        forget_files(writes)  # one a killed restore left behind
        scratch = _scratch(self._git)
        try:
            lines = [
                f"{d.new[0]:o} {d.new[1]}\t".encode() + os.fsencode(d.path)
                for d in deltas
                if d.new is not None
            ]
            set_entries(self._git, writes, lines, WHOLE_INDEX)
            for chunk in self._chunks(deltas):
                files = [d for d in chunk if d.new is not None and d.new[0] != GITLINK]
                if files:
                    self._write_beside(files, writes, scratch)
                for delta in chunk:
                    if guard.changed(delta) is not None:
                        continue
                    faults.point("restore:place")
                    why = self._place(delta, scratch)
                    if why is not None:
                        guard.leave(delta.path, why)
                        continue
                    self.done += 1
        finally:
            forget_files(writes)
            _clear(scratch)

    def _chunks(self, deltas: list[Delta]) -> Iterator[list[Delta]]:
        """``deltas`` in order, in runs whose files hold at most ``CHUNK`` bytes (a bigger file
        is a run of its own): what stands written beside its place at once."""
        blobs = [d.new[1] for d in deltas if d.new is not None and d.new[0] in (BLOB, EXEC)]
        sizes: dict[str, int] = {}
        if blobs:
            proc = self._git.run(
                "cat-file", "--batch-check=%(objectname) %(objectsize)",
                stdin="\n".join(blobs).encode() + b"\n", check=False,
            )  # fmt: skip
            for line in os.fsdecode(proc.stdout).splitlines():
                oid, _, length = line.partition(" ")
                if length.isdigit():
                    sizes[oid] = int(length)
        run: list[Delta] = []
        total = 0
        for delta in deltas:
            size = sizes.get(delta.new[1], 0) if delta.new is not None else 0
            if run and total + size > CHUNK:
                yield run
                run, total = [], 0
            run.append(delta)
            total += size
        if run:
            yield run

    def _write_beside(self, deltas: list[Delta], writes: Path, scratch: Path) -> None:
        """git writes the files of ``deltas`` under ``scratch``, each at its path, as it would
        write them in place. A git that fails (a full disk) leaves nothing of them there."""
        _clear(scratch)
        scratch.mkdir(parents=True)
        held = (locks.descriptor(_worktree_lock(self._git)), self._index.lock_descriptor())
        proc = self._git.spawn(
            "checkout-index", "-z", "--stdin", f"--prefix={scratch}{os.sep}", index=writes,
            config=(*WHOLE_INDEX, "checkout.workers=1"), stdin=True, keep_fds=held,
        )  # fmt: skip
        paths = b"".join(os.fsencode(d.path) + b"\0" for d in deltas)
        with stopped_on_the_way_out(proc, grace=0):
            faults.point("restore:checkout-started")
            out, err = proc.communicate(paths)
        if proc.returncode != 0:
            # git names the file it could not write, not why: a disk with next to nothing
            # free, right after git stopped, is why (its own words are kept, with the path
            # the user knows)
            full = proc.returncode > 0 and shutil.disk_usage(scratch).free < _FULL
            _clear(scratch)
            err = err.replace(os.fsencode(f"{scratch}{os.sep}"), b"")
            if full:
                raise OSError(errno.ENOSPC, f"git: {git_words(err, proc.returncode).rstrip('.')}")
            self._git.finish(proc, "checkout-index", out, err)

    def _place(self, delta: Delta, scratch: Path) -> str | None:
        """Move the file git wrote under ``scratch`` to ``delta``'s place (a submodule's empty
        folder is made there); None, or why the file system refused (it is left alone)."""
        assert delta.new is not None
        root = self._git.root
        if delta.new[0] == GITLINK:
            why = _refused(os.makedirs, root / delta.path, exist_ok=True)
        else:
            why = _refused(exact.place, root, delta.path, scratch / delta.path)
        return None if why is None else REFUSED.format("write", why)

    def _remove(self, path: str) -> None:
        root = self._git.root
        if not exact.real_parent(root, path):
            return  # nothing of ours can be below a symlink; never delete through one
        target = root / path
        info = lstat(target)
        if info is None:
            return
        if stat.S_ISDIR(info.st_mode):
            with suppress(OSError):
                target.rmdir()  # a removed submodule's folder goes only when empty
        else:
            target.unlink()

    def _prune(self, path: str) -> None:
        root = self._git.root
        parent = (root / path).parent
        while parent != root and exact.real_parent(root, parent.relative_to(root).as_posix()):
            try:
                parent.rmdir()
            except OSError:
                return
            parent = parent.parent


def _by_path(skipped: LeftAlone) -> str:
    return skipped.path


def _scratch(git: Git) -> Path:
    """Where git writes a restore's files before they are moved into place: in the git dir,
    one folder per working tree (one restore at a time holds it: ``worktree_locked``)."""
    return git.git_dir / SCRATCH


def _clear(scratch: Path) -> None:
    """Remove ``scratch`` and what git wrote there (a killed restore's files included)."""
    if lstat(scratch) is not None:
        shutil.rmtree(scratch, ignore_errors=True)


def _refused(change: Callable[..., object], *args: Any, **kwargs: Any) -> str | None:
    """Make one change to a file; None, or why the file system refused it (a folder or file
    this user may not write, a read-only file system): that path is then left alone."""
    try:
        change(*args, **kwargs)
    except OSError as exc:
        if exc.errno not in DENIED:
            raise
        return exc.strerror or str(exc)
    return None
