"""Every saved state is kept and addressable, and snapshots are never silently replaced. Through
the real CLI on real repositories, under the guard that the user's git state never changes."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from tests.workspace.cli import convgit, one_sentence
from tests.workspace.gitrepo import GitRepo, digest, git


def saved_id(words: str) -> str:
    found = re.search(r"saved the previous state as (\S+):", words)
    assert found, words
    return found.group(1)


def story(repo: GitRepo) -> dict[str, str]:
    """A task, and plan A, which edits src/app.py."""
    convgit(repo.path, "init")
    task = convgit(repo.path, "user", "task", "--json").json()["id"]
    repo.write("src/app.py", "print('plan A')\n")
    plan = convgit(repo.path, "assistant", "plan A", "--json").json()["id"]
    return {"task": task, "a": plan}


def test_a_restore_that_changes_nothing_saves_nothing_and_undo_finds_the_first_state(
    repo: GitRepo,
) -> None:
    """restore X twice (the second changes nothing), then --undo: the untracked notes the
    first restore removed (--clean: no snapshot held them) come back."""
    ids = story(repo)
    repo.write("notes.txt", "my untracked notes\n")
    before = digest(repo.path)
    first = convgit(repo.path, "restore", ids["task"], "--clean", "--yes", "--json").json()
    assert first["saved"] and not (repo.path / "notes.txt").exists()
    second = convgit(repo.path, "restore", ids["task"], "--clean", "--yes", "--json").json()
    assert second["changes"] == [] and second["saved"] is None and second["note"] is None
    words = convgit(repo.path, "restore", ids["task"], "--yes").stdout
    assert words.startswith("nothing to restore: the files already are the snapshot of")
    assert [s["id"] for s in convgit(repo.path, "restores", "--json").json()["saved_states"]] == [
        first["saved"]
    ]
    convgit(repo.path, "restore", "--undo", "--yes")
    assert digest(repo.path) == before
    assert (repo.path / "notes.txt").read_text() == "my untracked notes\n"


def test_the_printed_saved_id_is_accepted_by_restore_diff_show_and_worktree(
    repo: GitRepo, tmp_path: Path
) -> None:
    ids = story(repo)
    repo.write("notes.txt", "my untracked notes\n")
    before = digest(repo.path)
    words = convgit(repo.path, "restore", ids["task"], "--clean", "--yes").stdout
    saved = saved_id(words)
    assert saved.startswith("saved:") and len(saved) == len("saved:") + 12

    shown = convgit(repo.path, "show", saved, "--json").json()["saved_state"]
    assert shown["id"] == saved and shown["before"]["entry"] == ids["task"]
    assert sorted(shown["files"]) == ["notes.txt", "src/app.py"]
    changes = convgit(repo.path, "diff", saved, "--json").json()["changes"]
    assert {(c["path"], c["status"]) for c in changes} == {
        ("notes.txt", "deleted"),
        ("src/app.py", "modified"),
    }
    assert convgit(repo.path, "diff", ids["a"], saved, "--json").json()["changes"] == [
        {"path": "notes.txt", "status": "added"}
    ]
    side = tmp_path / "side"
    convgit(repo.path, "worktree", saved, str(side))
    assert (side / "notes.txt").read_text() == "my untracked notes\n"
    convgit(repo.path, "worktree", "--remove", str(side))

    short = saved[: len("saved:") + 6]  # a unique prefix names it too
    result = convgit(repo.path, "restore", short, "--yes", "--json").json()
    assert result["saved_state"] == saved and result["saved"] != saved
    assert digest(repo.path) == before
    convgit(repo.path, "user", "go on")  # the files are back as the model last knew them
    logged = convgit(repo.path, "log", "--json").json()["entries"]
    assert "note" not in [e["type"] for e in logged], "two restores that cancel leave no note"


def test_restores_lists_saved_states_newest_first(repo: GitRepo) -> None:
    ids = story(repo)
    first = convgit(repo.path, "restore", ids["task"], "--yes", "--json").json()
    second = convgit(repo.path, "restore", ids["a"], "--path", "src", "--yes", "--json").json()
    listed = convgit(repo.path, "restores", "--json").json()["saved_states"]
    assert [s["id"] for s in listed] == [second["saved"], first["saved"]]
    newest = listed[0]
    assert newest["before"] == {
        "entry": ids["a"],
        "saved": None,
        "undo": False,
        "paths": ["src"],
        "commit": second["commit"],
    }
    assert newest["files"] == ["src/app.py"] and newest["changed"] == {"modified": 1}
    assert newest["ts"] >= listed[1]["ts"]
    text = convgit(repo.path, "restores").stdout.splitlines()
    assert text[0].startswith(f"{second['saved']}  ")
    assert f"before `restore {ids['a']} --path src`: 1 file (src/app.py)" in text[0]


def test_undo_lists_the_files_it_replaces_and_saves_them_first(repo: GitRepo) -> None:
    """After a restore the user edits a file by hand; undo replaces that edit, says so, and
    the edit is in the state it saved before."""
    ids = story(repo)
    convgit(repo.path, "restore", ids["task"], "--yes")
    repo.write("src/app.py", "print('my hand edit')\n")
    planned = convgit(repo.path, "restore", "--undo", "--dry-run").stdout
    assert "it replaces 1 file changed since that restore, saving them first: src/app.py" in planned
    undone = convgit(repo.path, "restore", "--undo", "--yes", "--json").json()
    assert undone["replaced"] == ["src/app.py"]
    assert (repo.path / "src/app.py").read_text() == "print('plan A')\n"
    words = convgit(repo.path, "restore", undone["saved"], "--yes").stdout
    assert (repo.path / "src/app.py").read_text() == "print('my hand edit')\n"
    assert "restored 1 file to the saved state" in words


def test_a_saved_state_can_never_be_read_as_an_entry(repo: GitRepo) -> None:
    ids = story(repo)
    error = convgit(repo.path, "label", ids["a"], "saved:abcd", code=2).stderr
    assert "cannot be a label" in one_sentence(error)
    error = convgit(repo.path, "user", "--id", "saved:abcd", "hi", code=2).stderr
    assert "cannot be an entry id" in one_sentence(error)
    line = '{"type":"message","role":"user","content":"x","id":"saved:abcd"}\n'
    error = convgit(repo.path, "append", input=line, code=1).stderr
    assert "names a saved state" in one_sentence(error)
    error = convgit(repo.path, "restore", "saved:0000", "--yes", code=1).stderr
    assert one_sentence(error) == "convgit: There is no saved state saved:0000."


def test_snapshotting_an_entry_again_keeps_its_old_snapshot(
    repo: GitRepo, rewatch: Callable[[GitRepo], None]
) -> None:
    """`convgit snapshot` on an entry that has one: the old commit becomes the new one's parent,
    the command says so, and git gc --prune=now keeps it."""
    ids = story(repo)
    old = convgit(repo.path, "show", ids["a"], "--json").json()["snapshot"]["commit"]
    same = convgit(repo.path, "snapshot", ids["a"], "--json").json()
    assert same["commit"] == old and same["unchanged"] is True
    repo.write("src/app.py", "print('plan A, revised')\n")
    words = convgit(repo.path, "snapshot", ids["a"]).stdout
    assert f"(its previous snapshot {old[:12]} is kept as the parent)" in words
    new = convgit(repo.path, "show", ids["a"], "--json").json()["snapshot"]
    assert new["replaces"] == old
    assert git(repo.path, "rev-parse", f"{new['commit']}^").strip() == old
    git(repo.path, "gc", "-q", "--prune=now")
    rewatch(repo)  # gc packs the user's refs: that is the user's own act
    assert git(repo.path, "cat-file", "-t", old).strip() == "commit"
    assert convgit(repo.path, "fsck", "--json").json()["ok"] is True


def test_fsck_names_every_snapshot_and_saved_state_git_lost(
    repo: GitRepo, rewatch: Callable[[GitRepo], None]
) -> None:
    ids = story(repo)
    saved = convgit(repo.path, "restore", ids["task"], "--yes", "--json").json()
    snap = convgit(repo.path, "show", ids["a"], "--json").json()["snapshot"]["commit"]
    for ref in git(repo.path, "for-each-ref", "--format=%(refname)", "refs/convgit").split():
        git(repo.path, "update-ref", "-d", ref)  # by hand, behind convgit's back
    git(repo.path, "-c", "gc.reflogExpire=now", "reflog", "expire", "--all")
    git(repo.path, "gc", "-q", "--prune=now")
    rewatch(repo)
    report = convgit(repo.path, "fsck", code=3).stderr
    assert f"names the commit {snap[:12]}, which is not in the repository any more" in report
    assert f"names the commit {saved['before'][:12]}" in report
    assert "lost from git: their files cannot be restored" in report
    assert "`convgit repair`" not in report
