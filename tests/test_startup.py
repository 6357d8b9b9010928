"""What a start of convgit pays for: a per-turn hook runs it hundreds of times a session, so
conversation-only commands never import the git library, and reading commands never import
the lock or colour libraries either. Each command runs in a fresh interpreter, as a hook would."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from tests import clirun

# What could come in: each is installed wherever the tests run (a dependency of convgit or of
# its tests, or the standard library), so an import of it would show (checked below). textual:
# `convgit ui` alone imports it (the terminal navigator); detect_secrets (and the requests it
# brings): a scan for secrets alone (`push`, `redact --secrets`); mcp: `convgit mcp` alone
# (the SDK).
HEAVY = ("pygit2", "rich", "asyncio", "textual", "detect_secrets", "requests", "mcp")
LEAN = (*HEAVY, "typer", "click")  # a hook the agent waits on every turn

# Runs the console script's main() and reports which heavy libraries it imported.
_IMPORTED = """
import sys
sys.argv = ["convgit", *sys.argv[1:]]
from convgit.__main__ import main
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


@pytest.mark.parametrize("name", LEAN)
def test_every_library_guarded_against_is_there_to_come_in(name: str) -> None:
    """A name that is not installed is never in ``sys.modules``: guarding it proves nothing."""
    import importlib.util

    assert importlib.util.find_spec(name) is not None, f"{name} is not installed here"


def _imported(
    folder: Path, *args: str, heavy: tuple[str, ...] = HEAVY, stdin: bytes | None = None
) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", _IMPORTED.format(heavy=heavy), *args],
        cwd=folder,
        input=stdin,
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    report = done.stderr.decode().rsplit("IMPORTED", 1)[1]
    return set(report.split())


@pytest.fixture
def conversation(tmp_path: Path) -> Path:
    def run(*args: str, input: bytes | None = None) -> bytes:
        return clirun.run(*args, cwd=tmp_path, input=input).out

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
        ["search", "user"],
        ["-P", "search", "user", "--role", "user"],  # through the typer app
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
        clirun.run(*args, cwd=repo.path)
    repo.write("plan.txt", "plan\n")
    assert _imported(repo.path, "assistant", "done") == set()
    assert len(repo.git("for-each-ref", "refs/convgit").splitlines()) == 2, "no snapshot taken"


@pytest.mark.parametrize("command", ["log", "restore", "worktree", "label"])
def test_one_command_parser_matches_the_whole_app(command: str) -> None:
    """main() builds only the command asked for, with its annotations evaluated once; its help
    (every parameter, type and default) is the whole app's."""
    alone = clirun.run(command, "--help", cwd=Path.cwd(), code=None)
    whole = clirun.invoke(command, "--help")
    assert alone.code == 0 and whole.exit_code == 0
    # the same words after the usage line (which names the program); the widths differ
    assert _words(alone.stdout) == _words(whole.stdout)


def _words(help_text: str) -> list[str]:
    return help_text.split("\n", 1)[1].split()


def test_append_imports_neither_typer_nor_rich_nor_pydantic(conversation: Path) -> None:
    """A harness appends every turn: ``append``, with its options, starts as a hook does."""
    line = orjson.dumps({"type": "message", "role": "user", "content": "again"}) + b"\n"
    assert _imported(conversation, "append", heavy=LEAN, stdin=line) == set()
    found = _imported(conversation, "append", "--json", "--id", "u-9", heavy=LEAN, stdin=line)
    assert found == set()
    shown = clirun.run("show", "u-9", "--json", cwd=conversation)
    assert shown.json()["entry"]["content"] == "again"


def test_search_imports_neither_typer_nor_rich_nor_pydantic(conversation: Path) -> None:
    """A search starts as a hook does: it costs little more than Python's own start."""
    assert _imported(conversation, "search", "assistant", "--json", heavy=LEAN) == set()
    found = clirun.run("search", "assistant 3", "--json", cwd=conversation).json()
    assert [r["snippet"] for r in found["results"]] == ["assistant 3"]


def test_append_given_what_it_does_not_take_says_so_as_every_command(tmp_path: Path) -> None:
    """Arguments the lean entry does not know reach the typer app, which names the mistake."""
    done = clirun.run("append", "--nope", cwd=tmp_path, code=None)
    assert done.code == 2 and "--nope" in done.stderr, done.stderr


def test_the_console_script_takes_the_lean_entry() -> None:
    """The installed `convgit` reaches ``convgit.__main__`` before typer is imported."""
    from importlib.metadata import entry_points

    (script,) = [e for e in entry_points(group="console_scripts") if e.name == "convgit"]
    assert script.value == "convgit.__main__:main"


def test_a_hook_event_imports_neither_typer_nor_rich_nor_pydantic(tmp_path: Path) -> None:
    """Every event of a session, each in a fresh interpreter as Claude Code runs it: a new
    session, a prompt with a snapshot, the end of the turn with an import and a snapshot."""
    from tests.workspace.gitrepo import init_repo

    repo = init_repo(tmp_path / "repo")
    transcript = tmp_path / "t.jsonl"
    line = {
        "type": "user",
        "uuid": "u1",
        "parentUuid": None,
        "sessionId": "s1",
        "message": {"role": "user", "content": "hi"},
    }
    reply = {**line, "type": "assistant", "uuid": "a1", "parentUuid": "u1"}
    reply["message"] = {"role": "assistant", "content": [{"type": "text", "text": "hello"}]}
    transcript.write_bytes(orjson.dumps(line) + b"\n" + orjson.dumps(reply) + b"\n")
    for name in ("SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"):
        repo.write("plan.txt", name)
        event = {
            "hook_event_name": name,
            "session_id": "s1",
            "transcript_path": str(transcript),
            "cwd": str(repo.path),
            "prompt_id": "p1",
        }
        found = _imported(repo.path, "hook", "claude-code", heavy=LEAN, stdin=orjson.dumps(event))
        assert found == set(), name
    log = (repo.path / ".git" / "convgit" / "logs" / "hooks.log").read_text()
    assert log.count(": ok in ") == 4, log
    assert len(repo.git("for-each-ref", "refs/convgit").splitlines()) == 2, "no snapshots"


def test_a_gemini_hook_event_imports_neither_typer_nor_rich_nor_pydantic(tmp_path: Path) -> None:
    """The same for Gemini CLI's events: a prompt with a snapshot, a file tool's end, the end
    of the turn with an import and a snapshot."""
    from tests.workspace.gitrepo import init_repo

    repo = init_repo(tmp_path / "repo")
    chat = tmp_path / "session-2026-12-02T07-00-s1.jsonl"
    lines = [
        {"sessionId": "s1", "projectHash": "x", "kind": "main"},
        {"id": "u1", "type": "user", "content": [{"text": "hi"}]},
        {"id": "g1", "type": "gemini", "content": "hello", "model": "m"},
    ]
    chat.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    for name in ("BeforeAgent", "AfterTool", "AfterAgent"):
        repo.write("plan.txt", name)
        event = {
            "hook_event_name": name,
            "session_id": "s1",
            "transcript_path": str(chat),
            "cwd": str(repo.path),
            "prompt": "hi",
            "tool_name": "write_file",
            "tool_input": {"file_path": "plan.txt"},
        }
        found = _imported(repo.path, "hook", "gemini", heavy=LEAN, stdin=orjson.dumps(event))
        assert found == set(), name
    log = (repo.path / ".git" / "convgit" / "logs" / "hooks.log").read_text()
    assert log.count(": ok in ") == 3, log
    assert len(repo.git("for-each-ref", "refs/convgit").splitlines()) == 2, "no snapshots"
