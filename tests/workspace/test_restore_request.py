"""The restore passes down as one value: the session builds one ``RestoreRequest`` (frozen) and
``Workspace.restoring`` plans from it alone, whatever the request names."""

from __future__ import annotations

import dataclasses

import pytest

from convgit.store.config import DEFAULT_SIZE_CAP
from convgit.workspace import RestoreRequest
from tests.workspace.gitrepo import GitRepo


def test_one_request_plans_the_restore_it_names_and_cannot_change(repo: GitRepo) -> None:
    repo.write("a.txt", "a v1\n")
    repo.write("b.txt", "b v1\n")
    target = repo.workspace.snapshot(repo.index, message="m\n", parent=None).commit
    repo.write("a.txt", "a v2\n")
    repo.write("b.txt", "b v2\n")
    request = RestoreRequest(target, DEFAULT_SIZE_CAP, paths=("a.txt",))
    with pytest.raises(dataclasses.FrozenInstanceError):
        request.paths = None  # type: ignore[misc]
    with repo.workspace.restoring(request, index=repo.index) as planned:
        assert [c.path for c in planned.changes] == ["a.txt"]
        planned.save(None, "saved before a restore\n")
        planned.apply()
    assert (repo.path / "a.txt").read_text() == "a v1\n"
    assert (repo.path / "b.txt").read_text() == "b v2\n"  # outside the request's paths
    whole = dataclasses.replace(request, paths=None)  # the same request, every path
    with repo.workspace.restoring(whole, index=repo.index) as planned:
        assert [c.path for c in planned.changes] == ["b.txt"]
