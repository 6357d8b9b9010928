"""Two clones of one bare repository on disk; every test ends with the user's HEAD, index,
branches, tags and stash of both clones as they were."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.sharing.clones import Clone, another_clone, bare, first_clone
from tests.workspace.gitrepo import UserStateGuard


@pytest.fixture(autouse=True)
def user_state_guard() -> Iterator[UserStateGuard]:
    guard = UserStateGuard()
    yield guard
    guard.verify()


@pytest.fixture
def remote(tmp_path: Path) -> Path:
    return bare(tmp_path / "remote.git")


@pytest.fixture
def a(tmp_path: Path, remote: Path, user_state_guard: UserStateGuard) -> Clone:
    clone = first_clone(tmp_path / "a", str(remote))
    user_state_guard.watch(clone.path)
    return clone


@pytest.fixture
def b(tmp_path: Path, remote: Path, a: Clone, user_state_guard: UserStateGuard) -> Clone:
    clone = another_clone(tmp_path / "b", str(remote))
    user_state_guard.watch(clone.path)
    return clone
