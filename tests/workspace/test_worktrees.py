"""Side-by-side checkouts of a snapshot are real git worktrees that leave the main one alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from convgit.errors import NotFoundError, RefusedError
from tests.workspace.gitrepo import GitRepo, UserStateGuard


def test_add_worktree_checks_out_the_snapshot_beside_the_main_tree(repo: GitRepo, tmp_path: Path):
    repo.write("plan-a.txt", "plan A\n")
    repo.write("run.sh", "#!/bin/sh\n", executable=True)
    shot = repo.workspace.snapshot(repo.index, message="m\n", parent=None)
    (repo.path / "plan-a.txt").unlink()
    repo.write("plan-b.txt", "plan B\n")
    main_before = repo.digest()
    side = GitRepo(tmp_path / "side")
    repo.workspace.add_worktree(shot.commit, side.path)
    assert repo.digest() == main_before
    assert side.git("rev-parse", "HEAD").strip() == shot.commit
    assert side.git("status", "--porcelain") == ""
    assert side.oracle() == shot.tree
    assert (side.path / "run.sh").stat().st_mode & 0o100
    assert side.git("symbolic-ref", "-q", "HEAD", check=False) == ""  # detached


def test_list_worktrees_shows_only_worktrees_convgit_made(
    repo: GitRepo, tmp_path: Path, user_state_guard: UserStateGuard
):
    repo.git("worktree", "add", "-q", "--detach", str(tmp_path / "users-own"))
    user_state_guard.watch(repo.path)
    shot = repo.workspace.snapshot(repo.index, message="m\n", parent=None)
    repo.workspace.add_worktree(shot.commit, tmp_path / "one")
    repo.workspace.add_worktree("HEAD", tmp_path / "two")
    head = repo.git("rev-parse", "HEAD").strip()
    listed = repo.workspace.list_worktrees()
    assert [(p.resolve(), c) for p, c in listed] == [
        ((tmp_path / "one").resolve(), shot.commit),
        ((tmp_path / "two").resolve(), head),
    ]


def test_remove_worktree_removes_it_and_leaves_the_main_tree(repo: GitRepo, tmp_path: Path):
    shot = repo.workspace.snapshot(repo.index, message="m\n", parent=None)
    repo.workspace.add_worktree(shot.commit, tmp_path / "side")
    main_before = repo.digest()
    (tmp_path / "side" / "scratch.txt").write_text("test output\n")
    with pytest.raises(RefusedError, match="will not remove"):
        repo.workspace.remove_worktree(tmp_path / "side")  # it has changes of its own
    repo.workspace.remove_worktree(tmp_path / "side", force=True)
    assert not (tmp_path / "side").exists()
    assert repo.workspace.list_worktrees() == []
    assert "side" not in repo.git("worktree", "list")
    assert repo.digest() == main_before


def test_remove_worktree_forgets_one_whose_folder_is_gone(repo: GitRepo, tmp_path: Path):
    shot = repo.workspace.snapshot(repo.index, message="m\n", parent=None)
    repo.workspace.add_worktree(shot.commit, tmp_path / "side")
    for path in sorted((tmp_path / "side").rglob("*"), reverse=True):
        path.unlink() if not path.is_dir() or path.is_symlink() else path.rmdir()
    (tmp_path / "side").rmdir()
    repo.workspace.remove_worktree(tmp_path / "side")
    assert repo.workspace.list_worktrees() == []


def test_remove_worktree_refuses_worktrees_convgit_did_not_make(
    repo: GitRepo, tmp_path: Path, user_state_guard: UserStateGuard
):
    repo.git("worktree", "add", "-q", "--detach", str(tmp_path / "users-own"))
    user_state_guard.watch(repo.path)
    with pytest.raises(RefusedError, match="not a worktree made by convgit"):
        repo.workspace.remove_worktree(tmp_path / "users-own")
    assert (tmp_path / "users-own" / "README.md").exists()


def test_add_worktree_refuses_folders_inside_the_repository_or_not_empty(
    repo: GitRepo, tmp_path: Path
):
    shot = repo.workspace.snapshot(repo.index, message="m\n", parent=None)
    with pytest.raises(RefusedError):
        repo.workspace.add_worktree(shot.commit, repo.path / "inside")
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "file").write_text("x")
    with pytest.raises(RefusedError):
        repo.workspace.add_worktree(shot.commit, tmp_path / "busy")
    with pytest.raises(NotFoundError):
        repo.workspace.add_worktree("0" * 40, tmp_path / "nowhere")
