"""Hook events that failed, kept where the user looks: ``convgit status`` and ``convgit hooks
status`` name them until a later event succeeds, and the next event the agent lets speak tells
the user once (``message``, which ``convgit.agents.hook`` hands the agent as its ``systemMessage``).

They are kept in the store (``logs/hook-failures.json``); when the store cannot be written (the
failure may be just that), in the per-user folder, under the store's key. A failure is
``told`` once a message named it, and ``resolved`` once a later event succeeded (kept only
until it is told). Standard library only: every hook event reads this.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path
from typing import Any

NAME = "hook-failures.json"
KEPT = 20  # failures kept at most (the oldest go first)


def places(root: Path) -> list[Path]:
    """Where the failures of the store at ``root`` are kept: in it, else per user."""
    from convgit.store import userstore

    per_user = userstore.data_dir() / "hook-failures" / f"{userstore.key(root)}.json"
    return [root / "logs" / NAME, per_user]


def _read(path: Path) -> list[dict[str, Any]]:
    try:
        value = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return []
    if not isinstance(value, list):
        return []
    return [f for f in value if isinstance(f, dict)]


def _write(path: Path, failures: list[dict[str, Any]]) -> None:
    if not failures:
        path.unlink(missing_ok=True)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(failures[-KEPT:], indent=1) + "\n")
    os.replace(tmp, path)


def failed(root: Path, agent: str, event: str, problem: str, log: Path) -> None:
    """Keep the failure of ``event`` (never raises: the hook must go on)."""
    failure = {
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "agent": agent,
        "event": event,
        "problem": problem,
        "log": str(log),
        "told": False,
        "resolved": False,
    }
    for path in places(root):
        with contextlib.suppress(OSError):
            _write(path, [*_read(path), failure])
            return


def current(root: Path) -> list[dict[str, Any]]:
    """The failures no later event has resolved, oldest first: when, agent, event, problem, log."""
    found = [f for path in places(root) for f in _read(path) if not f.get("resolved")]
    found.sort(key=lambda f: str(f.get("when")))
    return [{k: f.get(k) for k in ("when", "agent", "event", "problem", "log")} for f in found]


def settle(root: Path, succeeded: bool, speaks: bool) -> list[dict[str, Any]]:
    """After an event: a success resolves every failure; when the event ``speaks``, the
    failures not told yet are returned (to tell now) and marked told. What is resolved and
    told is dropped. Only a stat of each place when there is nothing kept (the common case)."""
    untold: list[dict[str, Any]] = []
    for path in places(root):
        if not path.exists():
            continue
        kept = []
        for failure in _read(path):
            if speaks and not failure.get("told"):
                untold.append(dict(failure))
                failure["told"] = True
            if succeeded:
                failure["resolved"] = True
            if not (failure.get("told") and failure.get("resolved")):
                kept.append(failure)
        with contextlib.suppress(OSError):
            _write(path, kept)
    untold.sort(key=lambda f: str(f.get("when")))
    return untold


def message(untold: list[dict[str, Any]], succeeded: bool) -> str:
    """What the agent shows the user about ``untold`` failures, in a sentence or two."""
    last = untold[-1]
    when = str(last.get("when", ""))[11:16]
    event, problem = last.get("event"), last.get("problem")
    what = f"convgit's hook at {event} failed at {when} UTC: {problem}"
    if len(untold) > 1:
        what = f"{len(untold)} convgit hook events failed, the last at {event} at {when} UTC"
        what += f": {problem}"
    what = what.rstrip(".") + "."
    after = (
        " A later event succeeded and caught up."
        if succeeded
        else " That turn may be missing from convgit until an event succeeds."
    )
    return f"{what}{after} Details: {last.get('log')} (`convgit hooks status`)."
