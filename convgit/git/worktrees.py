"""Side-by-side checkouts: a snapshot checked out in a real, detached `git worktree` of its
own, marked as made by convgit. The main working tree, its index and HEAD are never touched,
and a worktree convgit did not make is never removed.
"""

from __future__ import annotations

import os
import shutil
import stat
import sys
import threading
from collections.abc import Callable, Mapping
from contextlib import suppress
from pathlib import Path

from convgit.base.errors import RefusedError, WorkspaceError
from convgit.git.plumbing.run import Git

MARKER = "convgit-worktree"
# `git worktree add` and `remove` read every worktree's admin folder and die on one another
# git is still writing (an empty commondir): one at a time in this process.
_ADMIN = threading.Lock()


def add(git: Git, commit: str, directory: Path, env: Mapping[str, str] | None = None) -> None:
    """Check the commit ``commit`` (a full id) out in ``directory``, detached and marked;
    ``env``: variables added to the environment of the git that does it."""
    directory = Path(directory).absolute()
    for inside in (git.root, git.common_dir):
        if directory == inside or directory.resolve().is_relative_to(inside.resolve()):
            raise RefusedError(
                f"{directory} is inside {inside}; choose a folder outside the repository."
            )
    if directory.exists() and any(directory.iterdir()):
        raise RefusedError(f"{directory} already exists and is not empty.")
    with _ADMIN:
        git.run(
            "worktree", "add", "--detach", "--quiet", str(directory), commit,
            env={**git.env, **(env or {})},
        )  # fmt: skip
        found = admin(git, directory)
        if found is None:  # pragma: no cover - git just made it
            raise WorkspaceError(f"git did not register the worktree at {directory}.")
        (found / MARKER).write_text(f"{commit}\n")


def listed(git: Git) -> list[tuple[Path, str]]:
    """(path, head commit) of each worktree convgit made, whether or not its folder exists."""
    found: list[tuple[Path, str]] = []
    for folder in sorted((git.common_dir / "worktrees").glob("*")):
        if not (folder / MARKER).exists():
            continue
        try:
            path = Path((folder / "gitdir").read_text().strip()).parent
            head = (folder / "HEAD").read_text().strip()
        except OSError:
            continue
        if head.startswith("ref:"):  # someone checked a branch out there since
            ref = head[4:].strip()
            proc = git.run("rev-parse", "--verify", "-q", f"{ref}^{{commit}}", check=False)
            head = os.fsdecode(proc.stdout).strip() if proc.returncode == 0 else ""
        found.append((path, head))
    return found


def remove(git: Git, directory: Path, *, force: bool = False) -> None:
    """Remove a worktree convgit made. Refuses one with changes unless ``force``; refuses
    worktrees convgit did not make."""
    directory = Path(directory).absolute()
    found = admin(git, directory)
    if found is None or not (found / MARKER).exists():
        raise RefusedError(f"{directory} is not a worktree made by convgit.")
    if not directory.exists():
        shutil.rmtree(found)  # its folder is gone: forget it, as `git worktree prune` would
        return
    with _ADMIN:
        proc = git.run(
            "worktree", "remove", *(["--force"] if force else []), str(directory), check=False
        )
    if proc.returncode != 0:
        said = os.fsdecode(proc.stderr).strip()
        if "modified or untracked" in said:  # git's words name an option convgit does not take
            raise RefusedError(
                f"git will not remove {directory}: it holds changes (modified or untracked"
                " files); nothing was removed.",
                hint=f"keep what you need, then `git worktree remove --force {directory}`",
            )
        raise RefusedError(f"git will not remove {directory}: {said}")


def discard(git: Git, directory: Path) -> None:
    """Remove the worktree at ``directory`` and git's admin folder for it, whatever state it
    is in: made by ``add`` and changed since, or half-made by a checkout that failed or was
    killed (git leaves it locked, without convgit's mark). git removes it when it can; what
    is left is deleted as git would, never following a symlink. The caller vouches that it
    made ``directory``: this does not check for convgit's mark."""
    directory = Path(directory).absolute()
    with _ADMIN:
        if admin(git, directory) is not None and directory.is_dir():
            git.run("worktree", "remove", "--force", "--force", str(directory), check=False)
    if os.path.lexists(directory):
        _delete_tree(directory)
    with _ADMIN:
        found = admin(git, directory)
        if found is not None:
            _delete_tree(found)  # as `git worktree prune` would, locked or not


def admin(git: Git, directory: Path) -> Path | None:
    """git's admin folder (``worktrees/<name>`` in the common dir) of the worktree at
    ``directory``, if it has one."""
    wanted = (directory / ".git").resolve()
    for folder in (git.common_dir / "worktrees").glob("*"):
        try:
            if Path((folder / "gitdir").read_text().strip()).resolve() == wanted:
                return folder
        except OSError:
            continue
    return None


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
    if sys.version_info >= (3, 12):
        shutil.rmtree(path, onexc=writable_and_retry)
    else:
        shutil.rmtree(path, onerror=writable_and_retry)
