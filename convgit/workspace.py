"""The workspace track: git snapshots of the working tree, restore, diff and side-by-side worktrees.

With ``gitindex`` (the private index), ``restoreplan`` (checking a restore) and ``treediff``
(reading and comparing trees), this is all convgit knows of git, and it runs git's own command
line: no git library is loaded, so neither a per-turn snapshot nor a restore pays for one. It
knows commits, trees and paths, never conversations.

Promises kept by every method here:
* HEAD, the user's index, branches, tags, the stash and the user's config are never touched;
  the only refs written are ``refs/convgit/...`` (``set_ref``/``delete_ref``);
* working tree files are changed only by ``restore`` (never by a snapshot or a scan), and never
  through a symlink, outside the working tree, or inside ``.git``;
* no hook runs, nothing is signed, and no user identity is needed.

Staging goes through the git command line against a private index kept per session and worktree
(a stat cache): the tree is then git's own answer to ``git add -A``, and a snapshot after a
one-file change costs what git's own refresh costs; commits and refs are written by
``git commit-tree`` and ``git update-ref``; trees are read through one ``git cat-file --batch``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re
import stat
import struct
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Collection, Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

from convgit import codec, faults, gitindex, restoreplan, treediff, treepatch
from convgit.errors import (
    HostileSnapshotError,
    NotFoundError,
    NoWorkspaceError,
    RefusedError,
    RestoreBlockedError,
    WorkspaceError,
)
from convgit.gitindex import IndexState
from convgit.gitindex import entries as _index_entries
from convgit.restoreplan import (
    BLOB,
    EXEC,
    GITLINK,
    LEGACY_BLOB,
    LINK,
    TREE,
    Delta,
    Skipped,
    lstat,
    real_folders,
    repository_above,
)
from convgit.treediff import Entry

__all__ = [
    "AUTHOR_EMAIL",
    "AUTHOR_NAME",
    "Change",
    "HostileSnapshotError",
    "RestoreBlockedError",
    "Restored",
    "Skipped",
    "Snapshot",
    "Workspace",
    "WorkspaceError",
    "_index_entries",
    "user_env",
]

DEFAULT_SIZE_CAP = 10 * 1024 * 1024

AUTHOR_NAME = "convgit"
AUTHOR_EMAIL = "convgit@localhost"
REF_PREFIX = "refs/convgit/"
WORKTREE_MARKER = "convgit-worktree"
# `git worktree add` and `remove` read every worktree's admin folder and die on one another
# git is still writing (an empty commondir): one at a time in this process.
_WORKTREE_ADMIN = threading.Lock()

STORE_NAME = ".convgit"  # a folder of this name is a convgit store, wherever it is
STORE_REASON = "convgit's store"


# Variables that point git at another repository, index or object store, or change what a
# pathspec means: they are honoured by discover() and never leak into the commands we run.
_LOCAL_GIT_VARS = frozenset(
    [
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_INDEX_FILE",
        "GIT_INDEX_VERSION",
        "GIT_COMMON_DIR",
        "GIT_OBJECT_DIRECTORY",
        "GIT_ALTERNATE_OBJECT_DIRECTORIES",
        "GIT_IMPLICIT_WORK_TREE",
        "GIT_GRAFT_FILE",
        "GIT_NO_REPLACE_OBJECTS",
        "GIT_REPLACE_REF_BASE",
        "GIT_PREFIX",
        "GIT_SHALLOW_FILE",
        "GIT_NAMESPACE",
        "GIT_CEILING_DIRECTORIES",
        "GIT_DISCOVERY_ACROSS_FILESYSTEM",
        "GIT_QUARANTINE_PATH",
        "GIT_OPTIONAL_LOCKS",
        "GIT_LITERAL_PATHSPECS",
        "GIT_GLOB_PATHSPECS",
        "GIT_NOGLOB_PATHSPECS",
        "GIT_ICASE_PATHSPECS",
        "GIT_REFLOG_ACTION",
        "GIT_EXTERNAL_DIFF",
    ]
)

# Settings that would make our private index differ from "git add -A into an empty index"
# or run user code: hooks (post-index-change...), split and sparse indexes.
# the user's hooks never run: not through hooksPath, not as an fsmonitor daemon command
_SAFE_CONFIG = ("core.hooksPath=/dev/null", "core.fsmonitor=false")
# commit-tree with no signature, no encoding header and convgit's own identity.
_COMMIT_CONFIG = (*_SAFE_CONFIG, "i18n.commitEncoding=UTF-8")
_IDENTITY = {
    f"GIT_{who}_{what}": value
    for who in ("AUTHOR", "COMMITTER")
    for what, value in (("NAME", AUTHOR_NAME), ("EMAIL", AUTHOR_EMAIL))
}
# git's check_refname_format, for the refs convgit writes (a component may not start with a
# dot or end with .lock; no "..", "@{", control characters, space or ~^:?*[\ anywhere).
_BAD_REF = re.compile(r"(^|/)\.|\.lock(/|$)|\.\.|@\{|[\x00-\x20\x7f~^:?*\[\\]|//|/$|\.$|^@$")
_WHOLE_INDEX_CONFIG = (
    *_SAFE_CONFIG,
    "core.splitIndex=false",
    "index.sparse=false",
    "core.sparseCheckout=false",
    # git's untracked cache, kept in the private index: a folder whose mtime has not moved is
    # not read again, so finding new files costs a stat per folder, not a readdir
    "core.untrackedCache=true",
    "status.showUntrackedFiles=all",  # the mode the untracked cache is kept for
    # an index that says where its extensions start: convgit reads them from the file's tail
    "index.recordEndOfIndexEntries=true",
)
# The private index is split: git rewrites only what changed (a small file) rather than the
# whole index on every update, keeping the rest in ``sharedindex.<id>`` in the git dir. git
# never deletes shared indexes for convgit (the user's may be old but in use); convgit deletes
# the ones it made when its index moves on (``_drop_shared``).
_INDEX_CONFIG = (
    *_WHOLE_INDEX_CONFIG,  # the last value of a setting wins
    "core.splitIndex=true",
    "splitIndex.sharedIndexExpire=never",
    "splitIndex.maxPercentChange=20",  # git's default: a new shared index only now and then
)

# What differs between the files and the private index, untracked files one by one.
_STATUS = (
    "status", "--porcelain=v2", "-z", "--untracked-files=all", "--no-renames",
    "--ignore-submodules=dirty",
)  # fmt: skip
# Tracked files that the ignore rules match (run with convgit's private index).
_LIST_IGNORED = ("ls-files", "-z", "--cached", "--ignored", "--exclude-standard")


@dataclass(frozen=True)
class Snapshot:
    """A snapshot commit. ``reused`` is true when the parent had the same tree and was returned;
    ``written`` is about how many objects the snapshot added to the repository."""

    commit: str
    tree: str
    files: int
    skipped: tuple[Skipped, ...]
    reused: bool
    written: int = 0


@dataclass(frozen=True)
class Change:
    """One path that differs from side a to side b: added, modified, deleted or typechange
    (or "left alone", with ``reason``, where one side does not know the file's content)."""

    path: str
    status: str
    reason: str = ""


class Restored(list[Change]):
    """The changes a restore made (or would make), plus the paths it left alone on purpose
    (ignored or skipped files that differ from the snapshot, paths inside nested repositories,
    files the snapshot does not account for, convgit's store) and, for an undo, the files it
    replaced that had changed since the restore it undid."""

    def __init__(
        self,
        changes: Sequence[Change],
        left_alone: Sequence[Skipped] = (),
        replaced: Sequence[str] = (),
    ) -> None:
        super().__init__(changes)
        self.left_alone: tuple[Skipped, ...] = tuple(left_alone)
        self.replaced: tuple[str, ...] = tuple(replaced)


def _mib(size: int) -> str:
    return f"{size / (1024 * 1024):.1f} MiB"


def _kind(mode: int) -> int:
    return mode & 0o170000


def _signal_name(signum: int) -> str:
    import signal  # only a git killed by a signal needs it

    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def _delete_tree(path: Path) -> None:
    """Delete ``path`` and everything below it (symlinks themselves, never what they point
    at), making folders a command left read-only writable on the way."""

    def writable_and_retry(function: Callable[..., object], name: str, _exc: object) -> None:
        parent = os.path.dirname(name)
        with suppress(OSError):
            os.chmod(parent, stat.S_IRWXU)
            if not os.path.islink(name) and os.path.isdir(name):
                os.chmod(name, stat.S_IRWXU)
        function(name)

    if os.path.islink(path) or not path.is_dir():
        path.unlink()
        return
    import shutil  # only removing a worktree needs it

    if sys.version_info >= (3, 12):
        shutil.rmtree(path, onexc=writable_and_retry)
    else:
        shutil.rmtree(path, onerror=writable_and_retry)


def _git_words(err: bytes, code: int) -> str:
    """git's reason in one line: its fatal line (else its last line), ending in a full stop."""
    lines = [line.strip() for line in os.fsdecode(err).splitlines() if line.strip()]
    fatal = [line for line in lines if line.startswith("fatal:")]
    words = (fatal or lines or [f"exit status {code}"])[0 if fatal else -1]
    words = words.removeprefix("fatal: ").removeprefix("error: ")
    return words if words.endswith(".") else words + "."


def _git_env() -> dict[str, str]:
    env = {
        name: value
        for name, value in os.environ.items()
        if name not in _LOCAL_GIT_VARS and not name.startswith(("GIT_AUTHOR_", "GIT_COMMITTER_"))
    }
    env["LC_ALL"] = "C"  # stable messages: a few are parsed, all are shown in English
    env["GIT_TERMINAL_PROMPT"] = "0"
    return env


def user_env() -> dict[str, str]:
    """The environment for a user's command run in a worktree convgit made: the caller's,
    without the variables that would point git at another repository, index or object store."""
    return {name: value for name, value in os.environ.items() if name not in _LOCAL_GIT_VARS}


class Workspace:
    """A git working tree seen by convgit: ``root`` (top level), ``git_dir`` (this worktree's
    git dir) and ``common_dir`` (shared; convgit keeps its store in ``common_dir / "convgit"``)."""

    def __init__(
        self, root: Path, git_dir: Path, common_dir: Path, *, object_format: str = "sha1"
    ) -> None:
        self.root = root
        self.git_dir = git_dir
        self.common_dir = common_dir
        self.object_format = object_format
        self._hash_len = 32 if object_format == "sha256" else 20
        self._env = _git_env()
        self._stores: tuple[bytes, ...] = ()

    def keep_out(self, store: Path) -> None:
        """Never snapshot or restore ``store`` (convgit's own folder) when it is inside the
        working tree; folders named ``.convgit`` are kept out wherever they are."""
        store = Path(store).resolve()
        if any(store.is_relative_to(git.resolve()) for git in (self.git_dir, self.common_dir)):
            return  # git never stages its own folder
        try:
            inside = store.relative_to(self.root.resolve())
        except ValueError:
            return
        if inside.parts:
            self._stores = (*self._stores, os.fsencode(inside.as_posix()))

    def store_above(self, path: bytes) -> bytes | None:
        """The store folder (relative to the root) that holds ``path``, if any."""
        for store in self._stores:
            if path.startswith(store + b"/"):
                return store
        if STORE_NAME.encode() in path:
            parts = path.split(b"/")
            for depth, part in enumerate(parts[:-1]):
                if part == STORE_NAME.encode():
                    return b"/".join(parts[: depth + 1])
        return None

    def __repr__(self) -> str:
        return f"Workspace(root={str(self.root)!r})"

    # -- finding the repository --

    @classmethod
    def discover(cls, start: Path) -> Workspace | None:
        """The worktree containing ``start``, found as git finds it (GIT_DIR, GIT_WORK_TREE and
        core.worktree honoured); None outside a repository, in a bare one or inside ``.git``.
        Refuses (RefusedError) a worktree whose root is the home folder or the file system root."""
        start = Path(start).absolute()
        cwd = start if start.is_dir() else start.parent
        if not cwd.is_dir():
            return None
        env = {k: v for k, v in os.environ.items() if k != "GIT_INDEX_FILE"}
        env["LC_ALL"] = "C"
        args = ["--is-bare-repository", "--git-dir", "--git-common-dir", "--show-object-format"]
        try:
            proc = subprocess.run(
                ["git", "rev-parse", "--path-format=absolute", *args, "--show-toplevel"],
                cwd=cwd,
                env=env,
                capture_output=True,
                check=False,
            )
        except FileNotFoundError:
            raise NoWorkspaceError(
                "git is not installed, and convgit needs it for snapshots.", hint="install git"
            ) from None
        except NotADirectoryError:
            return None
        lines = os.fsdecode(proc.stdout).splitlines()
        error = os.fsdecode(proc.stderr).strip()
        if "dubious ownership" in error:
            raise RefusedError(
                f"git refuses to work in {cwd}: the repository belongs to another user.",
                hint="see `git config --global --add safe.directory`",
            )
        if proc.returncode != 0 or len(lines) != 5 or lines[0] == "true":
            return None
        root = Path(lines[4])
        home = Path(os.path.expanduser("~")).resolve()
        if root.resolve() in (home, Path(root.anchor)):
            where = "your home folder" if root.resolve() == home else "the file system root"
            raise RefusedError(
                f"The git repository at {root} is {where}; convgit will not snapshot it.",
                hint="run convgit inside a project's own repository",
            )
        return cls(root, Path(lines[1]), Path(lines[2]), object_format=lines[3])

    # -- running git --

    def _git(
        self,
        *args: str,
        index: Path | None = None,
        config: Sequence[str] = _SAFE_CONFIG,
        stdin: bytes | None = None,
        check: bool = True,
        env: dict[str, str] | None = None,
    ) -> subprocess.CompletedProcess[bytes]:
        proc = self._spawn(*args, index=index, config=config, stdin=stdin is not None, env=env)
        out, err = proc.communicate(stdin)
        return self._finish(proc, args[0], out, err, check=check)

    def _spawn(
        self,
        *args: str,
        index: Path | None = None,
        config: Sequence[str] = _SAFE_CONFIG,
        stdin: bool = False,
        env: dict[str, str] | None = None,
    ) -> subprocess.Popen[bytes]:
        """Start git on this worktree: explicit git dir and work tree, our environment only
        (or ``env``), GIT_INDEX_FILE set to ``index`` (convgit's private index) or unset."""
        env = self._env if env is None else env
        if index is not None:
            env = {**env, "GIT_INDEX_FILE": str(index)}
        cmd = ["git", f"--git-dir={self.git_dir}", f"--work-tree={self.root}"]
        for setting in config:
            cmd += ["-c", setting]
        return subprocess.Popen(
            [*cmd, *args],
            cwd=self.root,
            env=env,
            stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )

    @staticmethod
    def _finish(
        proc: subprocess.Popen[bytes], verb: str, out: bytes, err: bytes, *, check: bool = True
    ) -> subprocess.CompletedProcess[bytes]:
        done = subprocess.CompletedProcess(proc.args, proc.wait(), out, err)
        if check and done.returncode != 0:
            code = done.returncode
            if code < 0 and not err.strip():
                raise WorkspaceError(f"git {verb} failed: killed by {_signal_name(-code)}.")
            raise WorkspaceError(f"git {verb} failed: {_git_words(err, code)}")
        return done

    def git(self, *args: str, stdin: bytes | None = None) -> bytes:
        """git's output for ``args`` on this repository, with convgit's environment and safe
        settings (no hook, no user index); a failure raises ``WorkspaceError`` in git's words.
        For the git-level modules beside this one; every ref they write goes through
        ``set_ref``."""
        return self._git(*args, stdin=stdin).stdout

    def objects(self) -> treediff.Objects:
        """A reader of this repository's objects (one `git cat-file --batch`), for a ``with``."""
        return self._objects()

    def forget_index(self, index: Path) -> None:
        """Remove a private index and what is kept beside it: the next snapshot rebuilds it
        (after objects it named were rewritten, it must not trust them)."""
        with gitindex.locked(index.absolute()):
            self._forget(index.absolute())

    def _objects(self) -> treediff.Objects:
        """A reader of this repository's objects (one `git cat-file --batch`): use it in a
        ``with`` block."""
        return treediff.Objects(self._spawn("cat-file", "--batch", stdin=True), self._hash_len)

    # -- snapshots --

    def snapshot(
        self,
        index: Path,
        *,
        message: str,
        parent: str | None,
        size_cap: int = DEFAULT_SIZE_CAP,
    ) -> Snapshot:
        """Record the working tree as a commit with ``parent`` as its only parent (none when None).

        The tree is what ``git add -A`` would stage into an empty index, minus files above
        ``size_cap`` and untracked nested repositories (listed in ``skipped``); a registered
        submodule is kept as its gitlink. When the parent has the same tree, the parent is
        returned (``reused``) and no commit is made. ``index`` is convgit's private index for
        this session and worktree: created (seeded from the user's index) when missing, kept
        as a stat cache. Writes objects only: no ref, no hook, no signature, no file touched."""
        index = index.absolute()
        with gitindex.locked(index):
            tree, skipped, hashed = self._stage(index, size_cap)
            files = gitindex.entry_count(index, self._hash_len)
            if files is None:  # a split index whose cache tree git left out of date
                listed = self._git("ls-files", "-z", index=index, config=_INDEX_CONFIG).stdout
                files = listed.count(b"\0")
            state = gitindex.read_state(index)
            parents: list[str] = []
            if parent is not None:
                known_commit, _, known_tree = state.snapshot.partition(" ")
                if parent == known_commit:  # the last snapshot of this index: no need to ask git
                    commit, parent_tree = known_commit, known_tree
                else:
                    commit, parent_tree = self._commit_and_tree(parent)
                if parent_tree == tree:
                    return Snapshot(parent, tree, files, skipped, reused=True)
                parents = ["-p", commit]
            env = {**self._env, **_IDENTITY}
            proc = self._git(
                "commit-tree", "--no-gpg-sign", tree, *parents,
                config=_COMMIT_CONFIG, stdin=message.encode(), env=env,
            )  # fmt: skip
            made = os.fsdecode(proc.stdout).strip()
            gitindex.save_state(index, dataclasses.replace(state, snapshot=f"{made} {tree}"))
        # a blob per file git hashed, and about two trees and a commit
        return Snapshot(made, tree, files, skipped, reused=False, written=hashed + 3)

    def _commit_and_tree(self, rev: str) -> tuple[str, str]:
        """The full id of commit ``rev`` and of its tree; NotFoundError when it is no commit."""
        if rev.startswith("-"):
            raise NotFoundError(f"There is no commit {rev!r} in this repository.")
        proc = self._git("rev-parse", "--verify", f"{rev}^{{commit}}", check=False)
        commit = os.fsdecode(proc.stdout).strip()
        if proc.returncode != 0 or not commit:
            raise NotFoundError(f"There is no commit {rev!r} in this repository.")
        tree = self._git("rev-parse", "--verify", f"{commit}^{{tree}}")
        return commit, os.fsdecode(tree.stdout).strip()

    def scan(
        self, index: Path, *, size_cap: int = DEFAULT_SIZE_CAP
    ) -> tuple[str, tuple[Skipped, ...]]:
        """The tree id of the working tree right now (as ``snapshot`` would record it; objects
        are written, no commit is made) and the paths left out."""
        index = index.absolute()
        with gitindex.locked(index):
            tree, skipped, _ = self._stage(index, size_cap)
            return tree, skipped

    def _stage(self, index: Path, size_cap: int) -> tuple[str, tuple[Skipped, ...], int]:
        """The tree of the working tree, the paths left out, and how many paths git hashed."""
        try:
            return self._stage_once(index, size_cap)
        except WorkspaceError:
            # The private index is only a cache: if git chokes on it, rebuild it and try again.
            self._forget(index)
            return self._stage_once(index, size_cap)

    def _stage_once(self, index: Path, size_cap: int) -> tuple[str, tuple[Skipped, ...], int]:
        state = self._ensure_index(index, size_cap)
        # The shared indexes git made for this index as it went (it may split afresh on any
        # write): the ones it no longer builds on at the end are deleted. Never by listing the
        # folder: another session's git may be making its own there right now.
        made = {state.shared}

        def track() -> None:
            made.add(gitindex.shared_index(index, self._hash_len) or "")

        track()
        status = self._spawn(*_STATUS, index=index, config=_INDEX_CONFIG)
        lister: subprocess.Popen[bytes] | None = None
        try:
            # Ignore rules do not apply to what an index tracks, but `git add -A` into an empty
            # index never takes an ignored file: when the rules may have moved, list the tracked
            # files they now ignore (beside `git status`, on another core) and drop them.
            ignores = self._ignore_fingerprint()
            if ignores != state.ignores:
                lister = self._spawn(*_LIST_IGNORED, index=index, config=_INDEX_CONFIG)
            out, err = status.communicate()
            found = self._finish(status, "status", out, err)
            updates, drops, skipped, nested = self._survey(found, size_cap)
            track()
            if nested:  # what we tracked inside a new repository or convgit's store goes
                pathspecs = [b":(literal)" + folder + b"/" for folder in sorted(nested)]
                inside = self._git(
                    "ls-files", "-z", "--", *map(os.fsdecode, pathspecs),
                    index=index, config=_INDEX_CONFIG,
                ).stdout  # fmt: skip
                drops += [path for path in inside.split(b"\0") if path]
            if lister is None and any(
                os.path.basename(p) == b".gitignore" for p in (*updates, *drops)
            ):
                lister = self._spawn(*_LIST_IGNORED, index=index, config=_INDEX_CONFIG)
            ignored: set[bytes] = set()
            if lister is not None:
                out, err = lister.communicate()
                listed = self._finish(lister, "ls-files", out, err).stdout.split(b"\0")
                ignored = {path for path in listed if path}
        finally:
            for running in (status, lister):
                if running is not None and running.poll() is None:
                    running.kill()
                    running.wait()
        if ignored:
            drops += sorted(ignored)
            updates = [p for p in updates if p not in ignored]
            # an ignored file is outside the snapshots' view, whatever its size: not "skipped"
            skipped = [s for s in skipped if os.fsencode(s.path) not in ignored]
        tree = state.tree
        if updates or drops:
            # stale if we stop midway
            gitindex.save_state(index, dataclasses.replace(state, tree=None, ignores=""))
            tree = None
            if drops:
                self._git(
                    "update-index", "-z", "--force-remove", "--stdin",
                    index=index, config=_INDEX_CONFIG, stdin=b"\0".join(drops) + b"\0",
                )  # fmt: skip
                track()
            if updates:
                self._git(
                    "update-index", "-z", "--add", "--remove", "--replace", "--stdin",
                    index=index, config=_INDEX_CONFIG, stdin=b"\0".join(updates) + b"\0",
                )  # fmt: skip
                track()
        if tree is None:
            proc = self._git("write-tree", index=index, config=_INDEX_CONFIG)
            tree = os.fsdecode(proc.stdout).strip()
        shared = gitindex.shared_index(index, self._hash_len) or ""
        for old in made - {shared, ""}:
            self._drop_shared(old, index)
        fresh = dataclasses.replace(
            state,
            cap=size_cap,
            tree=tree,
            ignores=ignores,
            checked=gitindex.identity(index),
            shared=shared,
            shared_checked=gitindex.identity(self._shared_path(shared)) if shared else "",
        )
        if fresh != state:
            gitindex.save_state(index, fresh)
        return tree, tuple(sorted(skipped, key=lambda s: s.path)), len(updates)

    def _ignore_fingerprint(self) -> str:
        """Identity (path, mtime, size) of the ignore files that live outside the worktree."""
        configured = os.fsdecode(
            self._git("config", "--get", "core.excludesFile", check=False).stdout
        ).strip()
        if configured:
            excludes = Path(os.path.expanduser(str(configured)))
        else:
            xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config")
            excludes = Path(xdg, "git", "ignore")
        parts = []
        for path in (self.common_dir / "info" / "exclude", excludes):
            try:
                info = path.stat()
                parts.append(f"{path}:{info.st_mtime_ns}:{info.st_size}")
            except OSError:
                parts.append(f"{path}:-")
        return "|".join(parts)

    def _survey(
        self, proc: subprocess.CompletedProcess[bytes], size_cap: int
    ) -> tuple[list[bytes], list[bytes], list[Skipped], set[bytes]]:
        """From ``git status`` output against the private index: the paths to stage, the
        tracked paths to drop (gone, now too big or unreadable), the paths left out, and the
        folders whose tracked files must all go: nested repositories (`git init` run inside)
        and convgit's store."""
        updates: list[bytes] = []
        drops: list[bytes] = []
        skipped: list[Skipped] = []
        nested: set[bytes] = set()
        stores: set[bytes] = set()
        root = os.fsencode(self.root)
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
            store = self.store_above(path)
            if store is not None:
                stores.add(store)
                continue
            if path.endswith(b"/"):
                skipped.append(Skipped(name.rstrip("/"), "nested repository"))
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
                    skipped.append(Skipped(name, reason))
                    if kind != b"?":
                        drops.append(path)
                    continue
            updates.append(path)
        for line in os.fsdecode(proc.stderr).splitlines():
            if "could not open directory" in line and "'" in line:
                skipped.append(Skipped(line.split("'")[1].rstrip("/"), "unreadable"))
        skipped += [Skipped(os.fsdecode(folder), "nested repository") for folder in nested]
        skipped += [Skipped(os.fsdecode(folder), STORE_REASON) for folder in stores]
        return updates, drops, skipped, nested | stores

    # -- the private index --

    def _ensure_index(self, index: Path, size_cap: int) -> IndexState:
        """Create the private index when missing, seeded with a copy of the user's index (its
        stat data spares rehashing every file); then make sure it holds nothing that would make
        the tree differ from ``git add -A``: no skip-worktree or assume-unchanged entry (git
        would trust them blindly), no file above the cap."""
        state = gitindex.read_state(index)
        if index.exists() and not self._intact(index, state):
            self._forget(index)  # torn by a crash: git would half-read it without a word
        if not index.exists():
            self._forget(index)
            user_index = self.git_dir / "index"
            if user_index.exists():
                seed = Path(f"{index}.seed")
                import shutil

                shutil.copy2(user_index, seed)  # keeps the mtime: git's racy-entry check needs it
                os.replace(seed, index)
        elif state.cap == size_cap:
            return state
        if index.exists():
            self._clean_index(index, size_cap)
        state = IndexState(size_cap, None, "")  # "": ignore rules are checked on first use
        gitindex.save_state(index, state)
        return state

    def _intact(self, index: Path, state: IndexState) -> bool:
        """True when the index file, and the shared index it builds on, are whole (their
        checksums are recomputed only when they are not the files convgit last saw whole)."""
        if state.checked != gitindex.identity(index) and not gitindex.intact(index, self._hash_len):
            return False
        shared = gitindex.shared_index(index, self._hash_len)
        if shared is None:
            return True
        path = self._shared_path(shared)
        return state.shared_checked == gitindex.identity(path) or gitindex.intact(
            path, self._hash_len
        )

    def _shared_path(self, shared: str) -> Path:
        """Where git keeps the shared index ``shared`` of a split private index."""
        return self.git_dir / f"sharedindex.{shared}"

    def _forget(self, index: Path) -> None:
        """Remove the private index, what is kept beside it and the shared index git made
        for it: the next use rebuilds it."""
        shared = gitindex.read_state(index).shared
        gitindex.forget(index)
        if shared:
            self._drop_shared(shared, index)

    def _drop_shared(self, shared: str, index: Path) -> None:
        """Delete ``sharedindex.<shared>``, which git made for ``index`` before it moved on,
        unless the user's index or another private index beside it builds on it."""
        if gitindex.shared_index(self.git_dir / "index", self._hash_len) == shared:
            return
        for state in index.parent.glob("*.state"):
            other = Path(str(state)[: -len(".state")])
            if other != index and gitindex.read_state(other).shared == shared:
                return
        with suppress(OSError):
            self._shared_path(shared).unlink()

    def _clean_index(self, index: Path, size_cap: int) -> None:
        entries = self._read_entries(index, size_cap)
        if entries is None and gitindex.shared_index(index, self._hash_len) is not None:
            # A split index (the user's copy or ours): git writes it whole, then we read it.
            proc = self._git(
                "update-index", "--no-split-index",
                index=index, config=_WHOLE_INDEX_CONFIG, check=False,
            )  # fmt: skip
            entries = self._read_entries(index, size_cap) if proc.returncode == 0 else None
        if entries is None:
            # A sparse or unreadable index: start empty, git rehashes every file once.
            index.unlink()
            return
        zero = "0" * (2 * self._hash_len)
        lines: list[bytes] = []
        for path, mode, size, oid, flags in entries:
            if flags & 0x3000:
                continue  # a conflict stage: staging the path resolves it
            if _kind(mode) == 0o100000 and size > size_cap:
                lines.append(f"0 {zero}\t".encode() + path)
            elif flags & 0x40008000:
                lines.append(f"{mode:o} {oid.hex()}\t".encode() + path)
        if self._stores or os.path.lexists(self.root / STORE_NAME):
            # the user may have committed convgit's store: a snapshot never holds it
            stores = [f":(literal){os.fsdecode(store)}/" for store in self._stores]
            listed = self._git(
                "ls-files", "-z", "--", *stores, f":(glob)**/{STORE_NAME}/**",
                index=index, config=_WHOLE_INDEX_CONFIG,
            ).stdout  # fmt: skip
            lines += [f"0 {zero}\t".encode() + path for path in listed.split(b"\0") if path]
        if lines:
            self._set_index_entries(index, lines)

    def _read_entries(
        self, index: Path, size_cap: int
    ) -> list[tuple[bytes, int, int, bytes, int]] | None:
        try:
            return list(_index_entries(index.read_bytes(), self._hash_len, above=size_cap))
        except (ValueError, IndexError, struct.error):
            return None

    def _set_index_entries(
        self, index: Path, lines: list[bytes], config: Sequence[str] = _INDEX_CONFIG
    ) -> None:
        """Write ``mode oid<TAB>path`` lines into the index (mode 0 removes the path)."""
        self._git(
            "update-index", "-z", "--add", "--replace", "--index-info",
            index=index, config=config, stdin=b"\0".join(lines) + b"\0",
        )  # fmt: skip

    # -- refs and objects --

    def set_ref(self, ref: str, commit: str) -> None:
        """Point ``ref`` (under refs/convgit/) at ``commit``, which keeps it safe from gc."""
        self._check_ref(ref)
        if commit.startswith("-"):
            raise NotFoundError(f"There is no commit {commit!r} in this repository.")
        # git peels and checks the target: only a commit is accepted
        proc = self._git("update-ref", ref, f"{commit}^{{commit}}", check=False)
        if proc.returncode != 0:
            self._commit_and_tree(commit)  # NotFoundError when that is why
            words = os.fsdecode(proc.stderr).strip()
            raise WorkspaceError(f"git update-ref failed: {words}")

    def delete_ref(self, ref: str) -> None:
        """Remove ``ref`` (under refs/convgit/); nothing happens when it does not exist."""
        self._check_ref(ref)
        self._git("update-ref", "-d", ref)

    def _check_ref(self, ref: str) -> None:
        if not ref.startswith(REF_PREFIX) or _BAD_REF.search(ref):
            raise RefusedError(f"convgit only writes refs under {REF_PREFIX}, not {ref!r}.")

    def missing(self, commits: list[str]) -> list[str]:
        """The ``commits`` (full ids) that are not in the repository."""
        ids = [c for c in commits if c and all(x in "0123456789abcdef" for x in c)]
        proc = self._git("cat-file", "--batch-check", stdin="".join(f"{c}\n" for c in ids).encode())
        answers = os.fsdecode(proc.stdout).splitlines()
        return [c for c, line in zip(ids, answers, strict=False) if line.endswith(" missing")]

    def _resolve(self, rev: str, kind: str) -> str:
        """The id of the commit or tree (``kind``) that ``rev`` names; NotFoundError."""
        with self._objects() as objects:
            return objects.peel(rev, kind)

    def tree_of(self, commit: str) -> str:
        """The tree id of a commit (a tree id is returned as it is)."""
        return self._resolve(commit, "tree")

    def changes(self, a: str, b: str) -> list[Change]:
        """File-level differences from a to b (commit or tree ids), sorted by path. A file
        replaced by a folder is a deletion plus additions; file <-> symlink is a typechange."""
        with self._objects() as objects:
            deltas = treediff.diff(objects, objects.peel(a, "tree"), objects.peel(b, "tree"))
        return [Change(d.path, d.status) for d in deltas]

    def deltas(self, pairs: Sequence[tuple[str | None, str]]) -> list[list[Delta]]:
        """``changes`` with each side's (mode, id), for each pair (a, b) of commit or tree ids
        (a None: from nothing), read through one ``git cat-file``."""
        with self._objects() as objects:
            return [
                treediff.diff(
                    objects, None if a is None else objects.peel(a, "tree"), objects.peel(b, "tree")
                )
                for a, b in pairs
            ]

    def patches(self, pairs: Sequence[tuple[str, str]]) -> list[dict[str, str]]:
        """git's unified diff of every changed path (path -> patch) for each (old tree id, new
        tree id) pair, from one ``git diff-tree``; binary files say so in git's words."""
        if not pairs:
            return []
        done = self._git(
            *treepatch.DIFF_TREE,
            config=(*_SAFE_CONFIG, "core.quotePath=false"),
            stdin=treepatch.stdin(pairs),
        )
        return treepatch.split(done.stdout, pairs)

    def blobs(self, oids: Collection[str], cap: int) -> dict[str, bytes | None]:
        """The content of each blob, None for one over ``cap`` bytes or missing."""
        found: dict[str, bytes | None] = {}
        with self._objects() as objects:
            for oid in oids:
                read = objects.read(oid)
                ok = read is not None and read[1] == "blob" and len(read[2]) <= cap
                found[oid] = read[2] if ok and read is not None else None
        return found

    def _ignore_case(self) -> bool:
        proc = self._git("config", "--type=bool", "--get", "core.ignorecase", check=False)
        return proc.stdout.strip() == b"true"

    # -- restore --

    def restore(
        self,
        target: str,
        *,
        index: Path,
        paths: list[str] | None = None,
        dry_run: bool = False,
        before_apply: Callable[[list[Change]], None] | None = None,
        exact_from: str | None = None,
        target_skipped: Mapping[str, str] | None = None,
    ) -> Restored:
        """Bring the working tree (or only ``paths``: files or folders relative to the root) to
        the tree of commit ``target``, and return the changes (current -> target).

        "Current" is the view of ``index``: the caller takes a safety snapshot with the same
        index just before. Files are changed, recreated and removed so that the tracked and
        untracked-not-ignored files equal the snapshot; files outside that view (ignored,
        skipped by the size cap, inside nested repositories) are never overwritten or deleted
        and are listed in ``left_alone``. The target tree is validated first: a hostile tree
        (``..``, ``.git``, duplicate names, a path below a symlink or a file that is not part of
        the view) is refused (RefusedError) before anything changes. ``dry_run`` changes nothing.
        ``before_apply`` is called with the planned changes just before the first file changes
        (the caller records the restore there, so a crash half-way can be undone).
        ``exact_from``: undoing a restore that went to that commit, with ``target`` its safety
        snapshot made by ``preserve``: the files that restore changed are compared and written
        byte for byte, bypassing git's filters and line-ending conversion; the files that
        changed since that restore are listed in ``replaced``.

        A file absent from the target is deleted only when the target accounts for it: not
        when the snapshot left that path out (``target_skipped``: path -> reason, for files
        over the size cap or unreadable then, nested repositories), nor when the target's own
        ignore rules match it (an emptied .gitignore let the current state take it in).
        Nothing inside convgit's store is ever written or deleted.
        """
        index = index.absolute()
        with self._objects() as objects:
            target_tree = objects.peel(target, "tree")
            with gitindex.locked(index):
                state = gitindex.read_state(index)
                current_tree = state.tree if index.exists() else None
                if current_tree is None:  # no snapshot since the files last changed here
                    current_tree, _, _ = self._stage(index, state.cap or DEFAULT_SIZE_CAP)
                deltas = treediff.diff(
                    objects,
                    current_tree,
                    target_tree,
                    validate=True,
                    ignore_case=self._ignore_case(),
                )
                exact: set[str] = set()
                created: list[str] = []
                if exact_from is not None:
                    exact, created = self._undone(objects, exact_from, target_tree)
                    deltas = self._exact_deltas(objects, deltas, exact, current_tree, target_tree)
                if paths is not None:
                    trees = (current_tree, target_tree)
                    deltas = restoreplan.select(
                        deltas, paths, lambda p: any(objects.lookup(t, p) for t in trees)
                    )
                ours = [d for d in deltas if self.store_above(os.fsencode(d.path)) is not None]
                deltas = [d for d in deltas if d not in ours]

                def unaccounted(paths: list[str]) -> dict[str, str]:
                    return self._unaccounted(
                        objects, target_tree, current_tree, paths, target_skipped or {}
                    )

                def on_disk(delta: Delta) -> bool:
                    raw = self._raw_entry(delta.path)
                    return raw is not None and raw[:2] == delta.new

                deltas, left_alone = restoreplan.plan(
                    self.root, deltas, self._ignored, unaccounted, on_disk
                )
                if ours:
                    left_alone = sorted(
                        [
                            *left_alone,
                            *(Skipped(d.path, f"{STORE_REASON}; left alone") for d in ours),
                        ],
                        key=lambda s: s.path,
                    )
                replaced: list[str] = []
                if exact_from is not None:
                    restored_tree = objects.peel(exact_from, "tree")
                    replaced = [
                        d.path for d in deltas if objects.lookup(restored_tree, d.path) != d.old
                    ]
                changes = [Change(d.path, d.status) for d in deltas]
                if not dry_run and before_apply is not None:
                    before_apply(changes)
                if not dry_run and deltas:
                    self._apply(index, deltas, objects, exact)
                if not dry_run:
                    # a restore killed half-way may have made folders for files it never
                    # wrote: the ones left empty go with the restore
                    for path in created:
                        self._prune(path)
        return Restored(changes, left_alone, replaced)

    def _unaccounted(
        self,
        objects: treediff.Objects,
        target_tree: str,
        current_tree: str,
        paths: list[str],
        skipped: Mapping[str, str],
    ) -> dict[str, str]:
        """Why the target does not account for each of ``paths`` (files it lacks), if it
        does not: its snapshot left the path (or a folder above it) out, or its ignore rules
        match the path."""
        found: dict[str, str] = {}
        for path in paths:
            for lead in (path, *restoreplan.leading(path)):
                why = skipped.get(lead) or skipped.get(codec.shown(lead))  # records show names
                if why is not None:
                    found[path] = f"not in the snapshot: {why}"
                    break
        rest = [p for p in paths if p not in found]
        for path in self._ignored_by_tree(objects, target_tree, current_tree, rest):
            found[path] = "ignored by the snapshot's .gitignore"
        return dict(sorted(found.items()))

    def _ignored_by_tree(
        self, objects: treediff.Objects, tree: str, current_tree: str, paths: list[str]
    ) -> set[str]:
        """The ``paths`` that the .gitignore files of ``tree`` (with the rules outside the
        working tree: info/exclude, core.excludesFile) would ignore. Asks git only when a
        .gitignore on their way differs from ``current_tree``'s, which the files now obey."""
        if not paths:
            return set()
        folders = {lead for path in paths for lead in ("", *restoreplan.leading(path))}
        rules: dict[str, str] = {}
        differs = False
        for folder in sorted(folders):
            name = f"{folder}/.gitignore" if folder else ".gitignore"
            theirs = objects.lookup(tree, name)
            differs = differs or theirs != objects.lookup(current_tree, name)
            if theirs is not None and theirs[0] in (BLOB, EXEC, LEGACY_BLOB):
                rules[name] = theirs[1]
        if not differs:
            return set()
        with tempfile.TemporaryDirectory(prefix="convgit-rules-") as scratch:
            for name, oid in rules.items():
                target = Path(scratch, name)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(objects.blob(oid))
            proc = subprocess.run(
                [
                    "git", f"--git-dir={self.git_dir}", f"--work-tree={scratch}",
                    *(part for setting in _SAFE_CONFIG for part in ("-c", setting)),
                    "check-ignore", "-z", "--no-index", "--stdin",
                ],
                cwd=scratch, env=self._env, capture_output=True,
                input=b"\0".join(map(os.fsencode, paths)) + b"\0", check=False,
            )  # fmt: skip
        if proc.returncode not in (0, 1):
            raise WorkspaceError(
                f"git check-ignore failed: {_git_words(proc.stderr, proc.returncode)}"
            )
        return {os.fsdecode(p) for p in proc.stdout.split(b"\0") if p}

    # -- exact bytes for undo --

    def preserve(self, commit: str, paths: Sequence[str]) -> str:
        """``commit`` (a snapshot of the files now), or a child of it whose tree holds the exact
        bytes and exec bits on disk at ``paths`` wherever git's view of them differs: line endings
        converted on the way in (core.autocrlf, eol attributes), clean filters, and exec bits
        that core.fileMode=false does not record. A restore preserves the files it is about to
        change this way, so that undoing it (``exact_from``) gives them back byte for byte."""
        with self._objects() as objects:
            tree = objects.peel(commit, "tree")
            found: dict[str, Entry] = {}
            for path in paths:
                raw = self._raw_entry(path)
                entry = objects.lookup(tree, path) if raw is not None else None
                if raw is None or entry is None:
                    continue
                mode = BLOB if entry[0] == LEGACY_BLOB else entry[0]
                if mode in (BLOB, EXEC) and raw[:2] != (mode, entry[1]):
                    stored = self._git("hash-object", "-w", "--no-filters", "--stdin", stdin=raw[2])
                    found[path] = (raw[0], os.fsdecode(stored.stdout).strip())
            if not found:
                return commit
            new_tree = self._replace_in_tree(objects, tree, found)
            parent = objects.peel(commit, "commit")
        env = {**self._env, **_IDENTITY}
        message = f"convgit safety snapshot, exact bytes of {len(found)} file(s)\n"
        proc = self._git(
            "commit-tree", "--no-gpg-sign", new_tree, "-p", parent,
            config=_COMMIT_CONFIG, stdin=message.encode(), env=env,
        )  # fmt: skip
        return os.fsdecode(proc.stdout).strip()

    def _raw_entry(self, path: str) -> tuple[int, str, bytes] | None:
        """(mode, blob id, bytes) of the regular file at ``path`` as it is on disk, with no
        filter or line-ending conversion and its own exec bit; None for anything else."""
        if not self._real_parent(path):
            return None
        target = self.root / path
        info = lstat(target)
        if info is None or not stat.S_ISREG(info.st_mode):
            return None
        try:
            data = target.read_bytes()
        except OSError:
            return None
        mode = EXEC if info.st_mode & stat.S_IXUSR else BLOB
        algorithm = "sha256" if self._hash_len == 32 else "sha1"
        return mode, hashlib.new(algorithm, b"blob %d\0" % len(data) + data).hexdigest(), data

    def _replace_in_tree(
        self, objects: treediff.Objects, tree: str, entries: dict[str, Entry]
    ) -> str:
        """The id of ``tree`` with the blobs at ``entries`` (paths it holds) replaced."""
        here: dict[str, Entry] = {}
        below: dict[str, dict[str, Entry]] = {}
        for path, entry in entries.items():
            head, _, rest = path.partition("/")
            if rest:
                below.setdefault(head, {})[rest] = entry
            else:
                here[head] = entry
        lines: list[bytes] = []
        for name, mode, oid in objects.tree(tree):
            if name in below:
                mode, oid = TREE, self._replace_in_tree(objects, oid, below[name])
            mode, oid = here.get(name, (mode, oid))
            kind = "tree" if mode == TREE else "commit" if mode == GITLINK else "blob"
            lines.append(f"{mode:06o} {kind} {oid}\t".encode() + os.fsencode(name))
        made = self._git("mktree", "-z", stdin=b"\0".join(lines) + b"\0")
        return os.fsdecode(made.stdout).strip()

    def _undone(
        self, objects: treediff.Objects, exact_from: str, target: str
    ) -> tuple[set[str], list[str]]:
        """What undoing a restore to ``exact_from`` concerns: the files that restore changed,
        which ``target`` (the tree of its safety snapshot) holds byte for byte, and the files
        it was to create, which ``target`` does not have."""
        undone = treediff.diff(objects, objects.peel(exact_from, "tree"), target)
        exact = {d.path for d in undone if d.new is not None and d.new[0] in (BLOB, EXEC)}
        return exact, [d.path for d in undone if d.new is None]

    def _exact_deltas(
        self,
        objects: treediff.Objects,
        deltas: list[Delta],
        exact: set[str],
        current_tree: str,
        target_tree: str,
    ) -> list[Delta]:
        """``deltas`` plus the exact files whose bytes or exec bit differ from the target even
        though git's view of them does not (a file git converts or whose mode it ignores)."""
        listed = {d.path for d in deltas}
        extra: list[Delta] = []
        for path in sorted(exact - listed):
            new = objects.lookup(target_tree, path)
            raw = self._raw_entry(path)
            if new is None or (raw is not None and raw[:2] == new):
                continue
            extra.append(Delta(path, "modified", objects.lookup(current_tree, path), new))
        return sorted([*deltas, *extra], key=lambda d: d.path) if extra else deltas

    def _ignored(self, paths: list[str]) -> set[str]:
        """The paths git's ignore rules match (whether or not any index tracks them)."""
        proc = self._git(
            "check-ignore", "-z", "--no-index", "--stdin",
            stdin=b"\0".join(map(os.fsencode, paths)) + b"\0", check=False,
        )  # fmt: skip
        return {os.fsdecode(p) for p in proc.stdout.split(b"\0") if p}

    def _apply(
        self,
        index: Path,
        deltas: list[Delta],
        objects: treediff.Objects,
        exact: Collection[str] = (),
    ) -> None:
        # The files no longer match the index's tree. Their entries stay as they were, so the
        # next snapshot sees every restored file as changed, a restored .gitignore included
        # (which makes it recheck the ignore rules for every tracked file).
        state = gitindex.read_state(index)
        gitindex.save_state(index, dataclasses.replace(state, tree=None))
        for delta in deltas:
            if delta.new is None:
                faults.point("restore:remove")
                self._remove(delta.path)
        for delta in deltas:
            if delta.new is None:
                self._prune(delta.path)
        # The private index is left as the safety snapshot staged it: it is a stat cache, the
        # files written here no longer match their entries, and the next snapshot (every read
        # of the files stages first) rehashes them through git's filters, as `git add -A` would.
        # git writes the files from a small index of just the new entries: filters, line endings
        # and modes as `git checkout` would, without rewriting the private index twice.
        raw = [d for d in deltas if d.path in exact and d.new is not None and d.new[0] != LINK]
        gone = {d.path for d in raw}
        lines = [
            f"{d.new[0]:o} {d.new[1]}\t".encode() + os.fsencode(d.path)
            for d in deltas
            if d.new is not None and d.path not in gone
        ]
        faults.point("restore:before-checkout")
        if lines:
            writes = Path(f"{index}.restore")
            gitindex.forget(writes)  # one a killed restore left behind
            try:
                self._set_index_entries(writes, lines, _WHOLE_INDEX_CONFIG)
                self._git(
                    "checkout-index", "-f", "--all",
                    index=writes, config=_WHOLE_INDEX_CONFIG,
                )  # fmt: skip
            finally:
                gitindex.forget(writes)
        for delta in raw:  # and the exact files byte for byte, bypassing git's filters
            assert delta.new is not None
            self._write_exact(
                delta.path, objects.blob(delta.new[1]), executable=delta.new[0] == EXEC
            )

    def _write_exact(self, path: str, data: bytes, *, executable: bool) -> None:
        """Write ``data`` at ``path`` as it is (no filter, no line-ending conversion),
        replacing whatever file or link stands there."""
        target = self.root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if not self._real_parent(path):  # the plan refused this already; never write through one
            raise RestoreBlockedError(f"Restoring {path!r} would write through a symlink.")
        faults.point("restore:exact")
        temporary = target.parent / f".{target.name}.convgit-{os.getpid()}"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        handle = os.open(temporary, flags, 0o777 if executable else 0o666)
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(data)
            info = lstat(target)
            if info is not None and stat.S_ISDIR(info.st_mode):
                target.rmdir()  # an emptied folder where the file belongs
            os.replace(temporary, target)
        except BaseException:
            temporary.unlink(missing_ok=True)
            raise

    def _real_parent(self, path: str) -> bool:
        """True when every folder above ``path`` is a real folder (no symlink) under the root."""
        current = self.root
        for part in path.split("/")[:-1]:
            current = current / part
            info = lstat(current)
            if info is None or not stat.S_ISDIR(info.st_mode):
                return False
        return True

    def _remove(self, path: str) -> None:
        if not self._real_parent(path):
            return  # nothing of ours can be below a symlink; never delete through one
        target = self.root / path
        info = lstat(target)
        if info is None:
            return
        if stat.S_ISDIR(info.st_mode):
            with suppress(OSError):
                target.rmdir()  # a removed submodule's folder goes only when empty
        else:
            target.unlink()

    def _prune(self, path: str) -> None:
        parent = (self.root / path).parent
        while parent != self.root and self._real_parent(parent.relative_to(self.root).as_posix()):
            try:
                parent.rmdir()
            except OSError:
                return
            parent = parent.parent

    # -- side-by-side worktrees --

    def add_worktree(self, commit: str, directory: Path) -> None:
        """Check ``commit`` out in ``directory`` as a real, detached `git worktree`, marked as
        made by convgit. The main working tree, its index and HEAD are not touched."""
        sha = self._resolve(commit, "commit")
        directory = Path(directory).absolute()
        for inside in (self.root, self.common_dir):
            if directory == inside or directory.resolve().is_relative_to(inside.resolve()):
                raise RefusedError(
                    f"{directory} is inside {inside}; choose a folder outside the repository."
                )
        if directory.exists() and any(directory.iterdir()):
            raise RefusedError(f"{directory} already exists and is not empty.")
        with _WORKTREE_ADMIN:
            self._git("worktree", "add", "--detach", "--quiet", str(directory), sha)
            admin = self._worktree_admin(directory)
            if admin is None:  # pragma: no cover - git just made it
                raise WorkspaceError(f"git did not register the worktree at {directory}.")
            (admin / WORKTREE_MARKER).write_text(f"{sha}\n")

    def list_worktrees(self) -> list[tuple[Path, str]]:
        """(path, head commit) of each worktree convgit made, whether or not its folder exists."""
        found: list[tuple[Path, str]] = []
        for admin in sorted((self.common_dir / "worktrees").glob("*")):
            if not (admin / WORKTREE_MARKER).exists():
                continue
            try:
                path = Path((admin / "gitdir").read_text().strip()).parent
                head = (admin / "HEAD").read_text().strip()
            except OSError:
                continue
            if head.startswith("ref:"):  # someone checked a branch out there since
                ref = head[4:].strip()
                proc = self._git("rev-parse", "--verify", "-q", f"{ref}^{{commit}}", check=False)
                head = os.fsdecode(proc.stdout).strip() if proc.returncode == 0 else ""
            found.append((path, head))
        return found

    def remove_worktree(self, directory: Path, *, force: bool = False) -> None:
        """Remove a worktree convgit made. Refuses one with changes unless ``force``; refuses
        worktrees convgit did not make."""
        directory = Path(directory).absolute()
        admin = self._worktree_admin(directory)
        if admin is None or not (admin / WORKTREE_MARKER).exists():
            raise RefusedError(f"{directory} is not a worktree made by convgit.")
        if not directory.exists():
            import shutil

            shutil.rmtree(admin)  # its folder is gone: forget it, as `git worktree prune` would
            return
        with _WORKTREE_ADMIN:
            proc = self._git(
                "worktree", "remove", *(["--force"] if force else []), str(directory), check=False
            )
        if proc.returncode != 0:
            raise RefusedError(
                f"git will not remove {directory}: {os.fsdecode(proc.stderr).strip()}",
                hint="remove it with force to discard its changes",
            )

    def discard_worktree(self, directory: Path) -> None:
        """Remove the worktree at ``directory`` and git's admin folder for it, whatever state
        it is in: made by ``add_worktree`` and changed since, or half-made by a checkout that
        failed or was killed (git leaves it locked, without convgit's mark). git removes it
        when it can; what is left is deleted as git would, never following a symlink. The
        caller vouches that it made ``directory``: this does not check for convgit's mark."""
        directory = Path(directory).absolute()
        with _WORKTREE_ADMIN:
            if self._worktree_admin(directory) is not None and directory.is_dir():
                self._git("worktree", "remove", "--force", "--force", str(directory), check=False)
        if os.path.lexists(directory):
            _delete_tree(directory)
        with _WORKTREE_ADMIN:
            admin = self._worktree_admin(directory)
            if admin is not None:
                _delete_tree(admin)  # as `git worktree prune` would, locked or not

    def modes(self, commit: str, paths: Sequence[str]) -> dict[str, int | None]:
        """The mode of each of ``paths`` in the tree of ``commit`` (None: not there, or below
        an entry that is not a folder)."""
        with self._objects() as objects:
            tree = objects.peel(commit, "tree")
            found = {path: objects.lookup(tree, path) for path in paths}
        return {path: None if entry is None else entry[0] for path, entry in found.items()}

    def _worktree_admin(self, directory: Path) -> Path | None:
        wanted = (directory / ".git").resolve()
        for admin in (self.common_dir / "worktrees").glob("*"):
            try:
                if Path((admin / "gitdir").read_text().strip()).resolve() == wanted:
                    return admin
            except OSError:
                continue
        return None

    # -- housekeeping --

    def maintain(self, *, threshold: int = 2048) -> bool:
        """Pack convgit's own loose objects (reachable from ``refs/convgit/`` and from none of
        the user's refs) once there are more than ``threshold`` of them, and delete their loose
        copies; the user's objects are never packed or touched. True when it packed. Walks the
        snapshots' history: run it away from the commands a user waits on (see
        ``convgit.maintenance``)."""
        own = self._own_loose()
        if not own or len(own) <= threshold:
            return False
        objects = self.common_dir / "objects"
        self._git(
            "pack-objects", "-q", str(objects / "pack" / "pack"), stdin=b"\n".join(own) + b"\n"
        )
        for oid in own:  # now in the pack: git reads them from there
            with suppress(OSError):
                os.unlink(objects / os.fsdecode(oid[:2]) / os.fsdecode(oid[2:]))
        return True

    def _own_loose(self) -> list[bytes]:
        """The loose objects reachable from convgit's refs and not from the user's."""
        listed = self._git("for-each-ref", "--format=%(objectname) %(refname)").stdout
        ours: list[bytes] = []
        theirs: list[bytes] = []
        for line in listed.splitlines():
            oid, _, name = line.partition(b" ")
            (ours if name.startswith(REF_PREFIX.encode()) else theirs).append(oid)
        if not ours:
            return []
        head = self._git("rev-parse", "--verify", "-q", "HEAD", check=False).stdout.strip()
        theirs += [head] if head else []
        revs = b"".join([*(oid + b"\n" for oid in ours), *(b"^" + oid + b"\n" for oid in theirs)])
        # aggressive edges: the trees of the user's tips count as theirs, though no snapshot
        # descends from a user's commit (lines starting with "-" name those tips)
        found = self._git(
            "rev-list", "--objects-edge-aggressive", "--unpacked", "--stdin", stdin=revs
        ).stdout  # fmt: skip
        return [line[: 2 * self._hash_len] for line in found.splitlines() if line[:1] != b"-"]
