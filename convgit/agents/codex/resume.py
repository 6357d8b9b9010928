"""Codex, handed a convgit path: a new rollout, in Codex's sessions layout, that ``codex resume
ID`` continues. It holds the lines of the rollout the path was imported from, each at the line it
had there (so the entries made from them are found again by a later import), up to the path's
last record, under the original ``session_meta`` with the new thread id: the same model
provider, without which Codex refuses to resume."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from convgit.base import codec

AGENT = "codex"
TITLE = "Codex"
_DAY = re.compile(r"\d{4}/\d{2}/\d{2}")


@dataclass
class Step:
    """One record of the path that made entries: its line in its rollout, exact text and
    timestamp, and the records kept at those entries that may follow it (line, text, time)."""

    line: int
    text: bytes
    ts: str
    after: list[tuple[int, bytes, str]] = field(default_factory=list)


class NotWholeError(ValueError):
    """The path's records do not make the lines of a rollout."""


def rollout(steps: Sequence[Step]) -> bytes:
    """The rollout holding every step at its line (the first: the ``session_meta`` at line 1),
    and between two steps the records kept there; where two rollouts of the session share a
    line (the file resumed from, and a resumed one), the one written last before the next step
    is taken. Raises NotWholeError when a line stays unknown or is claimed twice by steps."""
    lines: dict[int, bytes] = {}
    for step, following in zip(steps, [*steps[1:], None], strict=True):
        if lines.setdefault(step.line, step.text) != step.text:
            raise NotWholeError(f"two records of the path were line {step.line} of a rollout")
        if following is None:
            break
        between: dict[int, list[tuple[str, bytes]]] = {}
        for line, text, ts in step.after:
            if step.line < line < following.line:
                between.setdefault(line, []).append((ts, text))
        for line, found in between.items():
            before = sorted(c for c in found if c[0] <= following.ts)
            lines[line] = (before[-1] if before else min(found))[1]
    last = steps[-1].line if steps else 1
    missing = [n for n in range(1, last + 1) if n not in lines]
    if missing:
        raise NotWholeError(f"line {missing[0]} of the rollout is not kept")
    return b"".join(lines[n] + b"\n" for n in range(1, last + 1))


def resume_meta(meta: bytes, thread: str) -> bytes:
    """The ``session_meta`` line ``meta`` naming thread ``thread`` (its ``id``, and its
    ``session_id`` where that was the same); every other field, the model provider among them,
    as it was."""
    value: dict[str, Any] = codec.decode(meta)
    payload = dict(value["payload"])
    old = payload["id"]
    payload["id"] = thread
    if payload.get("session_id") == old:
        payload["session_id"] = thread
    return codec.encode({**value, "payload": payload}).rstrip(b"\n")


def sessions_root(imported: Iterable[str], env: Mapping[str, str] = os.environ) -> Path:
    """Codex's ``sessions`` folder: the one holding a rollout the session was imported from
    (``sessions/YYYY/MM/DD/rollout-….jsonl``), else ``$CODEX_HOME/sessions`` (``~/.codex``)."""
    for source in imported:
        path = Path(source)
        if len(path.parents) < 5:
            continue
        if path.parents[3].name == "sessions" and _DAY.fullmatch(
            "/".join(p.name for p in (path.parents[2], path.parents[1], path.parent))
        ):
            return path.parents[3]
    home = env.get("CODEX_HOME")
    return (Path(home).expanduser() if home else Path("~/.codex").expanduser()) / "sessions"


def rollout_path(root: Path, thread: str, now: datetime) -> Path:
    """Where Codex writes the rollout of thread ``thread`` started at ``now`` (local time, as
    Codex names its folders and files)."""
    local = now.astimezone()
    name = f"rollout-{local:%Y-%m-%dT%H-%M-%S}-{thread}.jsonl"
    return root / f"{local:%Y}" / f"{local:%m}" / f"{local:%d}" / name


def resume_command(thread: str) -> str:
    return f"codex resume {thread}"
