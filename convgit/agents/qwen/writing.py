"""Qwen Code's own chat file (``~/.qwen/projects/<folder>/chats/<session id>.jsonl``, the one
``qwen --resume ID`` continues) written from any path.

Each message is a record, each below the one before, in the Gemini API's shape: a prompt a
``user`` record, a reply an ``assistant`` record (``message.role`` ``model``: its thinking as
``thought`` parts, its text, its calls as ``functionCall`` parts) with its model and tokens
(``usageMetadata``), the results of its calls a ``tool_result`` record each
(``functionResponse``, ``toolCallResult`` saying whether it failed). A record Qwen Code wrote
keeps its uuid only on a path of its own (its importer reads a uuid it knows as more of that
message); every other gets a new one.
"""

from __future__ import annotations

import os
import re
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from convgit.agents.handoff import Handoff, Keeps, Native, Producer, Said, Usage
from convgit.agents.qwen import NAME
from convgit.agents.tools import (
    ToolMap,
    file_tools,
    read_tool,
    search_tool,
    shell_tool,
)
from convgit.agents.writing import replies, result_text
from convgit.base import codec

if TYPE_CHECKING:
    from convgit.session import Session

WRITES = "a Qwen Code chat file"
KEEPS = Keeps(thinking="all", images=False, usage=True, ids=False)
VERSION = "0.24.4"  # the Qwen Code whose chat files this writes
PROVIDER = "qwen"

TOOLS = ToolMap(
    (
        *file_tools(
            path="file_path", write="write_file", content="content", edit="edit",
            old="old_string", new="new_string", every="replace_all",
        ),
        shell_tool("run_shell_command"),
        read_tool("read_file", path="file_path", offset="offset", limit="limit", zero_based=True),
        search_tool("grep_search", path="path", glob="glob"),
    )
)  # fmt: skip


def new_session() -> str:
    return str(uuid.uuid4())


def produced(value: dict[str, Any]) -> Producer | None:
    """The model and tokens of a reply Qwen Code recorded."""
    model = value.get("model")
    if value.get("type") != "assistant" or not isinstance(model, str):
        return None
    meta = value.get("usageMetadata")
    usage = None
    if isinstance(meta, dict):
        usage = Usage(_int(meta.get("promptTokenCount")), _int(meta.get("candidatesTokenCount")),
                      _int(meta.get("cachedContentTokenCount")))  # fmt: skip
    return Producer(PROVIDER, model, usage)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def write(handoff: Handoff) -> Native:
    records = _Records(handoff)
    lines: list[bytes] = []
    origins: dict[bytes, str] = {}
    for run in replies(handoff.said):
        for line in records.run(run):
            lines.append(line)
            origins[line] = run[-1].entry
    return Native(b"".join(line + b"\n" for line in lines), handoff.agent_session, origins)


class _Records:
    def __init__(self, handoff: Handoff) -> None:
        self.handoff = handoff
        self.parent: str | None = None

    def record(self, kind: str, said: Said, message: dict[str, Any], **more: Any) -> bytes:
        ident = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{self.handoff.agent_session}/{said.seed}"))
        value = {
            "uuid": ident,
            "parentUuid": self.parent,
            "sessionId": self.handoff.agent_session,
            "timestamp": said.ts or self.handoff.created,
            "type": kind,
            "cwd": self.handoff.cwd or os.getcwd(),
            "version": VERSION,
            **more,
            "message": message,
        }
        self.parent = ident
        return codec.encode(value).rstrip(b"\n")

    def run(self, run: list[Said]) -> list[bytes]:
        first = run[0]
        if first.role == "user":
            texts = [{"text": p["text"]} for p in first.parts if p["type"] == "text"]
            if not texts:
                return []
            return [self.record("user", first, {"role": "user", "parts": texts})]
        if first.role == "tool":
            said = result_text(first)
            response = {"error": said} if first.error else {"output": said}
            answer = {"functionResponse": {"id": first.call, "name": first.tool or "tool",
                                           "response": response}}  # fmt: skip
            result = {"callId": first.call, "status": "error" if first.error else "success"}
            answered = {"role": "user", "parts": [answer]}
            return [self.record("tool_result", first, answered, toolCallResult=result)]
        blocks: list[dict[str, Any]] = []
        for message in run:
            for part in message.parts:
                if part["type"] == "thinking" and part["thinking"]:
                    blocks.append({"text": part["thinking"], "thought": True})
                elif part["type"] == "text" and part["text"]:
                    blocks.append({"text": part["text"]})
                elif part["type"] == "tool_call":
                    blocks.append({"functionCall": {"id": part["id"], "name": part["name"],
                                                   "args": part.get("input", {})}})  # fmt: skip
        if not blocks:
            return []
        last = run[-1]
        producer = next((m.producer for m in reversed(run) if m.producer is not None), None)
        more: dict[str, Any] = {}
        if producer is not None:
            more["model"] = producer.model
            if producer.usage is not None:
                usage = producer.usage
                more["usageMetadata"] = {
                    "promptTokenCount": usage.input or 0,
                    "candidatesTokenCount": usage.output or 0,
                    "totalTokenCount": usage.total,
                    "cachedContentTokenCount": usage.cache_read or 0,
                }
        return [self.record("assistant", last, {"role": "model", "parts": blocks}, **more)]


def place(session: Session, native: Native) -> tuple[Path, str]:
    """In Qwen Code's ``chats`` folder of the session's working folder (the one a chat file
    the session was imported from is in, else under ``$QWEN_HOME``); ``qwen --resume ID``
    continues it."""
    from convgit.agents.qwen.live import qwen_home
    from convgit.agents.qwen.resume import resume_command
    from convgit.agents.resume import imported

    folder = next((p.parent for p in imported(session, NAME) if p.parent.name == "chats"), None)
    if folder is None:
        cwd = str((session.conversation.header() or {}).get("cwd") or os.getcwd())
        folder = qwen_home() / "projects" / re.sub(r"[^A-Za-z0-9]", "-", cwd) / "chats"
    return folder / f"{native.session}.jsonl", resume_command(native.session)
