"""Files this user may not read or change: a snapshot, a restore and its undo lose nothing,
leave them alone and name each one, with the reason, in one line.

convgit runs here held to permission bits as any user is. CI and this machine run as root, and
the interpreter lives in root's home (mode 0700), which no other user may enter; so the
command runs as root with an empty capability bounding set (``_powerless``): uid 0 without
CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH or CAP_FOWNER is held to the owner bits of its own files
(the repository's) as any user is, and neither it nor the git it starts gets them back (what an
exec by uid 0 may gain is bounded by that empty set). Each test first proves the rig: such a
process cannot read a file of mode 000.
"""

from __future__ import annotations

import ctypes
import os
import stat
import subprocess
from pathlib import Path
from typing import Any

from tests.clirun import Ran, run
from tests.workspace.gitrepo import GitRepo

PR_CAPBSET_DROP = 24


def _powerless() -> None:
    """In the child, before it runs convgit: drop every capability from the bounding set."""
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in range(64):
        libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)


def _as_user(repo: GitRepo, *args: str, code: int = 0) -> Ran:
    return run(*args, cwd=repo.path, code=code, preexec_fn=_powerless)


def _modes(root: Path) -> dict[str, int]:
    modes: dict[str, int] = {}
    for top, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not (top == str(root) and d == ".git")]
        for name in [*dirs, *files]:
            path = Path(top, name)
            modes[path.relative_to(root).as_posix()] = stat.S_IMODE(path.lstat().st_mode)
    return modes


def _left_alone(result: Any) -> dict[str, str]:
    return {row["path"]: row["reason"] for row in result["left_alone"]}


def test_what_this_user_may_not_read_or_change_is_left_alone_and_named(repo: GitRepo) -> None:
    """A read-only file, a folder without write permission, a file and a folder this user
    cannot read. The snapshot leaves out (and names) what it cannot read, and holds no stale
    copy of it; the restore changes what it may (a read-only file's content, its mode kept),
    names each path the file system refused; the undo gives back every byte and mode."""
    _as_user(repo, "init")
    first = {
        "plain.txt": "one\n", "ro.txt": "one\n", "locked/a.txt": "one\n",
        "locked/b.txt": "one\n", "secret.txt": "one\n", "private/x.txt": "one\n",
    }  # fmt: skip
    for name, text in first.items():
        repo.write(name, text)
    task = _as_user(repo, "user", "task", "--json").json()["id"]
    for name in first:
        repo.write(name, "two\n")
    (repo.path / "locked" / "b.txt").unlink()
    repo.write("locked/new.txt", "the agent's new file\n")
    _as_user(repo, "assistant", "two")
    (repo.path / "ro.txt").chmod(0o444)
    (repo.path / "secret.txt").chmod(0o000)
    (repo.path / "locked").chmod(0o555)
    (repo.path / "private").chmod(0o000)
    try:
        denied = subprocess.run(
            ["cat", str(repo.path / "secret.txt")], capture_output=True, preexec_fn=_powerless
        )  # fmt: skip
        assert denied.returncode != 0, "the rig: a powerless process read a file of mode 000"
        before, modes = repo.digest(), _modes(repo.path)

        snapped = _as_user(repo, "snapshot").stdout
        assert "skipped secret.txt: unreadable" in snapped
        assert "skipped private: unreadable" in snapped
        held = {
            c["path"]: c["status"] for c in _as_user(repo, "diff", task, "--json").json()["changes"]
        }
        assert held["plain.txt"] == held["ro.txt"] == "modified"
        # the snapshot holds no copy of what it could not see: it does not claim it unchanged
        assert held["private/x.txt"] == "left alone", "the snapshot held a stale copy"

        restored = _as_user(repo, "restore", task, "--yes", "--json").json()
        assert sorted((c["path"], c["status"]) for c in restored["changes"]) == [
            ("plain.txt", "modified"),
            ("ro.txt", "modified"),
        ]
        alone = _left_alone(restored)
        assert "refused to write it (Permission denied)" in alone["locked/a.txt"]
        assert "refused to write it (Permission denied)" in alone["locked/b.txt"]
        assert "refused to delete it (Permission denied)" in alone["locked/new.txt"]
        assert alone["secret.txt"].startswith("unreadable")
        assert alone["private/x.txt"].startswith("unreadable")
        assert (repo.path / "ro.txt").read_text() == "one\n"
        assert _modes(repo.path) == modes, "a mode changed"
        for name in ("locked/a.txt", "locked/new.txt", "secret.txt", "private/x.txt"):
            assert repo.digest()[name] == before[name], name

        undone = _as_user(repo, "restore", "--undo", "--yes", "--json").json()
        assert {c["path"] for c in undone["changes"]} == {"plain.txt", "ro.txt"}
        assert repo.digest() == before
        assert _modes(repo.path) == modes
    finally:
        for folder in ("locked", "private"):
            (repo.path / folder).chmod(0o755)
