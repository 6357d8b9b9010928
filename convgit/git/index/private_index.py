"""convgit's private index: one per session and worktree, a stat cache that makes a snapshot
after a one-file change cost what git's own refresh costs. It is git's own index file, written
only by git (``GIT_INDEX_FILE``) while convgit's lock is held, so the tree it gives is git's
answer to ``git add -A`` into an empty index, minus what convgit leaves out (files over the
size cap, unreadable files, nested repositories, convgit's store), which is reported.

Beside the index live its state (``<index>.state``: what convgit knows of it, so most checks
are skipped when nothing moved) and its lock (``<index>.flock``, the only lock a snapshot or a
restore takes on it).
"""

from __future__ import annotations

import dataclasses
import json
import os
import stat
import struct
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, suppress
from pathlib import Path
from typing import NamedTuple

from convgit.base import faults, locks
from convgit.base.errors import RefusedError, SnapshotSkippedError, WorkspaceError
from convgit.base.valueclass import valueclass
from convgit.git import rules
from convgit.git.index import agent_files, presence, survey_plan, watcher
from convgit.git.index import format as index_file
from convgit.git.index.kept_out import STORE_NAME, STORE_REASON, KeptOut
from convgit.git.index.survey_plan import stop_early
from convgit.git.plumbing.objects import KIND_MASK
from convgit.git.plumbing.run import INDEX, WHOLE_INDEX, Git
from convgit.git.restore.plan import LeftAlone, lstat, real_folders, repository_above

LOCK_TIMEOUT = 60.0
_REGULAR = 0o100000

# What differs between the files and the private index, untracked files one by one.
_STATUS = survey_plan.STATUS
# Tracked files that the ignore rules match (run with convgit's private index).
_LIST_IGNORED = ("ls-files", "-z", "--cached", "--ignored", "--exclude-standard")

_DENIED = ": Permission denied"  # git's words for a tracked file it may not look at
_held = threading.local()  # the private indexes this thread holds the lock of
# The statuses started ahead of their snapshot (``PrivateIndex.survey_early``, or from the plan
# as the process started: ``survey_plan.begin``): the survey that asks for exactly that command
# takes it (``_survey``); any other use of the index first waits for it (``stop_early``).
_early = survey_plan.STARTED


@valueclass(frozen=True)
class IndexState:
    """What convgit knows of its private index, saved beside it as ``<index>.state``."""

    cap: int | None  # the size cap the index was cleaned for
    tree_id: str | None  # the tree it held at the last write-tree (None: unknown)
    ignores: str  # the ignore files outside the worktree when their rules were last applied
    snapshot: str = ""  # "commit tree_id" of the last snapshot made from it, or ""
    # the index file's identity when last known intact (only git writes it, by rename,
    # under convgit's lock: its checksum is then not recomputed)
    checked: str = ""
    shared: str = ""  # the shared index git made for this (split) index, if any
    shared_checked: str = ""  # that shared index's identity when last known intact
    present: str = ""  # what ``presence.check`` last said of ``tree_id`` and the snapshot


class Staged(NamedTuple):
    """The tree id of the files now, the paths left out, and how many paths git hashed."""

    tree_id: str
    skipped: tuple[LeftAlone, ...]
    hashed: int


@contextmanager
def locked(path: Path, timeout: float = LOCK_TIMEOUT) -> Iterator[None]:
    """Hold the private index at ``path`` for the block: one convgit process (and thread) at a
    time. Taken again by the thread that holds it, it is held already. RefusedError when
    another process holds it past ``timeout`` seconds (0: held now)."""
    path = path.absolute()
    held: set[Path] = _held.__dict__.setdefault("paths", set())
    if path in held:
        yield
        return
    try:
        with locks.held(Path(f"{path}.flock"), timeout):
            held.add(path)
            try:
                # Only holders of this lock use the index, so a git lock left here is stale
                # (but the lock of a status this process started as it began, with the lock).
                if survey_plan.key(path) not in _early:
                    Path(f"{path}.lock").unlink(missing_ok=True)
                yield
            finally:
                # a status started early ends before the lock is let go (stopped at once when
                # the block was cut short: a signal, an error)
                stop_early(path, stop=sys.exc_info()[1] is not None)
                held.discard(path)
    except locks.LockTimeout:
        waited = locks.limit(timeout)
        raise RefusedError(
            f"Another convgit process has held this session's private index for over"
            f" {waited:.0f} s.",
            hint="a convgit process is still running (a lock goes with its process)",
        ) from None


class PrivateIndex:
    """The private index at ``path`` of the working tree ``git`` runs on."""

    def __init__(
        self, git: Git, path: Path, kept_out: KeptOut, tracking: watcher.Tracking = watcher.OFF
    ) -> None:
        self.git = git
        self.path = path.absolute()
        self.kept_out = kept_out
        self.tracking = tracking  # how git finds what changed (``watcher``)
        self._rule_files: rules.RuleFiles | None = None

    def locked(self) -> AbstractContextManager[None]:
        """Hold this index for the block (see ``locked``)."""
        return locked(self.path)

    def lock_descriptor(self) -> int:
        """The descriptor of this index's lock, held now, for a child to hold it with us."""
        return locks.descriptor(Path(f"{self.path.absolute()}.flock"))

    def survey_early(self) -> bool:
        """Start the next snapshot's ``git status`` now, ahead of ``stage`` (which takes it, see
        ``_survey``), so that git stats the files while the process does what comes first
        (imports, reading the session). The caller holds ``locked`` until then; the status
        holds the lock with it (a child handed its descriptor), so it never outlives it. Only
        an index convgit last saw whole (the identities its state keeps: no checksum is taken
        here) is surveyed early; False when this one is not (``stage`` then does it all).
        A status started from the plan as the process started (``survey_plan.begin``, which
        made the same check under the same lock) is that status: the index it may have
        rewritten since is git's own refresh."""
        call = self._survey_call()
        begun = _early.get(survey_plan.key(self.path))
        if begun is not None and begun[:2] == call:
            return True
        stop_early(self.path)
        state = self.state
        if not state.checked or state.checked != index_file.identity(self.path):
            return False
        shared = index_file.shared_index(self.path, self.git.hash_len)
        if shared is not None and state.shared_checked != index_file.identity(
            self._shared_path(shared)
        ):
            return False
        proc = self.git.spawn(
            *_STATUS,
            index=self.path,
            config=(*INDEX, *self.tracking.config),
            keep_fds=(self.lock_descriptor(),),
        )
        _early[survey_plan.key(self.path)] = (*call, proc)
        return True

    def survey_command(self) -> list[str]:
        """The command line of this index's survey (``git status``), as ``survey_early`` and
        the survey start it."""
        return self.git.command(*_STATUS, config=(*INDEX, *self.tracking.config))

    def _survey_call(self) -> tuple[list[str], dict[str, str]]:
        """The survey's command line and environment: what a status started early must have
        been started with for the survey to take it."""
        return self.survey_command(), {**self.git.env, "GIT_INDEX_FILE": str(self.path)}

    # -- the state beside it --

    @property
    def state(self) -> IndexState:
        try:
            data = json.loads(Path(f"{self.path}.state").read_text())
            data["tree_id"] = data.pop("tree", None)  # the file keeps git's word
            return IndexState(**data)
        except (FileNotFoundError, ValueError, TypeError, AttributeError):
            return IndexState(None, None, "")

    def save(self, state: IndexState) -> None:
        data = dataclasses.asdict(state)
        data["tree"] = data.pop("tree_id")
        temporary = Path(f"{self.path}.state.tmp")
        temporary.write_text(json.dumps(data))
        os.replace(temporary, f"{self.path}.state")

    def files_changed(self) -> None:
        """Say the files no longer match the tree the index last gave (a restore wrote them)."""
        self.save(dataclasses.replace(self.state, tree_id=None))

    def remember_snapshot(self, commit: str, tree_id: str) -> None:
        self.save(dataclasses.replace(self.state, snapshot=f"{commit} {tree_id}"))

    def last_snapshot(self) -> tuple[str, str]:
        """(commit, tree id) of the last snapshot made from this index ("" when none, or when
        git has collected it since: no ref may keep it yet)."""
        state = self.state
        commit, _, tree_id = state.snapshot.partition(" ")
        if not commit:
            return "", ""
        there, present = presence.check(self.git, [commit, tree_id], state.present)
        if present != state.present:
            self.save(dataclasses.replace(state, present=present))
        return (commit, tree_id) if there else ("", "")

    def file_count(self) -> int:
        """How many files the index holds."""
        files = index_file.entry_count(self.path, self.git.hash_len)
        if files is None:  # a split index whose cache tree git left out of date
            listed = self._git("ls-files", "-z").stdout
            files = listed.count(b"\0")
        return files

    def forget(self) -> None:
        """Remove the index, what is kept beside it and the shared index git made for it:
        the next use rebuilds it."""
        stop_early(self.path)
        shared = self.state.shared
        forget_files(self.path)
        if shared:
            self._drop_shared(shared)

    # -- staging --

    def stage(self, size_cap: int, max_files: int = 0, since: str | None = None) -> Staged:
        """Bring the index to the files now, as ``git add -A`` would (minus what convgit
        leaves out), and write its tree. The caller holds ``locked``. ``max_files`` (0: no
        cap): when more files than that are new or changed since the tree ``since`` (the last
        snapshot's; None: since the index was last staged), nothing is staged or written
        (SnapshotSkippedError)."""
        try:
            return self._stage_once(size_cap, max_files, since)
        except WorkspaceError:
            # The private index is only a cache: if git chokes on it, rebuild it and try again.
            self.forget()
            return self._stage_once(size_cap, max_files, since)

    def _stage_once(self, size_cap: int, max_files: int, since: str | None) -> Staged:
        state = self._ensure(size_cap)
        # The shared indexes git made for this index as it went (it may split afresh on any
        # write): the ones it no longer builds on at the end are deleted. Never by listing the
        # folder: another session's git may be making its own there right now.
        made = {state.shared, self._shared_now()}
        updates, drops, skipped, ignores = self._survey(size_cap, state.ignores)
        faults.point("snapshot:surveyed")  # files may change from here on (a writer's race)
        if max_files:  # counted before git hashes any of them
            changed = self._changed_since(updates, drops, state.tree_id, since, max_files)
            if changed > max_files:
                raise SnapshotSkippedError(changed, max_files)
        made.add(self._shared_now())
        tree_id, present = state.tree_id, state.present
        if tree_id is not None and not (updates or drops):
            # a tree no ref keeps (a status's, a diff's) is collected by `git gc --prune=now`:
            # write it again (git rebuilds it from the index, or fails on a collected file's
            # blob, and the index is rebuilt)
            there, present = presence.check(self.git, [tree_id], present)
            if not there:
                tree_id = None
        if updates or drops:
            self.save(dataclasses.replace(state, tree_id=None, ignores=""))  # stale if we stop
            tree_id = None
            if drops:
                self._git("update-index", "-z", "--force-remove", "--stdin", stdin=_z(drops))
                made.add(self._shared_now())
            if updates:
                self._git(
                    "update-index", "-z", "--add", "--remove", "--replace", "--stdin",
                    stdin=_z(updates),
                )  # fmt: skip
                made.add(self._shared_now())
        if tree_id is None:
            tree_id = os.fsdecode(self._git("write-tree").stdout).strip()
        shared = self._shared_now()
        for old in made - {shared, ""}:
            self._drop_shared(old)
        fresh = dataclasses.replace(
            state,
            cap=size_cap,
            tree_id=tree_id,
            ignores=ignores,
            checked=index_file.identity(self.path),
            shared=shared,
            shared_checked=index_file.identity(self._shared_path(shared)) if shared else "",
            present=present,
        )
        if fresh != state:
            self.save(fresh)
        return Staged(tree_id, tuple(sorted(skipped, key=lambda s: s.path)), len(updates))

    def _changed_since(
        self,
        updates: list[bytes],
        drops: list[bytes],
        tree_id: str | None,
        since: str | None,
        max_files: int,
    ) -> int:
        """How many files are new or changed since the tree ``since``: those git would stage
        now, and, when the index was staged since (a ``status`` or a ``diff`` scans through
        it), those its last tree holds that ``since`` does not (a tree diff: nothing is read
        or hashed), but for the ``drops`` it is to lose. Counted only as far as it takes to
        pass ``max_files``."""
        changed = set(updates)
        if len(changed) > max_files or not since or not tree_id or tree_id == since:
            return len(changed)
        listed = self.git.run(
            "diff-tree", "-r", "-z", "--name-only", "--no-renames", "--diff-filter=d", since,
            tree_id,
        ).stdout  # fmt: skip
        changed.update(path for path in listed.split(b"\0") if path)
        return len(changed - set(drops))

    def _survey(
        self, size_cap: int, known_ignores: str
    ) -> tuple[list[bytes], list[bytes], list[LeftAlone], str]:
        """The paths to stage, the tracked paths to drop, the paths left out, from
        ``git status`` against the index, and the identity of the ignore files outside the
        worktree. Ignore rules do not apply to what an index tracks, but `git add -A` into an
        empty index never takes an ignored file: when the rules may have moved (those files
        are not ``known_ignores``, or a .gitignore changed), the tracked files they now ignore
        are listed (beside `git status`, on another core) and dropped."""
        status = self._taken_early() or self._spawn(*_STATUS)
        lister: subprocess.Popen[bytes] | None = None
        try:
            ignores = self._ignore_fingerprint()
            if ignores != known_ignores:
                lister = self._spawn(*_LIST_IGNORED)
            out, err = status.communicate()
            found = self.git.finish(status, "status", out, err)
            updates, drops, skipped, nested = self._read_status(found, size_cap)
            if nested:  # what we tracked inside a new repository or convgit's store goes
                pathspecs = [":(literal)" + os.fsdecode(folder) + "/" for folder in sorted(nested)]
                inside = self._git("ls-files", "-z", "--", *pathspecs).stdout
                drops += [path for path in inside.split(b"\0") if path]
            if lister is None and any(
                os.path.basename(p) == b".gitignore" for p in (*updates, *drops)
            ):
                lister = self._spawn(*_LIST_IGNORED)
            ignored: set[bytes] = set()
            if lister is not None:
                out, err = lister.communicate()
                listed = self.git.finish(lister, "ls-files", out, err).stdout.split(b"\0")
                ignored = {path for path in listed if path}
        finally:
            for running in (status, lister):
                if running is not None and running.poll() is None:
                    running.kill()
                    running.wait()
        kept = agent_files.listed(self.path)  # the agent's own files: kept although ignored
        if kept:
            ignored -= kept
            more, left = agent_files.to_stage(
                self.git.root, kept, self._holds, self.kept_out.above, size_cap
            )
            updates += [p for p in more if p not in updates]
            skipped += left
        if ignored:
            drops += sorted(ignored)
            updates = [p for p in updates if p not in ignored]
            # an ignored file is outside the snapshots' view, whatever its size: not "skipped"
            skipped = [s for s in skipped if os.fsencode(s.path) not in ignored]
        return updates, drops, skipped, ignores

    def _read_status(
        self, proc: subprocess.CompletedProcess[bytes], size_cap: int
    ) -> tuple[list[bytes], list[bytes], list[LeftAlone], set[bytes]]:
        """From ``git status`` output against the index: the paths to stage, the tracked
        paths to drop (gone, now too big or unreadable), the paths left out, and the folders
        whose tracked files must all go: nested repositories (`git init` run inside) and
        convgit's store."""
        updates: list[bytes] = []
        drops: list[bytes] = []
        skipped: list[LeftAlone] = []
        nested: set[bytes] = set()
        stores: set[bytes] = set()
        root = os.fsencode(self.git.root)
        repository_at: dict[bytes, bool] = {}
        folder_at: dict[bytes, bool] = {}
        records = iter(proc.stdout.split(b"\0"))
        for record in records:
            kind = record[:1]
            if kind == b"1":
                parts = record.split(b" ", 8)
                if parts[1][1:2] == b".":
                    continue  # differs from HEAD only; the private index already matches the file
                path = parts[8]
            elif kind == b"2":
                path = record.split(b" ", 9)[9]
                updates.append(next(records))  # the rename's source is gone from the tree
            elif kind == b"u":
                path = record.split(b" ", 10)[10]
            elif kind == b"?":
                path = record[2:]
            else:
                continue
            name = os.fsdecode(path)
            store = self.kept_out.above(path)
            if store is not None:
                stores.add(store)
                continue
            if path.endswith(b"/"):
                skipped.append(LeftAlone(name.rstrip("/"), "nested repository"))
                continue
            # git lists files below a folder our index tracks, even once it is a repository.
            repository = repository_above(root, path, repository_at)
            if repository is not None:
                nested.add(repository)
                continue
            info = lstat(os.path.join(root, path))
            if kind != b"?" and (info is None or not real_folders(root, path, folder_at)):
                # gone, or with a symlink now where its folder was: git refuses to update a
                # path "beyond a symbolic link", and only forgets it
                drops.append(path)
                continue
            if info is not None and stat.S_ISREG(info.st_mode):
                reason = None
                if info.st_size > size_cap:
                    sizes = f"{_mib(info.st_size)} > {_mib(size_cap)}"
                    reason = f"larger than the size cap ({sizes})"
                elif not os.access(os.path.join(root, path), os.R_OK):
                    reason = "unreadable"
                if reason is not None:
                    skipped.append(LeftAlone(name, reason))
                    if kind != b"?":
                        drops.append(path)
                    continue
            updates.append(path)
        denied: list[bytes] = []
        for line in os.fsdecode(proc.stderr).splitlines():
            if "could not open directory" in line and "'" in line:
                skipped.append(LeftAlone(line.split("'")[1].rstrip("/"), "unreadable"))
            elif line.endswith(_DENIED) and not line.startswith(("warning: ", "error: ")):
                denied.append(os.fsencode(line.removesuffix(_DENIED)))
        # a tracked file git could not look at (in a folder this user may not enter) goes, as
        # an unreadable file does: the snapshot must not hold what it last saw there
        for path in sorted(self._holds(denied) - {b""} if denied else ()):
            drops.append(path)
            folder = next((f for f in skipped if path.startswith(os.fsencode(f.path) + b"/")), None)
            if folder is None:
                skipped.append(LeftAlone(os.fsdecode(path), "unreadable"))
        skipped += [LeftAlone(os.fsdecode(folder), "nested repository") for folder in nested]
        skipped += [LeftAlone(os.fsdecode(folder), STORE_REASON) for folder in stores]
        return updates, drops, skipped, nested | stores

    def _ignore_fingerprint(self) -> str:
        """Identity of the ignore files that live outside the worktree (and of the sparse
        checkout's patterns), found afresh: ``rule_files`` then names them."""
        self._rule_files = rules.find(self.git)
        return self._rule_files.fingerprint()

    def rule_files(self) -> rules.RuleFiles:
        """The rule files outside the worktree, as the last staging found them."""
        if self._rule_files is None:
            self._rule_files = rules.find(self.git)
        return self._rule_files

    # -- keeping it sound --

    def _ensure(self, size_cap: int) -> IndexState:
        """Create the index when missing, seeded with a copy of the user's index (its stat
        data spares rehashing every file); then make sure it holds nothing that would make the
        tree differ from ``git add -A``: no entry git would trust blindly (skip-worktree,
        assume-unchanged), no file above the cap."""
        state = self.state
        if survey_plan.key(self.path) in _early:
            if state.cap == size_cap:
                return state  # found whole when its status started, under the lock held since
            stop_early(self.path)  # the index is cleaned first: that status said nothing
        if self.path.exists() and not self._intact(state):
            self.forget()  # torn by a crash: git would half-read it without a word
        if not self.path.exists():
            self.forget()
            user_index = self.git.git_dir / "index"
            if user_index.exists():
                import shutil  # here: only a new index is seeded

                seed = Path(f"{self.path}.seed")
                shutil.copy2(user_index, seed)  # keeps the mtime: git's racy-entry check needs it
                os.replace(seed, self.path)
        elif state.cap == size_cap:
            return state
        if self.path.exists():
            self._clean(size_cap)
        state = IndexState(size_cap, None, "")  # "": ignore rules are checked on first use
        self.save(state)
        return state

    def _intact(self, state: IndexState) -> bool:
        """True when the index file, and the shared index it builds on, are whole (their
        checksums are recomputed only when they are not the files convgit last saw whole)."""
        hash_len = self.git.hash_len
        if state.checked != index_file.identity(self.path) and not index_file.intact(
            self.path, hash_len
        ):
            return False
        shared = index_file.shared_index(self.path, hash_len)
        if shared is None:
            return True
        path = self._shared_path(shared)
        return state.shared_checked == index_file.identity(path) or index_file.intact(
            path, hash_len
        )

    def _clean(self, size_cap: int) -> None:
        entries = self._entries(size_cap)
        if entries is None and index_file.shared_index(self.path, self.git.hash_len) is not None:
            # A split index (the user's copy or ours): git writes it whole, then we read it.
            proc = self._git("update-index", "--no-split-index", config=WHOLE_INDEX, check=False)
            entries = self._entries(size_cap) if proc.returncode == 0 else None
        if entries is None:
            # A sparse or unreadable index: start empty, git rehashes every file once.
            self.path.unlink()
            return
        zero = "0" * (2 * self.git.hash_len)
        lines: list[bytes] = []
        for path, mode, size, oid, flags in entries:
            if flags & index_file.FLAG_STAGEMASK:
                continue  # a conflict stage: staging the path resolves it
            if mode & KIND_MASK == _REGULAR and size > size_cap:
                lines.append(f"0 {zero}\t".encode() + path)
            elif flags & index_file.TRUSTED_BLINDLY:
                lines.append(f"{mode:o} {oid.hex()}\t".encode() + path)
        if self.kept_out.folders or os.path.lexists(self.git.root / STORE_NAME):
            # the user may have committed convgit's store: a snapshot never holds it
            stores = [f":(literal){os.fsdecode(store)}/" for store in self.kept_out.folders]
            listed = self._git(
                "ls-files", "-z", "--", *stores, f":(glob)**/{STORE_NAME}/**", config=WHOLE_INDEX
            ).stdout
            lines += [f"0 {zero}\t".encode() + path for path in listed.split(b"\0") if path]
        if lines:
            set_entries(self.git, self.path, lines, INDEX)

    def _entries(self, size_cap: int) -> list[tuple[bytes, int, int, bytes, int]] | None:
        try:
            data = self.path.read_bytes()
            return list(index_file.entries(data, self.git.hash_len, above=size_cap))
        except (ValueError, IndexError, struct.error):
            return None

    # -- shared indexes --

    def _shared_now(self) -> str:
        return index_file.shared_index(self.path, self.git.hash_len) or ""

    def _shared_path(self, shared: str) -> Path:
        """Where git keeps the shared index ``shared`` of a split private index."""
        return self.git.git_dir / f"sharedindex.{shared}"

    def _drop_shared(self, shared: str) -> None:
        """Delete ``sharedindex.<shared>``, which git made for this index before it moved on,
        unless the user's index or another private index beside it builds on it."""
        if index_file.shared_index(self.git.git_dir / "index", self.git.hash_len) == shared:
            return
        for state in self.path.parent.glob("*.state"):
            other = Path(str(state)[: -len(".state")])
            if (
                other != self.path
                and PrivateIndex(self.git, other, self.kept_out).state.shared == shared
            ):
                return
        with suppress(OSError):
            self._shared_path(shared).unlink()

    def _holds(self, paths: list[bytes]) -> set[bytes]:
        """Those of ``paths`` the index holds."""
        specs = [":(literal)" + os.fsdecode(p) for p in paths]
        return set(self._git("ls-files", "-z", "--", *specs).stdout.split(b"\0"))

    def _git(
        self,
        *args: str,
        stdin: bytes | None = None,
        config: tuple[str, ...] = INDEX,
        check: bool = True,
    ) -> subprocess.CompletedProcess[bytes]:
        stop_early(self.path)
        if config == INDEX:  # the watcher, when one is in use, tracks the index as it goes
            config = (*INDEX, *self.tracking.config)
        return self.git.run(*args, index=self.path, config=config, stdin=stdin, check=check)

    def _spawn(self, *args: str) -> subprocess.Popen[bytes]:
        stop_early(self.path)
        config = (*INDEX, *self.tracking.config)
        return self.git.spawn(*args, index=self.path, config=config)

    def _taken_early(self) -> subprocess.Popen[bytes] | None:
        """The survey's git started early on this index (``survey_early``, or from the plan),
        if there is one; another command is waited for and left (None)."""
        key = survey_plan.key(self.path)
        started = _early.get(key)
        if started is None:
            return None
        if started[:2] == self._survey_call():
            return _early.pop(key)[2]
        stop_early(self.path)
        return None


def set_entries(git: Git, index: Path, lines: list[bytes], config: tuple[str, ...] = INDEX) -> None:
    """Write ``mode oid<TAB>path`` lines into the index at ``index`` (mode 0 removes the path)."""
    git.run(
        "update-index", "-z", "--add", "--replace", "--index-info",
        index=index, config=config, stdin=b"\0".join(lines) + b"\0",
    )  # fmt: skip


def forget_files(index: Path) -> None:
    """Remove the index file at ``index`` and what is kept beside it."""
    # .watcher and .watchman-sock: what issue 27's fsmonitor hook kept beside an index
    for suffix in ("", ".state", ".lock", ".rules", ".watcher", ".watchman-sock"):
        Path(f"{index}{suffix}").unlink(missing_ok=True)


def _z(paths: list[bytes]) -> bytes:
    return b"\0".join(paths) + b"\0"


def _mib(size: int) -> str:
    return f"{size / (1024 * 1024):.1f} MiB"
