"""``convgit demo``: the story of the two tracks, told with real commands on a throwaway repo.

A task; plan A edits a file and fails; the user goes back and tries plan B. After going back,
plan A's file is still on disk (the conversation moved, the files did not); ``restore`` brings
files to a snapshot, and ``--undo`` returns. Every command shown is really run, as a user would.

With ``--step`` (for a class), each command is shown as if typed at a prompt and runs when Enter
is pressed: ``q`` then Enter stops there (the repository stays), and the end of the input runs
the rest straight through.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import typer

from convgit.base.errors import RefusedError

START = """def add(a, b):
    return a - b  # bug: should add
"""
PLAN_A = """def add(a, b):
    total = a
    for _ in range(b):  # plan A: count up (breaks for negative b)
        total += 1
    return total
"""
PLAN_B = """def add(a, b):
    return a + b  # plan B: just add
"""
TEST = """from calc import add


def test_add():
    assert add(2, 3) == 5
    assert add(2, -3) == -1


if __name__ == "__main__":  # `python test_calc.py` runs it without pytest
    test_add()
    print("test_add passed")
"""


class Story:
    def __init__(self, repo: Path, *, step: bool = False) -> None:
        self.repo = repo
        self.step = step  # each command waits for Enter
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        self.env.update(
            GIT_AUTHOR_NAME="demo",
            GIT_AUTHOR_EMAIL="demo@example.invalid",
            GIT_COMMITTER_NAME="demo",
            GIT_COMMITTER_EMAIL="demo@example.invalid",
            CONVGIT_STORE="",
            CONVGIT_SESSION="",
            COLUMNS=str(max(shutil.get_terminal_size((120, 24)).columns, 100)),
        )

    def say(self, text: str) -> None:
        typer.secho(f"\n# {text}", fg="cyan")

    def git(self, *args: str) -> str:
        done = subprocess.run(
            ["git", *args], cwd=self.repo, env=self.env, check=True, capture_output=True, text=True
        )
        return done.stdout

    def shown(self, line: str) -> None:
        """The command line, as typed at a prompt; with ``step``, run when Enter is pressed."""
        if not self.step:
            typer.secho(line, bold=True)
            return
        typer.secho(line, bold=True, nl=False)
        answer = sys.stdin.readline()
        if not sys.stdin.isatty():
            typer.echo("")  # the Enter a terminal would have echoed
        if answer.strip().lower() == "q":
            typer.echo(f"stopped; the demo repository stays: cd {self.repo} && convgit tree")
            raise typer.Exit(0)
        if not answer:  # the end of the input: the rest runs straight through
            self.step = False

    def write(self, name: str, text: str, why: str) -> None:
        self.shown(f"$ edit {name}   ({why})")
        (self.repo / name).write_text(text)

    def convgit(self, *args: str) -> str:
        self.shown("$ convgit " + " ".join(shlex.quote(a) for a in args))
        done = subprocess.run(
            [sys.executable, "-m", "convgit", *args],
            cwd=self.repo,
            env=self.env,
            capture_output=True,
            text=True,
        )
        typer.echo((done.stdout + done.stderr).rstrip())
        if done.returncode != 0:
            raise typer.Exit(done.returncode)
        return done.stdout

    def new_entry(self, *args: str) -> str:
        """Run a command that appends an entry; its output starts with the new entry's id."""
        return self.convgit(*args).split()[0]


def claim(directory: Path) -> None:
    """Make ``directory`` the demo's own: a new folder, or an empty one. Anything else (a used
    repository, a file, a folder with anything in it) is refused before a byte is written."""
    try:
        directory.mkdir(parents=True)
        return
    except FileExistsError:
        pass
    if not directory.is_dir() or any(directory.iterdir()):
        raise RefusedError(
            f"convgit demo builds only in a new or empty folder, and {directory} is not one; "
            "nothing was changed.",
            "convgit demo (a new temporary folder) or convgit demo --dir NEW-FOLDER",
        )


def own_repository(s: Story) -> None:
    """``git init`` made a repository of the demo's own folder, on a branch with no commit yet:
    the demo commits only on a branch it created (never on one found through a parent folder)."""
    top = Path(s.git("rev-parse", "--show-toplevel").strip())
    unborn = subprocess.run(
        ["git", "rev-parse", "--verify", "-q", "HEAD"], cwd=s.repo, env=s.env, capture_output=True
    )
    if top.resolve() != s.repo.resolve() or unborn.returncode == 0:
        raise RefusedError(
            f"convgit demo found another repository at {s.repo}; it commits only on a branch "
            "it created, and nothing was committed."
        )


def run(directory: Path | None = None, *, step: bool = False) -> Path:
    """Build the demo repository (in a new temporary folder by default) and tell the story
    (``step``: each command waits for Enter)."""
    repo = Path(tempfile.mkdtemp(prefix="convgit-demo-")) if directory is None else directory
    claim(repo)
    s = Story(repo, step=step)
    s.git("init", "-q")
    own_repository(s)
    (repo / "calc.py").write_text(START)
    (repo / "test_calc.py").write_text(TEST)
    (repo / ".gitignore").write_text("__pycache__/\n")
    s.git("add", "-A")
    s.git("commit", "-q", "-m", "a calculator with a bug")

    s.say(
        "A repository with a bug. Start a session: inside git, files are snapshotted after\n"
        "# every reply (and at the first message, so the start can always be restored)."
    )
    s.convgit("init", "--name", "fix add()")
    task = s.new_entry("user", "test_add fails. Fix add() in calc.py.")
    s.convgit("label", task, "task")

    s.say("Plan A edits the file; the reply is followed by a snapshot of the files.")
    s.write("calc.py", PLAN_A, "plan A: count up in a loop")
    plan_a = s.new_entry("assistant", "Plan A: add() now counts up from a in a loop.")
    s.convgit("label", plan_a, "planA")
    s.new_entry("user", "Still failing: add(2, -3) returns 2.")

    s.say("Go back to the task and try again. The conversation moves; the files do not.")
    s.convgit("fork", "task", "--summary", "Plan A (a loop) fails for negative numbers.")
    s.convgit("status")

    s.say("To start plan B from the original files, restore the task's snapshot (undoable).")
    s.convgit("restore", "task", "--yes")
    s.say("The next user message carries the note, so the model knows where the files are.")
    s.new_entry("user", "Try plan B: add() returns a + b.")
    s.write("calc.py", PLAN_B, "plan B: just add")
    plan_b = s.new_entry("assistant", "Plan B: add() returns a + b.")
    s.convgit("label", plan_b, "planB")
    s.convgit("tree")
    s.convgit("diff", "planA", "planB")

    s.say("Want plan A's files back to compare? Restore them; the context stays on plan B.")
    s.convgit("restore", "planA", "--yes")
    s.convgit("status")
    s.say("And undo returns the exact files from before that restore.")
    s.convgit("restore", "--undo", "--yes")
    s.convgit("status")
    s.say("Each restore saved the files first; every saved state stays, by the id it printed.")
    s.convgit("restores")
    s.convgit("context")

    s.say(
        "Both tracks side by side: each entry beside its snapshot's commit and the restores\n"
        "# made there (the right side is git's own: `git log --graph` over the session's refs)."
    )
    s.convgit("tree", "--files")

    s.say("Both tracks on one page: the tree beside the snapshots, diffs and restores.")
    s.convgit("html")
    s.say("The demo repository stays for you to explore:")
    typer.echo(f"cd {repo} && convgit tree")
    return repo
