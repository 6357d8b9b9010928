"""Side-by-side runs: one command in a temporary worktree of each of several commits, at once.

Knows commits, paths and processes, never conversations (the session says which commits).
Promises kept by ``run``:
* everything is checked before any worktree is made, and each commit is checked out in a
  temporary worktree of its own (``convgit.workspace.sidebyside_worktrees``); the main working
  tree, the user's index, HEAD, branches and stash are never touched;
* every worktree is removed at the end, with git's admin folder for it, whatever happened: the
  command failed, timed out or could not start, a checkout failed half-way, or the run was
  interrupted by SIGINT or SIGTERM (then ``RunInterruptedError`` is raised, once the clean-up
  is done); a run killed outright (SIGKILL, a power cut) leaves its worktrees, and what it
  started, to the next run on this machine;
* each command runs in a process group of its own (``convgit.base.process_groups``): a timeout or
  an interruption stops the whole group (SIGTERM or the signal received, then SIGKILL after
  ``GRACE`` seconds), and whatever a command leaves running in its group when it ends is killed;
  what a run killed outright left running is stopped by the next run, before it removes that
  run's worktrees (``convgit.workspace.sidebyside_worktrees.sweep``);
* the output of each command (stdout and stderr, as written) is kept whole in a log file.
"""

from __future__ import annotations

import os
import shutil
import signal
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from convgit.base.errors import (
    NotFoundError,
    RefusedError,
    RunInterruptedError,
    UsageError,
    WorkspaceError,
)
from convgit.base.process_groups import GRACE, MARK, Interrupts, ProcessGroups, tail
from convgit.git.plumbing.objects import BLOB, LEGACY_BLOB, TREE
from convgit.git.plumbing.paths import folders_above
from convgit.git.restore.plan import relative_path
from convgit.workspace import Workspace, user_env
from convgit.workspace.sidebyside_worktrees import Worktrees, sweep


@dataclass(frozen=True)
class Target:
    """One checkout to run in: ``commit``, ``name`` for its folder and log file (a word), and
    ``what`` for sentences ("the snapshot of 242eee4e")."""

    name: str
    commit: str
    what: str


@dataclass(frozen=True)
class Outcome:
    """How one command ended. ``exit_code`` is what a shell reports: 128+N when a signal N
    killed it, 127 when it could not be found, 126 when it could not be executed; None when
    it timed out. ``log`` holds its whole output, ``tail`` its last lines."""

    target: Target
    exit_code: int | None
    seconds: float
    timed_out: bool
    log: Path
    tail: tuple[str, ...]


def default_jobs() -> int:
    """The number of cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on every POSIX system
        return max(1, os.cpu_count() or 1)


def run(
    ws: Workspace,
    targets: Sequence[Target],
    command: Sequence[str],
    *,
    logs: Path,
    jobs: int | None = None,
    timeout: float | None = None,
    links: Sequence[str] = (),
) -> list[Outcome]:
    """Run ``command`` in a temporary worktree of each target, up to ``jobs`` at a time
    (default: the number of cores), each stopped after ``timeout`` seconds; the outcomes come
    in the order of ``targets``, the logs in a new folder under ``logs``. ``links``: paths of
    the main working tree (ignored files such as ``.venv``) made available in each worktree
    as symlinks to the originals. Everything is checked before any worktree is made: a
    command that does not exist, or a link that is missing or that a target's tree holds,
    is refused and nothing runs."""
    if not command:
        raise UsageError("Give the command to run after --.", "convgit run REF... -- COMMAND")
    if jobs is not None and jobs < 1:
        raise UsageError(f"--jobs must be at least 1, not {jobs}.")
    if timeout is not None and not 0 < timeout < float("inf"):
        raise UsageError(f"--timeout must be a number of seconds above 0, not {timeout:g}.")
    linked = _check_links(ws, links)
    _check_targets(ws, targets, command[0], linked)
    sweep(ws, logs)
    folder = logs / f"{time.strftime('%Y%m%dT%H%M%S')}-{os.urandom(3).hex()}"
    try:
        folder.mkdir(parents=True)
    except OSError as exc:
        reason = exc.strerror or exc
        raise WorkspaceError(f"Could not make the log folder {folder}: {reason}.") from None
    trial = _Run(ws, list(targets), list(command), folder, jobs or default_jobs(), timeout, linked)
    return trial.go()


# -- checks before anything is made ------------------------------------------------------------


def _check_links(ws: Workspace, links: Sequence[str]) -> list[str]:
    """The links as clean relative paths: inside the working tree, existing there, none
    inside another (a link inside a linked folder would write into the main tree)."""
    clean: list[str] = []
    for link in links:
        path = relative_path(link)
        if not path:
            raise RefusedError("--link takes a path inside the working tree, not the tree itself.")
        if not os.path.lexists(ws.root / path):
            raise NotFoundError(f"There is no {path} in the working tree to link ({ws.root}).")
        if path not in clean:
            clean.append(path)
    for path in clean:
        for other in clean:
            if other != path and path.startswith(other + "/"):
                raise UsageError(f"--link {path} is inside --link {other}; give only {other}.")
    return clean


def _check_targets(
    ws: Workspace, targets: Sequence[Target], program: str, links: list[str]
) -> None:
    """Each link must be a path the target's tree leaves out, below folders (or nothing); the
    command must exist: on PATH, at an absolute path, or (relative) in each target's tree or
    in a linked folder of the main tree."""
    in_trees: str | None = None
    if "/" not in program:
        if shutil.which(program) is None:
            raise NotFoundError(f"There is no command {program!r} on PATH; nothing was run.")
    elif os.path.isabs(program) or _linked(relative_path(program), links):
        where = program if os.path.isabs(program) else str(ws.root / relative_path(program))
        if not (os.path.isfile(where) and os.access(where, os.X_OK)):
            raise NotFoundError(f"There is no executable {where}; nothing was run.")
    else:
        in_trees = relative_path(program)
    wanted = sorted({*links, *(p for link in links for p in folders_above(link))})
    if in_trees is not None:
        wanted.append(in_trees)
    if not wanted:
        return
    for target in targets:
        modes = ws.modes(target.commit, wanted)
        for link in links:
            if modes[link] is not None:
                raise RefusedError(
                    f"{link} is in {target.what}, so it cannot be linked there: --link is for"
                    " paths snapshots leave out (ignored files such as .venv or node_modules)."
                )
            folder = next((p for p in folders_above(link) if modes[p] not in (None, TREE)), None)
            if folder is not None:
                raise RefusedError(
                    f"{folder} is a file in {target.what}, so {link} cannot be linked."
                )
        if in_trees is not None:
            mode = modes[in_trees]
            if mode is None or mode == TREE:
                raise NotFoundError(f"There is no {in_trees} in {target.what}; nothing was run.")
            if mode in (BLOB, LEGACY_BLOB):
                raise RefusedError(
                    f"{in_trees} is not executable in {target.what}; nothing was run.",
                    f"run it through its interpreter, e.g. `sh {in_trees}`",
                )


def _linked(path: str, links: list[str]) -> bool:
    return any(path == link or path.startswith(link + "/") for link in links)


# -- the run -----------------------------------------------------------------------------------


class _Run:
    """One run: its worktrees (made, used and removed on worker threads) and the process
    groups of its commands."""

    def __init__(
        self,
        ws: Workspace,
        targets: list[Target],
        command: list[str],
        logs: Path,
        jobs: int,
        timeout: float | None,
        links: list[str],
    ) -> None:
        self.targets, self.command, self.logs = targets, command, logs
        self.jobs, self.timeout = jobs, timeout
        token = os.urandom(8).hex()  # marks what this run starts (``kill_marked``)
        self.env = {**user_env(), MARK: token}
        self.worktrees = Worktrees(ws, logs, links, token)
        self.groups = ProcessGroups()
        self.outcomes: list[Outcome | None] = [None] * len(targets)
        self.threads: list[threading.Thread] = []

    def go(self) -> list[Outcome]:
        with Interrupts() as signals:
            try:
                self.worktrees.make([target.name for target in self.targets])
                self._each(self._prepare)
                self._each(self._execute)
            finally:
                signals.hold()
                self._stop(signals.received or signal.SIGTERM)
                self._clean_up()
        if signals.received is not None:  # it came during the clean-up
            raise RunInterruptedError(signals.received)
        return [outcome for outcome in self.outcomes if outcome is not None]

    def _each(self, work: Callable[[int], None], *, stoppable: bool = True) -> None:
        """``work(i)`` for every target, on up to ``jobs`` threads; the first error stops the
        rest (unless not ``stoppable``) and is raised once every thread has ended."""
        pending = iter(range(len(self.targets)))
        lock = threading.Lock()
        errors: list[BaseException] = []

        def worker() -> None:
            while True:
                if stoppable and self.groups.stopping:
                    return
                with lock:
                    index = next(pending, None)
                if index is None:
                    return
                try:
                    work(index)
                except BaseException as exc:  # handed to the main thread
                    with lock:
                        errors.append(exc)
                    if stoppable:
                        self.groups.close()
                        return

        threads = [
            threading.Thread(target=worker, name=f"convgit-run-{n}", daemon=True)
            for n in range(min(self.jobs, len(self.targets)))
        ]
        self.threads = threads
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        if errors:
            raise errors[0]

    def _prepare(self, index: int) -> None:
        target = self.targets[index]
        self.worktrees.prepare(index, target.commit, target.what)

    def _execute(self, index: int) -> None:
        target = self.targets[index]
        log = self.logs / f"{index + 1}-{target.name}.log"
        if self.groups.stopping:
            return
        try:
            out = open(log, "wb")  # noqa: SIM115 - closed below, after the command ends
        except OSError as exc:
            raise WorkspaceError(f"Could not write the log {log}: {exc.strerror or exc}.") from None
        with out:
            ended = self.groups.run(
                self.command, cwd=self.worktrees.folders[index], env=self.env, out=out,
                timeout=self.timeout,
            )  # fmt: skip
        self.outcomes[index] = Outcome(
            target, ended.exit_code, ended.seconds, ended.timed_out, log, tail(log)
        )

    def _stop(self, signum: int) -> None:
        """Stop every running command (``signum``, then SIGKILL after ``GRACE``) and wait for
        the worker threads."""
        self.groups.signal(signum)
        deadline = time.monotonic() + GRACE
        for thread in self.threads:
            if thread.ident is not None:
                thread.join(max(0.0, deadline - time.monotonic()))
        self.groups.signal(signal.SIGKILL)
        for thread in self.threads:
            if thread.ident is not None:
                thread.join()

    def _clean_up(self) -> None:
        """Remove every worktree this run made or began, then its temporary folder."""
        if self.worktrees.base is None:
            return
        try:
            self._each(self.worktrees.remove, stoppable=False)
        finally:
            self.worktrees.remove_base()
        self.worktrees.forget()
