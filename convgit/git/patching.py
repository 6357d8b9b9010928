"""Snapshots patched from what changed: how the recorder (``convgit.agents.live.recorder``)
takes a snapshot of a working tree it keeps watching.

The recorder keeps, for the working tree, a **base**: the tree of its last snapshot (what
``git add -A`` stages into an empty index, minus what convgit leaves out), the paths it left
out, and watchman's clock from just before that snapshot looked at the files. The next snapshot
asks watchman which paths changed since that clock and builds the new tree from the base's:
only the changed files are hashed (``git add -A`` of those paths alone into a scratch index,
git's own rules for ignores, attributes, filters, modes and links) and only the trees on their
paths are written (by Python, as git writes a loose object); no index is read or written.

Whatever watchman cannot vouch for means a **full scan** (every file stat'ed, through the
recorder's own private index, as a snapshot outside the recorder is taken), and the base starts
again from it: no base yet, a clock of another watchman instance (it restarted, or the watch was
dropped), a recrawl, a changed ignore or attributes file (``.gitignore``, ``.gitattributes``,
``info/exclude``, the excludes file, the sparse-checkout patterns, git's config), the system
clock gone back, more changed paths than ``PATCH_LIMIT``, and anything a patch does not handle
itself (a repository inside the tree, a left-out path that changed, a file over the size cap,
git refusing a path). A session that keeps files git ignores (``agent_files``: listed by the
agent's file tools, and matched by git's ignore rules now) is always scanned in full.
``Taken.how`` says which path a snapshot took and why.

The patched tree is the full scan's tree: both are git's ``add -A`` over the same files, and the
tests hold every patched snapshot against ``git add -A`` into an empty index.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import stat
import time
import zlib
from collections.abc import Iterable, Iterator
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

from convgit.base import faults
from convgit.base.errors import SnapshotSkippedError, WorkspaceError, over_cap
from convgit.git import rules, watchman
from convgit.git.index import agent_files, watcher
from convgit.git.index import format as index_file
from convgit.git.index.kept_out import KeptOut
from convgit.git.index.private_index import PrivateIndex
from convgit.git.plumbing.objects import BLOB, EXEC, GITLINK, LEGACY_BLOB, LINK, TREE, Objects
from convgit.git.plumbing.run import AUTHOR_EMAIL, AUTHOR_NAME, INDEX, SAFE, Git, git_words
from convgit.git.restore.plan import LeftAlone, lstat, real_folders

PATCH_LIMIT = 5000  # more changed paths than this: the private index's stat cache is cheaper
RETRY = 30.0  # seconds before a watchman that failed is asked again
# a scratch index is "git add -A into an empty index" for a few paths: whole, version 2 or 4
_SCRATCH = (
    *SAFE,
    "core.splitIndex=false",
    "index.sparse=false",
    "core.sparseCheckout=false",
    "core.untrackedCache=false",
    "advice.addIgnoredFile=false",
    "advice.updateSparsePath=false",
    "advice.addEmbeddedRepo=false",
)
_NESTED = "nested repository"
_TRUE = ("", "true", "yes", "on", "1")
_FILES = frozenset({BLOB, EXEC, LINK, LEGACY_BLOB})


class _Full(Exception):
    """This snapshot is a full scan, for the reason given."""


@dataclass(frozen=True)
class Taken:
    """A snapshot's tree: its id, the paths left out, how many files were hashed, how many
    files it holds, the rule files outside the working tree it was taken under, and ``how``:
    which path it took and why."""

    tree_id: str
    skipped: tuple[LeftAlone, ...]
    hashed: int
    files: int
    rule_files: rules.RuleFiles
    how: str


@dataclass(frozen=True)
class Base:
    """The last snapshot's tree and what it was taken under (see the module's note)."""

    taken: Taken
    clock: str  # watchman's clock from before the files were looked at
    warning: str  # watchman's recrawl warning then
    fingerprint: str  # the files outside the tree whose change means a full scan
    at: float  # the system clock then
    plain: bool  # git takes every file as it is: a changed one is hashed here (``_plain``)


_serving: dict[str, Patcher] = {}


def serve(root: Path, patcher: Patcher) -> None:
    """Take this process's snapshots of the working tree at ``root`` through ``patcher``."""
    _serving[os.fsdecode(os.path.realpath(root))] = patcher


def stop_serving(root: Path) -> None:
    """This process's snapshots of ``root`` are taken as any command takes them again."""
    _serving.pop(os.fsdecode(os.path.realpath(root)), None)


def serving(root: Path) -> Patcher | None:
    """The patcher that takes this process's snapshots of ``root``, if any (the recorder's)."""
    if not _serving:
        return None
    return _serving.get(os.fsdecode(os.path.realpath(root)))


class Patcher:
    """The snapshots of one working tree, patched from what changed (the module's note). Its
    full scans go through the private index at ``own_index`` (the recorder's own)."""

    def __init__(self, own_index: Path) -> None:
        self.own_index = own_index
        self.scratch = Path(f"{own_index}.scratch-{os.getpid()}")
        self.bases: dict[tuple[int, tuple[bytes, ...]], Base] = {}
        self.last: dict[str, str] = {}  # private index path -> how its last snapshot went
        self.count = 0  # snapshots asked of it (``latest``: the last one's index and how)
        self.latest: tuple[str, str] | None = None
        self._watch: watchman.Watch | None = None
        self._added: bytes | None = None  # the root of the watch this recorder made, if it did
        # the root of a watch a recorder made, kept while the watch is ours: a recorder killed
        # before it dropped its watch leaves it, and the next one drops the watch in its place
        self.made = Path(f"{own_index}.watch-made")
        self._socket = ""
        self._failed = ""  # why watchman could not be reached, when it last could not
        self._failed_at = 0.0
        self._objects: Objects | None = None
        self._objects_of: Path | None = None
        # config files' identity, rule files, attributes file, whether git takes files as they are
        self._config: tuple[str, rules.RuleFiles, str, bool] | None = None
        self._counts: dict[str, int] = {}  # tree id -> files below it (those counted once)

    # -- what it says of itself --

    def watcher(self) -> str:
        """watchman as the recorder sees it: its version, or why there is none."""
        if self._watch is not None:
            return f"watchman {self._watch.version}"
        return f"none: {self._failed}" if self._failed else "none yet"

    def latest_said(self) -> dict[str, str | int] | None:
        """The last snapshot asked of it, of whichever private index: ``index``, ``how`` (as
        ``last`` says it) and its ``number`` (counted from 1); None before the first."""
        if self.latest is None:
            return None
        index, how = self.latest
        return {"index": index, "how": how, "number": self.count}

    def close(self) -> None:
        """Leave: the watch this recorder made dropped (watchman watches the tree no longer;
        one that was there before it stays), the connection and the reader closed."""
        if self._added is not None:
            # through the connection, else a new one: lost meanwhile, or dead (watchman
            # restarted, and brought the watch back from its state)
            for _ in range(2):
                try:
                    if self._watch is None:
                        self._watch = watchman.Watch(self._added, self._socket)
                    if self._watch.watch == self._added:
                        self._watch.drop()
                        self.made.unlink(missing_ok=True)
                    break
                except (watchman.Failed, OSError):
                    if self._watch is not None:
                        with suppress(OSError):
                            self._watch.close()
                    self._watch = None
            self._added = None
        if self._watch is not None:
            self._watch.close()
            self._watch = None
        self._close_objects()
        for leftover in (self.scratch, Path(f"{self.scratch}.lock")):
            leftover.unlink(missing_ok=True)

    def warm(self, own: PrivateIndex, size_cap: int, max_files: int = 0) -> None:
        """Before the first snapshot: the watch made (watchman reads the whole tree), and a
        full scan through ``own`` (the recorder's private index) that later ones patch; none
        when it would take more than ``max_files`` files (a turn's cap: SnapshotSkippedError)."""
        if own.tracking.path != watcher.WATCHMAN:
            return
        watch = self._watching(own.git, watchman.SETTLE_MS / 1000)  # a large tree: watchman
        if watch is None:  # may take longer than an event's wait to make its watch
            return
        try:
            watch.settle()
        except watchman.Failed as failed:
            self._lost(str(failed))
            return
        with own.locked():
            key = (size_cap, own.kept_out.folders)
            self._full(own, size_cap, key, watch, "the recorder started", max_files)

    # -- a snapshot's tree --

    def stage(
        self, private: PrivateIndex, size_cap: int, max_files: int = 0, since: str | None = None
    ) -> Taken:
        """The tree of the files now, as ``private.stage`` gives it, taken the cheapest way
        that is sure (the module's note). The caller holds ``private``'s lock. ``max_files``
        (0: no cap): more files new or changed than that (since the base a patch starts from,
        the tree ``since`` for ``private``, the last full scan for the recorder's own index),
        and nothing is hashed or written (SnapshotSkippedError)."""
        tracking = private.tracking
        try:
            if tracking.path != watcher.WATCHMAN:
                said = {"off": "fsmonitor is off", "auto": "watchman is not on PATH"}
                why = tracking.note or said.get(tracking.setting, "no watchman")
                taken = self._unpatched(private, size_cap, why, max_files, since)
            elif self._keeps_ignored(private):
                why = "the session keeps files git ignores"
                taken = self._unpatched(private, size_cap, why, max_files, since)
            else:
                own = PrivateIndex(private.git, self.own_index, private.kept_out, tracking)
                with own.locked():
                    taken = self._stage(own, size_cap, max_files)
        except SnapshotSkippedError as skipped:
            self._remember(private, f"skipped: {over_cap(skipped.changed, skipped.cap)}")
            raise
        self._remember(private, taken.how)
        return taken

    def _remember(self, private: PrivateIndex, how: str) -> None:
        """Say how the snapshot of ``private`` went: the last of that index (``last``), and
        the last of all (``latest``, the ``count``-th)."""
        self.last[str(private.path)] = how
        self.count += 1
        self.latest = (str(private.path), how)

    def _keeps_ignored(self, private: PrivateIndex) -> bool:
        """Whether a file the session keeps as the agent wrote it (``agent_files``) is one git
        ignores: a patch, ``git add -A``'s tree, would leave it out. A listed file git does not
        ignore is in that tree already (every file Claude Code's Write or Edit touched is
        listed, ignored or not)."""
        listed = agent_files.listed(private.path)
        if not listed:
            return False
        try:
            return bool(agent_files.ignored(private.git, listed))
        except WorkspaceError:
            return True  # git cannot tell: the full scan is sure

    def _unpatched(
        self, private: PrivateIndex, size_cap: int, why: str, max_files: int, since: str | None
    ) -> Taken:
        staged = private.stage(size_cap, max_files, since)
        files = private.file_count()
        how = f"every file stat'ed: {why}"
        return Taken(
            staged.tree_id, staged.skipped, staged.hashed, files, private.rule_files(), how
        )

    def _stage(self, own: PrivateIndex, size_cap: int, max_files: int) -> Taken:
        git = own.git
        key = (size_cap, own.kept_out.folders)
        watch = self._watching(git)
        if watch is None:
            return self._full(own, size_cap, key, None, _said(self._failed), max_files)
        base = self.bases.get(key)
        try:
            fingerprint = self._fingerprint(git)
            if base is None:
                why = "the recorder's first snapshot"
            elif base.at > time.time():
                why = "the system clock went back"
            elif base.fingerprint != fingerprint:
                why = "git's config or ignore rules outside the tree changed"
            else:
                return self._patch(own, watch, base, size_cap, key, fingerprint, max_files)
        except _Full as full:
            why = str(full)
        except watchman.Failed as failed:  # it stopped, say: a new connection starts it again
            self._lost("")
            again = self._watching(git)
            return self._full(own, size_cap, key, again, _said(str(failed)), max_files)
        except SnapshotSkippedError:
            raise  # counted before anything was hashed: the base and the watch stand
        except BaseException:
            self._lost("")  # cut short half-way through a message: never trusted again
            self._close_objects()
            raise
        return self._full(own, size_cap, key, watch, why, max_files)

    def _full(
        self,
        own: PrivateIndex,
        size_cap: int,
        key: tuple[int, tuple[bytes, ...]],
        watch: watchman.Watch | None,
        why: str,
        max_files: int = 0,
    ) -> Taken:
        """Every file stat'ed, through the recorder's private index; with ``watch``, the base
        starts again from here (watchman's clock taken before the files are looked at). More
        new or changed files than ``max_files`` (0: no cap): nothing is staged, no base is
        kept (SnapshotSkippedError)."""
        self.bases.pop(key, None)
        clock = warning = ""
        if watch is not None:
            try:
                fingerprint = self._fingerprint(own.git)
                clock, warning = watch.clock()
            except watchman.Failed as failed:
                self._lost(str(failed))
                watch = None
            except BaseException:
                self._lost("")
                raise
        staged = own.stage(size_cap, max_files)
        taken = Taken(
            staged.tree_id,
            staged.skipped,
            staged.hashed,
            own.file_count(),
            own.rule_files(),
            f"every file stat'ed: {why}",
        )
        if watch is not None:
            plain = self._plain(own)
            self.bases[key] = Base(taken, clock, warning, fingerprint, time.time(), plain)
        return taken

    def _patch(
        self,
        own: PrivateIndex,
        watch: watchman.Watch,
        base: Base,
        size_cap: int,
        key: tuple[int, tuple[bytes, ...]],
        fingerprint: str,
        max_files: int,
    ) -> Taken:
        git = own.git
        changed = watch.since(base.clock)
        faults.point("patch:asked")
        if not changed.vouched:
            raise _Full("watchman restarted since the last snapshot")
        if changed.warning != base.warning:
            first = changed.warning.splitlines()[0] if changed.warning else "its warning cleared"
            raise _Full(f"watchman recrawled the tree ({first})")
        paths = sorted(set(changed.paths) - {b".git"})
        if max_files and len(paths) > max_files:  # counted before any is hashed
            files = _files_git_takes(git, own.kept_out, paths, max_files)
            if files > max_files:
                raise SnapshotSkippedError(files, max_files)
        if len(paths) > PATCH_LIMIT:
            raise _Full(f"{len(paths):,} paths changed, over {PATCH_LIMIT:,}")
        old = base.taken
        if not paths:
            taken = dataclasses.replace(old, hashed=0, how="patched: nothing changed")
            self.bases[key] = dataclasses.replace(base, taken=taken, clock=changed.clock)
            return taken
        objects = self._reader(git)
        deleted, pathspecs, again = self._sorted_out(git, own.kept_out, objects, old, paths)
        store = _Store(git)
        if again and not base.plain:  # attributes, filters or line endings: git hashes them
            pathspecs += [path for path, _ in again]
            deleted += [path for path, _ in again]
            again = []
        entries = [_hashed(store, git, path, info, size_cap) for path, info in again]
        if pathspecs:
            entries += self._add(git, own.kept_out, pathspecs, size_cap)
        faults.point("patch:hashed")
        tree_id, delta = _Rewrite(objects, store, self._counts).apply(old.tree_id, deleted, entries)
        faults.point("patch:written")
        said = f"{len(paths)} changed path{'s' if len(paths) != 1 else ''}"
        taken = dataclasses.replace(
            old,
            tree_id=tree_id,
            hashed=len(entries),
            files=old.files + delta,
            how=f"patched: {said}",
        )
        self.bases[key] = dataclasses.replace(
            base, taken=taken, clock=changed.clock, warning=changed.warning, at=time.time()
        )
        return taken

    def _sorted_out(
        self,
        git: Git,
        kept_out: KeptOut,
        objects: Objects,
        old: Taken,
        paths: list[bytes],
    ) -> tuple[list[bytes], list[bytes], list[tuple[bytes, os.stat_result]]]:
        """The changed ``paths`` as what to take out of the old tree (gone, or replaced), what
        to ask git to add (new paths: files, links, folders) and the files and links that
        were files or links in the old tree (the ignore rules, which did not change, took them
        then and take them now), with their ``lstat``."""
        root = os.fsencode(git.root)
        left_out = {os.fsencode(s.path): s.reason for s in old.skipped}
        folders: dict[bytes, bool] = {}
        deleted: list[bytes] = []
        pathspecs: list[bytes] = []
        again: list[tuple[bytes, os.stat_result]] = []
        for path in paths:
            if kept_out.above(path) is not None:
                continue  # convgit's own store: in no snapshot
            parts = path.split(b"/")
            if parts[-1] in (b".gitignore", b".gitattributes", b".gitmodules"):
                raise _Full(f"{os.fsdecode(parts[-1])} changed")
            nested = _inside_repository(root, parts, left_out)
            if nested is not None:
                if nested:
                    continue  # inside a nested repository, which stays one: left out as it was
                raise _Full("a repository inside the working tree changed")
            for folder in (*_folders_of(parts), path):
                if folder in left_out:
                    raise _Full(f"{os.fsdecode(folder)}, left out ({left_out[folder]}), changed")
            if not real_folders(root, path, folders):
                deleted.append(path)  # below a folder that is gone or now a link
                continue
            info = lstat(os.path.join(root, path))
            if info is None:
                deleted.append(path)
            elif stat.S_ISDIR(info.st_mode):
                if not os.access(os.path.join(root, path), os.R_OK | os.X_OK):
                    raise _Full(f"{os.fsdecode(path)} may not be entered")  # the scan says so
                found = objects.lookup(old.tree_id, os.fsdecode(path))
                if found is None or found[0] != TREE:  # a new folder, or a file that became one
                    deleted.append(path)
                    pathspecs.append(path)
                # else its entries that changed are named one by one
            else:
                found = objects.lookup(old.tree_id, os.fsdecode(path))
                if found is not None and found[0] in _FILES:
                    again.append((path, info))
                else:
                    deleted.append(path)
                    pathspecs.append(path)
        return deleted, pathspecs, again

    def _add(
        self, git: Git, kept_out: KeptOut, pathspecs: list[bytes], size_cap: int
    ) -> list[tuple[bytes, int, str]]:
        """What ``git add -A`` of ``pathspecs`` alone stages into an empty index (the files
        hashed, their blobs written): (path, mode, id) each."""
        scratch = self.scratch
        for leftover in (scratch, Path(f"{scratch}.lock")):
            leftover.unlink(missing_ok=True)
        env = {**git.env, "GIT_LITERAL_PATHSPECS": "1"}
        listed = b"\0".join(pathspecs) + b"\0"
        done = git.run(
            "add", "-A", "--pathspec-from-file=-", "--pathspec-file-nul",
            index=scratch, config=_SCRATCH, stdin=listed, env=env, check=False,
        )  # fmt: skip
        if done.returncode not in (0, 1):  # 1: some paths are ignored (as git add -A says)
            raise _Full(
                f"git add refused a changed path: {git_words(done.stderr, done.returncode)}"
            )
        try:
            data = scratch.read_bytes() if scratch.exists() else b""
            found = list(index_file.entries(data, git.hash_len)) if data else []
        except (ValueError, IndexError) as exc:
            raise _Full(f"git add's index could not be read ({exc})") from None
        finally:
            scratch.unlink(missing_ok=True)
        root = os.fsencode(git.root)
        entries = []
        for path, mode, _size, oid, _flags in found:
            if mode == GITLINK:
                raise _Full("a repository appeared inside the working tree")
            if kept_out.above(path) is not None:
                raise _Full("convgit's store moved inside the working tree")
            if mode != LINK:
                info = lstat(os.path.join(root, path))
                if info is None or info.st_size > size_cap:
                    raise _Full("a file over the size cap changed" if info else "a file went")
            entries.append((path, mode, oid.hex()))
        return entries

    def commit(self, git: Git, tree_id: str, parents: list[str], message: str) -> str:
        """A commit of ``tree_id`` by convgit's identity, unsigned, as ``Git.commit_tree``
        makes it (the same bytes: ``git commit-tree`` takes its message as it is given),
        written here rather than by a git process; its id."""
        when = int(time.time())
        offset = time.localtime(when).tm_gmtoff // 60
        sign = "-" if offset < 0 else "+"
        zone = f"{sign}{abs(offset) // 60:02d}{abs(offset) % 60:02d}"
        who = f"{AUTHOR_NAME} <{AUTHOR_EMAIL}> {when} {zone}"
        head = [f"tree {tree_id}", *(f"parent {p}" for p in parents)]
        text = "\n".join([*head, f"author {who}", f"committer {who}", "", message])
        return _Store(git).put("commit", text.encode())

    # -- what it keeps between snapshots --

    def _watching(self, git: Git, timeout: float = watchman.TIMEOUT) -> watchman.Watch | None:
        """The watch of the working tree, made once (again after a failure, now and then),
        each answer within ``timeout`` seconds."""
        if self._watch is not None:
            return self._watch
        if self._failed and time.monotonic() - self._failed_at < RETRY:
            return None
        try:
            root = os.fsencode(git.root)
            self._watch = watchman.Watch(root, self._socket, self.made, timeout)
            self._socket = self._watch.watchman.sockname
            watch = self._watch.watch
            if self._watch.added or self._made_before() == watch:  # made by this recorder
                self._added = watch  # (again, after watchman restarted), or one killed since
            self._failed = ""
        except (watchman.Failed, OSError) as exc:
            self._lost(str(exc) if isinstance(exc, watchman.Failed) else exc.strerror or "")
        return self._watch

    def _made_before(self) -> bytes | None:
        """The root of the watch an earlier recorder of this working tree made and did not
        drop (it was killed), if one did."""
        try:
            return self.made.read_bytes() or None
        except OSError:
            return None

    def _lost(self, why: str) -> None:
        """The connection to watchman is dropped; ``why`` it failed ("": cut short)."""
        if self._watch is not None:
            with suppress(OSError):
                self._watch.close()
            self._watch = None
        self.bases.clear()  # a base's clock is only good with the instance that gave it
        if why:
            self._failed, self._failed_at = why, time.monotonic()

    def _reader(self, git: Git) -> Objects:
        """A reader of the repository's objects, kept while the recorder runs."""
        if self._objects is None or self._objects_of != git.git_dir:
            self._close_objects()
            self._objects = git.objects()
            self._objects_of = git.git_dir
        return self._objects

    def _close_objects(self) -> None:
        if self._objects is not None:
            with suppress(OSError, ValueError):
                self._objects.close()
        self._objects = None

    def _fingerprint(self, git: Git) -> str:
        """The identity of what decides a snapshot outside the working tree: git's config
        files and the environment that finds them, the rule files (``rules``) and the
        attributes files. Another value means a full scan."""
        config = _config_identity(git)
        if self._config is None or self._config[0] != config:
            pattern = r"^core\.(autocrlf|filemode|symlinks|attributesfile)$"
            said = git.run("config", "-z", "--get-regexp", pattern, check=False).stdout
            settings = {}
            for item in said.split(b"\0"):
                key, _, value = os.fsdecode(item).partition("\n")
                settings[key.lower()] = value.lower() if key != "core.attributesfile" else value
            plain = (
                settings.get("core.autocrlf", "false") in ("false", "no", "off", "0")
                and settings.get("core.filemode", "true") in _TRUE
                and settings.get("core.symlinks", "true") in _TRUE
            )
            named = os.path.expanduser(settings.get("core.attributesfile", ""))
            self._config = (config, rules.find(git), named, plain)
        _, found, named, _ = self._config
        xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config")
        more = [git.common_dir / "info" / "attributes", Path(named or f"{xdg}/git/attributes")]
        return "|".join([config, found.fingerprint(), *map(_identity, more)])

    def _plain(self, own: PrivateIndex) -> bool:
        """True when git takes every file as it is (no attributes anywhere, no line-ending
        conversion, file modes and links as they are): then a changed file is hashed here."""
        if self._config is None or not self._config[3]:
            return False
        xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config")
        named = self._config[2] or f"{xdg}/git/attributes"
        for attributes in (own.git.common_dir / "info" / "attributes", Path(named)):
            with suppress(OSError):
                if attributes.stat().st_size:
                    return False
        pattern = ":(glob)**/.gitattributes"
        listed = own.git.run("ls-files", "-z", "--", pattern, index=own.path, config=INDEX).stdout
        return not listed


def _said(failed: str) -> str:
    """Why a snapshot stat'ed every file, for watchman's failure ``failed`` (its own words may
    name it already)."""
    return failed if failed.startswith("watchman") else f"watchman: {failed}"


def _config_identity(git: Git) -> str:
    """Which config files git reads, and their identities (another value: read them again)."""
    home = os.path.expanduser("~")
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    named = [
        git.common_dir / "config",
        git.git_dir / "config.worktree",
        Path(home, ".gitconfig"),
        Path(xdg, "git", "config"),
        Path("/etc/gitconfig"),
        *(
            Path(os.environ[v])
            for v in ("GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM")
            if v in os.environ
        ),
    ]
    env = sorted(f"{k}={v}" for k, v in os.environ.items() if k.startswith("GIT_CONFIG"))
    return "|".join([*map(_identity, named), *env])


def _identity(path: Path) -> str:
    try:
        info = path.stat()
    except OSError:
        return f"{path}:-"
    return f"{path}:{info.st_mtime_ns}:{info.st_size}:{info.st_ino}"


def _folders_of(parts: list[bytes]) -> Iterator[bytes]:
    for end in range(1, len(parts)):
        yield b"/".join(parts[:end])


def _files_git_takes(git: Git, kept_out: KeptOut, paths: list[bytes], max_files: int) -> int:
    """How many of the changed ``paths`` are files or links that ``git add -A`` into an empty
    index takes (there now, not folders, not in convgit's store, not ignored): what a snapshot
    patched from the base would hash. The ignore rules are asked (``git check-ignore``, no file
    read) only when the others pass ``max_files``."""
    root = os.fsencode(git.root)
    found = []
    for path in paths:
        if kept_out.above(path) is not None:
            continue
        info = lstat(os.path.join(root, path))
        if info is not None and not stat.S_ISDIR(info.st_mode):
            found.append(path)
    if len(found) <= max_files:
        return len(found)
    done = git.run(
        "check-ignore", "--no-index", "--stdin", "-z",
        stdin=b"\0".join(found) + b"\0", check=False,
    )  # fmt: skip
    if done.returncode not in (0, 1):  # 1: none is ignored
        raise _Full(f"git check-ignore failed: {git_words(done.stderr, done.returncode)}")
    ignored = {path for path in done.stdout.split(b"\0") if path}
    return sum(1 for path in found if path not in ignored)


def _inside_repository(root: bytes, parts: list[bytes], left_out: dict[bytes, str]) -> bool | None:
    """True for a path that is a nested repository the last snapshot left out, or inside one,
    that is still one (nothing of it is in a snapshot); False for any other path with a
    ``.git`` part (a new repository, one gone); None for the rest."""
    if b".git" not in parts:
        for folder in (*_folders_of(parts), b"/".join(parts)):
            if left_out.get(folder) == _NESTED:
                return os.path.lexists(os.path.join(root, folder, b".git"))
        return None
    folder = b"/".join(parts[: parts.index(b".git")])
    return left_out.get(folder) == _NESTED and os.path.lexists(os.path.join(root, folder, b".git"))


# -- writing trees ---------------------------------------------------------------------------


class _Node:
    """The changes below one folder: ``children`` by name (None: taken out; (mode, id): an
    entry set; a node: changes below a folder); ``fresh``: the old folder is not built on."""

    __slots__ = ("children", "fresh")

    def __init__(self, fresh: bool = False) -> None:
        self.children: dict[bytes, _Node | tuple[int, str] | None] = {}
        self.fresh = fresh


class _Rewrite:
    """A new tree from an old one and the changes below it: only the trees on changed paths
    are read and written."""

    def __init__(self, objects: Objects, store: _Store, counts: dict[str, int]) -> None:
        self.objects = objects
        self.store = store
        self.counts = counts

    def apply(
        self,
        tree_id: str,
        deleted: Iterable[bytes],
        entries: Iterable[tuple[bytes, int, str]],
    ) -> tuple[str, int]:
        """The new tree's id, and how many more files it holds than ``tree_id``."""
        top = _Node()
        for path in deleted:
            *folders, name = path.split(b"/")
            node = top
            for part in folders:
                child = node.children.get(part)
                if child is None and part in node.children:
                    break  # the folder itself is taken out
                if not isinstance(child, _Node):
                    child = node.children[part] = _Node()
                node = child
            else:
                node.children[name] = None
        for path, mode, oid in entries:
            *folders, name = path.split(b"/")
            node = top
            for part in folders:
                child = node.children.get(part)
                if not isinstance(child, _Node):
                    # taken out (and now a folder again), or a file there: a folder anew
                    fresh = part in node.children or child is not None
                    child = node.children[part] = _Node(fresh=fresh)
                node = child
            node.children[name] = (mode, oid)
        found, delta = self._write(top, tree_id)
        return found or self.store.put("tree", b""), delta

    def _write(self, node: _Node, old: str | None) -> tuple[str | None, int]:
        entries: dict[bytes, tuple[int, str]] = {}
        if old is not None:
            entries = {os.fsencode(n): (m, o) for n, m, o in self.objects.tree(old)}
        delta = 0
        for name, change in node.children.items():
            before = entries.pop(name, None)
            if change is None:
                delta -= self._count(before)
                continue
            if isinstance(change, tuple):
                entries[name] = change
                delta += 1 - self._count(before)
                continue
            folder = before is not None and before[0] == TREE
            if change.fresh:  # the folder was taken out, and is here again
                delta -= self._count(before)
                made, more = self._write(change, None)
            elif folder:
                assert before is not None
                made, more = self._write(change, before[1])
            else:
                made, more = self._write(change, None)
                if before is not None:
                    if not made:  # a file stays a file: nothing below it is
                        entries[name] = before
                        continue
                    delta -= 1  # a file replaced by a folder
            delta += more
            if made:
                entries[name] = (TREE, made)
        if not entries:
            return None, delta
        order = sorted(entries, key=lambda n: n + b"/" if entries[n][0] == TREE else n)
        made = self.store.put("tree", _tree_bytes(entries, order))
        self.objects.known(made, [(os.fsdecode(n), *entries[n]) for n in order])
        return made, delta

    def _count(self, entry: tuple[int, str] | None) -> int:
        """How many files ``entry`` is (a folder: every file below it)."""
        if entry is None:
            return 0
        mode, oid = entry
        if mode != TREE:
            return 1
        if oid not in self.counts:
            self.counts[oid] = sum(self._count((m, o)) for _, m, o in self.objects.tree(oid))
        return self.counts[oid]


class _Store:
    """Loose objects written as git writes them (zlib, a temporary file linked into place;
    an object already there is left as it is)."""

    def __init__(self, git: Git) -> None:
        self.folder = git.common_dir / "objects"
        self.hash = "sha256" if git.hash_len == 32 else "sha1"

    def put(self, kind: str, content: bytes) -> str:
        """Write ``content`` as an object of ``kind``; its id."""
        data = b"%s %d\0" % (kind.encode(), len(content)) + content
        oid = hashlib.new(self.hash, data).hexdigest()
        folder = self.folder / oid[:2]
        target = folder / oid[2:]
        if target.exists():
            return oid
        folder.mkdir(exist_ok=True)
        temporary = folder / f"tmp_obj_{os.getpid()}_{oid[2:10]}"
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o444)
        try:
            os.write(fd, zlib.compress(data, 1))
        finally:
            os.close(fd)
        try:
            os.link(temporary, target)
        except FileExistsError:
            pass
        finally:
            temporary.unlink()
        return oid


def _hashed(
    store: _Store, git: Git, path: bytes, info: os.stat_result, size_cap: int
) -> tuple[bytes, int, str]:
    """A file or link git would take as it is (no attribute, filter or line ending applies),
    hashed here: (path, mode, id), as ``git add`` gives them."""
    full = os.path.join(os.fsencode(git.root), path)
    if stat.S_ISLNK(info.st_mode):
        return path, LINK, store.put("blob", os.readlink(full))
    if not stat.S_ISREG(info.st_mode):
        raise _Full(f"{os.fsdecode(path)} is neither a file nor a link")
    try:  # never through a link that took the file's place meanwhile
        fd = os.open(full, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        raise _Full(f"{os.fsdecode(path)} cannot be read ({exc.strerror})") from None
    with open(fd, "rb") as handle:
        now = os.fstat(fd)
        data = handle.read(size_cap + 1)
    if not stat.S_ISREG(now.st_mode):
        raise _Full(f"{os.fsdecode(path)} changed as it was read")
    if len(data) > size_cap:
        raise _Full("a file over the size cap changed")
    mode = EXEC if now.st_mode & stat.S_IXUSR else BLOB
    return path, mode, store.put("blob", data)


def _tree_bytes(entries: dict[bytes, tuple[int, str]], order: list[bytes]) -> bytes:
    """A tree object's content, its entries in git's ``order`` (a folder sorts as if its name
    ended in ``/``)."""
    out = bytearray()
    for name in order:
        mode, oid = entries[name]
        out += b"%o %s\0" % (mode, name) + bytes.fromhex(oid)
    return bytes(out)


__all__ = ["PATCH_LIMIT", "Base", "Patcher", "Taken", "serve", "serving", "stop_serving"]
