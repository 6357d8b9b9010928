"""Gemini CLI, handed a convgit path: a new chat file in the CLI's ``chats`` folder that
``gemini --resume ID`` continues, holding exactly the messages of the path, as the CLI wrote
them, under a header naming a new session.

* Each message is taken from the chat files the session was imported from, replayed as the CLI
  reads them (a later line with the same id replaces a message, ``$set`` with ``messages``
  replaces them all, ``$rewindTo`` drops from a message on). Of a message written several times,
  the last version that has its ``toolCalls`` (with their results) is written, else the last.
* Where the CLI's cleanup deleted the chat files, the lines the session keeps stand in: each
  message's exact line on its entry, the lines that wrote it again beside it.
* The tool answers the CLI also keeps as separate ``user`` messages are left out where their
  call's result is in the call: the CLI sends a result it finds in both places twice.
* Gemini CLI's session cleanup (``general.sessionRetention``, on by default) deletes, at every
  start, the sessions not updated for 30 days, and each session file with nothing to resume
  together with every file of ``chats`` whose name ends in the same ``-<id[:8]>.jsonl``. A resume
  first writes such a file (the CLI's own start of a recording under the resumed id, left at
  once). So the file is dated now, holds the path, and is named
  ``session-<time>-<id[:8]>-convgit.jsonl``: no empty file of the CLI's takes it along.
"""

from __future__ import annotations

import contextlib
import json
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from convgit.agents import reading
from convgit.agents.gemini import NAME, TITLE
from convgit.agents.protocol import Written
from convgit.agents.resume import imported, kept_line, refuse_tool_run
from convgit.base.errors import NotFoundError, RefusedError

if TYPE_CHECKING:
    from convgit.session import Session

AGENT = NAME
line_uuids = None  # a file of its copies the records of none other under their ids


@dataclass(frozen=True)
class Message:
    """One message of a chat file, as the CLI wrote it: its exact line (or its JSON, when it
    came inside a ``$set``) and value."""

    raw: bytes
    value: dict[str, Any]

    @property
    def ident(self) -> str:
        return str(self.value["id"])


def replay(data: bytes) -> tuple[dict[str, Any], list[list[Message]]]:
    """A chat file's header and its messages, in order, each with every version the file wrote
    of it (oldest first), as the CLI reads the file back."""
    header: dict[str, Any] = {}
    order: list[str] = []
    versions: dict[str, list[Message]] = {}
    for number, line in enumerate(data.removeprefix(b"\xef\xbb\xbf").splitlines()):
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if not isinstance(value, dict):
            continue
        if number == 0 or ("sessionId" in value and "id" not in value):
            header = {**header, **value}
        elif isinstance(value.get("$set"), dict):
            messages = value["$set"].get("messages")
            if isinstance(messages, list):
                order = []
                for found in messages:
                    if isinstance(found, dict) and isinstance(found.get("id"), str):
                        raw = json.dumps(found, ensure_ascii=False).encode()
                        _add(order, versions, Message(raw, found))
        elif isinstance(value.get("$rewindTo"), str):
            at = value["$rewindTo"]
            order = order[: order.index(at)] if at in order else []
        elif isinstance(value.get("id"), str) and value["id"]:
            _add(order, versions, Message(line, value))
    return header, [versions[ident] for ident in order]


def _add(order: list[str], versions: dict[str, list[Message]], message: Message) -> None:
    if message.ident not in order:
        order.append(message.ident)
    versions.setdefault(message.ident, []).append(message)


def chosen(versions: list[Message]) -> Message:
    """The version to write: the last one holding its tool calls, else the last."""
    with_calls = [m for m in versions if m.value.get("toolCalls")]
    return (with_calls or versions)[-1]


def path_messages(files: Iterable[bytes], on_path: list[str], entry_id: Any) -> list[Message]:
    """The messages whose entries (``entry_id(message id)``) are ``on_path``, in the path's
    order, each in the version to write; the separate answers of calls whose results are in
    their call left out. Raises KeyError naming the first entry no file has a message for."""
    found: dict[str, list[Message]] = {}
    for data in files:
        for versions in replay(data)[1]:
            found.setdefault(entry_id(versions[0].ident), []).extend(versions)
    wanted = [ident for ident in on_path if ident in found]
    messages = [chosen(found[ident]) for ident in wanted]
    answered = {
        str(call.get("id"))
        for m in messages
        for call in m.value.get("toolCalls") or []
        if isinstance(call, dict) and call.get("result") is not None
    }
    return [m for m in messages if not _answers_only(m.value, answered)]


def _answers_only(value: dict[str, Any], answered: set[str]) -> bool:
    """A user message of tool answers only, each to a call whose result is in the call."""
    content = value.get("content")
    if value.get("type") != "user" or not isinstance(content, list) or not content:
        return False
    for part in content:
        response = part.get("functionResponse") if isinstance(part, dict) else None
        if not isinstance(response, dict) or str(response.get("id")) not in answered:
            return False
    return True


def chat_file(
    header: dict[str, Any], messages: list[Message], session: str, now: datetime
) -> bytes:
    """The chat file of ``messages`` under a header naming ``session``, started and updated
    ``now`` (the CLI's cleanup keeps it), with the project of ``header``."""
    stamp = _iso(now)
    made: dict[str, Any] = {"sessionId": session}
    made["projectHash"] = header.get("projectHash", "")
    made.update(startTime=stamp, lastUpdated=stamp, kind="main")
    if isinstance(header.get("directories"), list):
        made["directories"] = header["directories"]
    lines = [json.dumps(made, ensure_ascii=False).encode(), *(m.raw for m in messages)]
    return b"".join(line + b"\n" for line in lines)


def file_name(session: str, now: datetime) -> str:
    """``session-<UTC minute>-<id[:8]>-convgit.jsonl``: a name the CLI resumes by the id in it,
    and which no file of the CLI's ends like (see the module's docstring)."""
    moment = now.astimezone(timezone.utc)
    return f"session-{moment:%Y-%m-%dT%H-%M}-{session[:8]}-convgit.jsonl"


def chats_folder(imported: list[Path]) -> Path | None:
    """The CLI's ``chats`` folder of the project: the one a chat file imported is in."""
    for path in imported:
        if path.parent.name == "chats":
            return path.parent
    return None


def resume_command(session: str) -> str:
    return f"gemini --resume {session}"


def _iso(now: datetime) -> str:
    moment = now.astimezone(timezone.utc)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


# -- handing the path back -------------------------------------------------------------------


def hand_back(session: Session, target: str) -> Written:
    """A chat file of the path's messages as Gemini CLI wrote them, under a new session id, in
    the ``chats`` folder of the chat files imported."""
    tree = session.conversation.tree
    refuse_tool_run(session, target, TITLE)
    path = tree.path(target)
    for ident in path:
        if not isinstance(tree.entries[ident].get("native"), dict):
            raise RefusedError(
                f"Entry {ident} on the path to {target} was written by convgit, not by {TITLE},"
                f" and a {TITLE} chat file holds only messages of its own.",
                "resume above it, or continue in convgit itself",
            )
    sources = imported(session, AGENT)
    folder = chats_folder(sources)
    files = [_kept_chat(session, path)]  # what the session keeps, if the files are gone
    for source in sources:
        with contextlib.suppress(OSError):
            files.append(source.read_bytes())
    if folder is None:
        raise NotFoundError(
            f"Session {session.id} has no {TITLE} chat file to take its messages from (it was"
            f" imported from none, or they are gone), so convgit cannot write one {TITLE}"
            " would resume."
        )
    messages = path_messages(files, path, reading.entry_id)
    if not messages:
        raise RefusedError(f"No message of {TITLE}'s own is on the path to {target}.")
    header = replay(files[-1])[0]
    now = datetime.now(timezone.utc)
    new = str(uuid.uuid4())
    data = chat_file(header, messages, new, now)
    return Written(new, folder / file_name(new, now), data, resume_command(new))


def _kept_chat(session: Session, path: list[str]) -> bytes:
    """The message lines the session keeps for the entries of ``path`` (each message's first
    line on its entry, the lines that wrote it again beside it), under the header it keeps: a
    chat file to take messages from when Gemini CLI's cleanup deleted the ones imported."""
    tree, on_path = session.conversation.tree, set(path)
    lines = [kept_line(session, "session") or b"{}"]
    for ident in path:
        native = tree.entries[ident].get("native")
        if isinstance(native, dict) and "in" not in native:
            text = reading.kept_text(native)
            if text is not None:
                lines.append(text)
    for found in tree.kept.values():
        text = reading.kept_text(found)
        if found.get("at") in on_path and text is not None and not text.startswith(b'{"$'):
            lines.append(text)
    return b"".join(line + b"\n" for line in lines)
