"""pi's own session (a v3 file, the one ``pi --session FILE`` continues) written from any path.

A path with no entry of another agent's is pi's own: it is written by ``export``, each record
pi wrote byte for byte, convgit's own entries (models, compactions, notes) as pi's. Any other
path is written from what the model sees at REF: user messages, each reply as one assistant
message (the blocks of a reply recorded apart, as Codex records them, together) with its
provider, model and tokens, thinking as pi's thinking (a signature kept for Anthropic's), tool
calls in pi's tools and their results as ``toolResult`` messages. Every entry gets a new id, in a
line below the header.
"""

from __future__ import annotations

import os
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from convgit.agents.handoff import CONVGIT, Handoff, Keeps, Native, Producer, Said, Usage
from convgit.agents.pi import NAME, export
from convgit.agents.tools import (
    Edit,
    Op,
    Tool,
    ToolMap,
    absolute,
    file_tools,
    read_tool,
    search_tool,
    shell_tool,
    text,
)
from convgit.agents.writing import image_data, replies, result_text
from convgit.base import codec
from convgit.base.errors import RefusedError

if TYPE_CHECKING:
    from convgit.session import Session

WRITES = "pi v3"
KEEPS = Keeps(thinking="all", images=True, usage=True, ids=True)
# the api pi names for each provider's wire format (what its replies' ``api`` says)
APIS = {
    "anthropic": "anthropic-messages",
    "openai": "openai-responses",
    "google": "google-generative-ai",
}


def _read_edit(args: Any, cwd: str) -> Op:
    edits = args.get("edits")
    if isinstance(edits, list):
        found = tuple(Edit(text(e["oldText"]), text(e["newText"])) for e in edits)
    else:  # pi before edits: one replacement
        found = (Edit(text(args["oldText"]), text(args["newText"])),)
    return Op("edit", absolute(args["path"], cwd), edits=found)


def _write_edit(op: Op, cwd: str) -> dict[str, Any] | None:
    if any(e.every for e in op.edits):
        return None
    edits = [{"oldText": e.old, "newText": e.new} for e in op.edits]
    return {"path": op.path, "edits": edits}


_WRITE, _ = file_tools(
    path="path", write="write", content="content", edit="edit", old="oldText", new="newText",
    every=None,
)  # fmt: skip
TOOLS = ToolMap(
    (
        _WRITE,
        Tool("edit", "edit", _read_edit, _write_edit),
        shell_tool("bash"),
        read_tool("read", path="path", offset="offset", limit="limit"),
        search_tool("grep", path="path", glob="glob"),
    )
)


def new_session() -> str:
    return str(uuid.uuid4())


def produced(value: dict[str, Any]) -> Producer | None:
    """The provider, model and tokens of a reply pi recorded."""
    message = value.get("message")
    if not isinstance(message, dict) or message.get("role") != "assistant":
        return None
    provider, model = message.get("provider"), message.get("model")
    if not isinstance(provider, str) or not isinstance(model, str):
        return None
    usage = message.get("usage")
    tokens = None
    if isinstance(usage, dict):
        tokens = Usage(
            _int(usage.get("input")),
            _int(usage.get("output")),
            _int(usage.get("cacheRead")),
            _int(usage.get("cacheWrite")),
        )
    return Producer(provider, model, tokens)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def write(handoff: Handoff) -> Native:
    """The pi file of the path, under a header naming ``handoff.agent_session``."""
    if handoff.own:
        return _own(handoff)
    header = {
        "type": "session",
        "version": export.VERSION,
        "id": handoff.agent_session,
        "timestamp": handoff.created or _now(),
        "cwd": handoff.cwd or os.getcwd(),
    }
    lines = [_encode(header)]
    origins: dict[bytes, str] = {}
    parent: str | None = None
    model: tuple[str, str] | None = None
    levels: dict[str, str] = {}  # entry -> the thinking level in force there
    level: str | None = None
    for record in handoff.path:
        if record.get("type") == "thinking" and isinstance(record.get("level"), str):
            level = str(record["level"])
        if level is not None:
            levels[str(record["id"])] = level
    level = None
    for run in replies(handoff.said):
        found = [m.producer for m in run if m.producer is not None and m.role == "assistant"]
        made = [_message(run)]
        if levels.get(run[0].entry, level) != level:
            level = levels[run[0].entry]
            made.insert(0, {"type": "thinking_level_change", "thinkingLevel": level})
        if found and (found[-1].provider, found[-1].model) != model:
            model = (found[-1].provider, found[-1].model)
            change = {"type": "model_change", "provider": model[0], "modelId": model[1]}
            made.insert(0, change)  # pi's own record of the model the reply came from
        for number, value in enumerate(made):
            seed = f"{handoff.agent_session}/{run[-1].seed}/{len(made) - number}"
            ident = uuid.uuid5(uuid.NAMESPACE_URL, seed).hex[:8]
            stamp = run[-1].ts or handoff.created
            if "role" in value:
                entry = {"type": "message", "id": ident, "parentId": parent, "timestamp": stamp,
                         "message": value}  # fmt: skip
            else:
                entry = {"type": value.pop("type"), "id": ident, "parentId": parent,
                         "timestamp": stamp, **value}  # fmt: skip
            line = _encode(entry)
            lines.append(line)
            origins[line] = run[-1].entry
            parent = ident
    return Native(b"".join(line + b"\n" for line in lines), handoff.agent_session, origins)


def _own(handoff: Handoff) -> Native:
    """A path of pi's own: the records pi wrote, byte for byte (``export``)."""
    from convgit.agents.pi import resume

    data = export.export(handoff.header, handoff.path, handoff.kept)
    first = codec.decode(data.partition(b"\n")[0])
    if first.get("id") != handoff.agent_session:
        now = datetime.now(timezone.utc)
        data = resume.resume_header(data, handoff.agent_session, now, None)
    lines = data.split(b"\n")[1:]
    origins = {line: str(r["id"]) for line, r in zip(lines, handoff.path, strict=False)}
    return Native(data, handoff.agent_session, origins)


def _message(run: list[Said]) -> dict[str, Any]:
    first = run[0]
    stamp = _millis(run[-1].ts)
    if first.role == "tool":
        return {
            "role": "toolResult",
            "toolCallId": first.call,
            "toolName": first.tool or "tool",
            "content": _blocks(first.parts, "tool")
            or [{"type": "text", "text": result_text(first)}],
            "isError": first.error,
            "timestamp": stamp,
        }
    if first.role == "user":
        return {"role": "user", "content": _blocks(first.parts, "user"), "timestamp": stamp}
    producer = next((m.producer for m in reversed(run) if m.producer is not None), None)
    producer = producer or Producer(CONVGIT, CONVGIT)
    blocks = [b for m in run for b in _blocks(m.parts, "assistant", producer.provider)]
    calls = any(block["type"] == "toolCall" for block in blocks)
    return {
        "role": "assistant",
        "content": blocks,
        "api": APIS.get(producer.provider, "openai-completions"),
        "provider": producer.provider,
        "model": producer.model,
        "usage": _usage(producer.usage),
        "stopReason": "toolUse" if calls else "stop",
        "timestamp": stamp,
    }


def _blocks(parts: list[dict[str, Any]], role: str, provider: str = "") -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for part in parts:
        kind = part["type"]
        if kind == "text":
            found.append({"type": "text", "text": part["text"]})
        elif kind == "thinking" and role == "assistant":
            block = {"type": "thinking", "thinking": part["thinking"]}
            if isinstance(part.get("signature"), str) and provider == "anthropic":
                block["thinkingSignature"] = part["signature"]
            found.append(block)
        elif kind == "tool_call" and role == "assistant":
            found.append(
                {"type": "toolCall", "id": part["id"], "name": part["name"],
                 "arguments": part.get("input", {})}
            )  # fmt: skip
        elif kind == "image" and role != "assistant":
            data = image_data(part)
            if data is not None:
                found.append({"type": "image", "data": data[1], "mimeType": data[0]})
    return found


def _usage(usage: Usage | None) -> dict[str, Any]:
    if usage is None:
        return dict(export.NO_USAGE)
    return {
        "input": usage.input or 0,
        "output": usage.output or 0,
        "cacheRead": usage.cache_read or 0,
        "cacheWrite": usage.cache_write or 0,
        "totalTokens": usage.total,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
    }


def _millis(ts: str) -> int:
    try:
        return int(datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp() * 1000)
    except ValueError:
        return 0


def _now() -> str:
    moment = datetime.now(timezone.utc)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _replies(record: Any) -> bool:
    message = record.get("message") if isinstance(record, dict) else None
    return isinstance(message, dict) and message.get("role") == "assistant"


def _encode(value: dict[str, Any]) -> bytes:
    return codec.encode(value).rstrip(b"\n")


def place(session: Session, native: Native) -> tuple[Path, str]:
    """Beside the pi file the session was imported from, else in pi's folder of the
    session's working folder; ``pi --session FILE`` continues it. Refused for a path without
    a reply of the model: pi writes such a session again, whole, when its first reply comes."""
    from convgit.agents.pi import resume
    from convgit.agents.resume import imported

    records = [codec.decode(line) for line in native.data.splitlines()[1:]]
    if not any(_replies(record) for record in records):
        raise RefusedError(
            "The path has no reply of the model, and pi writes such a session again, whole,"
            " when its first reply comes.",
            "resume at a reply, or continue in convgit itself",
        )
    files = imported(session, NAME)
    now = datetime.now(timezone.utc)
    if files:
        folder = files[0].parent
    else:
        cwd = codec.decode(native.data.partition(b"\n")[0]).get("cwd")
        folder = resume.sessions_dir(str(cwd or os.getcwd()))
    path = folder / resume.file_name(native.session, now)
    return path, resume.resume_command(str(path))
