"""The temporary worktrees of a side-by-side run, and those of runs that could not remove theirs.

Knows commits, paths and processes, never conversations. Promises kept here:
* each commit is checked out by ``Workspace.add_worktree`` in a new folder under the system's
  temporary folder, outside the repository, detached; the main working tree, the user's index,
  HEAD, branches and stash are never touched;
* ``remove`` takes a worktree away with git's admin folder for it, also one a checkout left
  half-made (a full disk), and removes each link itself, never what it points at;
* while a run has worktrees its log folder holds ``running.json`` (its process, its token and
  its worktrees), so ``sweep`` removes those of a run killed outright once that process is
  gone, after stopping what that run left running (the processes with its token in their
  environment: its commands, and a git still checking a worktree out, which would otherwise
  hold git's locks in the worktrees' admin folders and make the next checkout fail).
"""

from __future__ import annotations

import os
import socket
import tempfile
from collections.abc import Sequence
from contextlib import suppress
from pathlib import Path

from convgit.base import codec
from convgit.base.errors import ConvgitError, WorkspaceError
from convgit.base.process_groups import MARK, kill_marked
from convgit.workspace import Workspace

RUNNING = "running.json"  # in a run's log folder while it runs: its process and worktrees


class Worktrees:
    """The worktrees of one run, one folder per target under a temporary folder of its own,
    each with ``links``: paths of the main working tree made available as symlinks to the
    originals. ``prepare`` and ``remove`` may run on several threads at once."""

    def __init__(self, ws: Workspace, logs: Path, links: Sequence[str], token: str) -> None:
        self.ws, self.logs, self.links, self.token = ws, logs, list(links), token
        self.base: Path | None = None
        self.folders: list[Path] = []  # each is recorded before git starts on it

    def make(self, names: Sequence[str]) -> None:
        """Make the temporary folder, name a folder in it for each of ``names`` (words), and
        record them in the log folder before any is made."""
        try:
            self.base = Path(tempfile.mkdtemp(prefix="convgit-run-"))
            self.folders = [self.base / f"{n}-{name}" for n, name in enumerate(names, 1)]
            record = {
                "pid": os.getpid(),
                "host": socket.gethostname(),
                "token": self.token,
                "base": str(self.base),
                "folders": [str(folder) for folder in self.folders],
            }
            temporary = self.logs / f".{RUNNING}"
            temporary.write_bytes(codec.encode(record))
            temporary.replace(self.logs / RUNNING)
        except OSError as exc:
            raise WorkspaceError(
                f"Could not make a temporary folder for the worktrees: {exc.strerror or exc}."
            ) from None

    def prepare(self, index: int, commit: str, what: str) -> None:
        """Check ``commit`` (``what`` in sentences) out in folder ``index``, with the links."""
        folder = self.folders[index]
        try:
            self.ws.add_worktree(commit, folder, {MARK: self.token})
            for link in self.links:
                place = folder / link
                place.parent.mkdir(parents=True, exist_ok=True)
                os.symlink(self.ws.root / link, place)
        except (WorkspaceError, OSError) as exc:
            reason = exc.message if isinstance(exc, WorkspaceError) else exc.strerror or str(exc)
            raise WorkspaceError(
                f"Could not check out {what} in a temporary worktree: "
                f"{reason.rstrip('.')}; nothing was run."
            ) from None

    def remove(self, index: int) -> None:
        """Remove the worktree in folder ``index``, whatever state it is in."""
        folder = self.folders[index]
        for link in self.links:
            if os.path.islink(folder / link):
                os.unlink(folder / link)  # never through it, whatever removes the rest
        try:
            self.ws.discard_worktree(folder)
        except OSError as exc:
            raise WorkspaceError(
                f"The temporary worktree {folder} could not be removed: {exc.strerror or exc}.",
                f"remove it with `git worktree remove --force --force {folder}`",
            ) from None

    def remove_base(self) -> None:
        """Remove the temporary folder, which ``remove`` of every worktree left empty."""
        if self.base is None:
            return
        try:
            self.base.rmdir()
        except FileNotFoundError:
            pass
        except OSError:
            raise WorkspaceError(
                f"The temporary worktrees in {self.base} could not all be removed.",
                f"remove them with `git worktree remove --force` and `rm -r {self.base}`",
            ) from None

    def forget(self) -> None:
        """Drop the record of the run's worktrees, once they are all gone."""
        (self.logs / RUNNING).unlink(missing_ok=True)


def sweep(ws: Workspace, logs: Path) -> None:
    """Remove the worktrees of earlier runs on this machine whose process is gone."""
    for record_path in logs.glob(f"*/{RUNNING}"):
        try:
            record = codec.decode(record_path.read_bytes())
            pid, host, base = int(record["pid"]), str(record["host"]), Path(record["base"])
            folders = [Path(folder) for folder in record["folders"]]
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if host != socket.gethostname() or _running(pid):
            continue
        token = record.get("token")
        if isinstance(token, str) and token:
            kill_marked(token)
        with suppress(OSError, ConvgitError):
            for folder in folders:
                ws.discard_worktree(folder)
            with suppress(FileNotFoundError):
                base.rmdir()
            record_path.unlink()


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    return True
