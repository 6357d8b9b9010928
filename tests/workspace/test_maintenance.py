"""convgit packs only its own objects, and never in a command the user waits on: the first turn
after committing a big project leaves the user's loose objects as they are, and once convgit has
written enough objects a process of its own packs them (the speed is a row of scripts/bench.py)."""

from __future__ import annotations

from pathlib import Path

from convgit.base import locks
from tests.polling import poll
from tests.workspace.cli import convgit
from tests.workspace.gitrepo import GitRepo


def loose(repo: GitRepo) -> set[str]:
    objects = repo.path / ".git" / "objects"
    return {
        fan.name + name.name
        for fan in objects.iterdir()
        if len(fan.name) == 2
        for name in fan.iterdir()
    }


def packs(repo: GitRepo) -> list[Path]:
    return sorted((repo.path / ".git" / "objects" / "pack").glob("*.pack"))


def many_files(repo: GitRepo, folder: str, count: int) -> None:
    for k in range(count):
        repo.write(f"{folder}/m{k // 100}/f{k}.py", f"def f{k}():\n    return {k}\n")


def test_the_first_turn_after_a_big_commit_packs_none_of_the_users_objects(
    repo: GitRepo, rewatch
) -> None:
    many_files(repo, "project", 3000)
    repo.commit_all("3,000 files")
    rewatch(repo)
    users = loose(repo)
    assert len(users) > 3000 and not packs(repo)
    convgit(repo.path, "init")
    convgit(repo.path, "user", "the task")
    convgit(repo.path, "assistant", "looked around")
    assert users <= loose(repo), "the user's loose objects were packed"
    assert not packs(repo)


def test_convgits_own_objects_are_packed_by_a_process_of_its_own(repo: GitRepo) -> None:
    users = loose(repo)  # the user's commit, branch, tag and stash
    convgit(repo.path, "init")
    convgit(repo.path, "user", "the task")
    many_files(repo, "generated", 2100)  # more objects than convgit lets lie loose
    made = convgit(repo.path, "assistant", "generated files", "--json").json()
    commit = made["snapshot"]["commit"]
    packed = poll(lambda: commit not in loose(repo), 120, every=0.2)
    assert packed, "convgit's objects were never packed"
    # The packer deletes the loose copies one by one after writing the pack, under its lock:
    # until it lets go, `git fsck` may list a loose object that is gone when it opens it
    # ("unable to mmap"), as during git's own gc. Done means the lock is free again.
    with locks.held(repo.path / ".git" / "convgit" / "locks" / "maintenance.lock", 120):
        pass
    assert repo.has_object(commit) and len(packs(repo)) == 1
    assert users <= loose(repo), "the user's loose objects were packed"
    assert repo.git("fsck", "--no-dangling", "--no-progress").strip() == ""
    assert convgit(repo.path, "restore", "@~1", "--yes", "--json").json()["changes"]
