"""OpenCode, handed a convgit path: an export document of a new OpenCode session holding exactly
the path, which ``opencode import FILE`` puts in OpenCode's database and ``opencode --session
ID`` continues (OpenCode's ids are its database's keys: a copy needs ids of its own; it can
fork a session at a message only through its HTTP server).

Every message of the path that OpenCode wrote is copied from the record it was imported from,
under ``reading.copy_id`` ids (the time digits kept, so that OpenCode orders them as before and
after them what it adds), without the tool calls whose results are not on the path. A message
convgit's own (a note) or another agent's is written as OpenCode's: text, and tool calls with
their results. The session's info is the one it was imported with, under the new id. A later
import of the new session finds each copy's entry by its id again (``reading``), so its turns
come in as a branch below the entry resumed at; the new session is recorded as continuing the
convgit session when the file is written, so the hooks attach its first prompt at once (no
``line_uuids``: a transcript never tells a copy).
"""

from __future__ import annotations

import json
import secrets
import shlex
import time
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from convgit.agents.opencode import NAME, TITLE
from convgit.agents.opencode.reading import copy_id, obj
from convgit.agents.protocol import Written
from convgit.agents.reading import kept_text
from convgit.agents.resume import refuse_tool_run
from convgit.base import codec
from convgit.base.errors import RefusedError
from convgit.conversation.replay import NOTE_PREFIX
from convgit.schema import text_of

if TYPE_CHECKING:
    from convgit.session import Session

AGENT = NAME
line_uuids = None  # a file of its copies the records of none other under their ids
TESTED = "1.18.33"  # the OpenCode version whose export this writes
_BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_MASK = (1 << 48) - 1


def new_session_id(now: float | None = None) -> str:
    """An OpenCode session id: ``ses_``, the time's 12 hex digits inverted (newer sort first,
    as OpenCode's do), 14 random base62 characters."""
    millis = int((time.time() if now is None else now) * 1000)
    return f"ses_{~(millis * 4096) & _MASK:012x}{_random(14)}"


def resume_command(path: Path, session: str) -> str:
    return f"opencode import {shlex.quote(str(path))} && opencode --session {session}"


def hand_back(session: Session, target: str) -> Written:
    """The path as an OpenCode export of a new session (see the module docstring), written in
    the store beside the session's pointer."""
    tree = session.conversation.tree
    refuse_tool_run(session, target, TITLE)
    path = [tree.entries[ident] for ident in tree.path(target)]
    new = new_session_id()
    messages = _Copier(new, {str(r["id"]) for r in path}).messages(path)
    if not messages:
        raise RefusedError(
            f"The path to {target} holds no message OpenCode could be given.",
            "resume at a reply",
        )
    info = _session_info(tree.kept, new, path)
    data = json.dumps({"info": info, "messages": messages}, ensure_ascii=False, indent=2)
    pointer = session.location.agent_pointer(AGENT, new)
    file = pointer.with_name(pointer.name + ".resume.json")
    return Written(new, file, data.encode() + b"\n", resume_command(file, new))


def _session_info(
    kept: Mapping[str, Mapping[str, Any]], new: str, path: list[dict[str, Any]]
) -> dict[str, Any]:
    """The info of the session the path was imported from, under the new id."""
    found: dict[str, Any] = {}
    for key, record in kept.items():
        if key.startswith("ses_"):
            value = _decode(kept_text(record))
            if value is not None and isinstance(value.get("info"), dict):
                found = dict(value["info"])
                break
    now = int(time.time() * 1000)
    info: dict[str, Any] = {"slug": "convgit-resume", "title": "Resumed", "version": TESTED}
    info.update((k, v) for k, v in found.items() if k not in ("parentID", "revert", "share"))
    info["id"] = new
    info["time"] = {"created": _millis(path[0].get("ts")) or now, "updated": now}
    return info


class _Copier:
    """The path's messages as OpenCode's, in order, for the new session ``session``."""

    def __init__(self, session: str, on_path: set[str]) -> None:
        self.session, self.on_path = session, on_path
        self.out: list[dict[str, Any]] = []
        self.last_user: str | None = None  # the copy of the last user message written

    def messages(self, path: list[dict[str, Any]]) -> list[dict[str, Any]]:
        done: set[str] = set()
        for record in path:
            native = obj(record.get("native"))
            holder = native.get("in")
            if isinstance(holder, str) and holder.startswith("msg_"):
                continue  # a tool result: its message was copied whole
            value = _decode(kept_text(native)) if native else None
            if value is not None and _is_message(value):
                if value["info"]["id"] not in done:
                    done.add(value["info"]["id"])
                    self._copy(value)
            elif record.get("type") == "message" and record.get("role") in ("user", "assistant"):
                self._convert(record, path)
            elif record.get("type") == "note":
                self._write("user", record, [self._text(NOTE_PREFIX + str(record["text"]))])
        return self.out

    def _copy(self, value: dict[str, Any]) -> None:
        info = dict(value["info"])
        info["id"] = copy_id(info["id"], self.session)
        info["sessionID"] = self.session
        if info.get("role") == "assistant":
            info["parentID"] = self.last_user or info.get("parentID")
        else:
            self.last_user = info["id"]
        parts = []
        for part in value["parts"]:
            if not isinstance(part, dict) or not isinstance(part.get("id"), str):
                continue
            if part.get("type") == "tool" and not self._answered(part):
                continue  # its result is not on the path
            parts.append(
                {
                    **part,
                    "id": copy_id(part["id"], self.session),
                    "sessionID": self.session,
                    "messageID": info["id"],
                }
            )
        self.out.append({"info": info, "parts": parts})

    def _answered(self, part: dict[str, Any]) -> bool:
        """Whether the tool part's result is on the path."""
        from convgit.agents.reading import entry_id

        if obj(part.get("state")).get("status") not in ("completed", "error"):
            return False
        return entry_id(str(part["id"])) in self.on_path

    def _convert(self, record: dict[str, Any], path: list[dict[str, Any]]) -> None:
        content = record["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        parts: list[dict[str, Any]] = []
        results = {
            str(r.get("toolCallId")): r
            for r in path
            if r.get("type") == "message" and r.get("role") == "tool"
        }
        for block in blocks:
            if block.get("type") == "text" and block.get("text"):
                parts.append(self._text(str(block["text"])))
            elif block.get("type") == "thinking" and record["role"] == "assistant":
                parts.append({"type": "reasoning", "text": str(block.get("thinking", ""))})
            elif block.get("type") == "tool_call" and record["role"] == "assistant":
                result = results.get(str(block.get("id")))
                if result is None:
                    continue
                said = text_of(result)
                state: dict[str, Any] = {"status": "error", "error": said}
                if not result.get("isError"):
                    state = {
                        "status": "completed",
                        "output": said,
                        "title": "",
                        "metadata": {},
                    }
                state["input"] = block.get("input", {})
                state["time"] = {"start": 0, "end": 0}
                ident = copy_id(f"prt_{result['id']}", self.session)
                parts.append(
                    {"id": ident, "type": "tool", "tool": block["name"], "callID": block["id"],
                     "state": state}
                )  # fmt: skip
        if parts:
            self._write(record["role"], record, parts)

    def _text(self, text: str) -> dict[str, Any]:
        return {"type": "text", "text": text}

    def _write(self, role: str, record: dict[str, Any], parts: list[dict[str, Any]]) -> None:
        ident = copy_id(f"msg_{record['id']}", self.session)
        created = _millis(record.get("ts")) or 0
        info: dict[str, Any] = {"id": ident, "sessionID": self.session, "role": role}
        info["time"] = {"created": created}
        if role == "user":
            self.last_user = ident
            info.update(agent="build", model=self._model())
        else:
            model = self._model()
            info.update(
                parentID=self.last_user or ident,
                mode="build",
                agent="build",
                path={"cwd": ".", "root": "."},
                cost=0,
                tokens={"input": 0, "output": 0, "reasoning": 0, "cache": {"read": 0, "write": 0}},
                modelID=model["modelID"],
                providerID=model["providerID"],
            )
            info["time"]["completed"] = created
            info["finish"] = "stop"
        for number, part in enumerate(parts):
            part.setdefault("id", f"prt_{((created * 4096 + number) & _MASK):012x}{_random(14)}")
            part.update(sessionID=self.session, messageID=ident)
        self.out.append({"info": info, "parts": parts})

    def _model(self) -> dict[str, str]:
        """The model of the last message copied (OpenCode's next prompt uses the last user
        message's)."""
        for message in reversed(self.out):
            info = message["info"]
            if isinstance(info.get("model"), dict):
                return dict(info["model"])
            if isinstance(info.get("modelID"), str) and isinstance(info.get("providerID"), str):
                return {"providerID": info["providerID"], "modelID": info["modelID"]}
        return {"providerID": "opencode", "modelID": "unknown"}


def _is_message(value: Mapping[str, Any]) -> bool:
    info = value.get("info")
    return (
        isinstance(info, dict)
        and isinstance(info.get("id"), str)
        and str(info["id"]).startswith("msg_")
        and isinstance(value.get("parts"), list)
    )


def _decode(text: bytes | None) -> dict[str, Any] | None:
    if text is None:
        return None
    try:
        value = codec.decode(text)
    except ValueError:
        return None
    return value if type(value) is dict else None


def _millis(ts: Any) -> int | None:
    try:
        return int(datetime.fromisoformat(str(ts).replace("Z", "+00:00")).timestamp() * 1000)
    except ValueError:
        return None


def _random(size: int) -> str:
    return "".join(secrets.choice(_BASE62) for _ in range(size))
