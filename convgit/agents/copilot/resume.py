"""GitHub Copilot CLI, handed a convgit path: a new session of the CLI's own, its
``session-state/<new id>/events.jsonl`` holding exactly the events of the path, as the CLI wrote
them, after a ``session.start`` naming the new session; ``copilot --resume=<id>`` continues it.

* Each entry's event is the line the session keeps for it (the session's own file may be gone);
  the entries an event made beside its message (a ``model`` entry) come with that event.
* The events the CLI wrote beside the conversation (turns' starts and ends, hooks, usage, the
  system prompt it sends afresh at every start) are left out: the CLI rebuilds what it sends the
  model from the messages, tool results, model changes and compactions alone.
* The ``session.start`` is the imported session's, with the new id and time; the events keep
  their ids (the CLI checks that each is a UUID), so the hooks, and any later import, find each
  copy's entry again, and the turns the CLI runs there come back as a branch below the entry.
* An entry convgit wrote (a note, a message typed into convgit) has no event of the CLI's:
  resuming below one is refused, as for Gemini CLI.
"""

from __future__ import annotations

import json
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from convgit.agents import reading
from convgit.agents.copilot import NAME, TITLE
from convgit.agents.copilot.live import copilot_home
from convgit.agents.copilot.reading import START
from convgit.agents.protocol import Written
from convgit.agents.resume import imported, refuse_tool_run
from convgit.base.errors import RefusedError

if TYPE_CHECKING:
    from convgit.session import Session

AGENT = NAME
line_uuids = None  # a file of its copies the records of none other under their ids


def resume_command(session: str) -> str:
    return f"copilot --resume={session}"


def hand_back(session: Session, target: str) -> Written:
    """The events of the path to ``target`` as a new session of the CLI's, in the
    ``session-state`` folder of the files imported (else ``$COPILOT_HOME``'s)."""
    tree = session.conversation.tree
    refuse_tool_run(session, target, TITLE)
    lines: list[bytes] = []
    for ident in tree.path(target):
        native = tree.entries[ident].get("native")
        if not isinstance(native, dict):
            raise RefusedError(
                f"Entry {ident} on the path to {target} was written by convgit, not by {TITLE},"
                f" and a {TITLE} session holds only events of its own.",
                "resume above it, or continue in convgit itself",
            )
        if "in" in native:
            continue  # made from an event another entry keeps (a reply's model)
        text = reading.kept_text(native)
        if text is not None:
            lines.append(text)
    if not lines:
        raise RefusedError(f"No event of {TITLE}'s own is on the path to {target}.")
    now = datetime.now(timezone.utc)
    new = str(uuid.uuid4())
    start = _start(session, new, now)
    data = b"".join(line + b"\n" for line in [start, *lines])
    return Written(new, state_folder(session) / new / "events.jsonl", data, resume_command(new))


def _start(session: Session, new: str, now: datetime) -> bytes:
    """The ``session.start`` of the new session: the imported session's, with the new id and
    time (one of the CLI's own shape when the session keeps none)."""
    stamp = now.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    data: dict[str, Any] = {}
    for found in session.conversation.tree.kept.values():
        text = reading.kept_text(found)
        if text is None or START.encode() not in text[:64]:
            continue
        try:
            value = json.loads(text)
        except ValueError:
            continue
        if isinstance(value, dict) and value.get("type") == START:
            data = dict(value.get("data") or {})
            break
    data.update(sessionId=new, startTime=stamp)
    data.setdefault("version", 1)
    data.setdefault("producer", "copilot-agent")
    data.setdefault("copilotVersion", "1.0.102")
    event = {"type": START, "data": data, "id": str(uuid.uuid4()), "timestamp": stamp,
             "parentId": None}  # fmt: skip
    return json.dumps(event, ensure_ascii=False, separators=(",", ":")).encode()


def state_folder(session: Session) -> Path:
    """The CLI's ``session-state`` folder: the one a file imported is in, else the one of
    ``$COPILOT_HOME`` (``~/.copilot``)."""
    for path in imported(session, AGENT):
        if path.parent.parent.name == "session-state":
            return path.parent.parent
    return copilot_home() / "session-state"
