"""What a start of convgit pays for: a per-turn hook runs it hundreds of times a session, so
conversation-only commands never import the git library, and reading commands never import
the lock or colour libraries either. Each command runs in a fresh interpreter, as a hook would."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from convgit.cli import app

HEAVY = ("pygit2", "filelock", "rich", "pydantic", "asyncio")

# Runs the console script's main() and reports which heavy libraries it imported.
_IMPORTED = """
import sys
sys.argv = ["convgit", *sys.argv[1:]]
from convgit.cli import main
try:
    main()
except SystemExit as done:
    code = done.code
else:
    code = 0
heavy = sorted(name for name in {heavy!r} if name in sys.modules)
sys.stderr.write("\\nIMPORTED " + " ".join(heavy) + "\\n")
sys.exit(code)
"""


def _imported(folder: Path, *args: str) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", _IMPORTED.format(heavy=HEAVY), *args],
        cwd=folder,
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    report = done.stderr.decode().rsplit("IMPORTED", 1)[1]
    return set(report.split())


@pytest.fixture
def conversation(tmp_path: Path) -> Path:
    def run(*args: str, input: bytes | None = None) -> bytes:
        done = subprocess.run(
            [sys.executable, "-m", "convgit", *args],
            cwd=tmp_path,
            input=input,
            capture_output=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    run("init", "--no-snapshots")
    lines = b"".join(
        orjson.dumps({"type": "message", "role": role, "content": f"{role} {i}"}) + b"\n"
        for i, role in enumerate(["user", "assistant"] * 5)
    )
    run("append", input=lines)
    return tmp_path


@pytest.mark.parametrize(
    "args",
    [
        ["log"],
        ["tree"],
        ["context"],
        ["context", "--format", "anthropic", "--max-tokens", "1000"],
        ["context", "--format", "openai"],
        ["show"],
        ["sessions"],
    ],
)
def test_reading_commands_import_no_git_lock_or_colour(conversation: Path, args: list[str]) -> None:
    assert _imported(conversation, *args) == set()


@pytest.mark.parametrize(
    "args", [["user", "more"], ["switch", "@~1"], ["fork", "@~2", "again"], ["label", "@", "x"]]
)
def test_conversation_moves_never_import_git_or_colour(conversation: Path, args: list[str]) -> None:
    assert _imported(conversation, *args) == set()


def test_a_snapshot_turn_imports_no_heavy_library(tmp_path: Path) -> None:
    """The per-turn hook itself: a reply with a snapshot needs git's command line only."""
    from tests.workspace.gitrepo import init_repo

    repo = init_repo(tmp_path / "repo")
    for args in (["init"], ["user", "task"]):
        subprocess.run([sys.executable, "-m", "convgit", *args], cwd=repo.path, check=True)
    repo.write("plan.txt", "plan\n")
    assert _imported(repo.path, "assistant", "done") == set()
    assert len(repo.git("for-each-ref", "refs/convgit").splitlines()) == 2, "no snapshot taken"


@pytest.mark.parametrize("command", ["log", "restore", "worktree", "label"])
def test_one_command_parser_matches_the_whole_app(command: str) -> None:
    """main() builds only the command asked for, with its annotations evaluated once; its help
    (every parameter, type and default) is the whole app's."""
    alone = subprocess.run(
        [sys.executable, "-m", "convgit", command, "--help"], capture_output=True, timeout=120
    )
    whole = CliRunner().invoke(app, [command, "--help"])
    assert alone.returncode == 0 and whole.exit_code == 0
    # the same words after the usage line (which names the program); the widths differ
    assert _words(alone.stdout.decode()) == _words(whole.stdout)


def _words(help_text: str) -> list[str]:
    return help_text.split("\n", 1)[1].split()
