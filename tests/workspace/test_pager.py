"""Long output on a terminal goes through a pager, as git's does: ``CONVGIT_PAGER``, else
``PAGER``, else ``less`` with ``LESS=FRX``; never with ``--no-pager``, ``--json`` or a stdout
that is no terminal. Run on a real pseudo-terminal, with pagers that record what they got."""

from __future__ import annotations

import ast
import os
import sys
from pathlib import Path

import orjson
import pytest

from tests.workspace.cli import convgit
from tests.workspace.terminal import ANSI, on_terminal, recording_pager


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A conversation of 3 entries (outside git: the conversation track only)."""
    place = tmp_path / "work"
    place.mkdir()
    convgit(place, "init")
    for text in ("first question", "the answer", "a follow-up"):
        convgit(place, "user" if text != "the answer" else "assistant", text)
    return place


def without_pager_variables() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in ("CONVGIT_PAGER", "PAGER")}


def test_log_on_a_terminal_goes_through_convgit_pager_in_colour(
    folder: Path, tmp_path: Path
) -> None:
    pager, out = recording_pager(tmp_path)
    ran = on_terminal(folder, "log", env={"CONVGIT_PAGER": pager, "PAGER": "false"})
    assert ran.code == 0, ran.stderr
    paged = out.read_bytes()
    assert b"first question" in paged and b"a follow-up" in paged
    assert b"\x1b[" in paged  # the colours go to the pager (less -R shows them)
    assert "first question" not in ran.shown  # nothing went around the pager
    piped = convgit(folder, "log").stdout  # piped: the same lines, without colour
    assert ANSI.sub("", paged.decode()) == piped


def test_pager_is_used_when_convgit_pager_is_not_set(folder: Path, tmp_path: Path) -> None:
    pager, out = recording_pager(tmp_path)
    env = {**without_pager_variables(), "PAGER": pager}
    ran = on_terminal(folder, "tree", env=env, whole_env=True)
    assert ran.code == 0 and b"the answer" in out.read_bytes()


def test_the_default_pager_is_less_with_FRX(folder: Path, tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    _, out = recording_pager(tmp_path, "less")
    less = bin_dir / "less"  # a `less` first on PATH that records how it was started
    less.write_text(f'#!/bin/sh\nexec {sys.executable} {tmp_path / "less.py"} {out} "$@"\n')
    less.chmod(0o755)
    env = {**without_pager_variables(), "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    env.pop("LESS", None)
    ran = on_terminal(folder, "log", env=env, whole_env=True)
    assert ran.code == 0, ran.stderr
    assert b"the answer" in out.read_bytes()
    started = ast.literal_eval(Path(f"{out}.env").read_text())
    assert started == {"args": [], "LESS": "FRX"}


@pytest.mark.parametrize(
    "args",
    [["--no-pager", "log"], ["-P", "tree"], ["log", "--json"], ["log", "-h"]],
    ids=["no-pager", "P", "json", "help"],
)
def test_no_pager_json_and_help_print_straight_to_the_terminal(
    folder: Path, tmp_path: Path, args: list[str]
) -> None:
    pager, out = recording_pager(tmp_path)
    ran = on_terminal(folder, *args, env={"CONVGIT_PAGER": pager})
    assert ran.code == 0, ran.stderr
    assert not out.exists()
    assert "first question" in ran.shown or "Usage: convgit log" in ran.shown
    if "--json" in args:
        assert orjson.loads(ran.shown)["entries"][0]["content"] == "first question"


def test_a_stdout_that_is_no_terminal_is_never_paged(folder: Path, tmp_path: Path) -> None:
    pager, out = recording_pager(tmp_path)
    ran = convgit(folder, "log", env={"CONVGIT_PAGER": pager})
    assert "first question" in ran.stdout
    assert not out.exists()


@pytest.mark.parametrize("value", ["", "cat"])
def test_an_empty_or_cat_pager_means_no_pager(folder: Path, value: str) -> None:
    ran = on_terminal(folder, "log", env={"CONVGIT_PAGER": value})
    assert ran.code == 0 and "first question" in ran.shown


def test_a_reader_who_quits_the_pager_early_ends_convgit_quietly(tmp_path: Path) -> None:
    place = tmp_path / "long"
    place.mkdir()
    convgit(place, "init")
    lines = b"".join(
        orjson.dumps({"type": "message", "role": "user", "content": f"line {i} " + "x" * 60})
        + b"\n"
        for i in range(3000)
    )
    convgit(place, "append", input=lines)
    quits = f'{sys.executable} -c "import sys; sys.stdin.readline()"'
    ran = on_terminal(place, "log", env={"CONVGIT_PAGER": quits})
    assert (ran.code, ran.stderr) == (0, "")


def test_search_on_a_terminal_goes_through_the_pager_its_matches_highlighted(
    folder: Path, tmp_path: Path
) -> None:
    """`convgit search` starts without typer, and pages as `log` does: the words found in bold
    red, the rest as the plain lines a pipe gets."""
    pager, out = recording_pager(tmp_path)
    ran = on_terminal(folder, "search", "follow", env={"CONVGIT_PAGER": pager, "PAGER": "false"})
    assert ran.code == 0, ran.stderr
    paged = out.read_bytes().decode()
    assert "\x1b[1;31mfollow\x1b[0m" in paged  # the match, highlighted
    assert "a follow-up" not in ran.shown  # nothing went around the pager
    piped = convgit(folder, "search", "follow").stdout
    assert ANSI.sub("", paged) == piped and "a follow-up" in piped
