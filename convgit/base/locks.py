"""Exclusive locks between convgit processes: ``flock(2)`` on a lock file, polled until a
timeout. A per-turn hook takes a lock every run, so this is the standard library alone (a lock
library costed about 15 ms of imports per run).

* Reentrant within a process: a lock this process holds is taken again at once, so nested
  ``with`` blocks never deadlock; a forked child does not inherit its parent's hold.
* The kernel drops the lock when the process dies, however it dies: a killed convgit never
  leaves a lock behind. The lock file itself stays (deleting it would race with a waiter).
* A child process handed the lock's ``descriptor`` (``pass_fds``) holds the lock with it: a
  ``flock`` lock belongs to the open file, so it lasts until the child ends too, even when
  convgit is killed first (a restore's git keeps the restore's lock while it writes files).
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager

TYPE_CHECKING = False  # no pathlib for the start of a reply's snapshot (``survey_plan``)
if TYPE_CHECKING:
    from os import PathLike


class LockTimeout(Exception):
    """Another process held the lock for longer than the timeout."""


_held: dict[str, tuple[int, int, int]] = {}  # lock path -> (descriptor, depth, owning pid)
_cap: list[float] = []  # the longest this process waits for any lock, when set


def cap_waits(seconds: float) -> None:
    """From now on this process waits at most ``seconds`` for any lock, whatever the caller
    asks: a hook the agent waits on gives up rather than keep the agent waiting."""
    _cap[:] = [seconds]


def limit(timeout: float) -> float:
    """How long a wait of ``timeout`` seconds lasts in this process (see ``cap_waits``)."""
    return min(timeout, *_cap) if _cap else timeout


@contextmanager
def held(path: str | PathLike[str], timeout: float) -> Iterator[None]:
    """Hold the exclusive lock on ``path`` (created, with its folder, when missing) for the
    block; LockTimeout when another process keeps it longer than ``timeout`` seconds."""
    key = os.path.abspath(path)
    mine = _held.get(key)
    if mine is not None and mine[2] == os.getpid():
        _held[key] = (mine[0], mine[1] + 1, mine[2])
        try:
            yield
        finally:
            fd, depth, pid = _held[key]
            _held[key] = (fd, depth - 1, pid)
        return
    os.makedirs(os.path.dirname(key), exist_ok=True)
    fd = os.open(key, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        _acquire(fd, timeout)
    except BaseException:
        os.close(fd)
        raise
    _held[key] = (fd, 1, os.getpid())
    try:
        yield
    finally:
        del _held[key]
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def descriptor(path: str | PathLike[str]) -> int:
    """The file descriptor of the lock on ``path`` this process holds, to hand to a child
    that must hold the lock with it (see the module's note); KeyError when it is not held."""
    fd, _depth, pid = _held[os.path.abspath(path)]
    if pid != os.getpid():
        raise KeyError(path)
    return fd


def _acquire(fd: int, timeout: float) -> None:
    deadline = time.monotonic() + limit(timeout)
    delay = 0.001
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise LockTimeout from None
            time.sleep(delay)
            delay = min(delay * 2, 0.05)
