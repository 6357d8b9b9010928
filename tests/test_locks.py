"""The lock between convgit processes: exclusive across processes, reentrant within one, gone
with a killed holder, and a clear timeout."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from convgit.base import locks

_HOLD = """
import sys, time
from pathlib import Path
from convgit.base import locks
with locks.held(Path(sys.argv[1]), 10):
    print("held", flush=True)
    time.sleep(float(sys.argv[2]))
    Path(sys.argv[1] + ".done").write_text("the holder's last act before it lets go")
"""


def _holder(lock: Path, seconds: float) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", _HOLD, str(lock), str(seconds)], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stdout.readline() == "held\n"
    return proc


def test_another_process_waits_for_the_lock(tmp_path: Path) -> None:
    lock = tmp_path / "locks" / "a.lock"
    holder = _holder(lock, 0.5)
    start = time.monotonic()
    with locks.held(lock, 10):
        waited = time.monotonic() - start
        done = Path(f"{lock}.done")
        assert done.exists(), "the lock was taken while another process held it"
    assert waited > 0.2
    holder.wait()


def test_a_lock_held_too_long_times_out(tmp_path: Path) -> None:
    lock = tmp_path / "a.lock"
    holder = _holder(lock, 5)
    try:
        with pytest.raises(locks.LockTimeout), locks.held(lock, 0.2):
            pass
    finally:
        holder.kill()
        holder.wait()


def test_a_killed_holder_leaves_no_lock(tmp_path: Path) -> None:
    lock = tmp_path / "a.lock"
    holder = _holder(lock, 60)
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait()
    with locks.held(lock, 1):
        assert lock.exists()


def test_nested_holds_in_one_process_do_not_deadlock(tmp_path: Path) -> None:
    lock = tmp_path / "a.lock"
    with locks.held(lock, 1), locks.held(lock, 1):
        pass
    other = _holder(lock, 0)  # released by the outer block: another process gets it
    other.wait()


def test_a_forked_child_does_not_inherit_the_hold(tmp_path: Path) -> None:
    lock = tmp_path / "a.lock"
    with locks.held(lock, 1):
        pid = os.fork()
        if pid == 0:  # the child must wait like any other process, not re-enter
            try:
                with locks.held(lock, 0.2):
                    os._exit(1)
            except locks.LockTimeout:
                os._exit(0)
        _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
