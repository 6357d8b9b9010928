"""Packing convgit's own objects, and ``gc`` when the user asked for it, in the background:
no command the user waits on does either.

Each snapshot adds a few loose objects (a blob per changed file, its trees, a commit). Once
about ``PACK_AFTER`` have been added since the last packing, the command that noticed starts
``python -m convgit.workspace.background`` detached from itself and returns; that process packs the
objects only convgit's refs reach (``Workspace.maintain``), one at a time per store.

With ``[retention] auto = true``, a turn that made a snapshot also asks here (``gc_due``), at
most once a day (the time of ``<store>/gc-checked``), whether a day has passed since the last gc;
if so, the session starts the automatic gc through convgit's own entry (``python -m convgit
_auto-gc``, which runs ``convgit.upkeep.collecting``) the same way (``detached``), and it writes
a line to ``<store>/logs/gc.log``. No floor starts a module of a floor above it
(``tests/test_layering.py``).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from convgit.base import locks
from convgit.base.errors import ConvgitError
from convgit.workspace import Workspace

PACK_AFTER = 2048
GC_EVERY = 24 * 3600  # seconds: an automatic gc at most once a day


def note(workspace: Workspace, store: Path, written: int) -> bool:
    """Count ``written`` objects added to ``workspace``'s repository; past ``PACK_AFTER`` since
    the last packing, start packing in the background. True when it started."""
    counter = store / "maintenance"
    try:
        count = int(counter.read_text()) + written
    except (OSError, ValueError):
        count = written
    due = count >= PACK_AFTER
    temporary = counter.with_name(f"maintenance.{os.getpid()}")
    try:  # a lost count between two writers only delays the packing
        temporary.write_text(f"{0 if due else count}\n")
        os.replace(temporary, counter)
    except OSError:
        return False
    if due:
        start(workspace, store / "locks" / "maintenance.lock")
    return due


def start(workspace: Workspace, lock: Path) -> None:
    """Run ``main`` for ``workspace`` in a process of its own that nothing waits for."""
    args = [
        sys.executable, "-m", "convgit.workspace.background", str(workspace.root),
        str(workspace.git_dir), str(workspace.common_dir), workspace.object_format, str(lock),
    ]  # fmt: skip
    detached(args, workspace.root, "convgit-maintenance")


def detached(command: list[str], cwd: Path, name: str) -> None:
    """Start ``command`` in ``cwd`` in a process of its own that nothing waits for (a shell
    named ``name`` puts it in the background and exits at once, so no zombie is left behind)."""
    subprocess.run(
        ["sh", "-c", 'exec "$@" </dev/null >/dev/null 2>&1 &', name, *command],
        cwd=cwd,
        start_new_session=True,
        check=False,
    )


def gc_due(store: Path, worktree: Path) -> bool:
    """With ``[retention] auto = true``, whether a day has passed since the last ``gc`` (the
    caller starts it, ``detached``); a stat when checked within the day."""
    checked = store / "gc-checked"
    try:
        if time.time() - checked.stat().st_mtime < GC_EVERY:
            return False
    except OSError:
        pass
    try:
        checked.write_text(f"{time.time():.0f}\n")
        if time.time() - (store / "gc-last").stat().st_mtime < GC_EVERY:
            return False
    except FileNotFoundError:
        pass
    except OSError:
        return False
    from convgit.store import config
    from convgit.store.location import StoreLocation, find_git

    try:  # a config.toml that is refused starts no gc: the next command says why
        auto = (
            config.load(StoreLocation(store, find_git(worktree))).value("retention", "auto") is True
        )
    except ConvgitError:
        return False
    return auto


def main(argv: list[str]) -> int:
    """``ROOT GIT_DIR COMMON_DIR OBJECT_FORMAT LOCK``: pack convgit's loose objects, unless
    another packing holds the lock."""
    root, git_dir, common_dir, object_format, lock = argv
    workspace = Workspace(Path(root), Path(git_dir), Path(common_dir), object_format=object_format)
    try:
        with locks.held(Path(lock), 0):
            workspace.maintain(threshold=0)
    except (locks.LockTimeout, ConvgitError, OSError):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
