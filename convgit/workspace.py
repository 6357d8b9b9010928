"""The workspace track: git snapshots of the working tree, restore, diff and side-by-side worktrees.

The only module that imports pygit2. It knows commits, trees and paths, never conversations.

Promises kept by every method here:
* HEAD, the user's index, branches, tags, the stash and the user's config are never touched;
  the only refs written are ``refs/convgit/...`` (``set_ref``/``delete_ref``);
* working tree files are changed only by ``restore`` (never by a snapshot or a scan), and never
  through a symlink, outside the working tree, or inside ``.git``;
* no hook runs, nothing is signed, and no user identity is needed.

Staging goes through the git command line against a private index kept per session and worktree
(a stat cache): the tree is then git's own answer to ``git add -A``, and a snapshot after a
one-file change costs what git's own refresh costs. pygit2 reads objects, diffs trees and writes
commits and refs in-process.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import stat
import struct
import subprocess
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import pygit2
from filelock import FileLock, Timeout

from convgit import faults
from convgit.errors import ConvgitError, NotFoundError, NoWorkspaceError, RefusedError

DEFAULT_SIZE_CAP = 10 * 1024 * 1024

AUTHOR_NAME = "convgit"
AUTHOR_EMAIL = "convgit@localhost"
REF_PREFIX = "refs/convgit/"
WORKTREE_MARKER = "convgit-worktree"

_TREE, _BLOB, _EXEC, _LINK, _GITLINK = 0o040000, 0o100644, 0o100755, 0o120000, 0o160000
_LEGACY_BLOB = 0o100664  # old git wrote group-writable blobs; git reads them as 100644
_FILE_MODES = frozenset({_BLOB, _EXEC, _LINK, _GITLINK, _LEGACY_BLOB})

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
_SAFE_CONFIG = ("core.hooksPath=/dev/null",)
_INDEX_CONFIG = (
    *_SAFE_CONFIG,
    "core.splitIndex=false",
    "index.sparse=false",
    "core.sparseCheckout=false",
    "status.showUntrackedFiles=all",  # lets git's untracked cache serve `status -uall`
)

# Tracked files that the ignore rules match (run with convgit's private index).
_LIST_IGNORED = ("ls-files", "-z", "--cached", "--ignored", "--exclude-standard")

# Code points HFS+ ignores in names, so ".g\u200cit" is ".git" there (git's own list).
_HFS_IGNORABLE = dict.fromkeys(
    map(
        ord,
        "\u200c\u200d\u200e\u200f\u202a\u202b\u202c\u202d\u202e"
        "\u206a\u206b\u206c\u206d\u206e\u206f\ufeff",
    )
)


class WorkspaceError(ConvgitError):
    """A git command that convgit runs failed; the message carries git's own words."""


class HostileSnapshotError(RefusedError):
    """A snapshot whose tree would write outside the working tree, into .git or through a link."""


class RestoreBlockedError(RefusedError):
    """A restore that would write through a symlink, or delete files outside the snapshot view."""


@dataclass(frozen=True)
class Skipped:
    """A path a snapshot left out (or a restore left alone), with the reason in words."""

    path: str
    reason: str


@dataclass(frozen=True)
class Snapshot:
    """A snapshot commit. ``reused`` is true when the parent had the same tree and was returned."""

    commit: str
    tree: str
    files: int
    skipped: tuple[Skipped, ...]
    reused: bool


@dataclass(frozen=True)
class Change:
    """One path that differs from side a to side b: added, modified, deleted or typechange."""

    path: str
    status: str


class Restored(list[Change]):
    """The changes a restore made (or would make), plus the paths it left alone on purpose
    (ignored or skipped files that differ from the snapshot, paths inside nested repositories)."""

    def __init__(self, changes: Sequence[Change], left_alone: Sequence[Skipped] = ()) -> None:
        super().__init__(changes)
        self.left_alone: tuple[Skipped, ...] = tuple(left_alone)


@dataclass(frozen=True)
class _IndexState:
    """What convgit knows of its private index, saved beside it as ``<index>.state``: the size
    cap it was cleaned for, the tree it held at the last write-tree (None: unknown), and the
    identity of the ignore files outside the worktree when their rules were last applied."""

    cap: int | None
    tree: str | None
    ignores: str


@dataclass(frozen=True)
class _Delta:
    """A change with the (mode, oid) of the non-tree entry on each side (None: absent or folder)."""

    path: str
    status: str
    old: tuple[int, str] | None
    new: tuple[int, str] | None


def _mib(size: int) -> str:
    return f"{size / (1024 * 1024):.1f} MiB"


def _kind(mode: int) -> int:
    return mode & 0o170000


def _git_env() -> dict[str, str]:
    env = {
        name: value
        for name, value in os.environ.items()
        if name not in _LOCAL_GIT_VARS and not name.startswith(("GIT_AUTHOR_", "GIT_COMMITTER_"))
    }
    env["LC_ALL"] = "C"  # stable messages: a few are parsed, all are shown in English
    env["GIT_TERMINAL_PROMPT"] = "0"
    return env


def _lstat(path: str | bytes | Path) -> os.stat_result | None:
    """The entry's own stat (never a link's target); None when there is nothing to see."""
    try:
        return os.lstat(path)
    except OSError:  # missing, below a file, a link loop, no permission
        return None


def _repository_above(root: bytes, path: bytes, known: dict[bytes, bool]) -> bytes | None:
    """The folder above ``path`` that holds a ``.git`` (a nested repository), if any."""
    folders = path.split(b"/")[:-1]
    for depth in range(1, len(folders) + 1):
        folder = b"/".join(folders[:depth])
        if folder not in known:
            known[folder] = os.path.lexists(os.path.join(root, folder, b".git"))
        if known[folder]:
            return folder
    return None


def _bad_name(name: str) -> bool:
    """True for a tree entry name git itself would refuse to check out (git's verify_path)."""
    separators = "/\\\0" if os.name == "nt" else "/\0"  # a backslash is a plain character on POSIX
    if name in ("", ".", "..") or any(c in name for c in separators):
        return True
    folded = name.translate(_HFS_IGNORABLE).lower()
    return folded.split(":")[0].rstrip(". ") == ".git" or folded == "git~1"


def _relative_path(path: str) -> str:
    """A restore path as a clean relative POSIX path ('' for the whole tree); refuse escapes."""
    pure = PurePosixPath(path.replace(os.sep, "/"))
    if pure.is_absolute() or ".." in pure.parts:
        raise RefusedError(f"The path {path!r} is outside the working tree.")
    parts = [part for part in pure.parts if part != "."]
    if any(_bad_name(part) for part in parts):
        raise RefusedError(f"The path {path!r} points into .git or is not a valid file name.")
    return "/".join(parts)


def _index_entries(
    data: bytes, hash_len: int, *, above: int | None = None
) -> Iterator[tuple[bytes, int, int, bytes, int]]:
    """Entries of a git index file (v2-v4) as (path, mode, size, oid, flags); ``flags`` carries
    0x8000 assume-unchanged, 0x3000 the stage and, from the extended flags, 0x40000000
    skip-worktree. With ``above``, only entries larger than that or with any of those flags
    (the rest is skipped without being decoded). Raises ValueError for what we do not read
    (split or sparse index, unknown version)."""
    if data[:4] != b"DIRC":
        raise ValueError("not an index file")
    version, count = struct.unpack_from(">II", data, 4)
    if version not in (2, 3, 4):
        raise ValueError(f"index version {version}")
    offset, previous = 12, b""
    head = struct.Struct(f">24xI8xI{hash_len}xH").unpack_from
    fixed = 42 + hash_len
    for _ in range(count):
        mode, size, flags = head(data, offset)
        cursor = offset + fixed
        if flags & 0x4000 and version >= 3:
            flags |= struct.unpack_from(">H", data, cursor)[0] << 16
            cursor += 2
        wanted = above is None or size > above or flags & 0xF000
        if version == 4:  # paths are prefix-compressed: every one must be decoded
            strip, cursor = _varint(data, cursor)
            end = data.index(b"\0", cursor)
            previous = previous[: len(previous) - strip] + data[cursor:end]
            path, start, offset = previous, offset, end + 1
        else:
            length = flags & 0xFFF
            end = cursor + length if length < 0xFFF else data.index(b"\0", cursor)
            path, start = data[cursor:end] if wanted else b"", offset
            offset += (end - offset + 8) & ~7
        if wanted:
            oid = data[start + 40 : start + 40 + hash_len]
            yield path, mode, size, oid, flags
    while offset + 8 <= len(data) - hash_len:
        signature = data[offset : offset + 4]
        (length,) = struct.unpack_from(">I", data, offset + 4)
        if signature in (b"link", b"sdir"):
            raise ValueError(f"index extension {signature.decode()}")
        offset += 8 + length


def _varint(data: bytes, cursor: int) -> tuple[int, int]:
    byte = data[cursor]
    cursor += 1
    value = byte & 127
    while byte & 128:
        byte = data[cursor]
        cursor += 1
        value = ((value + 1) << 7) | (byte & 127)
    return value, cursor


class Workspace:
    """A git working tree seen by convgit: ``root`` (top level), ``git_dir`` (this worktree's
    git dir) and ``common_dir`` (shared; convgit keeps its store in ``common_dir / "convgit"``)."""

    def __init__(
        self, root: Path, git_dir: Path, common_dir: Path, *, object_format: str = "sha1"
    ) -> None:
        self.root = root
        self.git_dir = git_dir
        self.common_dir = common_dir
        self._hash_len = 32 if object_format == "sha256" else 20
        self._env = _git_env()
        self._repository: Any = None

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
    ) -> subprocess.CompletedProcess[bytes]:
        proc = self._spawn(*args, index=index, config=config, stdin=stdin is not None)
        out, err = proc.communicate(stdin)
        return self._finish(proc, args[0], out, err, check=check)

    def _spawn(
        self,
        *args: str,
        index: Path | None = None,
        config: Sequence[str] = _SAFE_CONFIG,
        stdin: bool = False,
    ) -> subprocess.Popen[bytes]:
        """Start git on this worktree: explicit git dir and work tree, our environment only,
        GIT_INDEX_FILE set to ``index`` (convgit's private index) or unset."""
        env = self._env
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
            words = os.fsdecode(err).strip() or f"exit status {done.returncode}"
            raise WorkspaceError(f"git {verb} failed: {words}")
        return done

    @property
    def _repo(self) -> Any:
        if self._repository is None:
            try:
                self._repository = pygit2.Repository(
                    str(self.git_dir), pygit2.enums.RepositoryOpenFlag.NO_SEARCH
                )
            except pygit2.GitError as exc:
                raise WorkspaceError(f"libgit2 cannot open {self.git_dir}: {exc}") from None
        return self._repository

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
        with self._index_lock(index):
            tree, skipped = self._stage(index, size_cap)
            files = self._entry_count(index)
        repo = self._repo
        parents: list[str] = []
        if parent is not None:
            if self.tree_of(parent) == tree:
                return Snapshot(parent, tree, files, skipped, reused=True)
            parents = [str(self._peel(parent, pygit2.Commit).id)]
        signature = pygit2.Signature(AUTHOR_NAME, AUTHOR_EMAIL)
        oid = repo.create_commit(None, signature, signature, message, tree, parents)
        return Snapshot(str(oid), tree, files, skipped, reused=False)

    def scan(
        self, index: Path, *, size_cap: int = DEFAULT_SIZE_CAP
    ) -> tuple[str, tuple[Skipped, ...]]:
        """The tree id of the working tree right now (as ``snapshot`` would record it; objects
        are written, no commit is made) and the paths left out."""
        index = index.absolute()
        with self._index_lock(index):
            return self._stage(index, size_cap)

    def _stage(self, index: Path, size_cap: int) -> tuple[str, tuple[Skipped, ...]]:
        try:
            return self._stage_once(index, size_cap)
        except WorkspaceError:
            # The private index is only a cache: if git chokes on it, rebuild it and try again.
            self._forget_index(index)
            return self._stage_once(index, size_cap)

    def _stage_once(self, index: Path, size_cap: int) -> tuple[str, tuple[Skipped, ...]]:
        state = self._ensure_index(index, size_cap)
        ignores = self._ignore_fingerprint()
        # Ignore rules do not apply to what an index tracks, but `git add -A` into an empty
        # index never takes an ignored file: when the rules may have moved, list the tracked
        # files they now ignore (beside `git status`, on another core) and drop them.
        lister = (
            self._spawn(*_LIST_IGNORED, index=index, config=_INDEX_CONFIG)
            if ignores != state.ignores
            else None
        )
        try:
            updates, drops, skipped, nested = self._survey(self._status(index), size_cap)
            if nested:  # whatever we tracked inside a folder that became a repository goes
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
            if lister is not None and lister.poll() is None:
                lister.kill()
                lister.wait()
        if ignored:
            drops += sorted(ignored)
            updates = [p for p in updates if p not in ignored]
        tree = state.tree
        if updates or drops:
            self._save_state(index, _IndexState(size_cap, None, ""))  # stale if we stop midway
            tree = None
            if drops:
                self._git(
                    "update-index", "-z", "--force-remove", "--stdin",
                    index=index, config=_INDEX_CONFIG, stdin=b"\0".join(drops) + b"\0",
                )  # fmt: skip
            if updates:
                self._git(
                    "update-index", "-z", "--add", "--remove", "--replace", "--stdin",
                    index=index, config=_INDEX_CONFIG, stdin=b"\0".join(updates) + b"\0",
                )  # fmt: skip
        if tree is None:
            proc = self._git("write-tree", index=index, config=_INDEX_CONFIG)
            tree = os.fsdecode(proc.stdout).strip()
        fresh = _IndexState(size_cap, tree, ignores)
        if fresh != state:
            self._save_state(index, fresh)
        return tree, tuple(sorted(skipped, key=lambda s: s.path))

    def _ignore_fingerprint(self) -> str:
        """Identity (path, mtime, size) of the ignore files that live outside the worktree."""
        try:
            configured = self._repo.config["core.excludesFile"]
        except (KeyError, pygit2.GitError):
            configured = None
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

    def _status(self, index: Path) -> subprocess.CompletedProcess[bytes]:
        return self._git(
            "status", "--porcelain=v2", "-z", "--untracked-files=all", "--no-renames",
            "--ignore-submodules=dirty",
            index=index, config=_INDEX_CONFIG,
        )  # fmt: skip

    def _survey(
        self, proc: subprocess.CompletedProcess[bytes], size_cap: int
    ) -> tuple[list[bytes], list[bytes], list[Skipped], set[bytes]]:
        """From ``git status`` output against the private index: the paths to stage, the
        tracked paths to drop (now too big or unreadable), the paths left out, and the folders
        we track files in that have become nested repositories (`git init` run inside)."""
        updates: list[bytes] = []
        drops: list[bytes] = []
        skipped: list[Skipped] = []
        nested: set[bytes] = set()
        root = os.fsencode(self.root)
        repository_at: dict[bytes, bool] = {}
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
            if path.endswith(b"/"):
                skipped.append(Skipped(name.rstrip("/"), "nested repository"))
                continue
            # git lists files below a folder our index tracks, even once it is a repository.
            repository = _repository_above(root, path, repository_at)
            if repository is not None:
                nested.add(repository)
                continue
            info = _lstat(os.path.join(root, path))
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
        return updates, drops, skipped, nested

    # -- the private index --

    @contextmanager
    def _index_lock(self, index: Path) -> Iterator[None]:
        index.parent.mkdir(parents=True, exist_ok=True)
        try:
            with FileLock(f"{index}.flock", timeout=120):
                # Only holders of this lock use the index, so a git lock left here is stale.
                Path(f"{index}.lock").unlink(missing_ok=True)
                yield
        except Timeout:
            raise RefusedError(
                "Another convgit process has been using this session's snapshot index for two "
                "minutes.",
                hint=f"if none is running, delete {index}.flock",
            ) from None

    def _read_state(self, index: Path) -> _IndexState:
        try:
            return _IndexState(**json.loads(Path(f"{index}.state").read_text()))
        except (FileNotFoundError, ValueError, TypeError):
            return _IndexState(None, None, "")

    def _save_state(self, index: Path, state: _IndexState) -> None:
        temporary = Path(f"{index}.state.tmp")
        temporary.write_text(json.dumps(dataclasses.asdict(state)))
        os.replace(temporary, f"{index}.state")

    def _forget_index(self, index: Path) -> None:
        for suffix in ("", ".state", ".lock"):
            Path(f"{index}{suffix}").unlink(missing_ok=True)

    def _ensure_index(self, index: Path, size_cap: int) -> _IndexState:
        """Create the private index when missing, seeded with a copy of the user's index (its
        stat data spares rehashing every file); then make sure it holds nothing that would make
        the tree differ from ``git add -A``: no skip-worktree or assume-unchanged entry (git
        would trust them blindly), no file above the cap."""
        if index.exists() and not self._intact(index):
            self._forget_index(index)  # torn by a crash: git would half-read it without a word
        if not index.exists():
            Path(f"{index}.state").unlink(missing_ok=True)
            user_index = self.git_dir / "index"
            if user_index.exists():
                seed = Path(f"{index}.seed")
                shutil.copy2(user_index, seed)  # keeps the mtime: git's racy-entry check needs it
                os.replace(seed, index)
        else:
            state = self._read_state(index)
            if state.cap == size_cap:
                return state
        if index.exists():
            self._clean_index(index, size_cap)
        state = _IndexState(size_cap, None, "")  # "": ignore rules are checked on first use
        self._save_state(index, state)
        return state

    def _intact(self, index: Path) -> bool:
        """True when the index file's trailing checksum matches (git itself skips this check)."""
        data = index.read_bytes()
        size = self._hash_len
        if len(data) < 12 + size or data[:4] != b"DIRC":
            return False
        trailer = data[-size:]
        algorithm = "sha256" if size == 32 else "sha1"
        return trailer == bytes(size) or hashlib.new(algorithm, data[:-size]).digest() == trailer

    def _clean_index(self, index: Path, size_cap: int) -> None:
        try:
            entries = list(_index_entries(index.read_bytes(), self._hash_len, above=size_cap))
        except (ValueError, IndexError, struct.error):
            # A split, sparse or unreadable index: start empty, git rehashes every file once.
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
        if lines:
            self._git(
                "update-index", "-z", "--add", "--replace", "--index-info",
                index=index, config=_INDEX_CONFIG, stdin=b"\0".join(lines) + b"\0",
            )  # fmt: skip

    def _entry_count(self, index: Path) -> int:
        try:
            with open(index, "rb") as handle:
                header = handle.read(12)
        except FileNotFoundError:
            return 0
        return int(struct.unpack(">I", header[8:12])[0]) if len(header) == 12 else 0

    def _index_tree(self, index: Path) -> str:
        tree = self._read_state(index).tree
        if tree is None:
            proc = self._git("write-tree", index=index, config=_INDEX_CONFIG)
            tree = os.fsdecode(proc.stdout).strip()
        return tree

    # -- refs and objects --

    def set_ref(self, ref: str, commit: str) -> None:
        """Point ``ref`` (under refs/convgit/) at ``commit``, which keeps it safe from gc."""
        self._check_ref(ref)
        target = self._peel(commit, pygit2.Commit).id
        self._repo.references.create(ref, target, force=True)

    def delete_ref(self, ref: str) -> None:
        """Remove ``ref`` (under refs/convgit/); nothing happens when it does not exist."""
        self._check_ref(ref)
        with suppress(KeyError):
            self._repo.references.delete(ref)

    def _check_ref(self, ref: str) -> None:
        if not ref.startswith(REF_PREFIX) or not pygit2.reference_is_valid_name(ref):
            raise RefusedError(f"convgit only writes refs under {REF_PREFIX}, not {ref!r}.")

    def _peel(self, rev: str, kind: Any) -> Any:
        try:
            return self._repo.revparse_single(rev).peel(kind)
        except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError):
            what = "commit" if kind is pygit2.Commit else "tree"
            raise NotFoundError(f"There is no {what} {rev!r} in this repository.") from None

    def tree_of(self, commit: str) -> str:
        """The tree id of a commit (a tree id is returned as it is)."""
        return str(self._peel(commit, pygit2.Tree).id)

    def changes(self, a: str, b: str) -> list[Change]:
        """File-level differences from a to b (commit or tree ids), sorted by path. A file
        replaced by a folder is a deletion plus additions; file <-> symlink is a typechange."""
        deltas = self._diff(self._peel(a, pygit2.Tree), self._peel(b, pygit2.Tree), False)
        return [Change(d.path, d.status) for d in deltas]

    def _diff(self, a: Any, b: Any, validate: bool) -> list[_Delta]:
        out: list[_Delta] = []
        self._diff_into(out, a, b, "", validate)
        out.sort(key=lambda d: d.path)
        return out

    def _diff_into(self, out: list[_Delta], a: Any, b: Any, prefix: str, validate: bool) -> None:
        # Only subtrees whose ids differ are opened, so the cost follows the change, not the tree.
        old = self._entries(a, prefix, False)
        new = self._entries(b, prefix, validate)
        for name in old.keys() | new.keys():
            x, y = old.get(name), new.get(name)
            if x == y:
                continue
            path = prefix + name
            x_tree = x is not None and x[0] == _TREE
            y_tree = y is not None and y[0] == _TREE
            if x_tree or y_tree:
                self._diff_into(
                    out,
                    self._repo[x[1]] if x is not None and x_tree else None,
                    self._repo[y[1]] if y is not None and y_tree else None,
                    path + "/",
                    validate,
                )
            x_file = None if x is None or x_tree else x
            y_file = None if y is None or y_tree else y
            if x_file and y_file:
                kinds_differ = _kind(x_file[0]) != _kind(y_file[0])
                out.append(
                    _Delta(path, "typechange" if kinds_differ else "modified", x_file, y_file)
                )
            elif x_file:
                out.append(_Delta(path, "deleted", x_file, None))
            elif y_file:
                out.append(_Delta(path, "added", None, y_file))

    def _entries(self, tree: Any, prefix: str, validate: bool) -> dict[str, tuple[int, str]]:
        entries: dict[str, tuple[int, str]] = {}
        if tree is None:
            return entries
        folded: set[str] = set()
        ignore_case = validate and self._ignore_case()
        for item in tree:
            name = os.fsdecode(item.raw_name)
            mode = _BLOB if item.filemode == _LEGACY_BLOB else int(item.filemode)
            if validate:
                shown = prefix + name
                if _bad_name(name):
                    raise HostileSnapshotError(
                        f"The snapshot holds the path {shown!r}, which would escape the working "
                        "tree or write into .git; nothing was restored."
                    )
                if mode != _TREE and mode not in _FILE_MODES:
                    raise HostileSnapshotError(
                        f"The snapshot holds {shown!r} with file mode {mode:o}; "
                        "nothing was restored."
                    )
                key = name.casefold() if ignore_case else name
                if name in entries or key in folded:
                    raise HostileSnapshotError(
                        f"The snapshot holds {shown!r} twice (a file and a folder, or two "
                        "spellings of one name); nothing was restored."
                    )
                folded.add(key)
            entries[name] = (mode, str(item.id))
        return entries

    def _ignore_case(self) -> bool:
        try:
            return bool(self._repo.config.get_bool("core.ignorecase"))
        except (KeyError, pygit2.GitError):
            return False

    # -- restore --

    def restore(
        self,
        target: str,
        *,
        index: Path,
        paths: list[str] | None = None,
        dry_run: bool = False,
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
        """
        index = index.absolute()
        target_tree = self._peel(target, pygit2.Tree)
        with self._index_lock(index):
            if not index.exists():
                self._stage(index, DEFAULT_SIZE_CAP)
            current_tree = self._repo[self._index_tree(index)]
            deltas = self._diff(current_tree, target_tree, True)
            if paths is not None:
                deltas = self._select(deltas, paths, current_tree, target_tree)
            deltas, left_alone = self._plan(deltas)
            changes = [Change(d.path, d.status) for d in deltas]
            if not dry_run and deltas:
                self._apply(index, deltas)
        return Restored(changes, left_alone)

    def _select(
        self, deltas: list[_Delta], paths: list[str], current: Any, target: Any
    ) -> list[_Delta]:
        wanted = [_relative_path(p) for p in paths]
        if "" in wanted:
            return deltas
        for path in wanted:
            if not any(self._tree_has(tree, path) for tree in (current, target)):
                raise NotFoundError(f"There is no {path!r} in the snapshot or in the working tree.")
        chosen = {
            d.path for d in deltas if any(d.path == p or d.path.startswith(p + "/") for p in wanted)
        }
        # A file that stands where a chosen path needs a folder must go as well.
        by_path = {d.path: d for d in deltas}
        for path in list(chosen):
            parts = path.split("/")
            for i in range(1, len(parts)):
                lead = by_path.get("/".join(parts[:i]))
                if lead is not None and lead.new is None:
                    chosen.add(lead.path)
        return [d for d in deltas if d.path in chosen]

    @staticmethod
    def _tree_has(tree: Any, path: str) -> bool:
        try:
            tree[path]
        except KeyError:
            return False
        return True

    def _plan(self, deltas: list[_Delta]) -> tuple[list[_Delta], list[Skipped]]:
        """Check every write against the disk before anything changes: refuse writes below a
        symlink or file that stays, and folders that hold files outside the view; set aside
        paths that are outside the view (ignored or skipped files, nested repositories)."""
        removals = {d.path for d in deltas if d.old is not None}
        keep: list[_Delta] = []
        aside: list[str] = []
        nested: list[str] = []
        submodules: list[_Delta] = []
        root = os.fsencode(self.root)
        repository_at: dict[bytes, bool] = {}
        for delta in deltas:
            if delta.new is None:
                if _repository_above(root, os.fsencode(delta.path), repository_at) is None:
                    keep.append(delta)
                else:
                    nested.append(delta.path)  # never delete inside another repository
                continue
            if delta.old is not None and delta.old[0] == delta.new[0] == _GITLINK:
                submodules.append(delta)  # checking a commit out in a submodule is the user's call
                continue
            verdict = self._check_write(delta, removals)
            if verdict == "write":
                keep.append(delta)
            elif verdict == "nested":
                nested.append(delta.path)
            else:
                aside.append(delta.path)
        left_alone = [Skipped(p, "inside a nested repository; left alone") for p in nested]
        left_alone += [
            Skipped(
                d.path, f"a submodule; convgit does not move it (its snapshot is at {d.new[1]})"
            )
            for d in submodules
            if d.new is not None
        ]
        if aside:
            proc = self._git(
                "check-ignore", "-z", "--no-index", "--stdin",
                stdin=b"\0".join(map(os.fsencode, aside)) + b"\0", check=False,
            )  # fmt: skip
            ignored = {os.fsdecode(p) for p in proc.stdout.split(b"\0") if p}
            for path in aside:
                why = "ignored by git" if path in ignored else "outside the snapshots (size cap)"
                left_alone.append(Skipped(path, f"{why}; differs from the snapshot, left alone"))
        return keep, sorted(left_alone, key=lambda s: s.path)

    def _check_write(self, delta: _Delta, removals: set[str]) -> str:
        assert delta.new is not None
        parts = delta.path.split("/")
        for i in range(1, len(parts)):
            lead = "/".join(parts[:i])
            info = _lstat(self.root / lead)
            if info is None:
                return "write"  # nothing there yet: git creates the folders
            if stat.S_ISDIR(info.st_mode):
                if os.path.lexists(self.root / lead / ".git"):
                    if lead in removals:
                        raise RestoreBlockedError(
                            f"Restoring {delta.path!r} would write into the repository at "
                            f"{lead!r}; nothing was restored."
                        )
                    return "nested"
                continue
            if lead in removals:
                return "write"  # a file of the view that the restore removes before writing
            what = "symlink" if stat.S_ISLNK(info.st_mode) else "file"
            raise RestoreBlockedError(
                f"Restoring {delta.path!r} would write below {lead!r}, a {what} that is not part "
                "of the snapshot; nothing was restored.",
                hint=f"move {lead!r} away first",
            )
        info = _lstat(self.root / delta.path)
        if info is None:
            return "write"
        if stat.S_ISDIR(info.st_mode):
            if delta.new[0] != _GITLINK:
                self._check_emptied(delta.path, removals)
            return "write"
        return "write" if delta.old is not None else "aside"

    def _check_emptied(self, folder: str, removals: set[str]) -> None:
        """Refuse unless every file under ``folder`` on disk is one the restore removes."""
        for top, dirs, files in os.walk(self.root / folder):
            links = [d for d in dirs if os.path.islink(os.path.join(top, d))]
            for name in [*files, *links, *(d for d in dirs if d == ".git")]:
                rel = Path(top, name).relative_to(self.root).as_posix()
                if rel not in removals or name == ".git":
                    raise RestoreBlockedError(
                        f"Restoring {folder!r} as a file would delete the folder's {rel!r}, which "
                        "is not part of the snapshot; nothing was restored.",
                        hint=f"move {rel!r} away first",
                    )

    def _apply(self, index: Path, deltas: list[_Delta]) -> None:
        # The restored files may be ignored now: the next snapshot rechecks the rules.
        self._save_state(index, _IndexState(self._read_state(index).cap, None, ""))
        for delta in deltas:
            if delta.new is None:
                faults.point("restore:remove")
                self._remove(delta.path)
        for delta in deltas:
            if delta.new is None:
                self._prune(delta.path)
        zero = "0" * (2 * self._hash_len)
        lines = [f"0 {zero}\t".encode() + os.fsencode(d.path) for d in deltas if d.new is None]
        lines += [
            f"{d.new[0]:o} {d.new[1]}\t".encode() + os.fsencode(d.path)
            for d in deltas
            if d.new is not None
        ]
        self._git(
            "update-index", "-z", "--add", "--replace", "--index-info",
            index=index, config=_INDEX_CONFIG, stdin=b"\0".join(lines) + b"\0",
        )  # fmt: skip
        writes = [os.fsencode(d.path) for d in deltas if d.new is not None]
        faults.point("restore:before-checkout")
        if writes:
            # git writes the files: filters, line endings and modes as `git checkout` would.
            self._git(
                "checkout-index", "-f", "-u", "-z", "--stdin",
                index=index, config=_INDEX_CONFIG, stdin=b"\0".join(writes) + b"\0",
            )  # fmt: skip

    def _real_parent(self, path: str) -> bool:
        """True when every folder above ``path`` is a real folder (no symlink) under the root."""
        current = self.root
        for part in path.split("/")[:-1]:
            current = current / part
            info = _lstat(current)
            if info is None or not stat.S_ISDIR(info.st_mode):
                return False
        return True

    def _remove(self, path: str) -> None:
        if not self._real_parent(path):
            return  # nothing of ours can be below a symlink; never delete through one
        target = self.root / path
        info = _lstat(target)
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
        sha = str(self._peel(commit, pygit2.Commit).id)
        directory = Path(directory).absolute()
        for inside in (self.root, self.common_dir):
            if directory == inside or directory.resolve().is_relative_to(inside.resolve()):
                raise RefusedError(
                    f"{directory} is inside {inside}; choose a folder outside the repository."
                )
        if directory.exists() and any(directory.iterdir()):
            raise RefusedError(f"{directory} already exists and is not empty.")
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
                try:
                    head = str(self._repo.references[head[4:].strip()].resolve().target)
                except (KeyError, pygit2.GitError):
                    head = ""
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
            shutil.rmtree(admin)  # its folder is gone: forget it, as `git worktree prune` would
            return
        proc = self._git(
            "worktree", "remove", *(["--force"] if force else []), str(directory), check=False
        )
        if proc.returncode != 0:
            raise RefusedError(
                f"git will not remove {directory}: {os.fsdecode(proc.stderr).strip()}",
                hint="remove it with force to discard its changes",
            )

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
        """Pack loose objects once there are more than about ``threshold`` of them (estimated
        from one fan-out folder, as `git gc --auto` does; 0 packs whatever is loose), so long
        sessions do not leave tens of thousands of loose files. Cheap when there is nothing to
        do; True when it packed. Packs exactly the loose objects, without walking history;
        unreachable ones stay prunable by `git gc`."""
        objects = self.common_dir / "objects"
        name_len = 2 * self._hash_len - 2

        def loose_in(fan: str) -> list[str]:
            try:
                return [fan + n for n in os.listdir(objects / fan) if len(n) == name_len]
            except (FileNotFoundError, NotADirectoryError):
                return []

        if threshold > 0 and len(loose_in("17")) <= (threshold + 255) // 256:
            return False
        loose = [name.encode() for i in range(256) for name in loose_in(f"{i:02x}")]
        if not loose:
            return False
        self._git(
            "pack-objects", "-q", str(objects / "pack" / "pack"), stdin=b"\n".join(loose) + b"\n"
        )
        self._git("prune-packed", "-q")
        return True
