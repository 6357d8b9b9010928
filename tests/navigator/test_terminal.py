"""`convgit ui` as a person runs it: in a real terminal (tmux, Debian's package), keys sent as
typed and the screen read back; and without a terminal, one sentence and exit 1."""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from convgit.session import Session
from tests.missing_tools import missing
from tests.navigator.drive import Story, story
from tests.workspace.cli import convgit, one_sentence
from tests.workspace.gitrepo import GitRepo


class Terminal:
    """A tmux server of the test's own (its own socket), one window running a command."""

    def __init__(self, socket: Path) -> None:
        self.socket = socket

    def tmux(self, *args: str) -> str:
        done = subprocess.run(
            ["tmux", "-S", str(self.socket), "-f", "/dev/null", *args],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", "ui")

    def wait_for(self, *texts: str) -> str:
        """The screen once it shows every one of ``texts`` (the app draws when it is ready,
        and a screen read while it draws is half drawn)."""
        shown = ""
        for _ in range(300):
            shown = self.screen()
            if all(text in shown for text in texts):
                return shown
            time.sleep(0.1)
        raise AssertionError(f"the terminal never showed {texts!r}; it shows:\n{shown}")


@pytest.fixture
def terminal(tmp_path: Path) -> Iterator[Terminal]:
    if shutil.which("tmux") is None:
        missing("tmux", "apt-get install tmux")
    made = Terminal(tmp_path / "tmux.sock")
    try:
        yield made
    finally:
        subprocess.run(
            ["tmux", "-S", str(made.socket), "kill-server"], capture_output=True, timeout=60
        )


def test_convgit_ui_in_a_real_terminal(repo: GitRepo, terminal: Terminal) -> None:
    told: Story = story(repo)
    command = f"{shutil.which('python3') or 'python3'} -m convgit ui; echo EXITED $?; sleep 60"
    terminal.tmux(
        "new-session", "-d", "-s", "ui", "-x", "120", "-y", "36", "-c", str(repo.path), command
    )
    # the tree, the entry at the cursor, both tracks in words and the footer's keys
    terminal.wait_for("entry ", "    wrote plan three", "files:   match the snapshot", "/ search")
    terminal.tmux("send-keys", "-t", "ui", "Up")
    terminal.wait_for("entry " + Session.open(repo.path).view().short_id(told.other))
    terminal.tmux("send-keys", "-t", "ui", "s")
    assert "files: not changed" in terminal.wait_for("switched to")
    terminal.tmux("send-keys", "-t", "ui", "q")
    terminal.wait_for("EXITED 0")
    assert Session.open(repo.path).conversation.leaf == told.other


def test_at_80_columns_every_key_and_the_marks_are_on_the_screen(
    repo: GitRepo, terminal: Terminal
) -> None:
    told: Story = story(repo)
    command = f"{shutil.which('python3') or 'python3'} -m convgit ui --stable; sleep 60"
    terminal.tmux(
        "new-session", "-d", "-s", "ui", "-x", "80", "-y", "24", "-c", str(repo.path), command
    )
    shown = terminal.wait_for("/ search", "? help", "← context")
    leaf = Session.open(repo.path).view().short_id(told.three)
    row = next(line for line in shown.splitlines() if leaf in line.split("│ ")[0])
    assert "← files ← context" in row.split("│ ")[0]  # in the tree's half, before the text
    terminal.tmux("send-keys", "-t", "ui", "q")


def test_without_a_terminal_it_says_so_in_one_sentence(repo: GitRepo) -> None:
    story(repo)
    done = convgit(repo.path, "ui", code=1)
    assert "terminal" in one_sentence(done.stderr)
    assert done.stdout == ""
