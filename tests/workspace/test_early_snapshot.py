"""A reply's snapshot whose ``git status`` starts as the command starts (``convgit assistant``,
``convgit.workspace.early``): whatever happens between that start and the snapshot that takes
it, the snapshot is git's ``add -A`` into an empty index, and no git is left running.

* a signal right after git started: nothing is recorded, git is stopped before convgit exits;
* convgit killed there: the git still running holds the private index's lock, and the next
  reply waits for it and snapshots the files as they are;
* a size cap changed since the last snapshot: the status started early is dropped, the index
  cleaned for the new cap, and the file over it left out;
* another process holding the private index: nothing starts early, the reply waits its turn;
* the status started from the last reply's plan as the process starts (``survey_plan``): a
  signal or a kill right after it behaves as above; a plan of a session no longer current, or
  of a private index torn since, starts nothing on it, and the snapshot is still git's.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import time
from pathlib import Path

import pytest

from tests.clirun import start
from tests.workspace.cli import convgit, one_sentence
from tests.workspace.gitrepo import GitRepo


def _replying(repo: GitRepo) -> None:
    """A session whose first reply made its private index (what a snapshot starts early on)."""
    convgit(repo.path, "init")
    convgit(repo.path, "user", "task")
    convgit(repo.path, "assistant", "first")
    repo.write("src/app.py", "print('changed')\n")
    repo.write("notes/new.txt", "new\n")
    (repo.path / "README.md").unlink()


def _gits_of(repo: GitRepo) -> list[int]:
    """The git processes running on this repository's working tree."""
    wanted = f"--work-tree={repo.path}".encode()
    found = []
    for name in os.listdir("/proc"):
        try:
            args = Path("/proc", name, "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if os.path.basename(args[0]) == b"git" and wanted in args:
            found.append(int(name))
    return found


def _leaf(repo: GitRepo) -> str:
    return str(convgit(repo.path, "show", "@", "--json").json()["entry"]["id"])


def _snapshot_tree(repo: GitRepo) -> str:
    return str(convgit(repo.path, "show", "@", "--json").json()["snapshot"]["tree"])


# where a reply's early git has started: from the plan as the process began, and once the
# snapshot's own early start has found it (``workspace.early``)
STARTED = pytest.mark.parametrize("point", ["snapshot:begun", "snapshot:started"])


@STARTED
def test_a_signal_right_after_git_started_records_nothing_and_leaves_no_git(
    repo: GitRepo, point: str
) -> None:
    _replying(repo)
    before = _leaf(repo)
    stopped = convgit(
        repo.path, "assistant", "second", env={"CONVGIT_FAULT": f"{point}!INT"}, code=130
    )
    assert one_sentence(stopped.stderr) == (
        "convgit: Interrupted by SIGINT: nothing was recorded; no file was changed."
    )
    assert not _gits_of(repo)
    assert _leaf(repo) == before
    convgit(repo.path, "assistant", "again")
    assert _snapshot_tree(repo) == repo.oracle()


@STARTED
def test_a_reply_killed_right_after_git_started_leaves_the_files_to_the_next(
    repo: GitRepo, point: str
) -> None:
    _replying(repo)
    killed = convgit(repo.path, "assistant", "second", env={"CONVGIT_FAULT": point}, code=None)
    assert killed.code == -9
    repo.write("src/app.py", "print('changed again')\n")
    convgit(repo.path, "assistant", "again")
    assert _snapshot_tree(repo) == repo.oracle()


def test_a_size_cap_lowered_since_the_last_snapshot_holds_though_git_started_early(
    repo: GitRepo,
) -> None:
    _replying(repo)
    repo.write("big.bin", b"x" * 4096)
    convgit(repo.path, "assistant", "with the big file")
    assert "big.bin" in repo.tree_paths(_snapshot_tree(repo))
    store = Path(repo.git("rev-parse", "--path-format=absolute", "--git-common-dir").strip())
    (store / "convgit" / "config.toml").write_text("[snapshots]\nsize_cap_mib = 0.001\n")
    repo.write("src/app.py", "print('once more')\n")
    made = convgit(repo.path, "assistant", "after the cap", "--json").json()
    assert made["snapshot"]["skipped"] == [
        {"path": "big.bin", "reason": "larger than the size cap (0.0 MiB > 0.0 MiB)"}
    ]
    (repo.path / "big.bin").unlink()  # git's answer without the file the cap leaves out
    assert made["snapshot"]["tree"] == repo.oracle()


def test_a_reply_waits_for_another_process_holding_the_index(repo: GitRepo) -> None:
    _replying(repo)
    index = next((repo.path / ".git" / "convgit" / "index").glob("*.flock"))
    with open(index, "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        running = start("assistant", "second", cwd=repo.path)
        time.sleep(1.0)
        assert running.poll() is None, "the reply did not wait for the private index"
        assert not _gits_of(repo), "git started on an index another process holds"
    _out, err = running.communicate(timeout=60)
    assert running.returncode == 0, err
    assert _snapshot_tree(repo) == repo.oracle()


def _plan(repo: GitRepo) -> dict[str, object]:
    """The plan the last reply kept (``survey_plan.PLAN``)."""
    import json

    return dict(json.loads((repo.path / ".git" / "convgit" / "early-survey.json").read_text()))


def test_the_plan_of_a_session_no_longer_current_gives_way_to_the_new_sessions(
    repo: GitRepo,
) -> None:
    _replying(repo)
    planned = _plan(repo)
    assert (
        planned["index"]
        == str(next((repo.path / ".git/convgit/index").glob("*.state")))[: -len(".state")]
    )
    convgit(repo.path, "init")  # a new session, made current
    convgit(repo.path, "user", "another task")
    repo.write("src/app.py", "print('for the new session')\n")
    convgit(repo.path, "assistant", "in the new session")
    assert _snapshot_tree(repo) == repo.oracle()
    assert _plan(repo)["sid"] != planned["sid"]  # the new session's plan from now on
    assert not _gits_of(repo)


def test_a_private_index_torn_since_the_plan_is_not_surveyed_from_it(repo: GitRepo) -> None:
    _replying(repo)
    index = Path(str(_plan(repo)["index"]))
    data = index.read_bytes()
    index.write_bytes(data[: len(data) // 2])  # torn: its identity is not the one convgit saw
    repo.write("src/app.py", "print('after the tear')\n")
    convgit(repo.path, "assistant", "second")
    assert _snapshot_tree(repo) == repo.oracle()


def test_a_plan_that_asks_for_another_command_runs_nothing(repo: GitRepo, tmp_path: Path) -> None:
    """The plan lives in the repository's folder: one changed by hand (or by anything else)
    to name another program, or git with a setting that runs one (a clean filter, a pager, an
    fsmonitor hook), is not convgit's plan: nothing is run from it, and the reply snapshots as
    ever."""
    import json

    _replying(repo)
    path = repo.path / ".git" / "convgit" / "early-survey.json"
    planned = _plan(repo)
    marker = tmp_path / "ran"
    argv = list(planned["argv"])  # type: ignore[call-overload]
    hook = tmp_path / "hook.sh"
    hook.write_text(f"#!/bin/sh\ntouch {marker}\nexit 1\n")
    hook.chmod(0o755)
    for changed in (
        ["touch", str(marker)],
        [*argv[:3], "-c", f"filter.x.clean=touch {marker}", *argv[3:]],
        [*argv[:3], "-c", f"core.pager=touch {marker}", *argv[3:]],
        [*argv[:3], "-c", f"core.fsmonitor={hook}", *argv[3:]],
    ):
        path.write_text(json.dumps({**planned, "argv": changed}))
        repo.write(".gitattributes", "* filter=x\n")
        repo.write("src/app.py", f"print({len(changed)})\n")
        convgit(repo.path, "assistant", "again")
        assert not marker.exists(), changed
        assert _snapshot_tree(repo) == repo.oracle()


def test_a_plan_that_no_longer_holds_is_mended_by_the_next_reply(repo: GitRepo) -> None:
    """A plan whose status the snapshot does not take (its command is not the one the snapshot
    runs: a setting changed since) is written again by that reply, so only one reply pays for
    it."""
    import json

    _replying(repo)
    path = repo.path / ".git" / "convgit" / "early-survey.json"
    planned = _plan(repo)
    argv = list(planned["argv"])  # type: ignore[call-overload]
    stale = [*argv[:3], "-c", "splitIndex.maxPercentChange=50", *argv[3:]]
    path.write_text(json.dumps({**planned, "argv": stale}))
    repo.write("src/app.py", "print('once')\n")
    convgit(repo.path, "assistant", "second")
    assert _plan(repo) == planned
    assert _snapshot_tree(repo) == repo.oracle()


def test_a_plan_naming_a_file_outside_the_store_touches_nothing(repo: GitRepo) -> None:
    """The plan names convgit's own files alone: one that names the user's index (with a state
    file made to match it) locks nothing beside it and leaves it as git keeps it."""
    import json

    from convgit.git.index import format as index_file

    _replying(repo)
    git_dir = repo.path / ".git"
    shared = git_dir / f"sharedindex.{'ab' * 20}"
    shared.write_bytes(b"")
    state = {
        "checked": index_file.identity(git_dir / "index"),
        "shared": "ab" * 20,
        "shared_checked": index_file.identity(shared),
    }
    (git_dir / "index.state").write_text(json.dumps(state))
    (git_dir / "convgit" / "early-survey.json").write_text(
        json.dumps({**_plan(repo), "index": str(git_dir / "index")})
    )
    repo.write("src/app.py", "print('once more')\n")
    convgit(repo.path, "assistant", "second")
    assert not (git_dir / "index.flock").exists()
    assert repo.git("rev-parse", "--shared-index-path").strip() == ""  # not split by convgit
    assert _snapshot_tree(repo) == repo.oracle()


def test_a_reply_read_from_stdin_snapshots_the_files_once_it_is_read(repo: GitRepo) -> None:
    """``convgit assistant -`` waits for its text: the files it snapshots are the ones there
    when the text has come, not when the command started."""
    _replying(repo)
    running = start("assistant", "-", cwd=repo.path, stdin=subprocess.PIPE)
    time.sleep(0.5)
    repo.write("notes/while-waiting.txt", "written while the reply was typed\n")
    _out, err = running.communicate(b"the reply\n", timeout=60)
    assert running.returncode == 0, err
    assert "notes/while-waiting.txt" in repo.tree_paths(_snapshot_tree(repo))
    assert _snapshot_tree(repo) == repo.oracle()


def test_a_signal_after_the_reply_and_its_snapshot_were_written_says_both_were(
    repo: GitRepo,
) -> None:
    """Stopped once the snapshot's record is written too (the second append of the reply), the
    sentence says the entry and its snapshot were recorded: it no longer sends the user to
    `convgit snapshot` for files already recorded."""
    _replying(repo)
    stopped = convgit(
        repo.path,
        "assistant",
        "second",
        env={"CONVGIT_FAULT": "append:after-write#2!INT"},
        code=130,
    )
    assert one_sentence(stopped.stderr) == (
        "convgit: Interrupted by SIGINT: the entry and its snapshot were recorded; no file was"
        " changed."
    )
    shown = convgit(repo.path, "show", "@", "--json").json()
    assert shown["snapshot"]["tree"] == repo.oracle()
