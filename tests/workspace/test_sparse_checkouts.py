"""In a sparse checkout, cone or not, a restore and its undo never write a path outside the
sparse patterns as they are now, nor delete one: a file the target holds there, and a file of the
user's there, are left alone and named. Real CLI, real repository, under the guard that the
user's index, HEAD, branches, tags and stash never change (the test's own `git sparse-checkout`
as the user is re-recorded)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.workspace.cli import convgit
from tests.workspace.gitrepo import GitRepo

OUTSIDE = "outside the sparse checkout; left alone"


@pytest.mark.parametrize(
    ("wide", "narrow"),
    [
        (["set", "--cone", "src", "docs"], ["set", "--cone", "src"]),
        (["set", "--no-cone", "/*"], ["set", "--no-cone", "/*", "!/docs/"]),
    ],
    ids=["cone", "no-cone"],
)
def test_a_restore_never_writes_or_deletes_outside_the_sparse_checkout(
    repo: GitRepo, rewatch: Callable[[GitRepo], None], wide: list[str], narrow: list[str]
) -> None:
    """The snapshot is taken with docs/ checked out; the user narrows the checkout (git takes
    docs/guide.md off the disk) and keeps a note of their own in docs/, which the next snapshot
    holds. Going back to the first snapshot writes src/ only: docs/guide.md stays off the disk
    and the note stays, both named; the undo leaves them so too."""
    repo.write("docs/guide.md", "# guide\n")
    repo.commit_all("docs")
    repo.git("sparse-checkout", *wide)
    rewatch(repo)
    convgit(repo.path, "init")
    task = convgit(repo.path, "user", "task", "--json").json()["id"]
    repo.git("sparse-checkout", *narrow)
    rewatch(repo)
    assert not (repo.path / "docs" / "guide.md").exists()
    repo.write("docs/notes.md", "the user's own note, outside the sparse checkout\n")
    repo.write("src/app.py", "print('changed')\n")
    convgit(repo.path, "assistant", "changed app.py")
    before = repo.digest()

    planned = convgit(repo.path, "restore", task, "--dry-run", "--json").json()
    restored = convgit(repo.path, "restore", task, "--yes", "--json").json()
    for result in (planned, restored):
        assert [c["path"] for c in result["changes"]] == ["src/app.py"]
        alone = {row["path"]: row["reason"] for row in result["left_alone"]}
        assert alone == {"docs/guide.md": OUTSIDE, "docs/notes.md": OUTSIDE}
    assert not (repo.path / "docs" / "guide.md").exists(), "written outside the checkout"
    assert (repo.path / "docs" / "notes.md").exists(), "deleted outside the checkout"
    assert (repo.path / "src" / "app.py").read_text() == "print('hello')\n"

    convgit(repo.path, "restore", "--undo", "--yes")
    assert repo.digest() == before
