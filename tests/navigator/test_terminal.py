"""`convgit ui` as a person runs it: in a real terminal (tmux, Debian's package), keys sent as
typed and the screen read back; and without a terminal, one sentence and exit 1."""

from __future__ import annotations

import os
import shutil
import signal
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

    def wait_for(self, *texts: str, tries: int = 300) -> str:
        """The screen once it shows every one of ``texts`` (the app draws when it is ready,
        and a screen read while it draws is half drawn)."""
        shown = ""
        for _ in range(tries):
            shown = self.screen()
            if all(text in shown for text in texts):
                return shown
            time.sleep(0.1)
        raise AssertionError(f"the terminal never showed {texts!r}; it shows:\n{shown}")

    def press_until(self, key: str, *texts: str) -> str:
        """Send ``key`` until the screen shows ``texts``: a key the app gets before its
        bindings are live is dropped (only for keys that do nothing more when pressed again)."""
        for _ in range(9):
            self.tmux("send-keys", "-t", "ui", key)
            try:
                return self.wait_for(*texts, tries=30)
            except AssertionError:
                continue
        return self.wait_for(*texts)


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


def _ui_pid(terminal: Terminal) -> int:
    """The convgit process the window's shell runs."""
    shell = terminal.tmux("display", "-p", "-t", "ui", "#{pane_pid}").strip()
    children = Path(f"/proc/{shell}/task/{shell}/children").read_text().split()
    assert len(children) == 1, children
    return int(children[0])


def _given_back(terminal: Terminal) -> None:
    """The terminal is as the shell had it: out of the alternate screen, no mouse reporting,
    the cursor shown."""
    state = terminal.tmux(
        "display", "-p", "-t", "ui", "#{alternate_on} #{mouse_any_flag} #{cursor_flag}"
    )
    assert state.split() == ["0", "0", "1"], f"alternate screen, mouse, cursor: {state}"


@pytest.mark.parametrize(
    "signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT], ids=["SIGTERM", "SIGHUP", "SIGINT"]
)
def test_convgit_ui_stopped_by_a_signal_gives_the_terminal_back(
    repo: GitRepo, terminal: Terminal, signum: signal.Signals
) -> None:
    """SIGTERM (a closing session manager, `kill`), SIGHUP (a closed terminal window) or a
    SIGINT sent from outside (a Ctrl-C typed here is a key): the navigator quits as `q` does,
    giving the terminal back, says so in one sentence and exits 128+N; the next one starts."""
    story(repo)
    python = shutil.which("python3") or "python3"
    command = f"{python} -m convgit ui; echo EXITED $?; read _; {python} -m convgit ui; sleep 60"
    terminal.tmux(
        "new-session", "-d", "-s", "ui", "-x", "120", "-y", "36", "-c", str(repo.path), command
    )
    terminal.wait_for("    wrote plan three", "/ search")
    os.kill(_ui_pid(terminal), signum)
    exited = f"EXITED {128 + signum}"
    shown = terminal.wait_for(exited)
    assert f"convgit: Interrupted by {signum.name}; the navigator closed.\n{exited}" in shown
    _given_back(terminal)
    terminal.tmux("send-keys", "-t", "ui", "Enter")
    terminal.wait_for("    wrote plan three", "/ search")  # the next one starts


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_convgit_ui_stopped_while_it_restores_loses_nothing_and_the_next_one_undoes(
    repo: GitRepo, terminal: Terminal, signum: signal.Signals
) -> None:
    """`r` then `y` on the first entry, and the navigator stopped while git writes the files
    (slowly: a filter sleeps for each). SIGTERM stops the restore as the command's Ctrl-C
    does, and the navigator quits giving the terminal back, with the restore's sentence and
    exit 143; SIGKILL stops everything. Either way the next navigator starts, names the
    interrupted restore, and its `u` gives back every byte."""
    repo.git("config", "filter.slow.smudge", "sleep 0.3; cat")
    repo.git("config", "filter.slow.clean", "cat")
    repo.write(".gitattributes", "*.txt filter=slow\n")
    names = [f"files/f{n:02}.txt" for n in range(12)]
    for name in names:
        repo.write(name, "version one\n")
    convgit(repo.path, "init")
    convgit(repo.path, "user", "task")
    for name in names:
        repo.write(name, "version two\n")
    convgit(repo.path, "assistant", "version two")
    before = repo.digest()
    python = shutil.which("python3") or "python3"
    # after a SIGKILL the terminal is left raw, as any program killed so leaves it: the user's
    # `stty sane` (or `reset`) gives it back
    command = (
        f"{python} -m convgit ui; echo EXITED $?; stty sane; read _; {python} -m convgit ui;"
        " sleep 60"
    )
    terminal.tmux(
        "new-session", "-d", "-s", "ui", "-x", "120", "-y", "36", "-c", str(repo.path), command
    )
    # the status line is said once the navigator is mounted: a key sent before may be lost
    terminal.wait_for("← context assistant:", "/ search", "files:   match the snapshot")
    terminal.press_until("Up", "role:     user")  # at the root, Up stays there
    terminal.tmux("send-keys", "-t", "ui", "r")
    terminal.wait_for("would restore 12 files")
    terminal.tmux("send-keys", "-t", "ui", "y")
    scratch = repo.path / ".git" / "convgit-restore-files"
    first = repo.path / names[0]
    for _ in range(600):  # git writes beside (or, its own checkout, in place)
        if (
            any(scratch.rglob("*.txt"))
            or not first.exists()
            or first.read_text() != "version two\n"
        ):
            break
        time.sleep(0.01)
    else:
        raise AssertionError("the restore never began writing")
    os.kill(_ui_pid(terminal), signum)
    shown = terminal.wait_for(f"EXITED {128 + signum}")
    if signum == signal.SIGTERM:
        assert "convgit: Interrupted by SIGTERM" in shown
        _given_back(terminal)
    terminal.tmux("send-keys", "-t", "ui", "Enter")
    terminal.wait_for("warning: a restore was interrupted", "/ search")
    terminal.tmux("send-keys", "-t", "ui", "u")
    # stopped while git wrote beside, no file had changed: the undo says so (and settles it)
    if "would restore" in terminal.wait_for("the state before the last restore"):
        terminal.tmux("send-keys", "-t", "ui", "y")
        terminal.wait_for("restored", "to the state before the last restore")
    assert repo.digest() == before
    assert convgit(repo.path, "status", "--json").json()["interrupted_restore"] is None
    terminal.tmux("send-keys", "-t", "ui", "q")
