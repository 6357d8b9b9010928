"""How a restore puts a file in its place, and the exact bytes of files beside git's view of
them. A file is written beside its place and moved over it in one rename (``write``,
``place``): the file there is the old one or the new one, never half of one, whatever stops the
restore (a full disk, a kill). git's view may differ from what is on disk (line endings
converted on the way in, clean filters, exec bits that core.fileMode=false does not record); a
restore keeps the exact bytes of what it is about to change (``preserve``) so that undoing it
gives them back byte for byte (``write``), bypassing git's filters. Never through a symlink,
never outside the working tree.
"""

from __future__ import annotations

import errno
import hashlib
import os
import shutil
import stat
from collections.abc import Sequence
from contextlib import suppress
from pathlib import Path

from convgit.base import faults
from convgit.base.errors import RestoreBlockedError
from convgit.git.plumbing.objects import BLOB, EXEC, GITLINK, LEGACY_BLOB, TREE, Objects, TreeEntry
from convgit.git.plumbing.paths import folders_above
from convgit.git.plumbing.run import Git
from convgit.git.restore.plan import lstat


def real_parent(root: Path, path: str) -> bool:
    """True when every folder above ``path`` is a real folder (no symlink) under ``root``."""
    for folder in folders_above(path):
        info = lstat(os.path.join(root, folder))
        if info is None or not stat.S_ISDIR(info.st_mode):
            return False
    return True


def on_disk(git: Git, path: str) -> tuple[int, str, bytes] | None:
    """(mode, blob id, bytes) of the regular file at ``path`` as it is on disk, with no
    filter or line-ending conversion and its own exec bit; None for anything else."""
    if not real_parent(git.root, path):
        return None
    target = git.root / path
    info = lstat(target)
    if info is None or not stat.S_ISREG(info.st_mode):
        return None
    try:
        data = target.read_bytes()
    except OSError:
        return None
    mode = EXEC if info.st_mode & stat.S_IXUSR else BLOB
    algorithm = "sha256" if git.hash_len == 32 else "sha1"
    return mode, hashlib.new(algorithm, b"blob %d\0" % len(data) + data).hexdigest(), data


def preserve(git: Git, objects: Objects, commit: str, paths: Sequence[str]) -> str:
    """``commit`` (a snapshot of the files now), or a child of it whose tree holds the exact
    bytes and exec bits on disk at ``paths`` wherever git's view of them differs."""
    tree_id = objects.peel(commit, "tree")
    found: dict[str, TreeEntry] = {}
    for path in paths:
        raw = on_disk(git, path)
        entry = objects.lookup(tree_id, path) if raw is not None else None
        if raw is None or entry is None:
            continue
        mode = BLOB if entry[0] == LEGACY_BLOB else entry[0]
        if mode in (BLOB, EXEC) and raw[:2] != (mode, entry[1]):
            stored = git.run("hash-object", "-w", "--no-filters", "--stdin", stdin=raw[2])
            found[path] = (raw[0], os.fsdecode(stored.stdout).strip())
    if not found:
        return commit
    new_tree_id = _replace_in_tree(git, objects, tree_id, found)
    count = f"{len(found)} file" + ("s" if len(found) != 1 else "")
    message = f"convgit saved state, the exact bytes of {count}\n"
    return git.commit_tree(new_tree_id, [objects.peel(commit, "commit")], message)


def _replace_in_tree(
    git: Git, objects: Objects, tree_id: str, entries: dict[str, TreeEntry]
) -> str:
    """The id of ``tree_id`` with the blobs at ``entries`` (paths it holds) replaced."""
    here: dict[str, TreeEntry] = {}
    below: dict[str, dict[str, TreeEntry]] = {}
    for path, entry in entries.items():
        head, _, rest = path.partition("/")
        if rest:
            below.setdefault(head, {})[rest] = entry
        else:
            here[head] = entry
    lines: list[bytes] = []
    for name, mode, oid in objects.tree(tree_id):
        if name in below:
            mode, oid = TREE, _replace_in_tree(git, objects, oid, below[name])
        mode, oid = here.get(name, (mode, oid))
        kind = "tree" if mode == TREE else "commit" if mode == GITLINK else "blob"
        lines.append(f"{mode:06o} {kind} {oid}\t".encode() + os.fsencode(name))
    made = git.run("mktree", "-z", stdin=b"\0".join(lines) + b"\0")
    return os.fsdecode(made.stdout).strip()


_TEMPORARY = ".convgit-"  # ``.<name>.convgit-<pid>``: a file being written, beside its place


def sweep(root: Path, paths: Sequence[str]) -> list[str]:
    """Remove the temporary files ``write`` left beside ``paths`` when its restore was killed
    between writing one and moving it into place (the caller holds the restore's lock, so no
    writer of them is alive); the paths removed. Each folder is read once."""
    wanted: dict[str, set[str]] = {}
    for path in paths:
        folder, _, name = path.rpartition("/")
        wanted.setdefault(folder, set()).add(name)
    removed = []
    for folder, names in wanted.items():
        place = os.path.join(root, folder) if folder else str(root)
        if not real_parent(root, f"{folder}/x" if folder else "x"):
            continue  # never through a symlink
        try:
            found = os.listdir(place)
        except OSError:
            continue
        for entry in found:
            head, mark, pid = entry.rpartition(_TEMPORARY)
            if not (mark and pid.isdigit() and head.startswith(".") and head[1:] in names):
                continue
            with suppress(FileNotFoundError, IsADirectoryError):
                os.unlink(os.path.join(place, entry))
                removed.append(f"{folder}/{entry}" if folder else entry)
    return removed


def place(root: Path, path: str, source: Path) -> None:
    """Move the file or symlink at ``source`` (git wrote it there, whole) to ``path``,
    replacing whatever file or link stands there in one rename: the file at ``path`` is
    never half-written, and a file's permission bits are kept (``kept_mode``). From another
    file system, it is copied beside its place first."""
    target = os.path.join(root, path)
    folder = os.path.dirname(target)
    if not real_parent(root, path):
        os.makedirs(folder, exist_ok=True)
        if not real_parent(root, path):  # the plan refused this already; never through one
            raise RestoreBlockedError(f"Restoring {path!r} would write through a symlink.")
    written = lstat(source)
    if written is not None and stat.S_ISREG(written.st_mode):
        mode = kept_mode(target, executable=bool(written.st_mode & stat.S_IXUSR))
        if mode is not None:
            os.chmod(source, mode)
    try:
        os.replace(source, target)
    except OSError as exc:
        if exc.errno != errno.EXDEV:
            raise
        _copy_beside(source, target)


def kept_mode(target: str, *, executable: bool) -> int | None:
    """The permission bits for the file that replaces the regular file at ``target``: its own
    (a read-only or private file stays so), with the exec bits the new file has (where it
    can be read); None when no regular file stands there (git's mode for a new file)."""
    info = lstat(target)
    if info is None or not stat.S_ISREG(info.st_mode):
        return None
    mode = stat.S_IMODE(info.st_mode) & 0o666
    return mode | (mode & 0o444) >> 2 if executable else mode


def _copy_beside(source: Path, target: str) -> None:
    """``source`` copied beside ``target`` (its mode kept), then moved over it."""
    folder, name = os.path.split(target)
    temporary = os.path.join(folder, f".{name}{_TEMPORARY}{os.getpid()}")
    try:
        if source.is_symlink():
            os.symlink(os.readlink(source), temporary)
        else:
            shutil.copyfile(source, temporary, follow_symlinks=False)
            shutil.copymode(source, temporary, follow_symlinks=False)
        os.replace(temporary, target)
    except BaseException:
        with suppress(FileNotFoundError):
            os.unlink(temporary)
        raise


def write(root: Path, path: str, data: bytes, *, executable: bool) -> None:
    """Write ``data`` at ``path`` as it is (no filter, no line-ending conversion),
    replacing whatever file or link stands there (a file's permission bits are kept:
    ``kept_mode``)."""
    target = os.path.join(root, path)
    folder, name = os.path.split(target)
    if not real_parent(root, path):
        os.makedirs(folder, exist_ok=True)
        if not real_parent(root, path):  # the plan refused this already; never through one
            raise RestoreBlockedError(f"Restoring {path!r} would write through a symlink.")
    faults.point("restore:exact")
    temporary = os.path.join(folder, f".{name}{_TEMPORARY}{os.getpid()}")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    handle = os.open(temporary, flags, 0o777 if executable else 0o666)
    try:
        with os.fdopen(handle, "wb") as out:
            mode = kept_mode(target, executable=executable)
            if mode is not None:
                os.fchmod(out.fileno(), mode)
            out.write(data)
        faults.point("restore:exact-written")  # the file written beside its place, not moved
        info = lstat(target)
        if info is not None and stat.S_ISDIR(info.st_mode):
            os.rmdir(target)  # an emptied folder where the file belongs
        os.replace(temporary, target)
    except BaseException:
        with suppress(FileNotFoundError):
            os.unlink(temporary)
        raise
