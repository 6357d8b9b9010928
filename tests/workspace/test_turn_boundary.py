"""The boundary shown where the two tracks part silently: a turn recorded while the files are at
another branch's snapshot (what `status` warns about) records them as they are, and `user`,
`assistant` and `append` say so in one line, `--json` in a field of the same shape every time.
Every example runs the real CLI on a real repository, under the guard that the user's index,
HEAD, branches, tags and stash never change."""

from __future__ import annotations

import orjson

from tests.workspace.cli import convgit
from tests.workspace.gitrepo import GitRepo


def two_plans(repo: GitRepo) -> dict[str, str]:
    """A task, plan A (labelled) and plan B from the task; the files are restored to plan A's
    snapshot while the context stays on plan B."""
    convgit(repo.path, "init")
    task = convgit(repo.path, "user", "task", "--json").json()["id"]
    repo.write("src/app.py", "print('plan A')\n")
    a = convgit(repo.path, "assistant", "plan A", "--json").json()["id"]
    convgit(repo.path, "label", a, "planA")
    convgit(repo.path, "switch", task)
    repo.write("src/app.py", "print('plan B')\n")
    b = convgit(repo.path, "assistant", "plan B", "--json").json()
    assert b["files_from"] is None  # its own files: nothing to say
    convgit(repo.path, "restore", "planA", "--yes")
    assert convgit(repo.path, "status", "--json").json()["diverged"] is True
    return {"task": task, "a": a, "b": b["id"]}


def test_a_reply_on_another_branchs_files_says_so(repo: GitRepo) -> None:
    ids = two_plans(repo)
    said = convgit(repo.path, "assistant", "comparing the plans").stdout
    assert "files: at planA's snapshot, recorded as this turn's" in said.splitlines()
    assert (repo.path / "src/app.py").read_text() == "print('plan A')\n"  # recorded as they are
    again = convgit(repo.path, "assistant", "and again", "--json").json()
    assert again["files_from"] is None  # now the branch's own snapshot holds them
    assert again["snapshot"] is not None
    hi = convgit(repo.path, "user", "hi").stdout
    assert "at planA's snapshot" not in hi  # the files are the branch's own now
    # the restore's note, which no reply carries, goes right above the next user message
    assert f"note (restore): The files were restored to the snapshot of entry {ids['a']}" in hi


def test_user_says_it_too_with_the_same_json_shape(repo: GitRepo) -> None:
    ids = two_plans(repo)
    said = convgit(repo.path, "user", "which plan is on disk?", "--json").json()
    assert said["files_from"] == {"entry": ids["a"], "label": "planA"}
    assert said["snapshot"] is not None


def test_append_says_it_too_with_the_same_json_shape(repo: GitRepo) -> None:
    ids = two_plans(repo)
    line = orjson.dumps({"type": "message", "role": "assistant", "content": "done"}) + b"\n"
    appended = convgit(repo.path, "append", "--json", input=line).json()
    assert appended["files_from"] == {"entry": ids["a"], "label": "planA"}
    plain = convgit(repo.path, "append", input=line).stdout
    assert "files: at planA's snapshot" not in plain  # the branch holds them now
    assert convgit(repo.path, "append", "--json", input=line).json()["files_from"] is None


def test_an_unlabelled_entry_is_named_by_its_short_id(repo: GitRepo) -> None:
    ids = two_plans(repo)
    convgit(repo.path, "label", ids["a"], "--clear")
    said = convgit(repo.path, "user", "which plan?").stdout
    assert f"files: at {ids['a'][:8]}'s snapshot, recorded as this turn's" in said
