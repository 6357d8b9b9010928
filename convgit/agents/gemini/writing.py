"""Gemini CLI's own chat file (``~/.gemini/tmp/<project>/chats/session-*.jsonl``, the one
``gemini --resume ID`` continues) written from any path.

A header names the new session and the project (``projectHash``: the SHA-256 of its folder),
then each message is a line: a prompt a ``user`` message, a reply a ``gemini`` message with its
text, its thinking as ``thoughts``, its model and tokens, and its calls as ``toolCalls``, each
holding its result (``functionResponse``), as the CLI records a turn. A message Gemini CLI wrote
keeps its id; every other gets one of its own.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from convgit.agents.gemini import NAME
from convgit.agents.handoff import Handoff, Keeps, Native, Producer, Said, Usage
from convgit.agents.tools import (
    Op,
    Tool,
    ToolMap,
    absolute,
    file_tools,
    number,
    search_tool,
    shell_tool,
)
from convgit.agents.writing import result_text

if TYPE_CHECKING:
    from convgit.session import Session

WRITES = "a Gemini CLI chat file"
KEEPS = Keeps(thinking="all", images=False, usage=True, ids=True)
PROVIDER = "google"


def _read_file(args: Any, cwd: str) -> Op:
    first, last = number(args.get("start_line")), number(args.get("end_line"))
    limit = None if first is None or last is None else last - first + 1
    return Op("read", absolute(args["file_path"], cwd), offset=first, limit=limit)


def _write_read(op: Op, cwd: str) -> dict[str, Any]:
    said: dict[str, Any] = {"file_path": op.path}
    if op.offset is not None:
        said["start_line"] = op.offset
        if op.limit is not None:
            said["end_line"] = op.offset + op.limit - 1
    return said


_WRITE, _REPLACE = file_tools(
    path="file_path", write="write_file", content="content", edit="replace",
    old="old_string", new="new_string", every="allow_multiple",
)  # fmt: skip
INSTRUCTION = "Replace old_string by new_string in the file."  # replace requires one


def _write_replace(op: Op, cwd: str) -> dict[str, Any] | None:
    """Another agent's edit as ``replace``, with the ``instruction`` the CLI's schema requires
    (the CLI refuses a call without one)."""
    assert _REPLACE.write is not None
    said = _REPLACE.write(op, cwd)
    return None if said is None else {**said, "instruction": INSTRUCTION}


TOOLS = ToolMap(
    (
        _WRITE,
        Tool("replace", "edit", _REPLACE.read, _write_replace),
        shell_tool("run_shell_command"),
        Tool("read_file", "read", _read_file, _write_read),
        search_tool("grep_search", path="dir_path", glob="include_pattern"),
    )
)  # fmt: skip


def new_session() -> str:
    return str(uuid.uuid4())


def produced(value: dict[str, Any]) -> Producer | None:
    """The model and tokens of a reply Gemini CLI recorded."""
    model = value.get("model")
    if value.get("type") != "gemini" or not isinstance(model, str):
        return None
    tokens = value.get("tokens")
    usage = None
    if isinstance(tokens, dict):
        usage = Usage(_int(tokens.get("input")), _int(tokens.get("output")),
                      _int(tokens.get("cached")))  # fmt: skip
    return Producer(PROVIDER, model, usage)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def write(handoff: Handoff) -> Native:
    now = _iso(datetime.now(timezone.utc))
    cwd = handoff.cwd or os.getcwd()
    header = {
        "sessionId": handoff.agent_session,
        "projectHash": hashlib.sha256(cwd.encode()).hexdigest(),
        "startTime": now,
        "lastUpdated": now,
        "kind": "main",
    }
    lines = [_encode(header)]
    origins: dict[bytes, str] = {}
    said = handoff.said
    at = 0
    while at < len(said):
        first = said[at]
        if first.role == "assistant":
            end = at
            while end < len(said) and said[end].role == "assistant":
                end += 1
            results = end
            while results < len(said) and said[results].role == "tool":
                results += 1
            value = _reply(handoff, said[at:end], said[end:results])
            group = said[at:results]
            at = results
        else:
            value = _user(handoff, first)
            group = [first]
            at += 1
        if value is None:
            continue
        line = _encode(value)
        lines.append(line)
        origins[line] = group[-1].entry
    return Native(b"".join(line + b"\n" for line in lines), handoff.agent_session, origins)


def _ident(handoff: Handoff, said: Said) -> str:
    """A message's id: the CLI's own for a message it wrote (its entry's, which is the id),
    else a new one."""
    native = said.native or {}
    if said.agent == NAME and isinstance(native.get("id"), str) and said.raw is not None:
        return str(native["id"])
    if said.agent == NAME and not said.entry.startswith(("call-", "result-", "model-")):
        return said.entry
    return uuid.uuid5(uuid.NAMESPACE_URL, f"{handoff.agent_session}/{said.seed}").hex


def _user(handoff: Handoff, said: Said) -> dict[str, Any] | None:
    """A prompt, or a tool's result whose call has no counterpart: a ``user`` message."""
    texts = [{"text": p["text"]} for p in said.parts if p["type"] == "text"]
    if said.role == "tool":  # a result no reply of the path made: its text
        texts = [{"text": result_text(said)}]
    if not texts:
        return None
    return {"id": _ident(handoff, said), "timestamp": said.ts, "type": "user", "content": texts}


def _reply(handoff: Handoff, run: list[Said], results: list[Said]) -> dict[str, Any] | None:
    texts = [str(p["text"]) for m in run for p in m.parts if p["type"] == "text"]
    thoughts = [
        {"subject": "", "description": p["thinking"], "timestamp": m.ts}
        for m in run
        for p in m.parts
        if p["type"] == "thinking" and p["thinking"]
    ]
    answers = {str(r.call): r for r in results}
    calls = []
    for message in run:
        for part in message.calls():
            answer = answers.get(str(part["id"]))
            said = result_text(answer) if answer is not None else ""
            error = answer is not None and answer.error
            response = {"error": said} if error else {"output": said}
            calls.append(
                {
                    "id": part["id"],
                    "name": part["name"],
                    "args": part.get("input", {}),
                    "result": [{"functionResponse": {"id": part["id"], "name": part["name"],
                                                     "response": response}}],
                    "status": "error" if error else "success",
                    "timestamp": (answer or message).ts,
                }
            )  # fmt: skip
    if not texts and not calls and not thoughts:
        return None
    last = run[-1]
    producer = next((m.producer for m in reversed(run) if m.producer is not None), None)
    value: dict[str, Any] = {
        "id": _ident(handoff, run[0]),
        "timestamp": last.ts,
        "type": "gemini",
        "content": "\n\n".join(texts),
        "thoughts": thoughts,
        "tokens": _tokens(producer.usage) if producer is not None else None,
    }
    if producer is not None:
        value["model"] = producer.model
    if calls:
        value["toolCalls"] = calls
    return value


def _tokens(usage: Usage | None) -> dict[str, int] | None:
    if usage is None:
        return None
    return {
        "input": usage.input or 0,
        "output": usage.output or 0,
        "cached": usage.cache_read or 0,
        "thoughts": 0,
        "tool": 0,
        "total": usage.total,
    }


def _encode(value: dict[str, Any]) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


def _iso(now: datetime) -> str:
    return now.isoformat(timespec="milliseconds").replace("+00:00", "Z")


# -- where the CLI finds it ------------------------------------------------------------------


def slugify(text: str) -> str:
    """The CLI's name for a project folder: its base name in lowercase letters and digits."""
    found = re.sub(r"-+", "-", re.sub(r"[^a-z0-9]", "-", text.lower())).strip("-")
    return found or "project"


def project_folder(cwd: str) -> Path:
    """The CLI's folder of the project at ``cwd`` (``~/.gemini/tmp/<slug>``): the one its
    registry (``projects.json``) or an ownership marker (``.project_root``) names; else a new
    one, claimed as the CLI claims it (a marker naming the project, which the CLI finds and
    registers at its next start)."""
    from convgit.agents.gemini.live import home

    root = home()
    base = root / "tmp"
    where = os.path.realpath(cwd)
    try:
        projects = json.loads((root / "projects.json").read_text()).get("projects", {})
    except (OSError, ValueError, AttributeError):
        projects = {}
    named = projects.get(where) if isinstance(projects, dict) else None
    if isinstance(named, str) and _owner(base / named) in (where, None):
        return base / named
    for marker in sorted(base.glob("*/.project_root")):
        if _owner(marker.parent) == where:
            return marker.parent
    taken = set(projects.values()) if isinstance(projects, dict) else set()
    slug, counter = slugify(os.path.basename(where)), 0
    while True:
        candidate = slug if counter == 0 else f"{slug}-{counter}"
        counter += 1
        if candidate not in taken and _owner(base / candidate) in (where, None):
            folder = base / candidate
            folder.mkdir(parents=True, exist_ok=True)
            (folder / ".project_root").write_text(where)
            return folder


def _owner(folder: Path) -> str | None:
    try:
        return (folder / ".project_root").read_text().strip()
    except OSError:
        return None


def place(session: Session, native: Native) -> tuple[Path, str]:
    """In the ``chats`` folder of the chat files the session was imported from, else of the
    session's project; ``gemini --resume ID`` continues it (run in the project's folder)."""
    from convgit.agents.gemini import resume
    from convgit.agents.resume import imported

    folder = resume.chats_folder(imported(session, NAME))
    if folder is None:
        cwd = str((session.conversation.header() or {}).get("cwd") or os.getcwd())
        folder = project_folder(cwd) / "chats"
    now = datetime.now(timezone.utc)
    return folder / resume.file_name(native.session, now), resume.resume_command(native.session)
