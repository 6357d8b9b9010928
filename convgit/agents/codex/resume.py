"""Codex, handed a convgit path: a new rollout, in Codex's sessions layout, that ``codex resume
ID`` continues. It holds the lines of the rollout the path was imported from, each at the line it
had there (so the entries made from them are found again by a later import), up to the path's
last record, under the original ``session_meta`` with the new thread id: the same model
provider, without which Codex refuses to resume."""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from convgit.agents.codex import NAME, TITLE
from convgit.agents.codex.reading import line_of
from convgit.agents.protocol import Written
from convgit.agents.reading import kept_text
from convgit.agents.resume import imported, kept_line, refuse_tool_run
from convgit.base import codec
from convgit.base.errors import NotFoundError, RefusedError

if TYPE_CHECKING:
    from convgit.session import Session

AGENT = NAME
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


def line_uuids(data: bytes) -> list[tuple[str, str | None]]:
    """A rollout copies no other's records under ids of its own (a fork names its parent, a
    resume appends): nothing to tell a copy by."""
    return []


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


# -- handing the path back -------------------------------------------------------------------


def hand_back(session: Session, target: str) -> Written:
    """A rollout of the path's own lines (``rollout``) under the session's
    ``session_meta`` naming a new thread, in the sessions folder of the rollout imported."""
    tree = session.conversation.tree
    refuse_tool_run(session, target, TITLE)
    meta = kept_line(session, "session")
    if meta is None:
        raise NotFoundError(
            f"Session {session.id} keeps no session_meta of a Codex rollout, so convgit cannot"
            " write one Codex would resume."
        )
    new = str(uuid.uuid4())
    steps = [Step(1, resume_meta(meta, new), "")]
    step_of: dict[str | None, Step] = {None: steps[0]}
    for ident in tree.path(target):
        record = tree.entries[ident]
        native = record.get("native")
        if not isinstance(native, dict):
            raise RefusedError(
                f"Entry {ident} on the path to {target} was written by convgit, not by Codex,"
                " and a Codex rollout holds only records of Codex's own.",
                "resume above it, or continue in convgit itself",
            )
        if "in" in native:  # a later entry of a record already placed
            step_of[ident] = steps[-1]
            continue
        line, text = line_of(str(native.get("key"))), kept_text(native)
        if line is None or text is None:
            raise RefusedError(
                f"Entry {ident} on the path to {target} was not read from a line of a rollout,"
                " so convgit cannot place it in one."
            )
        steps.append(Step(line, text, str(record.get("ts", ""))))
        step_of[ident] = steps[-1]
    for key, found in tree.kept.items():
        step = step_of.get(found.get("at")) if "at" in found else None
        line = line_of(key)
        text = kept_text(found)
        if step is not None and line is not None and text is not None:
            step.after.append((line, text, str(found.get("ts", ""))))
    try:
        data = rollout(steps)
    except NotWholeError as exc:
        raise RefusedError(
            f"The records of the path to {target} do not make a whole Codex rollout: {exc}."
        ) from None
    root = sessions_root(str(p) for p in imported(session, NAME))
    path = rollout_path(root, new, datetime.now(timezone.utc))
    return Written(new, path, data, resume_command(new))
