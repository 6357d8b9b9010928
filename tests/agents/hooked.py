"""Helpers of the tests that run convgit beside the real Claude Code CLI: the convgit CLI, the
store's own files, and hooks of the user's own that log what git or Claude says at an event."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

from tests.clirun import run
from tests.workspace.gitrepo import GitRepo

ROOT = Path(__file__).resolve().parents[2]
# A hook of the user's own: git's own answer to `git add -A` at that moment, logged.
ORACLE = f"""
import json, sys
sys.path.insert(0, {str(ROOT)!r})
from tests.workspace.gitrepo import oracle_tree
event = json.load(sys.stdin)
with open(sys.argv[1], "a") as log:
    log.write(json.dumps({{"reply": event.get("last_assistant_message"), "tree": oracle_tree(
        __import__("pathlib").Path(event["cwd"]))}}) + "\\n")
"""


def oracle_command(log: Path) -> str:
    """A hook command of the user's that logs git's tree of the files at that event."""
    return f"{shlex.quote(sys.executable)} -c {shlex.quote(ORACLE)} {shlex.quote(str(log))}"


def convgit(cwd: Path, *args: str, code: int = 0) -> str:
    return run(*args, cwd=cwd, code=code).stdout


def convgit_json(cwd: Path, *args: str) -> Any:
    return json.loads(convgit(cwd, *args, "--json"))


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def reply_text(entry: dict[str, Any]) -> str:
    content = entry["content"]
    if isinstance(content, str):
        return content
    return "".join(p.get("text", "") for p in content if p.get("type") == "text")


def calls_of(entry: dict[str, Any]) -> list[dict[str, Any]]:
    content = entry["content"]
    return [p for p in content if p.get("type") == "tool_call"] if isinstance(content, list) else []


def path_messages(path: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """convgit's active path as the agents' own files are read by each live test: each
    message's text by role, each tool call and each result by its call's id."""
    found = []
    for entry in path:
        if entry["type"] != "message":
            continue
        if entry["role"] == "tool":
            found.append(("result", entry["toolCallId"]))
            continue
        if text := reply_text(entry):
            found.append((entry["role"], text))
        found += [("call", part["id"]) for part in calls_of(entry)]
    return found


# what every live test's three turns reply, in order (the third runs the shell)
THREE_REPLIES = ["I wrote notes.txt.", "I edited notes.txt.", "I ran the command."]


def assert_each_turn_has_gits_snapshot(
    project: GitRepo, cwd: Path, path: list[dict[str, Any]], oracle_log: Path
) -> list[dict[str, Any]]:
    """Each turn's reply on ``path`` has the snapshot ``git add -A`` staged at that turn's end
    (the oracle's log, one line a turn), the shell's edit of the third turn included; returns
    the replies."""
    oracle = records(oracle_log)
    assert [o["reply"] for o in oracle] == THREE_REPLIES
    replies = [e for e in path if e["type"] == "message" and e["role"] == "assistant"]
    replies = [e for e in replies if reply_text(e)]
    for reply, seen in zip(replies, oracle, strict=True):
        shown = convgit_json(cwd, "show", reply["id"])
        assert shown["snapshot"]["tree"] == seen["tree"], reply_text(reply)
    assert "made-by-bash.txt" in project.tree_paths(oracle[2]["tree"])
    assert "README.md" not in project.tree_paths(oracle[2]["tree"])
    return replies


def hook_log(project: GitRepo) -> list[str]:
    """The event lines of the hook log (a problem's traceback is indented below its line)."""
    log = project.path / ".git" / "convgit" / "logs" / "hooks.log"
    return [line for line in log.read_text().splitlines() if line[:1].isdigit()]


# A hook of the user's that keeps every event it is given, to deliver them again.
KEEPER = "import sys; open(sys.argv[1], 'ab').write(sys.stdin.buffer.read().strip() + b'\\n')"


def keep_events(project: Path, log: Path, events: list[str]) -> None:
    command = f"{shlex.quote(sys.executable)} -c {shlex.quote(KEEPER)} {shlex.quote(str(log))}"
    handler = {"type": "command", "command": command}
    (project / ".claude").mkdir(exist_ok=True)
    (project / ".claude" / "settings.local.json").write_text(
        json.dumps({"hooks": {event: [{"hooks": [handler]}] for event in events}})
    )


def snapshot_records(project: GitRepo) -> list[str]:
    """The entries of every snapshot record of the store's one session, in order."""
    (sidecar,) = (project.path / ".git" / "convgit" / "sessions").glob("*.files.jsonl")
    return [r["entry"] for r in records(sidecar) if r["type"] == "snapshot"]


def store_bytes(project: GitRepo) -> dict[str, bytes]:
    sessions = project.path / ".git" / "convgit" / "sessions"
    return {p.name: p.read_bytes() for p in sorted(sessions.iterdir())}


def session_records(project: Path, kind: str) -> list[dict[str, Any]]:
    (session,) = [
        p for p in (project / ".git" / "convgit" / "sessions").glob("*.jsonl") if p.stem.isalnum()
    ]
    return [r for r in records(session) if r.get("type") == kind]


def claude_code_hook_command() -> str:
    """The command `convgit hooks install claude-code` puts in Claude's settings."""
    from convgit.agents.claude_code import live as claude_code

    return str(claude_code.handler()["command"])
