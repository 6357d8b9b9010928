"""What a start of convgit pays for: a per-turn hook runs it hundreds of times a session, so
conversation-only commands never import the git library, and reading commands never import
the lock or colour libraries either. Each command runs in a fresh interpreter, as a hook would."""

from __future__ import annotations

import ast
import os
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


def _probe(report: str, *, before: str = "", ready: str = "", imports: str = "sys") -> str:
    """A script that runs the console script's main() with the arguments it is given and then
    ``report`` (lines that write what it found on stderr, after a word of their own): ``before``
    runs before convgit's entry is imported, ``ready`` after; it exits with main()'s code."""
    return (
        f"import {imports}\n"
        "import os\n"
        "os._exit = sys.exit  # a lean command leaves at once (``leave``): the report runs first\n"
        'sys.argv = ["convgit", *sys.argv[1:]]\n'
        f"{before}from convgit.__main__ import main\n{ready}"
        "try:\n    main()\nexcept SystemExit as done:\n    code = done.code\nelse:\n    code = 0\n"
        f"{report}sys.exit(code)\n"
    )


def _probed(
    script: str, folder: Path, args: tuple[str, ...], word: str, *, code: int = 0,
    stdin: bytes | None = None,
) -> str:  # fmt: skip
    """What ``script`` (``_probe``'s) wrote after ``word``, run in ``folder`` with ``args``;
    its exit code must be ``code``."""
    done = subprocess.run(
        [sys.executable, "-c", script, *args],
        cwd=folder,
        input=stdin,
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == code, done.stderr
    return done.stderr.decode().rsplit(word, 1)[1]


# Reports which heavy libraries the command imported.
_IMPORTED = _probe(
    """heavy = sorted(name for name in {heavy!r} if name in sys.modules)
sys.stderr.write("\\nIMPORTED " + " ".join(heavy) + "\\n")
"""
)


@pytest.mark.parametrize("name", LEAN)
def test_every_library_guarded_against_is_there_to_come_in(name: str) -> None:
    """A name that is not installed is never in ``sys.modules``: guarding it proves nothing."""
    import importlib.util

    assert importlib.util.find_spec(name) is not None, f"{name} is not installed here"


def _imported(
    folder: Path, *args: str, heavy: tuple[str, ...] = HEAVY, stdin: bytes | None = None
) -> set[str]:
    report = _probed(_IMPORTED.format(heavy=heavy), folder, args, "IMPORTED", stdin=stdin)
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


# Reports every module the command imported (the names, one line on stderr).
_MODULES = _probe("""sys.stderr.write("\\nMODULES " + " ".join(sorted(sys.modules)) + "\\n")\n""")


def _modules(folder: Path, *args: str, code: int = 0) -> set[str]:
    return set(_probed(_MODULES, folder, args, "MODULES", code=code).split())


def _under(modules: set[str], *packages: str) -> list[str]:
    """The modules of ``packages`` (each a package or a module) among ``modules``."""
    return sorted(m for m in modules if any(m == p or m.startswith(p + ".") for p in packages))


def test_version_starts_before_typer_and_any_session(tmp_path: Path) -> None:
    """`convgit --version` (after global options too) costs Python's start and a look at the
    installed version: no typer, click or session layer."""
    for args in (["--version"], ["-P", "--store", "s", "--version"]):
        found = _modules(tmp_path, *args)
        assert _under(found, "typer", "click", "convgit.session", "convgit.store") == [], args
    shown = subprocess.run(
        [sys.executable, "-m", "convgit", "-s", "x", "--version"], capture_output=True, text=True
    )
    assert shown.returncode == 0 and shown.stdout.startswith("convgit "), shown.stderr


# Lists what each module of convgit.cli registers, importing them one by one in a fresh
# interpreter, in the order `convgit --help` has them.
_REGISTERED = """
import importlib, sys
from convgit.cli import MODULES, program
seen = {}
for module in MODULES:
    importlib.import_module("convgit.cli." + module)
    seen.update((name, module) for name in program._REGISTER if name not in seen)
sys.stdout.write(repr(seen))
"""


def test_the_table_of_commands_names_the_module_that_registers_each() -> None:
    """A command imports its own module alone (``convgit.cli.COMMANDS``): a command a module
    registers that the table does not name, or names elsewhere, would be found by importing
    every module (slow) or not at all."""
    from convgit.cli import COMMANDS

    done = subprocess.run([sys.executable, "-c", _REGISTERED], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert ast.literal_eval(done.stdout) == COMMANDS


SESSION_LAYER = ("convgit.session", "convgit.store.load", "convgit.conversation.tree")
WORKSPACE_AND_GIT = ("convgit.workspace", "convgit.git")
# the modules of convgit.cli that register commands
COMMAND_MODULES = "writing agents reading sessions moves maintenance files completion ui sharing"
CLI_MODULES = ["convgit.cli." + name for name in (*COMMAND_MODULES.split(), "mcp")]


@pytest.fixture
def forked(conversation: Path) -> Path:
    """The conversation with a second branch (`branches` lists the branches below a fork)."""
    clirun.run("fork", "@~2", "again", cwd=conversation)
    return conversation


@pytest.mark.parametrize(
    "args", [["log"], ["tree"], ["show"], ["context"], ["branches"], ["status"], ["system", "x"]]
)
def test_a_command_imports_its_own_module_of_the_cli_alone(forked: Path, args: list[str]) -> None:
    from convgit.cli import COMMANDS

    found = _modules(forked, *args)
    assert _under(found, *CLI_MODULES) == [f"convgit.cli.{COMMANDS[args[0]]}"]


def test_help_and_completion_load_no_session_layer(conversation: Path) -> None:
    """`convgit -h` lists every command, and a shell asks for completions at every TAB: both
    build the whole app, and open no session for it."""
    for args in (["-h"], ["--help"], ["log", "-h"], ["completion", "bash"]):
        assert _under(_modules(conversation, *args), *SESSION_LAYER) == [], args
    asks = {"_CONVGIT_COMPLETE": "complete_bash", "COMP_WORDS": "convgit lo", "COMP_CWORD": "1"}
    done = subprocess.run(
        [sys.executable, "-c", _MODULES],
        cwd=conversation,
        env={**os.environ, **asks},
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 0 and b"log" in done.stdout, done.stderr
    found = set(done.stderr.decode().rsplit("MODULES", 1)[1].split())
    assert _under(found, *SESSION_LAYER) == []


@pytest.mark.parametrize("args", [["log"], ["tree"], ["show"], ["context"], ["branches"]])
def test_conversation_commands_load_no_workspace_or_git(
    forked: Path, tmp_path: Path, args: list[str]
) -> None:
    """log, tree, show, context and branches read one file: no workspace or git layer, in a
    session without snapshots; with snapshots, only log and tree (which mark the entry whose
    snapshot the files are at, from `git status`) load them."""
    assert _under(_modules(forked, *args), *WORKSPACE_AND_GIT) == []
    from tests.workspace.gitrepo import init_repo

    repo = init_repo(tmp_path / "repo")
    for words in (["init"], ["user", "task"], ["assistant", "done"], ["fork", "@~1", "again"]):
        repo.write("plan.txt", " ".join(words))
        clirun.run(*words, cwd=repo.path)
    found = _under(_modules(repo.path, *args), *WORKSPACE_AND_GIT)
    assert (found != []) == (args[0] in ("log", "tree")), found


def test_user_and_assistant_start_as_a_hook_does_and_say_what_the_app_says(tmp_path: Path) -> None:
    """A harness appends a turn with `convgit user` and `convgit assistant`: they start without
    typer (`-s` before the command takes the app), and both ways append and print alike; what
    the lean entry does not take (help, an unknown option) is the app's to answer."""
    from tests.workspace.gitrepo import init_repo

    repo = init_repo(tmp_path / "repo")
    clirun.run("init", cwd=repo.path)
    sid = clirun.run("sessions", "--json", cwd=repo.path).json()["sessions"][0]["id"]
    said = {}
    for way, prefix in (("lean", []), ("app", ["-s", sid])):
        repo.write("plan.txt", way)
        for args in (["user", f"task {way}", "--id", f"u-{way}"], ["assistant", "-", "--json"]):
            found = _imported(repo.path, *prefix, *args, heavy=LEAN, stdin=b"done")
            assert ("typer" in found) == (way == "app") and found <= {"typer", "click"}, args
        shown = clirun.run("show", "@", "--json", cwd=repo.path).json()
        assert shown["entry"]["content"] == "done" and shown["snapshot"] is not None
        said[way] = clirun.run(*prefix, "user", "again", cwd=repo.path).stdout.split(" ", 1)[1]
    assert said["lean"] == said["app"] == "user: again ← context\n"
    assert clirun.run("show", "u-lean", "--json", cwd=repo.path).json()["entry"]["id"] == "u-lean"
    helped = clirun.run("assistant", "--help", cwd=repo.path)
    assert helped.stdout.startswith("Usage: convgit assistant")
    wrong = clirun.run("user", "x", "--nope", cwd=repo.path, code=None)
    assert wrong.code == 2 and "--nope" in wrong.stderr


@pytest.mark.parametrize(
    "asks",
    [
        {"_CONVGIT_COMPLETE": "complete_bash", "COMP_WORDS": "convgit show ", "COMP_CWORD": "2"},
        {"_CONVGIT_COMPLETE": "complete_zsh", "_TYPER_COMPLETE_ARGS": "convgit -P show "},
    ],
)
def test_a_tab_after_the_command_word_builds_that_command_alone(
    conversation: Path, asks: dict[str, str]
) -> None:
    """A shell asks at every TAB: past the command word, only its module is imported, and the
    session's references are offered as before."""
    env = {k: v for k, v in os.environ.items() if k not in ("COMP_WORDS", "COMP_CWORD")}
    done = subprocess.run(
        [sys.executable, "-c", _MODULES],
        cwd=conversation,
        env={**env, **asks},
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 0 and b"root" in done.stdout, done.stderr
    found = set(done.stderr.decode().rsplit("MODULES", 1)[1].split())
    assert _under(found, *CLI_MODULES) == ["convgit.cli.reading"]
    assert _under(found, *SESSION_LAYER) == []


# Runs the console script's main() and reports the dataclasses of convgit it made whose methods
# were compiled (``dataclasses.dataclass``), and the cyclic collections since main() began.
_CLASSES_AND_COLLECTIONS = _probe(
    """compiled = sorted(
    f"{name}.{cls.__qualname__}"
    for name, module in list(sys.modules.items())
    if name.startswith("convgit")
    for cls in vars(module).values()
    if isinstance(cls, type) and cls.__module__ == name
    and dataclasses.is_dataclass(cls) and "__valueclass__" not in vars(cls)
)
on = gc.isenabled() and gc.get_freeze_count() > 0
sys.stderr.write(f"\\nMADE {len(collected)} {on} " + " ".join(compiled) + "\\n")
""",
    ready="""collected = []
gc.callbacks.append(lambda phase, info: collected.append(phase) if phase == "start" else None)
""",
    imports="dataclasses, gc, sys",
)


def _made(folder: Path, *args: str) -> tuple[int, bool, list[str]]:
    """(collections since main() began, the collector on at the end with what the command left
    frozen, compiled dataclasses)."""
    count, enabled, *compiled = _probed(_CLASSES_AND_COLLECTIONS, folder, args, "MADE").split()
    return int(count), enabled == "True", compiled


def test_a_start_compiles_no_dataclass(tmp_path: Path) -> None:
    """``dataclasses.dataclass`` compiles each method of each class as the module is imported
    (about 0.5 ms a class): what a snapshot turn, the reading commands, `fsck` and a search
    import are valueclasses (``convgit.base.valueclass``), and a turn makes no entry a value
    (``schema.values``, dataclasses for the entries a path makes in bulk)."""
    from tests.workspace.gitrepo import init_repo

    repo = init_repo(tmp_path / "repo")
    for args in (["init"], ["user", "task"]):
        clirun.run(*args, cwd=repo.path)
    repo.write("plan.txt", "plan\n")
    for args in (
        ["assistant", "done"],
        ["user", "more"],
        ["log"],
        ["fsck"],
        ["tree"],
        ["context"],
        ["fork", "@~1", "again"],
        ["branches"],
        ["sessions"],
        ["search", "more"],
    ):
        assert _made(repo.path, *args)[2] == [], args
    assert len(repo.git("for-each-ref", "refs/convgit").splitlines()) == 2, "no snapshot taken"


def test_the_collector_waits_for_the_command_and_runs_with_it(conversation: Path) -> None:
    """No cyclic garbage collection while Python imports convgit and typer builds the app
    (`-h` builds the whole app and runs no command); a command of the app runs with the
    collector on (`ui`, `mcp` and `run` may run for hours), and what it leaves is frozen at the
    end (the collection at exit would walk a long session's every entry)."""
    for args in (["-h"], ["log", "-h"], ["sessions", "-h"]):
        assert _made(conversation, *args)[0] == 0, args
    assert _made(conversation, "log")[1] is True


# Runs the console script's main() and reports, for each git it starts, its verb and which of
# the modules named were imported when it started (``subprocess.Popen``'s audit event).
_GITS = _probe(
    """sys.stderr.write("\\nGITS " + repr(seen) + "\\n")
""",
    before="""seen = []
def audit(event, args):
    if event == "subprocess.Popen" and args[1] and args[1][0] == "git":
        verb = next(a for a in args[1][1:] if not a.startswith("-") and a != "-c"
                    and "=" not in a)
        seen.append((verb, sorted(n for n in {names!r} if n in sys.modules)))
sys.addaudithook(audit)
""",
)


def _gits(folder: Path, *args: str, names: tuple[str, ...]) -> list[tuple[str, list[str]]]:
    seen = _probed(_GITS.format(names=names), folder, args, "GITS")
    return ast.literal_eval(seen.strip())  # type: ignore[no-any-return]


def test_a_reply_starts_its_snapshots_git_before_it_imports_the_session(tmp_path: Path) -> None:
    """``convgit assistant``'s snapshot starts its ``git status`` as the process starts, from
    the plan the last reply kept (``convgit.git.index.survey_plan``): git stats the files while
    Python imports the command, the store's and the repository's modules and reads the session,
    none of which it has imported yet; git is asked where the repository is once, the status
    runs once, and the snapshot is the one git's ``add -A`` into an empty index gives."""
    from tests.workspace.gitrepo import init_repo

    repo = init_repo(tmp_path / "repo")
    for args in (["init"], ["user", "task"], ["assistant", "first"], ["assistant", "second"]):
        clirun.run(*args, cwd=repo.path)  # the first snapshot makes the session's private index
    repo.write("plan.txt", "plan\n")
    later = (
        "orjson", "convgit.session", "convgit.cli.appending", "convgit.conversation.tree",
        "convgit.workspace", "convgit.store.location", "convgit.git.plumbing.run",
    )  # fmt: skip
    gits = _gits(repo.path, "assistant", "done", names=later)
    verbs = [verb for verb, _ in gits]
    assert verbs[:2] == ["status", "rev-parse"], verbs
    assert gits[0][1] == [], f"git status started after importing {gits[0][1]}"
    assert verbs.count("rev-parse") == 1 and verbs.count("status") == 1, verbs
    shown = orjson.loads(clirun.run("show", "@", "--json", cwd=repo.path).out)
    assert shown["snapshot"]["tree"] == repo.oracle()


def test_a_reply_in_a_session_the_plan_does_not_name_starts_one_status(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The plan names the session its reply was in: a reply in another session (here named by
    ``CONVGIT_SESSION``) starts nothing from it on the planned session's index: the one status
    runs on its own index, and its snapshot is git's."""
    from tests.workspace.gitrepo import init_repo

    repo = init_repo(tmp_path / "repo")
    clirun.run("init", cwd=repo.path)
    clirun.run("user", "a task", cwd=repo.path)
    (other,) = [
        s["id"]
        for s in orjson.loads(clirun.run("sessions", "--json", cwd=repo.path).out)["sessions"]
    ]
    for args in (["init"], ["user", "task"], ["assistant", "first"], ["assistant", "second"]):
        clirun.run(*args, cwd=repo.path)  # the plan names this session's index
    monkeypatch.setenv("CONVGIT_SESSION", other)
    repo.write("plan.txt", "plan\n")
    gits = _gits(repo.path, "assistant", "done", names=())
    verbs = [verb for verb, _ in gits]
    assert verbs[0] == "rev-parse" and verbs.count("status") == 1, verbs
    shown = orjson.loads(clirun.run("show", "@", "--json", cwd=repo.path).out)
    assert shown["snapshot"]["tree"] == repo.oracle()
    listed = orjson.loads(clirun.run("sessions", "--json", cwd=repo.path).out)["sessions"]
    assert {s["id"]: s["entries"] for s in listed}[other] == 2  # the reply went to that session
