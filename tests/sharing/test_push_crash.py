"""A push, a fetch or a pull killed with SIGKILL at a named point (``CONVGIT_FAULT``, the
reliability rig's ``spawn``) leaves both sides valid, and running it again completes it."""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path

import pytest

from tests.reliability.crash_rig import KILLED, spawn
from tests.sharing.clones import Clone
from tests.sharing.test_push_fetch import start
from tests.workspace.gitrepo import git


def killed(clone: Clone, sid: str, fault: str, *args: str) -> None:
    """``convgit ARGS`` killed at ``fault``; its process group (git children too) goes with it,
    as a ``kill -9`` of the job would take them."""
    proc = spawn(clone.path, sid, args, fault, group=True)
    _, err = proc.communicate(timeout=300)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == KILLED, err.decode(errors="replace")


def remote_is_valid(remote: Path) -> None:
    git(remote, "fsck", "--no-dangling", "--no-progress")


@pytest.mark.parametrize("fault", ["share:before-push", "share:pushing", "share:pushed"])
def test_a_killed_push_leaves_both_sides_valid_and_a_retry_completes(
    a: Clone, b: Clone, remote: Path, fault: str
) -> None:
    sid = start(a)
    killed(a, sid, fault, "push")
    a.run("--session", sid, "fsck")
    remote_is_valid(remote)
    fetched = b.json("fetch")["sessions"]
    if fetched:  # the remote took the whole push, or nothing of it
        assert b.entries(sid) == a.entries(sid) and b.snapshots(sid) == a.snapshots(sid)
    again = a.json("push")
    assert again["pushed"]
    b.run("pull")
    assert b.entries(sid) == a.entries(sid) and b.snapshots(sid) == a.snapshots(sid)
    b.run("--session", sid, "fsck")


@pytest.mark.parametrize("fault", ["share:merging", "share:merge-refs"])
def test_a_killed_pull_leaves_the_session_valid_and_a_retry_completes(
    a: Clone, b: Clone, fault: str
) -> None:
    sid = start(a)
    a.run("push")
    b.run("fetch")
    a.write("src/app.py", "print('more')\n")
    a.run("user", "more")
    a.run("assistant", "more done")
    a.run("push")
    killed(b, sid, fault, "pull")
    b.run("--session", sid, "fsck")
    b.run("pull")
    assert b.entries(sid) == a.entries(sid) and b.snapshots(sid) == a.snapshots(sid)
    b.run("--session", sid, "fsck")


def test_a_fetch_killed_before_the_new_session_is_written_makes_it_on_the_next(
    a: Clone, b: Clone
) -> None:
    sid = start(a)
    a.run("push")
    killed(b, sid, "share:creating", "fetch")
    assert not b.session_file(sid).exists()
    b.run("fetch")
    assert b.entries(sid) == a.entries(sid) and b.snapshots(sid) == a.snapshots(sid)
    b.run("--session", sid, "fsck")
