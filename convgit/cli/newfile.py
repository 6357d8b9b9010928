"""Writing a file a user named (``html -o FILE``, ``export -o FILE``): the one way every command
writes outside the store (``worktree REF DIR``, a new folder, is checked by the same rules).

* A file already there (a symlink too, even one pointing nowhere) is never replaced unless the
  user asked (``--force``); then the path itself is replaced, a symlink included: the bytes never
  go through it to wherever it points.
* A folder is refused, naming it: the user gives the file's path (``-o DIR/page.html``).
* A folder that does not exist is refused, never made.
* The bytes go to a temporary file beside the target first, then into place at once: a reader
  never sees half a file, and no temporary file is left behind, whatever fails.
"""

from __future__ import annotations

import contextlib
import errno
import os
from pathlib import Path

from convgit.base.errors import RefusedError

# the file systems where a hard link is refused: the new file is then created exclusively
_NO_LINKS = frozenset({errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK, errno.EXDEV})


def write(target: Path, data: bytes, *, command: str, force: bool = False) -> None:
    """Write ``data`` to ``target`` for ``command`` (``convgit html``), as the module says."""
    _check(target, command, force)
    scratch = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        out = open(scratch, "xb")  # noqa: SIM115 - closed below; only a file made here is removed
    except OSError as exc:
        raise _unwritable(target, exc) from None
    try:
        try:
            with out:
                out.write(data)
        except OSError as exc:
            raise _unwritable(target, exc) from None
        if force:
            os.replace(scratch, target)
        else:
            _place_new(scratch, target, command)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(scratch)


def _unwritable(target: Path, exc: OSError) -> RefusedError:
    return RefusedError(f"{target} cannot be written ({exc.strerror or exc}); nothing was written.")


def check_new_folder(target: Path, command: str) -> None:
    """``target`` can be a new folder (git refuses one that is not empty): not a file, and in
    a folder that exists."""
    if os.path.lexists(target) and not target.is_dir():
        raise RefusedError(f"{target} exists and is not a folder; {command} takes a new folder.")
    _check_parent(target, command)


def _check_parent(target: Path, command: str) -> None:
    parent = target.parent
    if not parent.is_dir():
        raise RefusedError(
            f"{target} cannot be made: the folder {parent} does not exist, and {command} does"
            " not make folders."
        )


def _check(target: Path, command: str, force: bool) -> None:
    if target.is_dir() and not target.is_symlink():
        raise RefusedError(
            f"{target} is a folder; {command} -o takes the path of the file to write."
        )
    _check_parent(target, command)
    if os.path.lexists(target) and not force:
        raise _exists(target, command)


def _exists(target: Path, command: str) -> RefusedError:
    return RefusedError(
        f"{target} exists; {command} replaces a file only when asked (--force).",
        "choose another name, or add --force",
    )


def _place_new(scratch: Path, target: Path, command: str) -> None:
    """Put ``scratch`` at ``target`` only if nothing is there (the check and the placing are
    one step: a file made meanwhile is never replaced)."""
    try:
        os.link(scratch, target, follow_symlinks=False)
        return
    except FileExistsError:
        raise _exists(target, command) from None
    except OSError as exc:
        if exc.errno not in _NO_LINKS:
            raise
    with open(scratch, "rb") as source:
        data = source.read()
    try:
        out = open(target, "xb")  # noqa: SIM115 - closed below
    except FileExistsError:
        raise _exists(target, command) from None
    try:
        with out:
            out.write(data)
    except BaseException:
        os.unlink(target)  # ours, made above: never half a file
        raise
