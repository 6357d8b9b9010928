"""Qwen Code, handed a convgit path: a new chat file in the project's ``chats`` folder that
``qwen --resume ID`` continues, holding exactly the records of the path, as Qwen wrote them.

* Each entry's record is the line the session keeps for it (the chat files may be gone); the
  entries a record made beside its first (a second tool result, a reply's model) come with it.
* Qwen reads a chat file whose records all name one session: each record is written again
  naming the new one, and nothing else of it changes (its ``uuid`` and ``parentUuid`` too), so
  the hooks, and any later import, find each copy's entry again, and the turns Qwen runs there
  come back as a branch below the entry.
* An entry convgit wrote (a note, a message typed into convgit) has no record of Qwen's:
  resuming below one is refused, as for Gemini CLI.
"""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

from convgit.agents import reading
from convgit.agents.protocol import Written
from convgit.agents.qwen import NAME, TITLE
from convgit.agents.qwen.live import qwen_home
from convgit.agents.resume import imported, refuse_tool_run
from convgit.base.errors import RefusedError

if TYPE_CHECKING:
    from convgit.session import Session

AGENT = NAME
line_uuids = None  # a file of its copies the records of none other under their ids


def resume_command(session: str) -> str:
    return f"qwen --resume {session}"


def hand_back(session: Session, target: str) -> Written:
    """The records of the path to ``target`` as a new chat file, in the ``chats`` folder of
    the chat file imported (else the one Qwen keeps for the session's folder)."""
    tree = session.conversation.tree
    refuse_tool_run(session, target, TITLE)
    new = str(uuid.uuid4())
    lines: list[bytes] = []
    for ident in tree.path(target):
        native = tree.entries[ident].get("native")
        if not isinstance(native, dict):
            raise RefusedError(
                f"Entry {ident} on the path to {target} was written by convgit, not by {TITLE},"
                f" and a {TITLE} chat file holds only records of its own.",
                "resume above it, or continue in convgit itself",
            )
        if "in" in native:
            continue  # made from a record another entry keeps
        text = reading.kept_text(native)
        if text is not None:
            lines.append(_naming(text, new))
    if not lines:
        raise RefusedError(f"No record of {TITLE}'s own is on the path to {target}.")
    data = b"".join(line + b"\n" for line in lines)
    return Written(new, _chats(session) / f"{new}.jsonl", data, resume_command(new))


def _naming(line: bytes, session: str) -> bytes:
    """The record ``line`` naming ``session``."""
    try:
        value = json.loads(line)
    except ValueError:
        return line
    if not isinstance(value, dict):
        return line
    value["sessionId"] = session
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


def _chats(session: Session) -> Path:
    """Qwen's ``chats`` folder for the session: the one a chat file imported is in, else the
    one of the session's folder (``projects/<its path, each character not a letter or digit a
    "-">/chats`` under ``$QWEN_HOME``)."""
    for path in imported(session, AGENT):
        if path.parent.name == "chats":
            return path.parent
    cwd = str((session.conversation.header() or {}).get("cwd") or Path.cwd())
    return qwen_home() / "projects" / re.sub(r"[^A-Za-z0-9]", "-", cwd) / "chats"
