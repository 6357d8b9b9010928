"""When restore acts and on what: it waits for an idle conversation, asks first, reads --path as
git does, never acts on another worktree's files, and labels name one entry. Through the real
CLI on real repositories, under the guard that the user's git state never changes."""

from __future__ import annotations

import os
import pty
import subprocess
from collections.abc import Callable
from pathlib import Path

import orjson

from tests.clirun import start
from tests.workspace.cli import convgit, one_sentence
from tests.workspace.gitrepo import GitRepo, digest


def story(repo: GitRepo) -> dict[str, str]:
    convgit(repo.path, "init")
    task = convgit(repo.path, "user", "task", "--json").json()["id"]
    repo.write("src/app.py", "print('plan A')\n")
    repo.write("README.md", "# plan A\n")
    plan = convgit(repo.path, "assistant", "plan A", "--json").json()["id"]
    return {"task": task, "a": plan}


def test_restore_waits_for_the_results_of_open_tool_calls(repo: GitRepo) -> None:
    ids = story(repo)
    call = {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "tool_call", "id": "call_7", "name": "bash", "input": {}}],
    }
    convgit(repo.path, "append", input=orjson.dumps(call) + b"\n")
    before = digest(repo.path)
    error = convgit(repo.path, "restore", ids["task"], "--yes", code=1).stderr
    assert "waiting for the result of tool call call_7" in one_sentence(error)
    assert digest(repo.path) == before
    leaf = convgit(repo.path, "show", "@", "--json").json()["entry"]["id"]

    forced = convgit(repo.path, "restore", ids["task"], "--yes", "--force", "--json").json()
    assert forced["changes"] and forced["note"] is not None  # told when the result is in
    assert (
        convgit(repo.path, "show", "@", "--json").json()["entry"]["id"] == leaf
    )  # no note in between
    convgit(repo.path, "tool", "call_7", "ok")  # the note never lands between call and result
    messages = convgit(repo.path, "context", "--json").json()["messages"]
    assert [m["role"] for m in messages[-2:]] == ["assistant", "tool"]
    convgit(repo.path, "assistant", "the tests pass")  # a reply never has the note above it
    convgit(repo.path, "user", "and now?")  # the next user message: the note right above it
    entries = convgit(repo.path, "log", "--json").json()["entries"]
    path = [(e["type"], e.get("role")) for e in entries]
    assert path[-4:] == [
        ("message", "tool"),
        ("message", "assistant"),
        ("note", None),
        ("message", "user"),
    ], path


def on_a_terminal(cwd: Path, *args: str, answer: bytes) -> tuple[int, str]:
    """Run convgit with a terminal as its stdin, answering the prompt with ``answer``."""
    master, slave = pty.openpty()
    try:
        proc = start(*args, cwd=cwd, stdin=slave, stderr=subprocess.STDOUT)
        os.write(master, answer)
        out, _ = proc.communicate(timeout=120)
    finally:
        os.close(slave)
        os.close(master)
    return proc.returncode, out.decode()


def test_restore_asks_first_and_without_a_terminal_needs_yes(repo: GitRepo) -> None:
    ids = story(repo)
    before = digest(repo.path)
    for extra in ([], ["--json"]):  # --json does not imply yes
        error = convgit(repo.path, "restore", ids["task"], *extra, code=1).stderr
        assert "there is no terminal to ask; nothing was restored" in one_sentence(error)
        assert digest(repo.path) == before
    code, out = on_a_terminal(repo.path, "restore", ids["task"], answer=b"\n")
    assert code == 1 and "restore these files? [y/N]" in out  # the prompt defaults to no
    assert digest(repo.path) == before
    code, out = on_a_terminal(repo.path, "restore", ids["task"], answer=b"y\n")
    assert code == 0 and "restored 2 files to the snapshot of" in out
    assert (repo.path / "src/app.py").read_text() == "print('hello')\n"


def test_path_is_relative_to_the_current_folder_as_in_git(repo: GitRepo) -> None:
    ids = story(repo)
    src = repo.path / "src"
    convgit(src, "restore", ids["task"], "--path", "app.py", "--yes")
    assert (src / "app.py").read_text() == "print('hello')\n"
    assert (repo.path / "README.md").read_text() == "# plan A\n"
    convgit(src, "restore", ids["task"], "--path", "../README.md", "--yes")
    assert (repo.path / "README.md").read_text() == "# demo\n"
    error = convgit(src, "restore", ids["a"], "--path", "../../outside", "--yes", code=1).stderr
    assert "is outside the working tree" in one_sentence(error)


def test_a_session_of_another_worktree_never_acts_on_this_ones_files(
    repo: GitRepo, tmp_path: Path, rewatch: Callable[[GitRepo], None]
) -> None:
    ids = story(repo)
    sid = convgit(repo.path, "status", "--json").json()["session"]
    other = tmp_path / "other"
    repo.git("worktree", "add", "-q", "--detach", str(other))
    rewatch(repo)
    (other / "src" / "app.py").write_text("print('the other worktree')\n")
    theirs, mine = digest(other), digest(repo.path)
    for args in (("restore", ids["task"], "--yes"), ("assistant", "a reply"), ("snapshot",)):
        error = convgit(other, "--session", sid, *args, code=1).stderr
        assert f"belongs to the worktree at {repo.path}" in one_sentence(error)
    assert digest(other) == theirs and digest(repo.path) == mine
    assert [e["id"] for e in convgit(repo.path, "log", "--json").json()["entries"]] == [
        ids["task"],
        ids["a"],
    ]


def test_a_label_names_one_entry_and_moving_it_says_from_where(repo: GitRepo) -> None:
    ids = story(repo)
    convgit(repo.path, "label", ids["task"], "good")
    moved = convgit(repo.path, "label", ids["a"], "good", "-f").stdout
    said, files = moved.splitlines()  # as every move, it ends with where the files are
    assert said == f"{ids['a']} labelled good (moved from {ids['task']})"
    assert files.startswith("files: ")
    assert convgit(repo.path, "show", "good", "--json").json()["entry"]["id"] == ids["a"]
    tree = {e["id"]: e.get("label") for e in convgit(repo.path, "tree", "--json").json()["entries"]}
    assert tree == {ids["task"]: None, ids["a"]: "good"}
    again = convgit(repo.path, "label", ids["a"], "good", "--json").json()
    assert again["moved_from"] is None
