"""GitHub Copilot CLI's own session (``~/.copilot/session-state/<id>/events.jsonl``, the one
``copilot --resume=ID`` continues) written from any path.

A ``session.start`` names the new session and its folder, then each message is an event, each
below the one before: a prompt a ``user.message``, a reply an ``assistant.message`` with its model,
its thinking as ``reasoningText``, its text and its calls as ``toolRequests`` (its tokens a
``session.usage_record`` before it, as the CLI records them), each result a
``tool.execution_complete``. An event the CLI wrote keeps its id (the CLI checks that every id is a
UUID: the others get UUIDs of their own).
"""

from __future__ import annotations

import os
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from convgit.agents.copilot import NAME
from convgit.agents.handoff import Handoff, Keeps, Native, Producer, Said, Usage
from convgit.agents.tools import (
    Op,
    Tool,
    ToolMap,
    absolute,
    file_tools,
    number,
    read_patch,
    search_tool,
    shell_tool,
)
from convgit.agents.writing import replies, result_text
from convgit.base import codec

if TYPE_CHECKING:
    from convgit.session import Session

WRITES = "a GitHub Copilot CLI events file"
KEEPS = Keeps(thinking="all", images=False, usage=True, ids=True)
VERSION = "1.0.102"  # the CLI whose events this writes
PROVIDER = "github-copilot"


def _view(args: Any, cwd: str) -> Op:
    span = args.get("view_range")
    first = number(span[0]) if isinstance(span, list) and span else None
    last = number(span[1]) if isinstance(span, list) and len(span) > 1 else None
    limit = None if first is None or last is None or last < 0 else last - first + 1
    return Op("read", absolute(args["path"], cwd), offset=first, limit=limit)


def _write_view(op: Op, cwd: str) -> dict[str, Any]:
    said: dict[str, Any] = {"path": op.path}
    if op.offset is not None:
        last = -1 if op.limit is None else op.offset + op.limit - 1
        said["view_range"] = [op.offset, last]
    return said


TOOLS = ToolMap(
    (
        *file_tools(
            path="path", write="create", content="file_text", edit="edit",
            old="old_str", new="new_str", every=None,
        ),
        shell_tool("bash", description="description"),
        Tool("view", "read", _view, _write_view),
        search_tool("grep", path="paths", glob="glob"),
        Tool("apply_patch", "write", read_patch, custom=True),  # the GPT models' file tool
    )
)  # fmt: skip


def new_session() -> str:
    return str(uuid.uuid4())


def produced(value: dict[str, Any]) -> Producer | None:
    """The model of a reply the CLI recorded (its tokens are in an event of their own)."""
    data = value.get("data")
    if value.get("type") != "assistant.message" or not isinstance(data, dict):
        return None
    model = data.get("model")
    return Producer(PROVIDER, model) if isinstance(model, str) and model else None


def write(handoff: Handoff) -> Native:
    session = handoff.agent_session
    cwd = handoff.cwd or os.getcwd()
    stamp = handoff.created or _now()
    start = {
        "sessionId": session,
        "version": 1,
        "producer": "copilot-agent",
        "copilotVersion": VERSION,
        "startTime": stamp,
        "context": {"cwd": cwd},
    }
    writer = _Events(session)
    lines = [writer.event("session.start", start, stamp, seed="start")]
    origins: dict[bytes, str] = {}
    for run in replies(handoff.said):
        for line in writer.run(run):
            lines.append(line)
            origins[line] = run[-1].entry
    return Native(b"".join(line + b"\n" for line in lines), session, origins)


class _Events:
    """The events in order, each below the one before."""

    def __init__(self, session: str) -> None:
        self.session = session
        self.parent: str | None = None

    def event(
        self, kind: str, data: dict[str, Any], ts: str, *, seed: str, own: Said | None = None
    ) -> bytes:
        native = own.native if own is not None else None
        ident = native.get("id") if isinstance(native, dict) else None
        if not isinstance(ident, str):
            ident = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{self.session}/{seed}"))
        event = {"type": kind, "data": data, "id": ident, "timestamp": ts or _now(),
                 "parentId": self.parent}  # fmt: skip
        self.parent = ident
        return codec.encode(event).rstrip(b"\n")

    def run(self, run: list[Said]) -> list[bytes]:
        first = run[0]
        own = first if first.agent == NAME else None
        if first.role == "user":
            text = first.text()
            if not text:
                return []
            typed = {"content": text, "attachments": []}
            return [self.event("user.message", typed, first.ts, seed=first.seed, own=own)]
        if first.role == "tool":
            done: dict[str, Any] = {"toolCallId": first.call, "success": not first.error}
            said = result_text(first)
            if first.error:
                done["error"] = {"message": said}
            else:
                done["result"] = {"content": said}
            return [self.event("tool.execution_complete", done, first.ts, seed=first.seed,
                               own=own)]  # fmt: skip
        return self._reply(run)

    def _reply(self, run: list[Said]) -> list[bytes]:
        last = run[-1]
        producer = next((m.producer for m in reversed(run) if m.producer is not None), None)
        thinking = "\n\n".join(
            str(p["thinking"]) for m in run for p in m.parts if p["type"] == "thinking"
        )
        data: dict[str, Any] = {
            "messageId": str(uuid.uuid5(uuid.NAMESPACE_URL, f"{self.session}/{last.seed}/m")),
            "content": "\n\n".join(m.text() for m in run if m.text()),
            "toolRequests": [
                {"toolCallId": p["id"], "name": p["name"], "arguments": p.get("input", {}),
                 "type": "function"}
                for m in run
                for p in m.calls()
            ],
        }  # fmt: skip
        if thinking:
            data["reasoningText"] = thinking
        found = []
        if producer is not None:
            data["model"] = producer.model
            if producer.usage is not None:
                usage = self._usage(producer.model, producer.usage)
                found.append(self.event("session.usage_record", usage, last.ts,
                                        seed=f"{last.seed}/usage"))  # fmt: skip
        if not data["content"] and not data["toolRequests"] and not thinking:
            return found
        own = last if len(run) == 1 and last.agent == NAME else None
        found.append(self.event("assistant.message", data, last.ts, seed=last.seed, own=own))
        return found

    @staticmethod
    def _usage(model: str, usage: Usage) -> dict[str, Any]:
        return {
            "usage": {
                "model": model,
                "inputTokens": usage.input or 0,
                "outputTokens": usage.output or 0,
                "cacheReadTokens": usage.cache_read or 0,
                "cacheWriteTokens": usage.cache_write or 0,
            }
        }


def _now() -> str:
    moment = datetime.now(timezone.utc)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def place(session: Session, native: Native) -> tuple[Path, str]:
    """In the CLI's ``session-state`` folder (the one of a file the session was imported
    from, else ``$COPILOT_HOME``'s); ``copilot --resume=ID`` continues it."""
    from convgit.agents.copilot import resume

    folder = resume.state_folder(session)
    return folder / native.session / "events.jsonl", resume.resume_command(native.session)
