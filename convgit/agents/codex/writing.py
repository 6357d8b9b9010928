"""Codex's own rollout (``~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl``, the one
``codex resume ID`` continues) written from any path.

A ``session_meta`` line names the new thread (no model provider: Codex takes the one it runs
with), then each message is a ``response_item`` line, as Codex writes a thread it did not start
(its legacy history): a prompt a user ``message`` with the ``user_message`` event that marks it
as the user's, a reply's text an assistant ``message``, its calls ``function_call`` (the shell:
``exec_command``) or ``custom_tool_call`` (``apply_patch``, which writes and edits files), their
results the matching outputs. A record Codex wrote itself is written again byte for byte (its
reasoning, encrypted, with it); another agent's thinking is left out, and a rollout has no place
for a reply's model or tokens.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from convgit.agents.codex import NAME
from convgit.agents.handoff import Handoff, Keeps, Native, Producer, Said
from convgit.agents.tools import (
    Op,
    Tool,
    ToolMap,
    cat,
    grep,
    read_patch,
    shell_words,
    write_patch,
)
from convgit.agents.writing import image_url, result_text
from convgit.base import codec

if TYPE_CHECKING:
    from convgit.session import Session

WRITES = "a Codex rollout"
KEEPS = Keeps(thinking="own", images=True, usage=False, ids=False, errors=False)
VERSION = "0.171.0"  # the Codex whose rollouts this writes
PATCH = "apply_patch"


def _shell(args: Any, cwd: str) -> Op:
    return Op("shell", command=shell_words(args["cmd"] if "cmd" in args else args["command"]))


TOOLS = ToolMap(
    (
        Tool(PATCH, "write", lambda patch, cwd: read_patch(patch, cwd), write_patch, custom=True),
        Tool(PATCH, "edit", None, write_patch, custom=True),
        Tool("exec_command", "shell", _shell, lambda op, cwd: {"cmd": op.command}),
        Tool("exec_command", "read", None, lambda op, cwd: {"cmd": cat(op)}),
        Tool("exec_command", "search", None, lambda op, cwd: {"cmd": grep(op, cwd)}),
        Tool("shell", "shell", _shell),  # Codex before exec_command: argv
        Tool("shell_command", "shell", _shell),
    )
)


def new_session() -> str:
    return str(uuid.uuid4())


def produced(value: dict[str, Any]) -> Producer | None:
    """A rollout's records name no model: the ``model`` entries of its turn contexts do."""
    return None


def write(handoff: Handoff) -> Native:
    stamp = handoff.created or _now()
    meta = {
        "id": handoff.agent_session,
        "timestamp": stamp,
        "cwd": handoff.cwd or ".",
        "originator": "convgit",
        "cli_version": VERSION,
    }
    lines = [_line(stamp, "session_meta", meta)]
    origins: dict[bytes, str] = {}
    custom: set[str] = set()  # the calls made as custom tool calls
    for said in handoff.said:
        for line in _records(said, custom):
            lines.append(line)
            origins[line] = said.entry
    return Native(b"".join(line + b"\n" for line in lines), handoff.agent_session, origins)


def _records(said: Said, custom: set[str]) -> list[bytes]:
    """The lines of one message: its own, when Codex wrote it; else the items it makes."""
    own = _own(said)
    if own is not None:
        payload = codec.decode(own).get("payload") or {}
        if payload.get("type") == "custom_tool_call":
            custom.add(str(payload.get("call_id")))
        if said.role == "user":  # the event that marks it the user's, as Codex writes it
            event = {"type": "user_message", "message": said.text(), "images": []}
            return [own, _line(said.ts, "event_msg", event)]
        return [own]
    ts = said.ts
    if said.role == "user":
        content: list[dict[str, Any]] = []
        for part in said.parts:
            if part["type"] == "text":
                content.append({"type": "input_text", "text": part["text"]})
            elif part["type"] == "image" and (url := image_url(part)) is not None:
                content.append({"type": "input_image", "image_url": url})
        if not content:
            return []
        typed = "\n".join(str(p["text"]) for p in said.parts if p["type"] == "text")
        item = {"type": "message", "role": "user", "content": content}
        event = {"type": "user_message", "message": typed, "images": []}
        return [_line(ts, "response_item", item), _line(ts, "event_msg", event)]
    if said.role == "tool":
        kind = "custom_tool_call_output" if said.call in custom else "function_call_output"
        output: dict[str, Any] = {"type": kind, "call_id": said.call, "output": result_text(said)}
        return [_line(ts, "response_item", output)]
    found = []
    texts = [{"type": "output_text", "text": p["text"]} for p in said.parts if p["type"] == "text"]
    if texts:
        item = {"type": "message", "role": "assistant", "content": texts}
        found.append(_line(ts, "response_item", item))
    for part in said.calls():
        given = part.get("input", {})
        patch = given.get("input") if isinstance(given, dict) else None
        if part["name"] == PATCH and isinstance(patch, str):
            custom.add(str(part["id"]))
            item = {"type": "custom_tool_call", "name": PATCH, "input": patch,
                    "call_id": part["id"]}  # fmt: skip
        else:
            item = {"type": "function_call", "name": part["name"],
                    "arguments": codec.dumps(given), "call_id": part["id"]}  # fmt: skip
        found.append(_line(ts, "response_item", item))
    return found


def _own(said: Said) -> bytes | None:
    """The rollout line Codex wrote for this message, when it is a response item of its own."""
    if said.agent != NAME or said.native is None:
        return None
    if said.native.get("type") != "response_item" or "payload" not in said.native:
        return None
    return said.raw


def _line(ts: str, kind: str, payload: dict[str, Any]) -> bytes:
    return codec.encode({"timestamp": ts or _now(), "type": kind, "payload": payload}).rstrip(b"\n")


def _now() -> str:
    moment = datetime.now(timezone.utc)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def place(session: Session, native: Native) -> tuple[Path, str]:
    """In Codex's sessions folder (the one of a rollout the session was imported from, else
    ``$CODEX_HOME/sessions``), dated now; ``codex resume ID`` continues it."""
    from convgit.agents.codex import resume
    from convgit.agents.resume import imported

    root = resume.sessions_root(str(p) for p in imported(session, NAME))
    path = resume.rollout_path(root, native.session, datetime.now(timezone.utc))
    return path, resume.resume_command(native.session)
