"""Planning a restore, and checking it against the disk before anything changes.

A restore is a list of deltas (path, old entry, new entry) from the tree the private index
holds to the snapshot's tree. Nothing here writes: ``plan`` refuses writes that would go
through a symlink, below a file that stays, or delete files outside the snapshots' view, and
sets aside paths convgit must leave alone (ignored or skipped files, nested repositories).
Pure file-system checks; no git process (the caller says what git ignores).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Sequence
from pathlib import Path, PurePosixPath

from convgit.base.errors import NotFoundError, RefusedError, RestoreBlockedError, UsageError
from convgit.base.valueclass import valueclass
from convgit.git.plumbing.objects import GITLINK, Delta, bad_name
from convgit.git.plumbing.paths import folders_above


@valueclass(frozen=True)
class LeftAlone:
    """A path left alone: one a snapshot left out or a restore did not touch, with the reason in
    words (a snapshot record and `snapshot --json` keep the key they had, `skipped`)."""

    path: str
    reason: str


def lstat(path: str | bytes | Path) -> os.stat_result | None:
    """The entry's own stat (never a link's target); None when there is nothing to see."""
    try:
        return os.lstat(path)
    except OSError:  # missing, below a file, a link loop, no permission
        return None


def real_folders(root: bytes, path: bytes, known: dict[bytes, bool]) -> bool:
    """True when every folder above ``path`` is a real folder, no symlink (``known`` caches)."""
    for folder in folders_above(path):
        if folder not in known:
            info = lstat(os.path.join(root, folder))
            known[folder] = info is not None and stat.S_ISDIR(info.st_mode)
        if not known[folder]:
            return False
    return True


def repository_above(root: bytes, path: bytes, known: dict[bytes, bool]) -> bytes | None:
    """The folder above ``path`` that holds a ``.git`` (a nested repository), if any."""
    for folder in folders_above(path):
        if folder not in known:
            known[folder] = os.path.lexists(os.path.join(root, folder, b".git"))
        if known[folder]:
            return folder
    return None


def relative_path(path: str) -> str:
    """A restore path as a clean relative POSIX path ('' for the whole tree, given as '.');
    refuse escapes, and refuse an empty path, which names no file (never the whole tree)."""
    if not path:
        raise UsageError("An empty path names no file or folder; give one (. is the whole tree).")
    pure = PurePosixPath(path.replace(os.sep, "/"))
    if pure.is_absolute() or ".." in pure.parts:
        raise RefusedError(f"The path {path!r} is outside the working tree.")
    parts = [part for part in pure.parts if part != "."]
    if any(bad_name(part) for part in parts):
        raise RefusedError(f"The path {path!r} points into .git or is not a valid file name.")
    return "/".join(parts)


def relative_paths(paths: Sequence[str]) -> list[str]:
    """``relative_path`` of each: checked at a command's start, before any file is read."""
    return [relative_path(path) for path in paths]


def select(deltas: list[Delta], paths: list[str], known: Callable[[str], bool]) -> list[Delta]:
    """The deltas at or below ``paths`` (relative to the root; refused when they escape), plus
    files that stand where a chosen path needs a folder. ``known`` tells whether a path is in
    either tree; a path in neither is NotFoundError."""
    wanted = [relative_path(p) for p in paths]
    if "" in wanted:
        return deltas
    for path in wanted:
        if not known(path):
            raise NotFoundError(f"There is no {path!r} in the snapshot or in the working tree.")
    chosen = {
        d.path for d in deltas if any(d.path == p or d.path.startswith(p + "/") for p in wanted)
    }
    # A file that stands where a chosen path needs a folder must go as well.
    by_path = {d.path: d for d in deltas}
    for path in list(chosen):
        for folder in folders_above(path):
            lead = by_path.get(folder)
            if lead is not None and lead.new is None:
                chosen.add(lead.path)
    return [d for d in deltas if d.path in chosen]


def plan(
    root: Path,
    deltas: list[Delta],
    ignored: Callable[[list[str]], set[str]],
    unaccounted: Callable[[list[str]], dict[str, str]] = lambda paths: {},
    on_disk: Callable[[Delta], bool] = lambda delta: False,
) -> tuple[list[Delta], list[LeftAlone]]:
    """Check every write against the disk before anything changes: refuse writes below a
    symlink or file that stays, and folders that hold files outside the view; set aside
    paths that are outside the view (ignored or skipped files, nested repositories), and
    files absent from the target that it does not account for (``unaccounted`` gives the
    reason for each of those: its snapshot left them out, or its ignore rules match them).
    A file set aside that already holds what the target has (``on_disk``) is not listed."""
    by_path = {d.path: d for d in deltas}
    keep: list[Delta] = []
    aside: list[str] = []
    nested: list[str] = []
    submodules: list[Delta] = []
    gone: list[Delta] = []
    kept_alone: list[LeftAlone] = []
    top = os.fsencode(root)
    repository_at: dict[bytes, bool] = {}
    for delta in deltas:
        if delta.new is not None:
            continue
        if repository_above(top, os.fsencode(delta.path), repository_at) is not None:
            nested.append(delta.path)  # never delete inside another repository
        elif delta.old is not None and delta.old[0] == GITLINK and _holds_files(root, delta):
            kept_alone.append(LeftAlone(delta.path, "a submodule the snapshot lacks; left alone"))
        else:
            gone.append(delta)
    reasons = unaccounted([d.path for d in gone]) if gone else {}
    keep += [d for d in gone if d.path not in reasons]
    kept_alone += [LeftAlone(path, f"{why}; left alone") for path, why in reasons.items()]
    # what the restore takes away: never a file it leaves alone, which a write must not replace
    removals = {d.path for d in keep} | {
        d.path for d in deltas if d.old is not None and d.new is not None
    }
    folders: dict[str, tuple[int | None, bool]] = {}
    for delta in deltas:
        if delta.new is None:
            continue
        if delta.old is not None and delta.old[0] == delta.new[0] == GITLINK:
            submodules.append(delta)  # checking a commit out in a submodule is the user's call
            continue
        verdict = _check_write(root, delta, removals, folders)
        if verdict == "write":
            keep.append(delta)
        elif verdict == "nested":
            nested.append(delta.path)
        else:
            aside.append(delta.path)
    keep.sort(key=lambda d: d.path)
    left_alone = [LeftAlone(p, "inside a nested repository; left alone") for p in nested]
    left_alone += kept_alone
    left_alone += [
        LeftAlone(d.path, f"a submodule; convgit does not move it (its snapshot is at {d.new[1]})")
        for d in submodules
        if d.new is not None
    ]
    aside = [path for path in aside if not on_disk(by_path[path])]
    if aside:
        by_git = ignored(aside)
        for path in aside:
            why = "ignored by git" if path in by_git else _left_out(root, path)
            left_alone.append(LeftAlone(path, f"{why}; differs from the snapshot, left alone"))
    return keep, sorted(left_alone, key=lambda s: s.path)


def _left_out(root: Path, path: str) -> str:
    """Why the snapshots do not hold what stands at ``path`` (not ignored): what it is says."""
    info = lstat(root / path)
    if info is None and not os.access((root / path).parent, os.X_OK):
        return "unreadable"  # a folder above it this user may not enter
    if info is None or stat.S_ISDIR(info.st_mode) or stat.S_ISLNK(info.st_mode):
        return "outside the snapshots"
    if not stat.S_ISREG(info.st_mode):
        kind = "a FIFO" if stat.S_ISFIFO(info.st_mode) else "a socket or a device"
        return f"{kind}, not a file snapshots hold"
    if not os.access(root / path, os.R_OK):
        return "unreadable"
    return "outside the snapshots (size cap)"


def _holds_files(root: Path, delta: Delta) -> bool:
    """True when the folder of a submodule holds anything (its checkout is the user's)."""
    try:
        with os.scandir(root / delta.path) as found:
            return any(found)
    except OSError:
        return False


def _check_write(
    root: Path, delta: Delta, removals: set[str], seen: dict[str, tuple[int | None, bool]]
) -> str:
    """ "write", "nested" or "aside" for ``delta``; ``seen`` keeps what the folders above the
    paths are (mode, holds a .git), each looked at once per plan."""
    assert delta.new is not None
    top = os.fspath(root)
    for lead in folders_above(delta.path):
        known = seen.get(lead)
        if known is None:
            found = lstat(os.path.join(top, lead))
            mode = None if found is None else found.st_mode
            repository = mode is not None and stat.S_ISDIR(mode)
            repository = repository and os.path.lexists(os.path.join(top, lead, ".git"))
            known = seen[lead] = (mode, repository)
        mode, repository = known
        if mode is None:
            return "write"  # nothing there yet: git creates the folders
        if stat.S_ISDIR(mode):
            if repository:
                if lead in removals:
                    raise RestoreBlockedError(
                        f"Restoring {delta.path!r} would write into the repository at "
                        f"{lead!r}; nothing was restored."
                    )
                return "nested"
            continue
        if lead in removals:
            return "write"  # a file of the view that the restore removes before writing
        what = "symlink" if stat.S_ISLNK(mode) else "file"
        raise RestoreBlockedError(
            f"Restoring {delta.path!r} would write below {lead!r}, a {what} that is not part "
            "of the snapshot; nothing was restored.",
            hint=f"move {lead!r} away first",
        )
    info = lstat(os.path.join(top, delta.path))
    if info is None:  # absent, or in a folder this user may not enter (what is there is unseen)
        return (
            "write"
            if os.access(os.path.dirname(os.path.join(top, delta.path)), os.X_OK)
            else "aside"
        )
    if stat.S_ISDIR(info.st_mode):
        if delta.new[0] != GITLINK:
            _check_emptied(root, delta.path, removals)
        return "write"
    return "write" if delta.old is not None else "aside"


def _check_emptied(root: Path, folder: str, removals: set[str]) -> None:
    """Refuse unless every file under ``folder`` on disk is one the restore removes."""
    for top, dirs, files in os.walk(root / folder):
        links = [d for d in dirs if os.path.islink(os.path.join(top, d))]
        for name in [*files, *links, *(d for d in dirs if d == ".git")]:
            rel = Path(top, name).relative_to(root).as_posix()
            if rel not in removals or name == ".git":
                raise RestoreBlockedError(
                    f"Restoring {folder!r} as a file would delete the folder's {rel!r}, which "
                    "is not part of the snapshot; nothing was restored.",
                    hint=f"move {rel!r} away first",
                )
