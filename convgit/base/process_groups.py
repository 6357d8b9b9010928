"""Commands in process groups of their own, stopped whole; the signals that interrupt a run.

Knows processes, files and signals, never git or conversations. Promises kept here:
* each command runs in a process group of its own, its output (stdout and stderr, as written)
  in the file it is given; a timeout or ``ProcessGroups.signal`` stops the whole group (a
  signal, then SIGKILL after ``GRACE`` seconds), and whatever a command leaves running in its
  group when it ends is killed;
* once a run is stopping, a command that starts is killed at once;
* the processes a run starts carry ``MARK`` in their environment, so that once the run is
  killed outright, ``kill_marked`` finds and stops what it left running (Linux: /proc);
* inside ``Interrupts``, SIGINT and SIGTERM raise ``RunInterruptedError`` until ``hold``;
* inside ``stopping_on_signals``, SIGINT, SIGTERM and SIGHUP raise ``SignalReceived``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from types import FrameType
from typing import IO, Any

from convgit.base.errors import RunInterruptedError, SignalReceived
from convgit.base.valueclass import valueclass

GRACE = 2.0  # seconds a stopped command has to exit before it is killed
MARK = "CONVGIT_RUN"  # in the environment of what a run starts: the run's token
TAIL_LINES = 5
_TAIL_BYTES = 16384
_NOT_FOUND, _NOT_EXECUTABLE = 127, 126  # the shell's exit codes for a command it cannot start


@valueclass(frozen=True)
class Ended:
    """How a command ended: ``exit_code`` as a shell reports it (128+N when a signal N killed
    it, 127 when it could not be found, 126 when it could not be executed; None when it timed
    out) and how many ``seconds`` it ran."""

    exit_code: int | None
    seconds: float
    timed_out: bool


class ProcessGroups:
    """The process groups of the commands running now, started by ``run`` from any thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._stopping = False
        self._running: set[int] = set()  # process group ids

    @property
    def stopping(self) -> bool:
        """True once ``close`` or ``signal`` was called."""
        with self._lock:
            return self._stopping

    def close(self) -> None:
        """From now on a command that starts is killed at once; the running ones go on."""
        with self._lock:
            self._stopping = True

    def signal(self, signum: int) -> None:
        """``close``, and send ``signum`` to every group running now."""
        with self._lock:
            self._stopping = True
            groups = set(self._running)
        for group in groups:
            _signal_group(group, signum)

    def run(
        self,
        command: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        out: IO[bytes],
        timeout: float | None,
    ) -> Ended:
        """Run ``command`` in ``cwd`` with no input and its output in ``out``, stopped after
        ``timeout`` seconds. A command that cannot start ends with 127 or 126 and a line in
        ``out`` that says why."""
        start = time.perf_counter()
        try:
            process = subprocess.Popen(
                command, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
            )  # fmt: skip
        except OSError as exc:
            failed = _NOT_FOUND if isinstance(exc, FileNotFoundError) else _NOT_EXECUTABLE
            out.write(f"convgit: {command[0]} could not start: {exc.strerror or exc}\n".encode())
            out.flush()
            return Ended(failed, 0.0, False)
        timed_out = self._wait(process, timeout)
        seconds = time.perf_counter() - start
        code = None if timed_out else _shell_code(process.returncode)
        return Ended(code, seconds, timed_out)

    def _wait(self, process: subprocess.Popen[bytes], timeout: float | None) -> bool:
        """Wait for the command and stop what it leaves in its group; True when it timed out."""
        group = process.pid  # start_new_session: the command leads a group of its own
        with self._lock:
            self._running.add(group)
            late = self._stopping  # the run stopped while it was starting
        if late:
            _signal_group(group, signal.SIGKILL)
        deadline = None if timeout is None else time.monotonic() + timeout
        timed_out = not _exited(group, deadline)
        if timed_out:
            _signal_group(group, signal.SIGTERM)
            if not _exited(group, time.monotonic() + GRACE):
                _signal_group(group, signal.SIGKILL)
                _exited(group, None)
        # the command is a zombie until reaped, so its group id cannot be reused meanwhile
        _signal_group(group, signal.SIGKILL)
        process.wait()
        with self._lock:
            self._running.discard(group)
        return timed_out


class Interrupts:
    """In the main thread, SIGINT and SIGTERM raise ``RunInterruptedError`` (the first one
    only); after ``hold`` they are only recorded, so the clean-up cannot be cut short. A
    signal the caller ignores stays ignored."""

    def __init__(self) -> None:
        self.received: int | None = None
        self._held = False
        self._saved: dict[int, Any] = {}  # what signal.signal returned

    def __enter__(self) -> Interrupts:
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


STOPPING = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@contextmanager
def stopping_on_signals() -> Iterator[None]:
    """For the block, in the main thread, SIGINT, SIGTERM and SIGHUP raise ``SignalReceived``
    (the first one; later ones wait for the clean-up), so the block's clean-up runs and the
    command says what state it left. A signal the caller ignores stays ignored; outside the
    main thread nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []

    def handle(signum: int, _frame: FrameType | None) -> None:
        received.append(signum)
        if len(received) == 1:
            raise SignalReceived(signum)

    with handling_stops(handle):
        yield


@contextmanager
def handling_stops(handle: Callable[[int, FrameType | None], None]) -> Iterator[None]:
    """For the block, ``handle`` is the handler of SIGINT, SIGTERM and SIGHUP (a signal the
    caller ignores stays ignored); the handlers before it are put back after."""
    saved: dict[int, Any] = {}
    for stopping in STOPPING:
        if signal.getsignal(stopping) != signal.SIG_IGN:
            saved[stopping] = signal.signal(stopping, handle)
    try:
        yield
    finally:
        for signum, handler in saved.items():
            # None: a handler not installed from Python, which cannot be put back
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)


def tail(log: Path, lines: int = TAIL_LINES) -> tuple[str, ...]:
    """The last non-empty lines of a log, as a terminal would show them (after the last
    carriage return of each line; a CRLF line end is a line end, not a return)."""
    with open(log, "rb") as handle:
        size = handle.seek(0, os.SEEK_END)
        handle.seek(max(0, size - _TAIL_BYTES))
        data = handle.read()
    text = data.decode("utf-8", "replace").split("\n")
    if size > _TAIL_BYTES:
        text = text[1:]  # a line cut in the middle
    shown = [line.removesuffix("\r").rsplit("\r", 1)[-1].rstrip() for line in text]
    return tuple([line for line in shown if line.strip()][-lines:])


def kill_marked(token: str) -> int:
    """SIGKILL every process of this user whose environment holds ``MARK=token`` (what a run
    killed outright left running: its commands and the gits checking its worktrees out); how
    many. Read from /proc: where there is none, nothing is found. Scanned again until none is
    left (a process may start one more before it is killed)."""
    wanted = f"{MARK}={token}".encode()
    killed = 0
    for _ in range(5):
        found = [pid for pid in _pids() if pid != os.getpid() and wanted in _environment(pid)]
        for pid in found:
            with suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        if not found:
            break
        killed += len(found)
        time.sleep(0.01)
    return killed


def _pids() -> list[int]:
    try:
        return [int(name) for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return []


def _environment(pid: int) -> list[bytes]:
    try:
        with open(f"/proc/{pid}/environ", "rb") as handle:
            return handle.read().split(b"\0")
    except OSError:  # gone, or another user's
        return []


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


def _shell_code(returncode: int) -> int:
    return 128 - returncode if returncode < 0 else returncode
