"""What a user does to a session between two agent turns, while the recorder keeps that session
read between its events (``store.load.session_again``): labels, moves of the leaf, forks,
restores, renames, repair, gc, redact, the trash, appends by other processes and hand edits.
Each turn the recorder records is in the session once with its snapshot, the tree it keeps
never differs from the file read whole (``CONVGIT_HELD_CHECK``, set for every test, makes a
difference a problem in the hook log), and fsck finds nothing. Run with the real CLI and a
real recorder (tests/recorded.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import clirun
from tests.recorded import Claude, Recorded, recording
from tests.workspace.gitrepo import GitRepo


@pytest.fixture
def recorded(repo: GitRepo, tmp_path: Path) -> Iterator[Recorded]:
    yield from recording(repo, tmp_path)


def session_file(recorded: Recorded) -> Path:
    """The current session's file."""
    sid = recorded.json("status")["session"]
    (found,) = (recorded.repo.path / ".git" / "convgit").rglob(f"{sid}.jsonl")
    return Path(found)


def turn(recorded: Recorded, claude: Claude, n: int, turns: dict[str, str]) -> None:
    """One Claude Code turn through the recorder: a prompt, an edit by the agent, a Stop; the
    tree each of its two entries should snapshot."""
    repo = recorded.repo
    turns[f"u-{claude.session[:4]}-{claude.n + 1}"] = repo.oracle()
    recorded.hook(claude.prompt())
    repo.write(f"made-{n}.txt", f"made by the agent in turn {n}\n")
    turns[claude.ids()[1]] = repo.oracle()
    recorded.hook(claude.reply())


def problems(recorded: Recorded) -> list[str]:
    return [line for line in recorded.log() if ": problem after " in line]


def test_a_file_cut_short_by_hand_then_appended_to_is_read_whole(
    recorded: Recorded, tmp_path: Path
) -> None:
    """The last line cut off by hand, then a longer one appended by another process: the file
    is as long as the recorder read it and more, yet not an append to what it read."""
    claude = Claude(tmp_path / "claude", recorded.repo.path)
    recorded.hook(claude.start())
    recorded.wait_running()
    turns: dict[str, str] = {}
    turn(recorded, claude, 1, turns)
    path = session_file(recorded)
    data = path.read_bytes()
    cut = data[: data.rstrip(b"\n").rfind(b"\n") + 1]
    with open(path, "r+b") as out:  # in place, as an editor that keeps the file does
        out.truncate(len(cut))
    text = "x" * (len(data) - len(cut) + 100)
    clirun.run(
        "append", cwd=recorded.repo.path, env=recorded.env,
        input=json.dumps({"type": "message", "role": "user", "content": text}) + "\n",
    )  # fmt: skip
    turn(recorded, claude, 2, turns)
    assert not problems(recorded), problems(recorded)


def test_a_line_edited_in_place_by_hand_is_read_whole(recorded: Recorded, tmp_path: Path) -> None:
    """An editor that writes the file in place (nano does) keeps its inode and, for an edit of
    the same length, its size: nothing was appended, yet the file is not what was read."""
    claude = Claude(tmp_path / "claude", recorded.repo.path)
    recorded.hook(claude.start())
    recorded.wait_running()
    turns: dict[str, str] = {}
    turn(recorded, claude, 1, turns)
    path = session_file(recorded)
    data = path.read_bytes()
    assert data.count(b'"prompt 1"') == 1
    with open(path, "r+b") as out:
        out.write(data.replace(b'"prompt 1"', b'"prompt X"'))
    turn(recorded, claude, 2, turns)
    assert not problems(recorded), problems(recorded)
    shown = recorded.json("show", "u-0b9c-1")
    assert "prompt X" in json.dumps(shown)
