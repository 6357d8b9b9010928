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


def entries(repo: GitRepo) -> dict[str, dict[str, Any]]:
    return {e["id"]: e for e in convgit(repo.path, "tree", "--json").json()["entries"]}


def test_a_fork_with_text_after_a_restore_tells_the_model_above_its_message(repo: GitRepo) -> None:
    ids = story(repo)
    convgit(repo.path, "restore", ids["task"], "--yes")
    forked = convgit(repo.path, "fork", ids["task"], "Plan C please", "--json").json()
    [note] = notes(repo)
    assert forked["note"] == note["id"] and note["parentId"] == ids["task"]
    assert entries(repo)[forked["id"]]["parentId"] == note["id"]
    # what the model is sent for plan C tells it first, before its reply is written
    sent = [str(m["content"]) for m in convgit(repo.path, "context", "--json").json()["messages"]]
    assert "The files were restored" in sent[-2] and sent[-1] == "Plan C please"
    reply = convgit(repo.path, "assistant", "plan C", "--json").json()
    assert reply["parentId"] == forked["id"]  # nothing between the message and its reply
    assert len(notes(repo)) == 1


def test_the_fork_prints_the_note_above_its_message(repo: GitRepo) -> None:
    ids = story(repo)
    convgit(repo.path, "restore", ids["task"], "--yes")
    said = convgit(repo.path, "fork", ids["task"], "--summary", "A and B failed", "Plan C").stdout
    [note] = notes(repo)
    assert f"above it: {note['id'][:8]} note (restore)" in said
    summary = next(e for e in entries(repo).values() if e["type"] == "branch_summary")
    assert note["parentId"] == summary["id"]  # the summary, then the note, then the message


def test_an_edit_of_a_user_message_after_a_restore_tells_the_model_above_it(
    repo: GitRepo,
) -> None:
    ids = story(repo)
    asked = convgit(repo.path, "user", "and now?", "--json").json()["id"]
    convgit(repo.path, "restore", ids["a"], "--yes")
    edited = convgit(repo.path, "edit", asked, "and now, with plan A's files?", "--json").json()
    [note] = notes(repo)
    assert edited["note"] == note["id"] and note["parentId"] == ids["b"]
    assert entries(repo)[edited["id"]]["parentId"] == note["id"]


def test_a_restore_between_a_message_and_its_reply_is_told_above_the_next_message(
    repo: GitRepo,
) -> None:
    ids = story(repo)
    asked = convgit(repo.path, "user", "try again", "--json").json()["id"]
    convgit(repo.path, "restore", ids["task"], "--yes")
    reply = convgit(repo.path, "assistant", "tried", "--json").json()
    assert reply["parentId"] == asked and notes(repo) == []
    # a retry of the reply, or an edit of it, is a reply too: still no note above it
    convgit(repo.path, "retry")
    again = convgit(repo.path, "assistant", "tried again", "--json").json()
    assert again["parentId"] == asked
    edited = convgit(repo.path, "edit", again["id"], "tried a third time", "--json").json()
    assert edited["note"] is None and entries(repo)[edited["id"]]["parentId"] == asked
    nxt = convgit(repo.path, "user", "and the files?", "--json").json()
    [note] = notes(repo)
    assert nxt["parentId"] == note["id"] and note["parentId"] == edited["id"]


def test_restore_and_undo_pairs_in_a_row_say_what_the_next_message_writes(repo: GitRepo) -> None:
    """After each ``restore --undo`` of many pairs in a row the files are back where the
    conversation last moved on: the undo says no note comes (each undo restores the state saved
    by the restore it undoes, another saved state of the same files), and none comes; a restore
    after them says a note comes, and the next message writes that note."""
    ids = story(repo)
    for _ in range(5):
        went = convgit(repo.path, "restore", ids["a"], "--yes", "--json").json()
        assert went["note"] is not None
        back = convgit(repo.path, "restore", "--undo", "--yes", "--json").json()
        assert back["note"] is None and "back where they were" in back["note_skipped"]
    convgit(repo.path, "user", "go on")
    assert notes(repo) == []
    last = convgit(repo.path, "restore", ids["a"], "--yes", "--json").json()
    convgit(repo.path, "user", "and now?")
    [note] = notes(repo)
    assert note["text"] == last["note"]
