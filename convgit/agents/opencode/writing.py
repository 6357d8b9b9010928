"""OpenCode's own session written from any path: the export document (``{"info", "messages"}``,
what ``opencode export`` prints) that ``opencode import FILE`` puts in OpenCode's database, and
``opencode --session ID`` continues.

A prompt is a ``user`` message (the model it asks for: the one that produced the reply after
it), a reply an ``assistant`` message with its provider, model and tokens, its thinking as
``reasoning`` parts, its text, and each call as a ``tool`` part holding its result (``completed``
or ``error``), as OpenCode records a step. OpenCode's ids are its database's keys: every message
and part gets a new one, ``msg_``/``prt_`` and the time digits of when it was written, so they
sort as the path does and before anything OpenCode adds.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from convgit.agents.handoff import CONVGIT, Handoff, Keeps, Native, Producer, Said, Usage
from convgit.agents.opencode import NAME
from convgit.agents.tools import (
    ToolMap,
    file_tools,
    read_tool,
    search_tool,
    shell_tool,
)
from convgit.agents.writing import image_url, result_text

if TYPE_CHECKING:
    from convgit.session import Session

WRITES = "an OpenCode export (opencode import FILE)"
KEEPS = Keeps(thinking="all", images=True, usage=True, ids=False)
_BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_MASK = (1 << 48) - 1

TOOLS = ToolMap(
    (
        *file_tools(
            path="filePath", write="write", content="content", edit="edit",
            old="oldString", new="newString", every="replaceAll",
        ),
        shell_tool("bash", description="description"),
        read_tool("read", path="filePath", offset="offset", limit="limit", zero_based=True),
        search_tool("grep", path="path", glob="include"),
    )
)  # fmt: skip


def new_session() -> str:
    from convgit.agents.opencode.resume import new_session_id

    return new_session_id()


def produced(value: dict[str, Any]) -> Producer | None:
    """The provider, model and tokens of a reply OpenCode recorded."""
    info = value.get("info")
    if not isinstance(info, dict) or info.get("role") != "assistant":
        return None
    provider, model = info.get("providerID"), info.get("modelID")
    if not isinstance(provider, str) or not isinstance(model, str):
        return None
    tokens = info.get("tokens")
    usage = None
    if isinstance(tokens, dict):
        found = tokens.get("cache")
        cache: dict[str, Any] = found if isinstance(found, dict) else {}
        usage = Usage(_int(tokens.get("input")), _int(tokens.get("output")),
                      _int(cache.get("read")), _int(cache.get("write")))  # fmt: skip
    return Producer(provider, model, usage)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


class _Ids:
    """OpenCode's ids for the messages and parts written, in the order written: the time of
    what they stand for (never earlier than the one before), and a digest of the session and
    of what they stand for."""

    def __init__(self, session: str) -> None:
        self.session = session
        self.last = 0

    def make(self, prefix: str, ts: str, seed: str) -> str:
        millis = max(_millis(ts) or 0, self.last // 4096)
        stamp = max(millis * 4096, self.last + 1) & _MASK
        self.last = stamp
        digest = int.from_bytes(hashlib.sha1(f"{self.session} {seed}".encode()).digest(), "big")
        tail = ""
        for _ in range(14):
            digest, digit = divmod(digest, 62)
            tail += _BASE62[digit]
        return f"{prefix}_{stamp:012x}{tail}"


def write(handoff: Handoff) -> Native:
    session = handoff.agent_session
    ids = _Ids(session)
    cwd = handoff.cwd or os.getcwd()
    elements: list[bytes] = []
    origins: dict[bytes, str] = {}
    said = handoff.said
    last_user: str | None = None
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
            message = _reply(ids, session, cwd, said[at:end], said[end:results], last_user)
            group = said[at:results]
            at = results
        else:
            model = _model(said, at)
            message = _user(ids, session, first, model)
            group = [first]
            at += 1
        if message is None:
            continue
        if message["info"]["role"] == "user":
            last_user = message["info"]["id"]
        element = json.dumps(message, ensure_ascii=False).encode()
        elements.append(element)
        origins[element] = group[-1].entry
    now = int(time.time() * 1000)
    info = {
        "id": session,
        "slug": "convgit-handoff",
        "directory": cwd,
        "title": "Continued from convgit",
        "version": _version(),
        "time": {"created": _millis(handoff.created) or now, "updated": now},
    }
    data = b'{"info": ' + json.dumps(info, ensure_ascii=False).encode() + b', "messages": ['
    data += b", ".join(elements) + b"]}\n"
    return Native(data, session, origins)


def _version() -> str:
    from convgit.agents.opencode.resume import TESTED

    return TESTED


def _model(said: list[Said], at: int) -> dict[str, str]:
    """The model a prompt asks for: the one that produced the next reply (else the last)."""
    following = [m.producer for m in said[at:] if m.producer is not None]
    before = [m.producer for m in said[:at] if m.producer is not None]
    producer = (following or before[-1:] or [Producer(CONVGIT, CONVGIT)])[0]
    return {"providerID": producer.provider, "modelID": producer.model}


def _user(ids: _Ids, session: str, said: Said, model: dict[str, str]) -> dict[str, Any] | None:
    ident = ids.make("msg", said.ts, said.seed)
    parts: list[dict[str, Any]] = []
    texts = [str(p["text"]) for p in said.parts if p["type"] == "text"]
    if said.role == "tool":
        texts = [result_text(said)]
    for number, text in enumerate(texts):
        parts.append({"id": ids.make("prt", said.ts, f"{said.seed}/{number}"), "type": "text",
                      "text": text})  # fmt: skip
    for number, part in enumerate(p for p in said.parts if p["type"] == "image"):
        url = image_url(part)
        if url is not None:
            mime = url[5:].split(";", 1)[0] if url.startswith("data:") else "image/png"
            parts.append({"id": ids.make("prt", said.ts, f"{said.seed}/image{number}"),
                          "type": "file", "mime": mime, "url": url})  # fmt: skip
    if not parts:
        return None
    created = {"created": _millis(said.ts) or 0}
    info = {"id": ident, "sessionID": session, "role": "user", "time": created, "agent": "build",
            "model": model}  # fmt: skip
    return {"info": info, "parts": [{**p, "sessionID": session, "messageID": ident} for p in parts]}


def _reply(
    ids: _Ids,
    session: str,
    cwd: str,
    run: list[Said],
    results: list[Said],
    parent: str | None,
) -> dict[str, Any] | None:
    last = run[-1]
    ident = ids.make("msg", run[0].ts, last.seed)
    answers = {str(r.call): r for r in results}
    parts: list[dict[str, Any]] = []
    for message in run:
        for number, part in enumerate(message.parts):
            seed = f"{message.seed}/{number}"
            if part["type"] == "thinking" and part["thinking"]:
                parts.append({"id": ids.make("prt", message.ts, seed), "type": "reasoning",
                              "text": part["thinking"]})  # fmt: skip
            elif part["type"] == "text" and part["text"]:
                parts.append({"id": ids.make("prt", message.ts, seed), "type": "text",
                              "text": part["text"]})  # fmt: skip
            elif part["type"] == "tool_call":
                answer = answers.get(str(part["id"]))
                when = _millis((answer or message).ts) or 0
                state: dict[str, Any] = {"status": "error", "input": part.get("input", {})}
                if answer is None or answer.error:
                    state["error"] = "" if answer is None else result_text(answer)
                else:
                    state.update(status="completed", output=result_text(answer), title="",
                                 metadata={})  # fmt: skip
                state["time"] = {"start": when, "end": when}
                done = answer or message
                made = ids.make("prt", done.ts, f"{done.seed}/call")
                parts.append({"id": made, "type": "tool", "tool": part["name"],
                              "callID": part["id"], "state": state})  # fmt: skip
    if not parts:
        return None
    producer = next((m.producer for m in reversed(run) if m.producer is not None), None)
    producer = producer or Producer(CONVGIT, CONVGIT)
    usage = producer.usage or Usage()
    created = _millis(run[0].ts) or 0
    info = {
        "id": ident,
        "sessionID": session,
        "role": "assistant",
        "parentID": parent or ident,
        "time": {"created": created, "completed": _millis(last.ts) or created},
        "modelID": producer.model,
        "providerID": producer.provider,
        "mode": "build",
        "agent": "build",
        "path": {"cwd": cwd, "root": cwd},
        "cost": 0,
        "tokens": {"input": usage.input or 0, "output": usage.output or 0, "reasoning": 0,
                   "cache": {"read": usage.cache_read or 0, "write": usage.cache_write or 0}},
        "finish": "tool-calls" if results else "stop",
    }  # fmt: skip
    return {"info": info, "parts": [{**p, "sessionID": session, "messageID": ident} for p in parts]}


def _millis(ts: str) -> int | None:
    try:
        return int(datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp() * 1000)
    except ValueError:
        return None


def place(session: Session, native: Native) -> tuple[Path, str]:
    """In the store, beside the pointer to the session: ``opencode import FILE`` puts it in
    OpenCode's database, and ``opencode --session ID`` continues it."""
    from convgit.agents.opencode.resume import resume_command

    pointer = session.location.agent_pointer(NAME, native.session)
    path = pointer.with_name(pointer.name + ".resume.json")
    return path, resume_command(path, native.session)
