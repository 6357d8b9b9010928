"""The files an agent wrote or edited through its file tools, kept in the session's snapshots
even when git ignores them (as Claude Code's own checkpoints keep them): a snapshot is what
``git add -A`` stages, plus these.

Their paths, relative to the worktree's root, are listed beside the session's private index
(``<index>.agent-files``, each path ending in a NUL byte, written only by appending). Once
listed, a path is kept in every later snapshot of the session while the file is there; a path
outside the worktree, or inside a ``.git`` folder, is never listed; the size cap, nested
repositories and convgit's store apply to these files as to any.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Collection
from pathlib import Path

from convgit.base.errors import WorkspaceError
from convgit.git.plumbing.run import Git, git_words
from convgit.git.restore.plan import LeftAlone, lstat, real_folders, repository_above

SUFFIX = ".agent-files"


def list_path(index: Path) -> Path:
    """Where the paths are listed for the private index at ``index``."""
    return Path(f"{index}{SUFFIX}")


def inside(root: Path, file: str) -> bytes | None:
    """``file`` (absolute, as the agent named it) relative to the worktree ``root``; None when
    it is outside, is the root, or is in a ``.git`` folder. Its folder is resolved (symlinks),
    the file itself is not: a symlink is taken as git takes it."""
    if not os.path.isabs(file) or "\0" in file:
        return None
    folder, name = os.path.split(os.path.normpath(file))
    if not name:
        return None
    real = os.path.join(os.path.realpath(folder), name)
    relative = os.path.relpath(real, os.path.realpath(root))
    parts = relative.split(os.sep)
    if parts[0] in ("..", ".") or ".git" in parts:
        return None
    return os.fsencode("/".join(parts))


def note(index: Path, path: bytes) -> bool:
    """List ``path`` (from ``inside``) for the private index at ``index``; False when it is
    listed already."""
    if path in listed(index):
        return False
    index.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(list_path(index), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, path + b"\0")
    finally:
        os.close(fd)
    return True


def listed(index: Path) -> frozenset[bytes]:
    """The paths listed for the private index at ``index`` (a torn last one left out)."""
    try:
        data = list_path(index).read_bytes()
    except OSError:
        return frozenset()
    return frozenset(p for p in data.split(b"\0")[:-1] if p)


def ignored(git: Git, paths: Collection[bytes]) -> frozenset[bytes]:
    """Those of ``paths`` (listed ones) that git's ignore rules match now (``git check-ignore``,
    no file read): the only ones ``git add -A`` would leave out, so the only ones a snapshot
    keeps because they are listed. WorkspaceError when git cannot tell."""
    if not paths:
        return frozenset()
    done = git.run(
        "check-ignore", "--no-index", "--stdin", "-z",
        stdin=b"\0".join(sorted(paths)) + b"\0", check=False,
    )  # fmt: skip
    if done.returncode not in (0, 1):  # 1: none is ignored
        raise WorkspaceError(f"git check-ignore failed: {git_words(done.stderr, done.returncode)}")
    return frozenset(p for p in done.stdout.split(b"\0") if p)


def to_stage(
    root: Path,
    kept: frozenset[bytes],
    held: Callable[[list[bytes]], set[bytes]],
    above_store: Callable[[bytes], bytes | None],
    size_cap: int,
) -> tuple[list[bytes], list[LeftAlone]]:
    """The listed paths ``kept`` that the private index does not hold yet (``held``: those of
    the paths it holds; `git status` names no ignored file it does not track), to stage as
    they are now, and the ones left out (over the size cap, unreadable). A path that is gone,
    below a symlink, in a nested repository or in convgit's store (``above_store``) is passed
    over."""
    base = os.fsencode(root)
    new: list[bytes] = []
    left: list[LeftAlone] = []
    folders: dict[bytes, bool] = {}
    repositories: dict[bytes, bool] = {}
    for path in sorted(kept - held(sorted(kept))):
        if above_store(path) is not None or not real_folders(base, path, folders):
            continue
        if repository_above(base, path, repositories) is not None:
            continue
        full = os.path.join(base, path)
        info = lstat(full)
        if info is None or not (stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode)):
            continue
        name = os.fsdecode(path)
        if stat.S_ISREG(info.st_mode) and info.st_size > size_cap:
            mib = 1024 * 1024
            sizes = f"{info.st_size / mib:.1f} MiB > {size_cap / mib:.1f} MiB"
            left.append(LeftAlone(name, f"larger than the size cap ({sizes})"))
        elif stat.S_ISREG(info.st_mode) and not os.access(full, os.R_OK):
            left.append(LeftAlone(name, "unreadable"))
        else:
            new.append(path)
    return new, left
