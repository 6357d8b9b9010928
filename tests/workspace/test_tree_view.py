"""`convgit tree` as a class reads it on a projector: with --stable the picture does not move
when the context does, and on a narrow terminal an entry's text gives way, never its marks."""

from __future__ import annotations

from tests.workspace.cli import convgit
from tests.workspace.gitrepo import GitRepo
from tests.workspace.terminal import on_terminal


def two_branches(repo: GitRepo) -> dict[str, str]:
    def said(*args: str) -> str:
        return str(convgit(repo.path, *args, "--json").json()["id"])

    convgit(repo.path, "init")
    task = said("user", "task")
    repo.write("a.txt", "a\n")
    a = said("assistant", "plan A, written first, with a long text that a narrow terminal cuts")
    convgit(repo.path, "fork", task, "try B")
    repo.write("a.txt", "b\n")
    b = said("assistant", "plan B")
    return {"task": task, "a": a, "b": b}


def order(repo: GitRepo, *args: str) -> list[str]:
    """The entries' short ids, in the order `tree` draws them."""
    lines = convgit(repo.path, "tree", *args).stdout.splitlines()[1:]
    return [line.lstrip("├└│─ ").split()[0] for line in lines]


def test_stable_keeps_the_order_when_the_context_moves(repo: GitRepo) -> None:
    ids = two_branches(repo)
    stable, moving = order(repo, "--stable"), order(repo)
    convgit(repo.path, "switch", ids["a"])
    assert order(repo, "--stable") == stable  # the branch written first stays first
    assert order(repo) != moving  # by default the context's branch comes first


def test_a_narrow_terminal_cuts_the_text_and_keeps_the_marks(repo: GitRepo) -> None:
    ids = two_branches(repo)
    convgit(repo.path, "switch", ids["a"])
    convgit(repo.path, "label", ids["a"], "planA")
    shown = on_terminal(repo.path, "tree", columns=60, env={"CONVGIT_PAGER": "cat"}).shown
    line = next(x for x in shown.splitlines() if ids["a"][:8] in x)
    assert len(line) <= 60 and "…" in line
    assert line.endswith("[planA] ◆ ← context")
