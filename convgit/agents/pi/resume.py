"""pi, handed a convgit path: the session file ``pi --session FILE`` continues, beside the one
the session was imported from, under a header of its own (a new session id, so the file is a
session of pi's own and convgit finds it again by that id)."""

from __future__ import annotations

import os
import shlex
import uuid
from collections.abc import Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from convgit.agents.pi import NAME, TITLE, export
from convgit.agents.protocol import Written
from convgit.agents.resume import imported, refuse_tool_run
from convgit.base import codec
from convgit.base.errors import RefusedError

if TYPE_CHECKING:
    from convgit.session import Session

AGENT = NAME


def resume_header(exported: bytes, session: str, now: datetime, parent: str | None) -> bytes:
    """``exported`` (a pi v3 file, header first) with a header naming ``session``, made at
    ``now``, forked from the file ``parent`` (pi's ``parentSession``) when it is known; every
    entry line stays as it is."""
    first, _, rest = exported.partition(b"\n")
    value: dict[str, Any] = codec.decode(first)
    header: dict[str, Any] = {"type": "session", "version": value.get("version", 3)}
    header.update(id=session, timestamp=_iso(now))
    mine = ("type", "version", "id", "timestamp", "parentSession")
    header.update((k, v) for k, v in value.items() if k not in mine)
    if parent is not None:
        header["parentSession"] = parent
    return codec.encode(header).rstrip(b"\n") + b"\n" + rest


def file_name(session: str, now: datetime) -> str:
    """pi's name for a session file: its start time with ``:`` and ``.`` as ``-``, and its id."""
    return f"{_iso(now).replace(':', '-').replace('.', '-')}_{session}.jsonl"


def sessions_dir(cwd: str, env: Mapping[str, str] = os.environ) -> Path:
    """Where pi keeps the sessions of working directory ``cwd`` (``PI_CODING_AGENT_DIR``, else
    ``~/.pi/agent``; ``--<cwd>--`` with every ``/``, ``\\`` and ``:`` as ``-``)."""
    agent = env.get("PI_CODING_AGENT_DIR")
    base = Path(agent).expanduser() if agent else Path("~/.pi/agent").expanduser()
    name = cwd.lstrip("/\\")
    for sep in "/\\:":
        name = name.replace(sep, "-")
    return base / "sessions" / f"--{name}--"


def line_uuids(data: bytes) -> list[tuple[str, str | None]]:
    """(id, parentId) of every entry of a pi session file, in file order (the header has
    none): a file that copies another's entries (a fork, a resume) is told by them."""
    found: list[tuple[str, str | None]] = []
    for line in data.splitlines():
        try:
            value = codec.decode(line)
        except ValueError:
            continue
        if isinstance(value, dict) and value.get("type") != "session":
            ident, parent = value.get("id"), value.get("parentId")
            if isinstance(ident, str):
                found.append((ident, parent if isinstance(parent, str) else None))
    return found


def resume_command(path: str) -> str:
    return f"pi --session {shlex.quote(path)}"


def _iso(now: datetime) -> str:
    moment = now.astimezone(timezone.utc)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


# -- handing the path back -------------------------------------------------------------------


def hand_back(session: Session, target: str) -> Written:
    """The path as pi's own file (``pi_export``: the records pi wrote, byte for byte), under a
    header naming a new pi session, beside the file the session was imported from."""
    tree = session.conversation.tree
    refuse_tool_run(session, target, TITLE)
    path = [tree.entries[ident] for ident in tree.path(target)]
    if not any(r.get("type") == "message" and r.get("role") == "assistant" for r in path):
        raise RefusedError(
            f"The path to {target} has no reply of the model, and pi writes such a session"
            " again, whole, when its first reply comes.",
            "resume at a reply, or continue in convgit itself",
        )
    files = imported(session, NAME)
    header = tree.header or {}
    exported = export.export(header, path, tree.kept)
    now = datetime.now(timezone.utc)
    new = str(uuid.uuid4())
    parent = str(files[0]) if files else None
    data = resume_header(exported, new, now, parent)
    if files:
        folder = files[0].parent
    else:
        cwd = codec.decode(exported.partition(b"\n")[0]).get("cwd")
        folder = sessions_dir(str(cwd or os.getcwd()))
    file = folder / file_name(new, now)
    return Written(new, file, data, resume_command(str(file)))
