"""Claude Code's own transcript (``~/.claude/projects/<folder>/<session id>.jsonl``, the one
``claude -r ID`` continues) written from any path.

Each message is a line of the transcript, in a line (each line's ``parentUuid`` the one before):
a prompt or a tool's result a ``user`` line (a result as a ``tool_result`` block), a reply an
``assistant`` line with its model and tokens (an Anthropic message: text, thinking, ``tool_use``).
A message Claude Code recorded keeps its uuid, its API message's id, and its thinking with the
signature; another agent's reply is one line (its blocks recorded apart, as Codex records them,
together), its thinking left out (Anthropic's API refuses thinking it did not sign), its calls
in Claude Code's tools. Tool call ids are kept, each character the API refuses (``|``) as ``_``.
"""

from __future__ import annotations

import os
import re
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from convgit.agents.claude_code import NAME
from convgit.agents.handoff import CONVGIT, Handoff, Keeps, Native, Producer, Said, Usage
from convgit.agents.tools import (
    Edit,
    Op,
    Tool,
    ToolMap,
    absolute,
    file_tools,
    flag,
    read_tool,
    search_tool,
    shell_tool,
    text,
)
from convgit.agents.writing import image_data, replies, result_text
from convgit.base import codec

if TYPE_CHECKING:
    from convgit.session import Session

WRITES = "a Claude Code transcript"
KEEPS = Keeps(thinking="own", images=True, usage=True, ids=True)
VERSION = "2.1.332"  # the Claude Code whose transcripts this writes
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def _read_multi(args: Any, cwd: str) -> Op:
    edits = tuple(
        Edit(text(e["old_string"]), text(e["new_string"]), flag(e.get("replace_all")))
        for e in args["edits"]
    )
    return Op("edit", absolute(args["file_path"], cwd), edits=edits)


TOOLS = ToolMap(
    (
        *file_tools(
            path="file_path", write="Write", content="content", edit="Edit",
            old="old_string", new="new_string", every="replace_all",
        ),
        Tool("MultiEdit", "edit", _read_multi),  # read only: Claude Code 2.1 has no MultiEdit
        shell_tool("Bash"),
        read_tool("Read", path="file_path", offset="offset", limit="limit"),
        search_tool("Grep", path="path", glob="glob"),
    )
)  # fmt: skip


def new_session() -> str:
    return str(uuid.uuid4())


def produced(value: dict[str, Any]) -> Producer | None:
    """The model and tokens of a reply Claude Code recorded (Anthropic's)."""
    message = value.get("message")
    if not isinstance(message, dict) or message.get("role") != "assistant":
        return None
    model = message.get("model")
    if not isinstance(model, str) or model == "<synthetic>":
        return None
    usage = message.get("usage")
    tokens = None
    if isinstance(usage, dict):
        tokens = Usage(
            _int(usage.get("input_tokens")),
            _int(usage.get("output_tokens")),
            _int(usage.get("cache_read_input_tokens")),
            _int(usage.get("cache_creation_input_tokens")),
        )
    return Producer("anthropic", model, tokens)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def safe_id(ident: str) -> str:
    """A tool call id as Anthropic's API takes it."""
    return _UNSAFE.sub("_", ident) or "call"


def write(handoff: Handoff) -> Native:
    lines: list[bytes] = []
    origins: dict[bytes, str] = {}
    parent: str | None = None
    for run in replies(handoff.said):
        own = all(m.agent == NAME and isinstance(m.native, dict) for m in run)
        for line, said in _lines(handoff, run, own):
            line.update(parentUuid=parent)
            encoded = codec.encode(_ordered(line, handoff)).rstrip(b"\n")
            lines.append(encoded)
            origins[encoded] = said.entry
            parent = str(line["uuid"])
    return Native(b"".join(line + b"\n" for line in lines), handoff.agent_session, origins)


def _lines(handoff: Handoff, run: list[Said], own: bool) -> list[tuple[dict[str, Any], Said]]:
    """The transcript lines of a run of messages (a reply recorded by Claude Code: a line per
    message, as it wrote them)."""
    first = run[0]
    if first.role != "assistant":
        content = _user_content(first)
        if not content:
            return []
        return [(_line(handoff, first, "user", {"role": "user", "content": content}), first)]
    if own:
        found = []
        for said in run:
            blocks = _blocks(said.parts, keep_thinking=True)
            if blocks:
                found.append((_line(handoff, said, "assistant", _reply(said, blocks, said)), said))
        return found
    blocks = [b for m in run for b in _blocks(m.parts, keep_thinking=False)]
    if not blocks:
        return []
    last = run[-1]
    return [(_line(handoff, last, "assistant", _reply(last, blocks, None)), last)]


def _line(handoff: Handoff, said: Said, kind: str, message: dict[str, Any]) -> dict[str, Any]:
    native = said.native or {}
    ident = native.get("uuid") if said.agent == NAME else None
    if not isinstance(ident, str):
        ident = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{handoff.agent_session}/{said.seed}"))
    return {"type": kind, "message": message, "uuid": ident, "timestamp": said.ts}


def _ordered(line: dict[str, Any], handoff: Handoff) -> dict[str, Any]:
    """The line's fields in Claude Code's order."""
    return {
        "parentUuid": line["parentUuid"],
        "isSidechain": False,
        "userType": "external",
        "cwd": handoff.cwd or os.getcwd(),
        "sessionId": handoff.agent_session,
        "version": VERSION,
        "type": line["type"],
        "message": line["message"],
        "uuid": line["uuid"],
        "timestamp": line["timestamp"] or handoff.created,
    }


def _reply(said: Said, blocks: list[dict[str, Any]], own: Said | None) -> dict[str, Any]:
    native = own.native.get("message") if own is not None and own.native else None
    native = native if isinstance(native, dict) else {}
    producer = said.producer or Producer(CONVGIT, CONVGIT)
    calls = any(block["type"] == "tool_use" for block in blocks)
    message: dict[str, Any] = {
        "model": producer.model,
        "id": native.get("id") or "msg_" + uuid.uuid5(uuid.NAMESPACE_URL, said.entry).hex[:24],
        "type": "message",
        "role": "assistant",
        "content": blocks,
        "stop_reason": native.get("stop_reason", "tool_use" if calls else "end_turn"),
        "stop_sequence": None,
    }
    usage = producer.usage
    if usage is not None:
        message["usage"] = {
            "input_tokens": usage.input or 0,
            "output_tokens": usage.output or 0,
            "cache_read_input_tokens": usage.cache_read or 0,
            "cache_creation_input_tokens": usage.cache_write or 0,
        }
    return message


def _blocks(parts: list[dict[str, Any]], *, keep_thinking: bool) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for part in parts:
        kind = part["type"]
        if kind == "text" and part["text"]:
            found.append({"type": "text", "text": part["text"]})
        elif kind == "thinking" and keep_thinking and isinstance(part.get("signature"), str):
            found.append(
                {"type": "thinking", "thinking": part["thinking"], "signature": part["signature"]}
            )
        elif kind == "tool_call":
            found.append(
                {"type": "tool_use", "id": safe_id(str(part["id"])), "name": part["name"],
                 "input": part.get("input", {})}
            )  # fmt: skip
    return found


def _user_content(said: Said) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for part in said.parts:
        if part["type"] == "text" and part["text"]:
            blocks.append({"type": "text", "text": part["text"]})
        elif part["type"] == "image":
            image = _image(part)
            if image is not None:
                blocks.append(image)
    if said.role != "tool":
        return blocks
    result: dict[str, Any] = {
        "type": "tool_result",
        "tool_use_id": safe_id(str(said.call)),
        "content": blocks if any(b["type"] == "image" for b in blocks) else result_text(said),
    }
    if said.error:
        result["is_error"] = True
    return [result]


def _image(part: dict[str, Any]) -> dict[str, Any] | None:
    data = image_data(part)
    if data is not None:
        return {
            "type": "image",
            "source": {"type": "base64", "media_type": data[0], "data": data[1]},
        }
    url = part.get("url")
    return (
        {"type": "image", "source": {"type": "url", "url": url}} if isinstance(url, str) else None
    )


def project_folder(cwd: str) -> Path:
    """Where Claude Code keeps the transcripts of the working folder ``cwd``."""
    from convgit.agents.claude_code.live import config_dir

    return config_dir() / "projects" / re.sub(r"[^A-Za-z0-9]", "-", cwd)


def place(session: Session, native: Native) -> tuple[Path, str]:
    """In Claude Code's folder of the session's working folder; ``claude -r ID`` continues it
    (run there)."""
    from convgit.agents.claude_code.resume import resume_command

    cwd = str((session.conversation.header() or {}).get("cwd") or os.getcwd())
    return project_folder(cwd) / f"{native.session}.jsonl", resume_command(native.session)
