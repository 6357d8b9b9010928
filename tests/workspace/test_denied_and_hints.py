"""Errors that say what to do: the file system denying convgit a file (a read-only store, a file
this user may not read) is exit 1 with a hint, never 3 (3 is a damaged store); ``html -o``
into a folder that does not exist names the file asked for, never a temporary one; and a
refusal's hint names a point that the same command then accepts (each is run here)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.reliability.test_no_traceback import read_only
from tests.workspace.cli import convgit, one_sentence
from tests.workspace.gitrepo import GitRepo, UserStateGuard, init_repo

NOBODY = 65534
# The real entry point, started as root (python lives where only root may read) and run as
# nobody: every module is imported first, then the effective user becomes nobody's.
AS_NOBODY = f"""
import importlib, os, pkgutil, sys
import convgit, convgit.cli, typer
convgit.cli._register_commands()
for package in (convgit, typer):
    for found in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        if found.name not in ("convgit.__main__", "convgit.workspace.background", "typer.__main__"):
            try:
                importlib.import_module(found.name)
            except (ImportError, AssertionError):  # a part of typer for another system
                pass
import convgit.__main__
os.setegid({NOBODY}); os.seteuid({NOBODY})
assert os.geteuid() == {NOBODY}
sys.argv = ["convgit", *sys.argv[1:]]
convgit.__main__.main()
"""


def as_nobody(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", AS_NOBODY, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@contextmanager
def open_folder() -> Iterator[Path]:
    """A folder others may enter (pytest's tmp_path is 0700, which nobody could not enter)."""
    with tempfile.TemporaryDirectory() as made:
        folder = Path(made)
        folder.chmod(0o755)
        yield folder


def test_a_read_only_store_is_exit_1_with_a_hint(repo: GitRepo) -> None:
    convgit(repo.path, "init")
    convgit(repo.path, "user", "task")
    store = repo.path / ".git" / "convgit"
    kept = (store / "sessions").iterdir()
    before = {p.name: p.read_bytes() for p in kept}
    with read_only(store):
        for args in (("user", "more"), ("assistant", "a reply"), ("label", "@", "start")):
            ran = convgit(repo.path, *args, code=1)
            said = one_sentence(ran.stderr)
            assert "Read-only file system" in said or "Permission denied" in said, said
            hint = ran.stderr.splitlines()[1]
            assert "--store DIR" in hint or "check its owner and mode" in hint, hint
    assert {p.name: p.read_bytes() for p in (store / "sessions").iterdir()} == before


def test_a_session_file_this_user_may_not_read_is_exit_1_with_a_hint() -> None:
    with open_folder() as folder:
        repo = init_repo(folder / "repo")
        guard = UserStateGuard()
        guard.watch(repo.path)
        sid = convgit(repo.path, "init", "--json").json()["id"]
        convgit(repo.path, "user", "task")
        session = repo.path / ".git" / "convgit" / "sessions" / f"{sid}.jsonl"
        content = session.read_bytes()
        session.chmod(0)
        try:
            for args in (("log",), ("context",), ("show", "@"), ("fsck",), ("user", "more")):
                done = as_nobody(repo.path, *args)
                assert "Traceback" not in done.stderr, done.stderr
                assert done.returncode == 1, (args, done.returncode, done.stderr)
                lines = done.stderr.splitlines()
                assert len(lines) == 2, done.stderr
                assert "cannot be" in lines[0] and "(Permission denied)." in lines[0], args
                assert lines[1] == (
                    f"  hint: this user may not use {session}: check its owner and mode"
                    f" (ls -ld {session})"
                )
        finally:
            session.chmod(0o644)
        assert session.read_bytes() == content
        guard.verify()


def test_html_o_into_a_missing_folder_names_the_file_asked_for(repo: GitRepo) -> None:
    convgit(repo.path, "init")
    convgit(repo.path, "user", "task")
    target = repo.path / "missing" / "page.html"
    ran = convgit(repo.path, "html", "-o", str(target), code=1)
    said = one_sentence(ran.stderr)
    assert str(target) in said and "does not exist" in said
    assert ".tmp" not in said
    assert not (repo.path / "missing").exists()
    assert not list(repo.path.glob(".*.tmp"))


def hinted(stderr: str) -> list[list[str]]:
    """The commands a hint names in backquotes, as argument lists (without ``convgit``)."""
    hint = stderr.split("hint: ", 1)[1]
    return [found.split() for found in re.findall(r"`convgit ([^`]+)`", hint)]


def test_each_refusal_s_hint_names_a_point_the_same_command_accepts(repo: GitRepo) -> None:
    convgit(repo.path, "init")
    user = convgit(repo.path, "user", "run two things", "--json").json()["id"]
    calls = [{"type": "tool_call", "id": f"c{n}", "name": "run", "input": {}} for n in (1, 2)]
    lines = [
        {"type": "message", "role": "assistant", "content": calls},
        {"type": "message", "role": "tool", "toolCallId": "c1", "content": "one"},
    ]
    text = "".join(f"{json.dumps(r)}\n" for r in lines)
    caller, result = convgit(repo.path, "append", "--json", input=text).json()["ids"]

    # edit a tool result while its call's run waits for c2: `edit CALLER` would be refused too
    ran = convgit(repo.path, "edit", result, "new words", code=1)
    (command,) = hinted(ran.stderr)
    assert command == ["retry", caller]
    convgit(repo.path, *command)
    convgit(repo.path, "switch", result)

    # a fork inside the tool run: the point it names, forked from
    ran = convgit(repo.path, "fork", result, code=1)
    point = re.search(r"branch from (\w+)", ran.stderr)
    assert point is not None and point.group(1) == user
    convgit(repo.path, "fork", point.group(1))
    convgit(repo.path, "switch", result)

    # once the run is answered too: a reply that makes calls is never edited, only retried
    convgit(repo.path, "tool", "c2", "two")
    ran = convgit(repo.path, "edit", result, "new words", code=1)
    assert hinted(ran.stderr) == [["retry", caller]]
    convgit(repo.path, "edit", caller, "a new reply", code=1)
    convgit(repo.path, "retry", caller)

    # a restore of an entry with no snapshot: its nearest snapshot, restored
    ran = convgit(repo.path, "restore", result, "--yes", code=1)
    point = re.search(r"nearest snapshot is at (\w+)", ran.stderr)
    assert point is not None
    convgit(repo.path, "restore", point.group(1), "--yes")

    # the commands that need --yes without a terminal name the run that has it
    sid = convgit(repo.path, "status", "--json").json()["session"]
    for refused in (("sessions", "rm", "@"), ("gc", "--trash")):
        if refused[0] == "sessions":
            refused = ("sessions", "rm", sid)
        ran = convgit(repo.path, *refused, code=1)
        (command,) = hinted(ran.stderr)
        assert command[: len(refused)] == list(refused) and command[-1] == "--yes"
        convgit(repo.path, *command)

    # a session that is not there: the sessions that are, each then accepted
    other = convgit(repo.path, "init", "--name", "other", "--json").json()["id"]
    ran = convgit(repo.path, "--session", "0000nosuch", "log", code=1)
    named = re.findall(r"\b([0-9a-f]{12})\b", ran.stderr.split("hint: ", 1)[1])
    assert named == [other]
    convgit(repo.path, "--session", named[0], "log")
    assert os.path.isdir(repo.path)
