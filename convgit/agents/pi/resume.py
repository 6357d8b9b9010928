"""pi, handed a convgit path: the session file ``pi --session FILE`` continues, beside the one
the session was imported from, under a header of its own (a new session id, so the file is a
session of pi's own and convgit finds it again by that id)."""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from convgit.base import codec

AGENT = "pi"
TITLE = "pi"


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


def resume_command(path: str) -> str:
    return f"pi --session {shlex.quote(path)}"


def _iso(now: datetime) -> str:
    moment = now.astimezone(timezone.utc)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
