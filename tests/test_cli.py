"""The machine interface of the command line: JSON shapes, exit codes, stdin appends."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.clirun import invoke, run


class Cli:
    """Runs convgit in-process against one store, like a user in one folder."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def __call__(self, *args: str, input: str | None = None, code: int = 0) -> Any:
        result = invoke("-C", str(self.folder), *args, input=input)
        assert result.exit_code == code, (args, result.output, result.exception)
        assert "Traceback" not in result.output
        return result

    def json(self, *args: str, input: str | None = None) -> Any:
        return orjson.loads(self(*args, "--json", input=input).stdout)


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    c = Cli(tmp_path)
    c("init")
    return c


def test_user_assistant_edit_print_ids(cli: Cli) -> None:
    u = cli.json("user", "hello")["id"]
    a = cli.json("assistant", "hi there")
    assert a["parentId"] == u and a["role"] == "assistant"
    e = cli.json("edit", u, "hello again")
    assert e["id"] != u
    log = cli.json("log")["entries"]
    assert [x["id"] for x in log] == [e["id"]]


def test_log_tree_and_context_json(cli: Cli) -> None:
    u = cli.json("user", "q")["id"]
    a = cli.json("assistant", "plan A")["id"]
    cli("retry", a)
    b = cli.json("assistant", "plan B")["id"]
    assert [x["id"] for x in cli.json("log")["entries"]] == [u, b]
    assert {x["id"] for x in cli.json("tree")["entries"]} == {u, a, b}
    ctx = cli.json("context")
    assert ctx["leaf"] == b and ctx["model"] is None and ctx["thinking"] is None
    assert [(m["role"], m["content"]) for m in ctx["messages"]] == [
        ("user", "q"),
        ("assistant", "plan B"),
    ]


def test_fork_with_summary_and_text(cli: Cli) -> None:
    u = cli.json("user", "task")["id"]
    a = cli.json("assistant", "plan A")["id"]
    forked = cli.json("fork", u, "try B", "--summary", "A broke the parser")
    log = cli.json("log")["entries"]
    assert [x["type"] for x in log] == ["message", "branch_summary", "message"]
    assert log[1]["fromId"] == a and log[1]["parentId"] == u
    assert log[2]["content"] == "try B" and forked["leaf"] == log[2]["id"]
    messages = cli.json("context")["messages"]
    assert "A broke the parser" in messages[1]["content"]


def test_append_from_stdin_fills_ids_and_hangs_off_the_leaf(cli: Cli) -> None:
    first = cli.json("user", "start")["id"]
    lines = "\n".join(
        [
            '{"type":"message","role":"assistant","content":"one"}',
            '{"type":"model","provider":"p","model":"m"}',
            '{"type":"message","role":"user","content":"two","id":"feedbeef"}',
        ]
    )
    made = cli.json("append", input=lines + "\n")
    assert len(made["ids"]) == 3 and made["ids"][2] == "feedbeef"
    log = cli.json("log")["entries"]
    assert [x["id"] for x in log] == [first, *made["ids"]]
    assert all(x["ts"].endswith("Z") for x in log)


def test_append_refuses_bad_input_and_writes_nothing(cli: Cli, tmp_path: Path) -> None:
    cli("user", "start")
    before = cli.json("tree")["entries"]
    good = '{"type":"message","role":"user","content":"ok"}\n'
    result = cli("append", input=good + "not json\n", code=1)
    assert "Line 2" in result.output
    result = cli("append", input='{"type":"message","role":"user"}\n', code=1)
    assert "lacks the field 'content'" in result.output
    assert cli.json("tree")["entries"] == before


def test_sessions_json(cli: Cli, tmp_path: Path) -> None:
    cli("user", "x")
    rows = cli.json("sessions")["sessions"]
    assert len(rows) == 1
    row = rows[0]
    assert {"id", "path", "entries", "leaf"} <= set(row)
    assert row["entries"] == 1 and row["current"] is True
    assert Path(row["path"]).is_file()


def test_labels_name_and_show(cli: Cli) -> None:
    u = cli.json("user", "x")["id"]
    cli("label", u, "start")
    shown = cli.json("show", "start")
    assert shown["entry"]["id"] == u and shown["entry"]["label"] == "start"
    assert shown["snapshot"] is None and shown["saved_state"] is None
    cli("name", "my experiment")
    assert cli.json("sessions")["sessions"][0]["name"] == "my experiment"


def test_context_formats(cli: Cli) -> None:
    cli("user", "ls please")
    calls = '[{"type":"tool_call","id":"c1","name":"ls","input":{"dir":"."}}]'
    cli(
        "append",
        input='{"type":"message","role":"assistant","content":' + calls + "}\n",
    )
    cli("tool", "c1", "a.txt")
    openai = orjson.loads(cli("context", "--format", "openai").stdout)
    assert openai["messages"][1]["tool_calls"][0]["function"]["name"] == "ls"
    assert openai["messages"][2] == {"role": "tool", "tool_call_id": "c1", "content": "a.txt"}
    anthropic = orjson.loads(cli("context", "--format", "anthropic").stdout)
    assert [m["role"] for m in anthropic["messages"]] == ["user", "assistant", "user"]
    assert anthropic["messages"][2]["content"][0]["type"] == "tool_result"
    text = cli("context").stdout
    assert "user: ls please" in text


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["switch", "nosuchthing"], 1),
        (["show", "@~5"], 1),
        (["label", "@", "bad name"], 2),
        (["context", "--format", "xml"], 2),
        (["switch"], 2),
        (["nosuchcommand"], 2),
    ],
)
def test_exit_codes(cli: Cli, args: list[str], code: int) -> None:
    cli("user", "x")
    result = cli(*args, code=code)
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_errors_are_one_sentence_with_a_hint(cli: Cli) -> None:
    result = cli("switch", "zzzz", code=1)
    assert result.stderr.startswith("convgit: No entry, label or id prefix matches 'zzzz'.")
    assert "hint: convgit tree" in result.stderr


def test_no_session_here_says_init(tmp_path: Path) -> None:
    result = invoke("-C", str(tmp_path), "log")
    assert result.exit_code == 1
    assert "convgit init" in result.stderr


def _run(
    folder: Path, *args: str, input: bytes | None = None
) -> subprocess.CompletedProcess[bytes]:
    return run(*args, cwd=folder, input=input, code=None).completed()


def test_as_a_subprocess_fork_and_corrupt_store(tmp_path: Path) -> None:
    assert _run(tmp_path, "init").returncode == 0
    u = orjson.loads(_run(tmp_path, "user", "q", "--json").stdout)["id"]
    assert _run(tmp_path, "assistant", "a").returncode == 0
    done = _run(tmp_path, "fork", u, "again")
    assert done.returncode == 0 and b"files: not changed" in done.stdout
    session = next((tmp_path / ".convgit" / "sessions").glob("*.jsonl"))
    with session.open("ab") as f:
        f.write(b"this is not json\n")
    before = session.read_bytes()
    broken = _run(tmp_path, "log")
    assert broken.returncode == 3
    assert b"Traceback" not in broken.stderr and broken.stdout == b""
    assert b"line 5 is not valid JSON" in broken.stderr and b"convgit repair" in broken.stderr
    assert _run(tmp_path, "fsck").returncode == 3
    assert session.read_bytes() == before
    assert _run(tmp_path, "repair").returncode == 0
    assert _run(tmp_path, "fsck").returncode == 0


def test_append_of_many_lines_in_one_call(tmp_path: Path) -> None:
    assert _run(tmp_path, "init").returncode == 0
    n = 20_000
    data = b"".join(b'{"type":"message","role":"user","content":"line %d"}\n' % i for i in range(n))
    done = _run(tmp_path, "append", "--json", input=data)
    assert done.returncode == 0, done.stderr
    ids = orjson.loads(done.stdout)["ids"]
    assert len(set(ids)) == n
    log = orjson.loads(_run(tmp_path, "log", "--json").stdout)["entries"]
    assert [x["content"] for x in log] == [f"line {i}" for i in range(n)]


def test_a_git_folder_git_would_not_take_is_no_repository(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()  # e.g. an agent sandbox's empty mount point above the project
    project = tmp_path / "project"
    project.mkdir()
    judged = subprocess.run(["git", "rev-parse", "--git-dir"], cwd=project, capture_output=True)
    assert judged.returncode != 0  # git passes it by
    done = _run(project, "init")
    assert done.returncode == 0, done.stderr
    assert b"no git repository: conversation only" in done.stdout
    assert (project / ".convgit" / "sessions").is_dir()
    assert list((tmp_path / ".git").iterdir()) == []
