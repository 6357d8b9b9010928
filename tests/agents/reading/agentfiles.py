"""The real command line against one store, for the pi, Codex and Gemini CLI importers' tests,
and the checks every imported session must pass: a sound tree, replays a provider accepts."""

from __future__ import annotations

import subprocess
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import orjson

from convgit.agents.reading import kept_text
from convgit.conversation.replay import MISSING_RESULT
from convgit.providers.openai import TOOL_ERROR_PREFIX
from tests.clirun import invoke, run

_OWN_PROCESS = ("import", "export")


class Store:
    """convgit's command line in one folder (no git: a conversation-only store). ``import``
    and ``export`` run as ``python -m convgit`` in a process of their own; the commands that
    only read what they wrote (and every command, with ``real=False``) run the same typer app
    in this process: a process costs a quarter of a second here, and the tests read a lot."""

    def __init__(self, folder: Path, real: bool = True) -> None:
        self.folder = folder
        self.real = real
        folder.mkdir(parents=True, exist_ok=True)

    def run(
        self, *args: str, code: int = 0, input: bytes | None = None
    ) -> subprocess.CompletedProcess[bytes]:
        if self.real and args[args.index("-s") + 2 if "-s" in args else 0] in _OWN_PROCESS:
            return run(*args, cwd=self.folder, input=input, code=code).completed()
        result = invoke("-C", str(self.folder), *args, input=input)
        proc = subprocess.CompletedProcess(
            args, result.exit_code, result.stdout_bytes, result.stderr_bytes
        )
        words = proc.stderr.decode(errors="replace")
        assert proc.returncode == code, (args, proc.returncode, words)
        assert "Traceback" not in words, words
        return proc

    def json(self, *args: str) -> Any:
        return orjson.loads(self.run(*args, "--json").stdout)

    def import_(self, agent: str, file: Path) -> dict[str, Any]:
        (found,) = self.json("import", agent, str(file))["imports"]
        assert isinstance(found, dict)
        return found

    def refused(self, agent: str, file: Path, code: int = 1) -> str:
        """Import that must fail: the one sentence it says (and nothing on stdout)."""
        proc = self.run("import", agent, str(file), code=code)
        assert proc.stdout == b""
        words = proc.stderr.decode()
        assert words.startswith("convgit: ") and len(words.splitlines()) <= 2, words
        return words

    def entries(self, session: str) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = self.json("-s", session, "tree")["entries"]
        return found

    def log(self, session: str, ref: str | None = None) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = self.json("-s", session, "log", *([ref] if ref else []))[
            "entries"
        ]
        return found

    def fsck_clean(self, session: str) -> None:
        """fsck passes with no warning at all (no orphan, nothing tolerated)."""
        report = self.json("-s", session, "fsck")
        assert report["ok"] and report["problems"] == [], report

    def context(self, session: str, fmt: str) -> dict[str, Any]:
        proc = self.run("-s", session, "context", "--format", fmt)  # JSON without --json
        found: dict[str, Any] = orjson.loads(proc.stdout)
        return found

    def sessions(self) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = self.json("sessions")["sessions"]
        return found


# -- what an imported tree must be ----------------------------------------------------------


def texts(entry: dict[str, Any]) -> list[str]:
    """The text parts of an entry's content."""
    content = entry.get("content")
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    return [p["text"] for p in content if p.get("type") == "text"]


def thinking(entry: dict[str, Any]) -> list[str]:
    content = entry.get("content")
    if not isinstance(content, list):
        return []
    return [p["thinking"] for p in content if p.get("type") == "thinking"]


def role(entry: dict[str, Any]) -> str:
    """message entries by role, others by type (custom by kind)."""
    if entry["type"] == "message":
        return str(entry["role"])
    if entry["type"] == "custom":
        return f"custom {entry['kind']}"
    return str(entry["type"])


def counts(entries: Iterable[dict[str, Any]]) -> dict[str, int]:
    found: dict[str, int] = {}
    for entry in entries:
        found[role(entry)] = found.get(role(entry), 0) + 1
    return found


def native(entry: dict[str, Any]) -> bytes | None:
    return kept_text(entry.get("native") or {})


def forks(entries: list[dict[str, Any]]) -> dict[str, set[str]]:
    """Every entry with more than one child, and its children."""
    children: dict[str, set[str]] = {}
    for entry in entries:
        if entry["parentId"] is not None:
            children.setdefault(entry["parentId"], set()).add(entry["id"])
    return {parent: below for parent, below in children.items() if len(below) > 1}


def roots(entries: list[dict[str, Any]]) -> set[str]:
    return {e["id"] for e in entries if e["parentId"] is None}


def sound_tree(entries: list[dict[str, Any]]) -> None:
    """No orphan, no repeated id, every parent written before its child."""
    seen: set[str] = set()
    for entry in entries:
        assert entry["id"] not in seen, entry["id"]
        assert entry["parentId"] is None or entry["parentId"] in seen, entry
        seen.add(entry["id"])


def openai_sound(request: dict[str, Any]) -> None:
    """Every tool call is answered right after the message that makes it, in one block of tool
    messages, and no tool message answers a call not made just before it."""
    open_calls: set[str] = set()
    for message in request["messages"]:
        if message["role"] == "tool":
            assert message["tool_call_id"] in open_calls, message
            open_calls.discard(message["tool_call_id"])
            continue
        assert not open_calls, ("unanswered", open_calls, message)
        open_calls = {c["id"] for c in message.get("tool_calls", [])}
        if message["role"] == "assistant":
            assert message.get("content") is not None or message.get("tool_calls"), message
    assert not open_calls


def anthropic_sound(request: dict[str, Any]) -> None:
    """Roles alternate; each tool_use is answered by a tool_result in the next (user) turn, and
    every tool_result answers a tool_use of the turn before."""
    previous: dict[str, Any] | None = None
    for message in request["messages"]:
        assert message["content"], message
        if previous is not None:
            assert message["role"] != previous["role"], (previous, message)
        asked = {b["id"] for b in (previous or {}).get("content", []) if b["type"] == "tool_use"}
        answered = {b["tool_use_id"] for b in message["content"] if b["type"] == "tool_result"}
        assert answered <= asked, (asked, answered)
        if message["role"] == "user":
            assert asked <= answered, ("unanswered", asked - answered)
        previous = message
    last = (previous or {}).get("content", [])
    assert not any(b["type"] == "tool_use" for b in last), "the last turn asks a tool"


def placeholders(request: dict[str, Any]) -> int:
    """Calls replay answered with convgit's placeholder (no result was recorded), which the
    OpenAI body sends as a failed result."""
    sent = TOOL_ERROR_PREFIX + MISSING_RESULT
    return sum(1 for m in request["messages"] if m["role"] == "tool" and m["content"] == sent)
