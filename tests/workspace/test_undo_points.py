"""Where `restore --undo` leads: after a restore and its undo were both killed, back to the files
from before the first of them; across the sessions of one working tree, to the newest restore,
so the hint a restore prints undoes that restore from any session. Through the real CLI (killed
at the fault points of ``convgit.base.faults``) on real repositories, under the user-state guard."""

from __future__ import annotations

import re
import shutil
import signal
from pathlib import Path

import pytest

from tests.workspace.cli import Ran, convgit
from tests.workspace.gitrepo import GitRepo, digest, oracle_tree

KILLED = -signal.SIGKILL
GENERATED = 12  # files of each kind: enough that a kill lands with some written, some not


def killed(repo: GitRepo, fault: str, *args: str) -> Ran:
    """``convgit ARGS`` killed by SIGKILL at the fault point ``fault``."""
    ran = convgit(repo.path, *args, code=None, env={"CONVGIT_FAULT": fault})
    assert ran.code == KILLED, f"not killed at {fault} (exit {ran.code}): {ran.stderr}"
    return ran


def task_and_plan(repo: GitRepo) -> str:
    """A task whose snapshot holds old/*; a plan that replaced them with new/* and changed
    gen/*; then the user's own edits on top. Returns the task's entry id."""
    convgit(repo.path, "init")
    for i in range(GENERATED):
        repo.write(f"gen/f{i:02d}.txt", f"task {i}\n")
        repo.write(f"old/o{i:02d}.txt", f"old {i}\n")
    task = convgit(repo.path, "user", "task", "--json").json()["id"]
    for i in range(GENERATED):
        repo.write(f"gen/f{i:02d}.txt", f"plan {i}\n")
        repo.write(f"new/n{i:02d}.txt", f"new {i}\n")
    shutil.rmtree(repo.path / "old")
    convgit(repo.path, "assistant", "plan", "--json")
    repo.write("mine.txt", "the user's own edit, in no snapshot\n")
    repo.write("gen/f00.txt", "edited by hand\n")
    return task


@pytest.mark.parametrize(
    ("restore_fault", "undo_fault"),
    [
        # the restore removed two files and died; its undo died before writing any
        ("restore:remove#3", "restore:before-checkout"),
        # the restore wrote every file and died before its `restored` record; its undo died
        # after removing two of the files the restore had created
        ("restore:before-done", "restore:remove#3"),
    ],
)
def test_after_a_killed_restore_and_a_killed_undo_the_hint_leads_to_the_files_before_both(
    repo: GitRepo, restore_fault: str, undo_fault: str
) -> None:
    task = task_and_plan(repo)
    before, before_tree = digest(repo.path), oracle_tree(repo.path)

    killed(repo, restore_fault, "restore", task, "--yes")
    first = convgit(repo.path, "status", "--json").json()["interrupted_restore"]
    assert digest(repo.path) != before  # half-written
    killed(repo, undo_fault, "restore", "--undo", "--yes")
    status = convgit(repo.path, "status", "--json").json()["interrupted_restore"]
    words = convgit(repo.path, "status").stdout

    hint = re.search(r"`(convgit restore --undo)` returns", words)
    assert hint is not None, words
    undone = convgit(repo.path, *hint.group(1).split()[1:], "--yes", "--json").json()
    assert oracle_tree(repo.path) == before_tree  # git's own view of the files
    assert digest(repo.path) == before  # and byte for byte
    assert convgit(repo.path, "status", "--json").json()["interrupted_restore"] is None

    # status named both as interrupted, and the state before the first
    assert first is not None and len(first["restores"]) == 1
    saved = first["undo_returns_to"]
    assert first["restores"][0]["id"] == saved and first["restores"][0]["interrupted"]
    assert status is not None, "the interrupted undo is hidden"
    assert [s["before"]["undo"] for s in status["restores"]] == [True, False]
    assert all(s["interrupted"] for s in status["restores"])
    assert status["undo_returns_to"] == saved == undone["saved_state"]
    assert undone["interrupted"] == 2
    assert (
        f"warning: 2 restores were interrupted (`restore {task}`, then `restore --undo`), the"
        " files may be half-written; `convgit restore --undo` returns them to the state before"
        f" the first, {saved}"
    ) in words
    # nothing is lost: the half-written files are a saved state too, listed first
    listed = convgit(repo.path, "restores", "--json").json()["saved_states"]
    assert listed[0]["id"] == undone["saved"] and not listed[0]["interrupted"]


def test_an_undo_killed_before_its_record_hides_no_interrupted_restore(repo: GitRepo) -> None:
    """The undo of a half-written restore dies after it saved the files (its ref) and before
    it recorded itself: it changed nothing, so status still names the interrupted restore, and
    the hint still leads to the files from before it (found by the two-track model)."""
    task = task_and_plan(repo)
    before, before_tree = digest(repo.path), oracle_tree(repo.path)
    killed(repo, "restore:remove#3", "restore", task, "--yes")
    killed(repo, "restore:before-record", "restore", "--undo", "--yes")
    status = convgit(repo.path, "status", "--json").json()["interrupted_restore"]
    assert status is not None, "the interrupted restore is hidden by an undo that changed nothing"
    assert len(status["restores"]) == 1
    convgit(repo.path, "restore", "--undo", "--yes")
    assert oracle_tree(repo.path) == before_tree
    assert digest(repo.path) == before


def test_an_undo_that_finds_the_files_already_back_settles_the_interrupted_restores(
    repo: GitRepo,
) -> None:
    """Two restores killed after their record, before they changed a file: the files never
    changed, the next undo changes nothing, and status no longer warns."""
    task = task_and_plan(repo)
    before = digest(repo.path)
    killed(repo, "restore:before-files", "restore", task, "--yes")
    killed(repo, "restore:before-files", "restore", "@", "--yes")
    assert digest(repo.path) == before
    status = convgit(repo.path, "status", "--json").json()["interrupted_restore"]
    assert status is not None and len(status["restores"]) == 2
    result = convgit(repo.path, "restore", "--undo", "--yes", "--json").json()
    assert result["changes"] == [] and result["saved"] is None
    assert convgit(repo.path, "status", "--json").json()["interrupted_restore"] is None
    assert "interrupted" not in convgit(repo.path, "status").stdout


def printed_hint(words: str) -> list[str]:
    """The command a restore prints to undo it, as arguments after `convgit`."""
    found = re.search(r"saved the previous state as (\S+): `convgit ([^`]+)` returns", words)
    assert found, words
    return found.group(2).split()


def test_each_restores_printed_hint_undoes_that_restore_whichever_session_runs_it(
    repo: GitRepo,
) -> None:
    """Two sessions in one working tree (B is current). A restore in B, then a restore in A:
    A's printed hint, run as printed (in B), undoes A's restore; B's printed hint, run in A,
    undoes B's; `restores` lists both sessions' saved states, newest first."""
    a = convgit(repo.path, "init", "--json").json()["id"]
    repo.write("x.txt", "0\n")
    a_start = convgit(repo.path, "user", "a: start", "--json").json()["id"]
    repo.write("x.txt", "1\n")
    convgit(repo.path, "assistant", "a: x is 1")
    b = convgit(repo.path, "init", "--json").json()["id"]
    assert convgit(repo.path, "status", "--json").json()["session"] == b
    b_start = convgit(repo.path, "user", "b: start", "--json").json()["id"]
    repo.write("x.txt", "2\n")
    repo.write("y.txt", "only b\n")
    convgit(repo.path, "assistant", "b: x is 2")

    two = digest(repo.path)
    b_words = convgit(repo.path, "restore", b_start, "--yes").stdout  # in B: x=1, no y
    one = digest(repo.path)
    a_words = convgit(repo.path, "--session", a, "restore", a_start, "--yes").stdout  # x=0
    assert (repo.path / "x.txt").read_text() == "0\n"

    listed = convgit(repo.path, "--session", a, "restores", "--json").json()["saved_states"]
    text = convgit(repo.path, "--session", a, "restores").stdout.splitlines()

    convgit(repo.path, *printed_hint(a_words), "--yes")  # run as printed: in session B
    assert digest(repo.path) == one, "A's hint did not undo A's restore"
    assert [s["session"] for s in listed] == [a, b]
    assert text[1].endswith(f"(session {b})") and "(session" not in text[0]

    # B's restore is now the newest but one: its saved state is named by id from session A
    b_saved = re.search(r"saved the previous state as (\S+):", b_words)
    assert b_saved is not None
    convgit(repo.path, "--session", a, "restore", b_saved.group(1), "--yes")
    assert digest(repo.path) == two

    # and --undo, from either session, undoes the newest restore of the working tree
    convgit(repo.path, "--session", a, *printed_hint(b_words), "--yes")
    assert digest(repo.path) == one
    convgit(repo.path, "restore", "--undo", "--yes")
    assert digest(repo.path) == two


def test_the_saved_states_of_another_worktree_are_not_this_ones(
    repo: GitRepo, tmp_path: Path
) -> None:
    """A session of another worktree of the repository restores there: `restores` and `--undo`
    here see only this worktree's saved states, and the other's id is not one of them."""
    convgit(repo.path, "init")
    start = convgit(repo.path, "user", "here: start", "--json").json()["id"]
    repo.write("src/app.py", "print('here')\n")
    convgit(repo.path, "assistant", "here: edit")
    here = convgit(repo.path, "restore", start, "--yes", "--json").json()["saved"]

    side = tmp_path / "side"
    repo.git("worktree", "add", "-q", "--detach", str(side))
    convgit(side, "init")
    theirs_start = convgit(side, "user", "there: start", "--json").json()["id"]
    (side / "there.txt").write_text("there\n")
    convgit(side, "assistant", "there: edit")
    there = convgit(side, "restore", theirs_start, "--yes", "--json").json()["saved"]

    assert [s["id"] for s in convgit(repo.path, "restores", "--json").json()["saved_states"]] == [
        here
    ]
    assert [s["id"] for s in convgit(side, "restores", "--json").json()["saved_states"]] == [there]
    error = convgit(repo.path, "restore", there, "--yes", code=1).stderr
    assert f"There is no saved state {there}." in error
    undone = convgit(repo.path, "restore", "--undo", "--yes", "--json").json()
    assert undone["saved_state"] == here
    assert (repo.path / "src/app.py").read_text() == "print('here')\n"
    assert not (repo.path / "there.txt").exists()


def test_restores_counts_every_file_a_restore_changed_past_those_its_record_lists(
    repo: GitRepo,
) -> None:
    """A restore record lists the first 200 files it changed; `restores` still says how many
    more there were (it said "and 197 more" of 250)."""
    for i in range(250):
        repo.write(f"many/f{i:03}.txt", "one\n")
    convgit(repo.path, "init")
    task = convgit(repo.path, "user", "task", "--json").json()["id"]
    for i in range(250):
        repo.write(f"many/f{i:03}.txt", "two\n")
    convgit(repo.path, "assistant", "two")
    convgit(repo.path, "restore", task, "--yes")
    listed = convgit(repo.path, "restores").stdout
    assert "250 files (many/f000.txt, many/f001.txt, many/f002.txt, and 247 more)" in listed
