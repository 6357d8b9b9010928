"""The repository a store lives in is opened in one place (``Workspace.of``, refused plainly by
``Workspace.needed_by``): every command that needs git refuses a store outside git alike."""

from __future__ import annotations

from pathlib import Path

from tests.workspace.cli import convgit, one_sentence

OUTSIDE = ", and this store is not in a git repository with a working tree."


def test_gc_and_fetch_outside_git_refuse_in_one_sentence(tmp_path: Path) -> None:
    """gc and fetch in a store outside git: exit 1 and the one refusal, each naming what needs
    git; nothing is written into the store."""
    convgit(tmp_path, "init", "--no-snapshots")
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    gc = one_sentence(convgit(tmp_path, "gc", code=1).stderr)
    fetch = one_sentence(convgit(tmp_path, "fetch", code=1).stderr)
    assert gc == f"convgit: convgit gc lets snapshots go{OUTSIDE}"
    assert fetch == f"convgit: Sessions are shared through git{OUTSIDE}"
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before
