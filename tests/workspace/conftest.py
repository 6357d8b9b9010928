"""Fixtures for the workspace track: real repositories in tmp_path, and a guard, used by every
test here, proving that the user's index, HEAD, branches, tags and stash are byte-identical
after the test (git's own state is the promise, so it is read as bytes, not through convgit)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.workspace.gitrepo import GitRepo, UserStateGuard, init_repo


@pytest.fixture(autouse=True)
def user_state_guard() -> Iterator[UserStateGuard]:
    """Every workspace test ends with the user's index, HEAD, branches, tags and stash intact."""
    guard = UserStateGuard()
    yield guard
    guard.verify()


@pytest.fixture
def make_repo(tmp_path: Path, user_state_guard: UserStateGuard) -> Callable[..., GitRepo]:
    """Make a repository under tmp_path; the guard watches it from the moment it exists."""

    def make(name: str = "repo", *, commit: bool = True) -> GitRepo:
        repo = init_repo(tmp_path / name, commit=commit)
        user_state_guard.watch(repo.path)
        return repo

    return make


@pytest.fixture
def repo(make_repo: Callable[..., GitRepo]) -> GitRepo:
    """A real repository with a commit, a branch, a tag and a stash entry."""
    return make_repo()


@pytest.fixture
def rewatch(user_state_guard: UserStateGuard) -> Callable[[GitRepo], None]:
    """Re-record the user's state after a test's own git actions as the user."""
    return lambda repo: user_state_guard.watch(repo.path)
