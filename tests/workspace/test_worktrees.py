"""Side-by-side checkouts of a snapshot are real git worktrees that leave the main one alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from convgit.base.errors import NotFoundError, RefusedError
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
    assert side.oracle() == shot.tree_id
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


def test_discard_worktree_removes_a_changed_one_and_never_follows_a_link(
    repo: GitRepo, tmp_path: Path
):
    shot = repo.workspace.snapshot(repo.index, message="m\n", parent=None)
    side = tmp_path / "side"
    repo.workspace.add_worktree(shot.commit, side)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("not the worktree's\n")
    (side / "linked").symlink_to(outside)
    (side / "build" / "locked").mkdir(parents=True)
    (side / "build" / "locked" / "out.o").write_text("x")
    (side / "build" / "locked").chmod(0o500)
    (side / "src" / "app.py").write_text("changed\n")
    repo.workspace.discard_worktree(side)
    assert not side.exists()
    assert (outside / "keep.txt").read_text() == "not the worktree's\n"
    assert repo.workspace.list_worktrees() == []
    assert repo.git("worktree", "list", "--porcelain").count("worktree ") == 1
    assert repo.git("worktree", "prune", "--dry-run", "--verbose") == ""


def test_discard_worktree_removes_a_half_made_one_git_left_locked(repo: GitRepo, tmp_path: Path):
    side = tmp_path / "side"
    # what a checkout killed half-way leaves: git's admin folder, locked, and part of the files
    # (here without the .git file, so that git itself refuses to remove it)
    repo.git("worktree", "add", "--detach", "--lock", "--quiet", str(side), "HEAD")
    (side / "README.md").unlink()
    (side / ".git").unlink()
    repo.workspace.discard_worktree(side)
    assert not side.exists()
    common = Path(repo.git("rev-parse", "--path-format=absolute", "--git-common-dir").strip())
    assert common.is_dir() and not list((common / "worktrees").glob("*"))
    assert repo.git("worktree", "prune", "--dry-run", "--verbose") == ""


def test_modes_tells_files_folders_and_absent_paths_apart(repo: GitRepo):
    repo.write("run.sh", "#!/bin/sh\n", executable=True)
    shot = repo.workspace.snapshot(repo.index, message="m\n", parent=None)
    modes = repo.workspace.modes(shot.commit, ["run.sh", "src", "src/app.py", "nope", "run.sh/x"])
    assert modes == {
        "run.sh": 0o100755,
        "src": 0o040000,
        "src/app.py": 0o100644,
        "nope": None,
        "run.sh/x": None,
    }
