"""Side-by-side runs: one command in a temporary worktree of each of several commits, at once.

Knows commits, paths and processes, never conversations (the session says which commits).
Promises kept by ``run``:
* each commit is checked out by ``Workspace.add_worktree`` in a new folder under the system's
  temporary folder, outside the repository, detached; the main working tree, the user's index,
  HEAD, branches and stash are never touched;
* every worktree is removed at the end, with git's admin folder for it, whatever happened: the
  command failed, timed out or could not start, a checkout failed half-way (a full disk), or
  the run was interrupted by SIGINT or SIGTERM (then ``RunInterruptedError`` is raised, once
  the clean-up is done);
* each command runs in a process group of its own: a timeout or an interruption stops the
  whole group (SIGTERM or the signal received, then SIGKILL after ``GRACE`` seconds), and
  whatever a command leaves running in its group when it ends is killed;
* the output of each command (stdout and stderr, as written) is kept whole in a log file;
* a run killed outright (SIGKILL, a power cut) cannot clean up: its folder of logs says which
  worktrees it made, and the next run on this machine removes them once that process is gone.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

from convgit import codec
from convgit.errors import (
    ConvgitError,
    NotFoundError,
    RefusedError,
    RunInterruptedError,
    UsageError,
    WorkspaceError,
)
from convgit.git.objects import BLOB, LEGACY_BLOB, TREE
from convgit.git.restoreplan import relative_path
from convgit.workspace import Workspace, user_env

GRACE = 2.0  # seconds a stopped command has to exit before it is killed
TAIL_LINES = 5
_TAIL_BYTES = 16384
_NOT_FOUND, _NOT_EXECUTABLE = 127, 126  # the shell's exit codes for a command it cannot start


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
    _sweep(ws, logs)
    folder = logs / f"{time.strftime('%Y%m%dT%H%M%S')}-{os.urandom(3).hex()}"
    try:
        folder.mkdir(parents=True)
    except OSError as exc:
        raise WorkspaceError(f"Could not make the log folder {folder}: {_words(exc)}.") from None
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


def _parents(path: str) -> list[str]:
    parts = path.split("/")
    return ["/".join(parts[:depth]) for depth in range(1, len(parts))]


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
    wanted = sorted({*links, *(p for link in links for p in _parents(link))})
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
            folder = next((p for p in _parents(link) if modes[p] not in (None, TREE)), None)
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


# -- runs that could not clean up ----------------------------------------------------------------

_RUNNING = "running.json"  # in a run's log folder while it runs: its process and worktrees


def _sweep(ws: Workspace, logs: Path) -> None:
    """Remove the worktrees of earlier runs on this machine whose process is gone."""
    for record_path in logs.glob(f"*/{_RUNNING}"):
        try:
            record = codec.decode(record_path.read_bytes())
            pid, host, base = int(record["pid"]), str(record["host"]), Path(record["base"])
            folders = [Path(folder) for folder in record["folders"]]
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if host != socket.gethostname() or _running(pid):
            continue
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


# -- the run -----------------------------------------------------------------------------------


class _Signals:
    """In the main thread, SIGINT and SIGTERM raise ``RunInterruptedError`` (the first one
    only); after ``hold`` they are only recorded, so the clean-up cannot be cut short. A
    signal the caller ignores stays ignored."""

    def __init__(self) -> None:
        self.received: int | None = None
        self._held = False
        self._saved: dict[int, Any] = {}  # what signal.signal returned

    def __enter__(self) -> _Signals:
        if threading.current_thread() is threading.main_thread():
            for signum in (signal.SIGINT, signal.SIGTERM):
                if signal.getsignal(signum) != signal.SIG_IGN:
                    self._saved[signum] = signal.signal(signum, self._handle)
        return self

    def _handle(self, signum: int, _frame: FrameType | None) -> None:
        if self.received is not None:
            return
        self.received = signum
        if not self._held:
            raise RunInterruptedError(signum)

    def hold(self) -> None:
        self._held = True

    def __exit__(self, *exc: object) -> None:
        for signum, handler in self._saved.items():
            # None: a handler not installed from Python, which cannot be put back
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)


class _Run:
    """One run: its worktrees (made, used and removed on worker threads) and the process
    groups of the commands running now."""

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
        self.ws, self.targets, self.command, self.logs = ws, targets, command, logs
        self.jobs, self.timeout, self.links = jobs, timeout, links
        self.env = user_env()
        self.base: Path | None = None
        self.folders: list[Path] = []  # each is recorded before git starts on it
        self.outcomes: list[Outcome | None] = [None] * len(targets)
        self.lock = threading.Lock()
        self.stopping = False
        self.running: set[int] = set()  # process group ids
        self.threads: list[threading.Thread] = []

    def go(self) -> list[Outcome]:
        with _Signals() as signals:
            try:
                try:
                    self.base = Path(tempfile.mkdtemp(prefix="convgit-run-"))
                    self.folders = [
                        self.base / f"{n}-{target.name}" for n, target in enumerate(self.targets, 1)
                    ]
                    self._record_running()
                except OSError as exc:
                    raise WorkspaceError(
                        f"Could not make a temporary folder for the worktrees: {_words(exc)}."
                    ) from None
                self._each(self._prepare)
                self._each(self._execute)
            finally:
                signals.hold()
                self._stop(signals.received or signal.SIGTERM)
                self._clean_up()
        if signals.received is not None:  # it came during the clean-up
            raise RunInterruptedError(signals.received)
        return [outcome for outcome in self.outcomes if outcome is not None]

    def _record_running(self) -> None:
        record = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "base": str(self.base),
            "folders": [str(folder) for folder in self.folders],
        }
        temporary = self.logs / f".{_RUNNING}"
        temporary.write_bytes(codec.encode(record))
        temporary.replace(self.logs / _RUNNING)

    def _each(self, work: Callable[[int], None], *, stoppable: bool = True) -> None:
        """``work(i)`` for every target, on up to ``jobs`` threads; the first error stops the
        rest (unless not ``stoppable``) and is raised once every thread has ended."""
        pending = iter(range(len(self.targets)))
        errors: list[BaseException] = []

        def worker() -> None:
            while True:
                with self.lock:
                    index = None if stoppable and self.stopping else next(pending, None)
                if index is None:
                    return
                try:
                    work(index)
                except BaseException as exc:  # handed to the main thread
                    with self.lock:
                        errors.append(exc)
                        self.stopping = self.stopping or stoppable
                    if stoppable:
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
        target, folder = self.targets[index], self.folders[index]
        try:
            self.ws.add_worktree(target.commit, folder)
            for link in self.links:
                place = folder / link
                place.parent.mkdir(parents=True, exist_ok=True)
                os.symlink(self.ws.root / link, place)
        except (WorkspaceError, OSError) as exc:
            reason = exc.message if isinstance(exc, WorkspaceError) else _words(exc)
            raise WorkspaceError(
                f"Could not check out {target.what} in a temporary worktree: "
                f"{reason.rstrip('.')}; nothing was run."
            ) from None

    def _execute(self, index: int) -> None:
        target, folder = self.targets[index], self.folders[index]
        log = self.logs / f"{index + 1}-{target.name}.log"
        with self.lock:
            if self.stopping:
                return
        try:
            out = open(log, "wb")  # noqa: SIM115 - closed below, after the command ends
        except OSError as exc:
            raise WorkspaceError(f"Could not write the log {log}: {_words(exc)}.") from None
        with out:
            start = time.perf_counter()
            try:
                process = subprocess.Popen(
                    self.command, cwd=folder, env=self.env, stdin=subprocess.DEVNULL,
                    stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
                )  # fmt: skip
            except OSError as exc:
                failed = _NOT_FOUND if isinstance(exc, FileNotFoundError) else _NOT_EXECUTABLE
                out.write(f"convgit: {self.command[0]} could not start: {_words(exc)}\n".encode())
                out.flush()
                self.outcomes[index] = Outcome(target, failed, 0.0, False, log, _tail(log))
                return
            timed_out = self._wait(process)
            seconds = time.perf_counter() - start
        code = None if timed_out else _shell_code(process.returncode)
        self.outcomes[index] = Outcome(target, code, seconds, timed_out, log, _tail(log))

    def _wait(self, process: subprocess.Popen[bytes]) -> bool:
        """Wait for the command and stop what it leaves in its group; True when it timed out."""
        group = process.pid  # start_new_session: the command leads a group of its own
        with self.lock:
            self.running.add(group)
            late = self.stopping  # the run stopped while it was starting
        if late:
            _signal_group(group, signal.SIGKILL)
        deadline = None if self.timeout is None else time.monotonic() + self.timeout
        timed_out = not _exited(group, deadline)
        if timed_out:
            _signal_group(group, signal.SIGTERM)
            if not _exited(group, time.monotonic() + GRACE):
                _signal_group(group, signal.SIGKILL)
                _exited(group, None)
        # the command is a zombie until reaped, so its group id cannot be reused meanwhile
        _signal_group(group, signal.SIGKILL)
        process.wait()
        with self.lock:
            self.running.discard(group)
        return timed_out

    def _stop(self, signum: int) -> None:
        """Stop every running command (``signum``, then SIGKILL after ``GRACE``) and wait for
        the worker threads."""
        with self.lock:
            self.stopping = True
            groups = set(self.running)
        for group in groups:
            _signal_group(group, signum)
        deadline = time.monotonic() + GRACE
        for thread in self.threads:
            if thread.ident is not None:
                thread.join(max(0.0, deadline - time.monotonic()))
        with self.lock:
            groups = set(self.running)
        for group in groups:
            _signal_group(group, signal.SIGKILL)
        for thread in self.threads:
            if thread.ident is not None:
                thread.join()

    def _clean_up(self) -> None:
        """Remove every worktree this run made or began, then its temporary folder."""

        def remove(index: int) -> None:
            folder = self.folders[index]
            for link in self.links:
                if os.path.islink(folder / link):
                    os.unlink(folder / link)  # never through it, whatever removes the rest
            try:
                self.ws.discard_worktree(folder)
            except OSError as exc:
                raise WorkspaceError(
                    f"The temporary worktree {folder} could not be removed: {_words(exc)}.",
                    f"remove it with `git worktree remove --force --force {folder}`",
                ) from None

        if self.base is None:
            return
        try:
            self._each(remove, stoppable=False)
        finally:
            try:
                self.base.rmdir()
            except FileNotFoundError:
                pass
            except OSError:
                raise WorkspaceError(
                    f"The temporary worktrees in {self.base} could not all be removed.",
                    f"remove them with `git worktree remove --force` and `rm -r {self.base}`",
                ) from None
        (self.logs / _RUNNING).unlink(missing_ok=True)


def _exited(pid: int, deadline: float | None) -> bool:
    """Wait until process ``pid`` has exited, without reaping it; False at ``deadline``."""
    delay = 0.0005
    while True:
        try:
            if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                return True
        except ChildProcessError:
            return True
        if deadline is not None and time.monotonic() >= deadline:
            return False
        time.sleep(delay if deadline is None else min(delay, max(0.0, deadline - time.monotonic())))
        delay = min(delay * 2, 0.05)


def _signal_group(group: int, signum: int) -> None:
    with suppress(ProcessLookupError, PermissionError):  # the group is gone
        os.killpg(group, signum)


def _words(exc: OSError) -> str:
    return exc.strerror or str(exc)


def _shell_code(returncode: int) -> int:
    return 128 - returncode if returncode < 0 else returncode


def _tail(log: Path, lines: int = TAIL_LINES) -> tuple[str, ...]:
    """The last non-empty lines of a log, as a terminal would show them (after the last
    carriage return of each line)."""
    with open(log, "rb") as handle:
        size = handle.seek(0, os.SEEK_END)
        handle.seek(max(0, size - _TAIL_BYTES))
        data = handle.read()
    text = data.decode("utf-8", "replace").split("\n")
    if size > _TAIL_BYTES:
        text = text[1:]  # a line cut in the middle
    shown = [line.rsplit("\r", 1)[-1].rstrip() for line in text]
    return tuple([line for line in shown if line.strip()][-lines:])
