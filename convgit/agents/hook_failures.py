"""What the user must know of convgit's record of an agent's turns, kept where the user looks:
``convgit status`` and ``convgit hooks status`` name it, and the next hook event the agent lets
speak tells the user once (``message``, which ``convgit.agents.hook`` hands the agent as its
``systemMessage``). Three kinds:

* ``failed``: a hook event failed (a lock held past the hook's wait, a store that cannot be
  written, any exception);
* ``not run``: a hook event ran no convgit at all: the command the agent runs found neither the
  convgit that installed it nor one on the PATH, and appended the event to ``hooks-not-run`` in
  the store (``convgit.agents.hook_command``), which the next convgit command reads in
  (``take_not_run``);
* ``unrecorded``: replies that ended turns no event recorded the end of, found when a later
  event imported them, and that no snapshot can be taken for any more (the files have moved
  on): ``entries`` names them.

A failed or not-run event is settled only when the turns it concerned are recorded: a later
event of the same agent session succeeded, imported the transcript and left open no turn that
began before the failure (``settle``, with the time the recorder answers). One whose agent
session is unknown (an event that could not be read), and the ``unrecorded`` kind, are settled
by the user alone (``dismiss``: ``convgit hooks dismiss``). What is settled and told is dropped.

They are kept in the store (``logs/hook-failures.json``, written under a lock beside it); when the
store cannot be written (the failure may be just that), in the per-user folder, under the store's
key. Standard library only: every hook event reads this.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

NAME = "hook-failures.json"
NOT_RUN = "hooks-not-run"  # in the store's folder: what a hook's command appends when it ran none
KEPT = 50  # kept at most (the oldest go first)
LOCK_WAIT = 2.0  # seconds

FAILED = "failed"
NOT_RAN = "not run"
UNRECORDED = "unrecorded"

PUBLIC = ("when", "agent", "agent_session_id", "kind", "event", "problem", "log", "entries")


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
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(failures[-KEPT:], indent=1) + "\n")
    os.replace(tmp, path)


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """The lock beside ``path``: one process at a time reads and writes it. OSError when the
    folder cannot take it (the caller tries the next place)."""
    from convgit.base import locks

    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        with locks.held(path.with_name(path.name + ".lock"), LOCK_WAIT):
            yield
    except locks.LockTimeout:
        raise OSError(f"{path} stayed locked") from None


def _update(path: Path, change: Callable[[list[dict[str, Any]]], list[dict[str, Any]]]) -> None:
    with _locked(path):
        _write(path, change(_read(path)))


def _add(root: Path, failure: dict[str, Any]) -> None:
    for path in places(root):
        with contextlib.suppress(OSError):
            _update(path, lambda found: [*found, failure])
            return


def _stamp(at: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(at))


def failed(
    root: Path,
    agent: str,
    event: str,
    problem: str,
    log: Path,
    *,
    session: str | None = None,
    at: float | None = None,
    kind: str = FAILED,
    entries: Iterable[str] = (),
) -> dict[str, Any]:
    """Keep what went wrong at ``event`` of ``agent``'s session ``session`` (None: unknown),
    which started at ``at`` (default: now); what is kept, as ``current`` shows it. Never
    raises: the hook must go on."""
    at = time.time() if at is None else at
    failure = {
        "when": _stamp(at),
        "at": at,
        "agent": agent,
        "agent_session_id": session,
        "kind": kind,
        "event": event,
        "problem": problem,
        "log": str(log),
        "entries": list(entries),
        "told": False,
        "resolved": False,
    }
    _add(root, failure)
    return _public(failure)


def unrecorded(
    root: Path,
    agent: str,
    session: str,
    sid: str | None,
    entries: list[str],
    log: Path,
    event: str,
) -> None:
    """Keep the replies ``entries`` (of convgit session ``sid``), which ended turns whose end no
    event recorded, found by ``event``: they have no snapshot, until the user dismisses them."""
    one = len(entries) == 1
    where = f" of session {sid}" if sid else ""
    replies = f"the reply {entries[0]}" if one else f"the replies {', '.join(entries)}"
    problem = (
        f"{replies}{where} ended {'a turn' if one else 'turns'} whose end no event recorded, and"
        f" the files have moved on since: {'it has' if one else 'they have'} no snapshot"
    )
    failed(root, agent, event, problem, log, session=session, kind=UNRECORDED, entries=entries)


def take_not_run(root: Path) -> list[dict[str, Any]]:
    """Read in the events a hook's command appended to ``hooks-not-run`` when it found no
    convgit to run (the file goes), each kept as a ``not run`` failure; those kept, as
    ``current`` shows them. A stat when there are none."""
    path = root / NOT_RUN
    if not path.exists():
        return []
    taken = path.with_name(f".{NOT_RUN}.{os.getpid()}")
    try:
        os.replace(path, taken)  # what a hook appends from now on starts a new file
        data = taken.read_bytes()
    except OSError:
        return []
    log = root / "logs" / "hooks.log"
    kept = [
        _kept_not_run(root, agent, at, payload, log)
        for agent, at, payload in _not_run_events(data.decode("utf-8", "replace"))
    ]
    with contextlib.suppress(OSError):
        taken.unlink()
    return kept


def _not_run_events(text: str) -> Iterator[tuple[str, float, Any]]:
    """(agent, when, the event as given) for each ``AGENT WHEN`` line and the event below it."""
    decoder = json.JSONDecoder()
    at = 0
    while at < len(text):
        end = text.find("\n", at)
        if end < 0:
            return
        head = text[at:end].split()
        at = end + 1
        if len(head) != 2:
            continue
        agent, stamp = head
        try:
            when = _seconds(stamp)
        except ValueError:
            when = time.time()
        while at < len(text) and text[at] in " \t\r\n":
            at += 1
        try:
            payload, at = decoder.raw_decode(text, at)
        except ValueError:
            payload = None
            nxt = text.find("\n", at)
            at = len(text) if nxt < 0 else nxt + 1
        yield agent, when, payload


def _kept_not_run(root: Path, agent: str, at: float, payload: Any, log: Path) -> dict[str, Any]:
    event = session = said = None
    if isinstance(payload, dict):
        event = payload.get("hook_event_name") or payload.get("event")
        session = payload.get("session_id")
        said = payload.get("prompt") or payload.get("last_assistant_message")
    what = (
        "the hook's command found no convgit to run (neither the one that installed it nor one"
        " on the PATH)"
    )
    if isinstance(said, str) and said.strip():
        short = " ".join(said.split())
        short = short if len(short) <= 60 else short[:59] + "…"
        what += f"; it was at {json.dumps(short, ensure_ascii=False)}"
    return failed(
        root,
        agent,
        event if isinstance(event, str) and event else "(unread event)",
        what,
        log,
        session=session if isinstance(session, str) and session else None,
        at=at,
        kind=NOT_RAN,
    )


def behind(root: Path, agent: str, session: str) -> bool:
    """Whether an event of ``agent``'s session ``session`` failed or ran no convgit, and is
    not settled: the next event catches up on the transcript before anything else. A stat of
    each place when nothing is kept (the common case)."""
    for path in places(root):
        if not path.exists():
            continue
        for f in _read(path):
            if _settles(f, agent, session) and not f.get("resolved"):
                return True
    return False


def _settles(failure: dict[str, Any], agent: str, session: str) -> bool:
    """Whether a later success of ``agent``'s session ``session`` can settle ``failure`` (one
    an older version kept, which names no agent session, is settled by any of that agent's)."""
    if failure.get("kind", FAILED) not in (FAILED, NOT_RAN) or failure.get("agent") != agent:
        return False
    return bool(failure.get("agent_session_id", session) == session)


def settle(
    root: Path, agent: str, session: str | None, until: float | None, speaks: bool
) -> list[dict[str, Any]]:
    """After an event of ``agent``'s session ``session``: the failures of that session that
    started before ``until`` (the recorder's answer: None, nothing is caught up) are settled;
    when the event ``speaks``, the failures not told yet are returned (to tell now, with
    ``resolved``) and marked told. What is settled and told is dropped."""
    untold: list[dict[str, Any]] = []

    def change(found: list[dict[str, Any]]) -> list[dict[str, Any]]:
        kept = []
        for failure in found:
            if (
                until is not None
                and session is not None
                and _settles(failure, agent, session)
                and _at(failure) < until
            ):
                failure["resolved"] = True
            if speaks and not failure.get("told"):
                untold.append(dict(failure))
                failure["told"] = True
            if not (failure.get("told") and failure.get("resolved")):
                kept.append(failure)
        return kept

    for path in places(root):
        if path.exists():
            with contextlib.suppress(OSError):
                _update(path, change)
    untold.sort(key=_at)
    return untold


def dismiss(root: Path) -> list[dict[str, Any]]:
    """The user has seen them: every failure not settled is settled and dropped. Those it
    dismissed, as ``current`` gives them."""
    dismissed = current(root)

    def change(found: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return []

    for path in places(root):
        if path.exists():
            with contextlib.suppress(OSError):
                _update(path, change)
    return dismissed


def current(root: Path) -> list[dict[str, Any]]:
    """What is not settled yet, oldest first: ``PUBLIC``'s fields."""
    found = [f for path in places(root) for f in _read(path) if not f.get("resolved")]
    found.sort(key=_at)
    return [_public(failure) for failure in found]


def _public(failure: dict[str, Any]) -> dict[str, Any]:
    item = {key: failure.get(key) for key in PUBLIC}
    item["kind"] = item["kind"] or FAILED
    item["entries"] = item["entries"] or []
    return item


def _at(failure: dict[str, Any]) -> float:
    at = failure.get("at")
    if isinstance(at, int | float):
        return float(at)
    try:  # kept by an older version: to the second
        return _seconds(str(failure.get("when")))
    except ValueError:
        return 0.0


def message(untold: list[dict[str, Any]]) -> str:
    """What the agent shows the user about ``untold`` failures, in a sentence or two."""
    last = untold[-1]
    when = str(last.get("when", ""))[11:16]
    event, problem = last.get("event"), str(last.get("problem"))
    if last.get("kind") == UNRECORDED:
        what = f"convgit: {problem}"
    elif len(untold) > 1:
        what = f"{len(untold)} convgit hook events failed, the last at {event} at {when} UTC"
        what += f": {problem}"
    elif last.get("kind") == NOT_RAN:
        what = f"convgit's hook at {event} ran no convgit at {when} UTC: {problem}"
    else:
        what = f"convgit's hook at {event} failed at {when} UTC: {problem}"
    what = what.rstrip(".") + "."
    if last.get("kind") == UNRECORDED:
        after = " `convgit hooks dismiss` once you have seen it."
    elif last.get("agent_session_id", "") is None:
        after = (
            " No turn can be told from it: `convgit status` names it until `convgit hooks dismiss`."
        )
    elif all(f.get("resolved") for f in untold):
        after = " A later event succeeded and caught up."
    else:
        after = (
            " That turn is missing from convgit until a later event of this session catches it"
            " up; `convgit status` names it until then."
        )
    return f"{what}{after} Details: {last.get('log')} (`convgit hooks status`)."


def _seconds(stamp: str) -> float:
    """A UTC time written ``2026-12-07T10:00:00Z``, in seconds since the epoch (ValueError if
    it is not one). calendar is imported here: every command that opens a session imports this
    module, and few read a time."""
    import calendar

    return float(calendar.timegm(time.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ")))
