"""A restore's note for the model is written when the conversation next moves on, as one note
saying where the files are then: a restore undone before the next turn leaves none, restores in
a row leave one, and the note survives a process ending between the restore and the turn (it
is pending in the sidecar). Every example runs the real CLI on a real repository, under the
guard that the user's index, HEAD, branches, tags and stash never change."""

from __future__ import annotations

from typing import Any

from tests.workspace.cli import convgit
from tests.workspace.gitrepo import GitRepo


def story(repo: GitRepo) -> dict[str, str]:
    """A task, plan A (edits app.py) and plan B (edits it again)."""
    convgit(repo.path, "init")
    task = convgit(repo.path, "user", "task", "--json").json()["id"]
    repo.write("src/app.py", "print('plan A')\n")
    a = convgit(repo.path, "assistant", "plan A", "--json").json()["id"]
    repo.write("src/app.py", "print('plan B')\n")
    repo.write("b.txt", "plan B\n")
    b = convgit(repo.path, "assistant", "plan B", "--json").json()["id"]
    return {"task": task, "a": a, "b": b}


def notes(repo: GitRepo) -> list[dict[str, Any]]:
    tree = convgit(repo.path, "tree", "--json").json()["entries"]
    return [e for e in tree if e["type"] == "note" and e.get("source") == "restore"]


def test_a_restore_says_the_model_will_be_told_and_the_next_turn_carries_the_note(
    repo: GitRepo,
) -> None:
    ids = story(repo)
    said = convgit(repo.path, "restore", ids["task"], "--yes")
    assert "the model will be told where the files are" in said.stdout
    assert notes(repo) == []  # nothing yet: the conversation has not moved on
    assert convgit(repo.path, "show", "@", "--json").json()["entry"]["id"] == ids["b"]

    turn = convgit(repo.path, "user", "start over", "--json").json()
    [note] = notes(repo)
    assert note["parentId"] == ids["b"] and turn["parentId"] == note["id"]
    assert f"the snapshot of entry {ids['task']}" in note["text"]
    assert "b.txt" in note["text"] and "src/app.py" in note["text"]
    context = convgit(repo.path, "context", "--json").json()["messages"]
    assert any("The files were restored" in str(m["content"]) for m in context)
    convgit(repo.path, "assistant", "ok")
    assert len(notes(repo)) == 1  # told once


def test_a_restore_undone_before_the_next_turn_leaves_no_note(repo: GitRepo) -> None:
    ids = story(repo)
    convgit(repo.path, "restore", ids["task"], "--yes")
    undone = convgit(repo.path, "restore", "--undo", "--yes", "--json").json()
    assert undone["note"] is None and "back where they were" in undone["note_skipped"]
    convgit(repo.path, "user", "go on")
    convgit(repo.path, "assistant", "going on")
    assert notes(repo) == []


def test_three_restores_in_a_row_leave_one_note_where_the_files_ended(repo: GitRepo) -> None:
    ids = story(repo)
    convgit(repo.path, "restore", ids["task"], "--yes")
    convgit(repo.path, "restore", ids["a"], "--yes")
    last = convgit(repo.path, "restore", ids["task"], "--yes", "--json").json()
    assert "3 restores" in last["note"]
    convgit(repo.path, "user", "which files now?")
    [note] = notes(repo)
    assert f"the snapshot of entry {ids['task']}" in note["text"] and "3 restores" in note["text"]
    assert note["parentId"] == ids["b"]


def test_a_restore_then_a_turn_then_its_undo_each_are_told(repo: GitRepo) -> None:
    ids = story(repo)
    convgit(repo.path, "restore", ids["task"], "--yes")
    convgit(repo.path, "user", "now?")
    convgit(repo.path, "restore", "--undo", "--yes")
    convgit(repo.path, "user", "and now?")
    first, second = notes(repo)
    assert "the state before the last restore" in second["text"]
    assert first["id"] != second["id"]
