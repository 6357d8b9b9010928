"""An empty argument names nothing: an empty REF, path, label, session name or session is
refused in one sentence (exit 2, usage), never widened to the leaf, the whole tree or the current
session, and nothing changes (the store, the files, the user's git state)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import typer.main

from tests.workspace.cli import convgit, one_sentence
from tests.workspace.gitrepo import GitRepo

# Every command taking an entry: its arguments with '' where the REF goes.
EMPTY_REF: dict[str, list[str]] = {
    "show": ["show", ""],
    "log": ["log", ""],
    "context": ["context", ""],
    "branches": ["branches", ""],
    "snapshot": ["snapshot", ""],
    "switch": ["switch", ""],
    "fork": ["fork", ""],
    "edit": ["edit", "", "new text"],
    "retry": ["retry", ""],
    "label": ["label", "", "done"],
    "diff": ["diff", ""],
    "diff B": ["diff", "@", ""],
    "restore": ["restore", "", "--yes"],
    "worktree": ["worktree", "", "side"],
    "run": ["run", "", "--", "true"],
    "export": ["export", "", "--format", "pi"],
    "resume": ["resume", "", "--agent", "pi"],
}

# Every other argument that names something: a path, a label, a session's name, a session.
EMPTY_NAME: dict[str, list[str]] = {
    "restore --path": ["restore", "@", "--path", "", "--yes"],
    "restore --path twice": ["restore", "@", "--path", "src", "--path", "", "--yes"],
    "run --link": ["run", ".", "--link", "", "--", "true"],
    "label NAME": ["label", "@", ""],
    "name": ["name", ""],
    "name blank": ["name", "  "],
    "init --name": ["init", "--name", ""],
    "fork --name": ["fork", "@", "--new-session", "--name", ""],
    "--session": ["--session", "", "status"],
    "-s": ["-s", "", "log"],
    "use": ["use", ""],
    "html SESSION": ["html", ""],
    "redact --session": ["redact", "zzz", "--dry-run", "--session", ""],
    # a message typed with no text says nothing (the guide's promise covers texts too)
    "user": ["user", ""],
    "user blank": ["user", " \n"],
    "assistant": ["assistant", ""],
    "edit TEXT": ["edit", "@", ""],
    "fork TEXT": ["fork", "@", ""],
    "fork --summary": ["fork", "@", "--summary", ""],
    "system": ["system", ""],
}

REF_PARAMETERS = {"ref", "a", "b", "refs"}


def every_byte(root: Path) -> dict[str, bytes | None]:
    """Every file and folder under ``root``, git's and convgit's included, but for convgit's
    stat cache (``.git/convgit/index/``: a command may refresh it before it reads an argument)."""
    seen: dict[str, bytes | None] = {}
    for top, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            path = Path(top, name)
            rel = path.relative_to(root).as_posix()
            if rel.startswith(".git/convgit/index/"):
                continue
            seen[rel] = None if path.is_dir() else path.read_bytes()
    return seen


@pytest.fixture
def started(repo: GitRepo) -> GitRepo:
    convgit(repo.path, "init", "--name", "work")
    convgit(repo.path, "user", "change the app")
    repo.write("src/app.py", "print('changed')\n")
    convgit(repo.path, "assistant", "changed it")
    repo.write("src/app.py", "print('changed again, not snapshotted')\n")
    repo.write("notes.txt", "mine\n")
    return repo


def test_the_tables_hold_every_command_taking_a_ref() -> None:
    from convgit.cli import app

    taking = set()
    group = typer.main.get_command(app)
    for name, command in group.commands.items():  # type: ignore[attr-defined]
        for param in getattr(command, "params", []):
            if param.name in REF_PARAMETERS:
                taking.add(name)
    tried = {args[0] for args in [*EMPTY_REF.values(), *EMPTY_NAME.values()]}
    assert taking <= tried, taking - tried


@pytest.mark.parametrize("args", EMPTY_REF.values(), ids=EMPTY_REF.keys())
def test_an_empty_ref_is_refused_and_nothing_changes(started: GitRepo, args: list[str]) -> None:
    before = every_byte(started.path)
    ran = convgit(started.path, *args, code=2)
    assert "empty" in one_sentence(ran.stderr)
    assert ran.stdout == ""
    assert every_byte(started.path) == before


@pytest.mark.parametrize("args", EMPTY_NAME.values(), ids=EMPTY_NAME.keys())
def test_an_empty_path_label_name_or_session_is_refused(started: GitRepo, args: list[str]) -> None:
    before = every_byte(started.path)
    ran = convgit(started.path, *args, code=2)
    one_sentence(ran.stderr)
    assert ran.stdout == ""
    assert every_byte(started.path) == before


def test_the_whole_tree_is_still_named_by_a_dot(started: GitRepo) -> None:
    ran = convgit(started.path, "restore", "@", "--path", ".", "--clean", "--dry-run", "--json")
    assert sorted(change["path"] for change in ran.json()["changes"]) == ["notes.txt", "src/app.py"]
