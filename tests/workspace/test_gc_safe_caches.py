"""`git gc --prune=now` never breaks convgit. What convgit remembers without a ref (the tree its
private index last gave, the last snapshot made from it) may be collected by git; a missing one is
rebuilt, never an error, and every command gives the answer it gave before the collection. Every
example runs the real CLI on a real repository, under the guard that the user's index, HEAD,
branches, tags and stash never change."""

from __future__ import annotations

import pytest

from tests.workspace.cli import convgit
from tests.workspace.gitrepo import GitRepo


def _collect(repo: GitRepo, reflogs: bool, rewatch) -> None:
    """What a user runs to shrink a repository: everything no ref keeps goes now (git packs
    the user's refs, and an expired reflog empties the stash: the user's own doing)."""
    if reflogs:
        repo.git("reflog", "expire", "--expire=now", "--all")
    repo.git("gc", "-q", "--prune=now")
    rewatch(repo)


@pytest.mark.parametrize("reflogs", [False, True], ids=["gc", "reflog-expire-then-gc"])
def test_status_diff_restore_and_snapshot_work_after_git_gc_prune_now(
    repo: GitRepo, reflogs: bool, rewatch
) -> None:
    """A status and a diff of unsnapshotted edits wrote a tree no ref keeps; gc collects it.
    status, diff, restore (and its undo) and the next snapshot give the answers they gave."""
    convgit(repo.path, "init")
    task = convgit(repo.path, "user", "task", "--json").json()
    repo.write("src/app.py", "print('plan A')\n")
    convgit(repo.path, "assistant", "plan A", "--json")
    repo.write("src/app.py", "print('plan B, not snapshotted')\n")
    repo.write("notes.txt", "new, not snapshotted\n")
    status = convgit(repo.path, "status", "--json").json()
    diff = convgit(repo.path, "diff", task["id"], "--json").json()["changes"]
    planned = convgit(repo.path, "restore", task["id"], "--clean", "--dry-run", "--json").json()
    files_now = repo.oracle()  # git's own tree of the files (the one convgit cached)
    assert status["files"]["changed"] == ["notes.txt", "src/app.py"]

    _collect(repo, reflogs, rewatch)
    assert not repo.has_object(files_now)  # the cached tree is gone: the case to survive

    assert convgit(repo.path, "status", "--json").json() == status
    assert convgit(repo.path, "diff", task["id"], "--json").json()["changes"] == diff
    assert (
        convgit(repo.path, "restore", task["id"], "--clean", "--dry-run", "--json").json()
        == planned
    )
    restored = convgit(repo.path, "restore", task["id"], "--clean", "--yes", "--json").json()
    assert restored["changes"] == planned["changes"]
    assert (repo.path / "src/app.py").read_text() == "print('hello')\n"
    assert not (repo.path / "notes.txt").exists()

    _collect(repo, reflogs, rewatch)  # the restore's own cached tree and saved state
    convgit(repo.path, "restore", "--undo", "--yes")
    assert (repo.path / "src/app.py").read_text() == "print('plan B, not snapshotted')\n"
    assert (repo.path / "notes.txt").read_text() == "new, not snapshotted\n"

    _collect(repo, reflogs, rewatch)
    reply = convgit(repo.path, "assistant", "plan B", "--json").json()
    assert reply["snapshot"]["tree"] == repo.oracle()
    assert repo.has_object(reply["snapshot"]["commit"])
    status = convgit(repo.path, "status", "--json").json()
    assert status["files"] == {"matches": reply["id"], "changed": []}


@pytest.mark.parametrize("reflogs", [False, True], ids=["gc", "reflog-expire-then-gc"])
def test_an_unchanged_tree_after_gc_reuses_the_last_snapshot_and_status_matches_it(
    repo: GitRepo, reflogs: bool, rewatch
) -> None:
    """Nothing changed since the last snapshot; gc packs and prunes: the next turn reuses that
    snapshot (it is kept by its ref), and status says the files match it (as the reply's)."""
    convgit(repo.path, "init")
    repo.write("src/app.py", "print('plan A')\n")
    task = convgit(repo.path, "user", "task", "--json").json()
    _collect(repo, reflogs, rewatch)
    again = convgit(repo.path, "assistant", "nothing to do", "--json").json()
    assert again["snapshot"]["commit"] == task["snapshot"]["commit"]
    assert convgit(repo.path, "status", "--json").json()["files"]["matches"] == again["id"]
    assert convgit(repo.path, "diff", task["id"], "--json").json()["changes"] == []
    repo.write("src/app.py", "print('plan B')\n")
    _collect(repo, reflogs, rewatch)
    reply = convgit(repo.path, "assistant", "plan B", "--json").json()
    assert reply["snapshot"]["tree"] == repo.oracle()
    changes = convgit(repo.path, "diff", task["id"], reply["id"], "--json").json()["changes"]
    assert [c["path"] for c in changes] == ["src/app.py"]
