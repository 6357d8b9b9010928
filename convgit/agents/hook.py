"""The lean entry of an agent's hooks: ``convgit hook AGENT`` reads one event on stdin and
records it in the session that mirrors the agent's (``convgit.agents.live.turns``).

It never stands in the agent's way: it exits 0 whatever happens, writes on stdout only the JSON
of a ``systemMessage`` naming hook events that failed (``convgit.agents.hook_failures``: shown to
the user by the agent, never sent to the model), waits at most ``LOCK_WAIT`` for a lock and gives
up after ``DEADLINE``, well inside the agent's timeout. An agent that shows a hook's stderr
instead (its ``live`` part's ``TELLS = "stderr"``: GitHub Copilot CLI, which warns the user
of a hook that exits 2 and goes on) is told there, with exit status 2. An agent whose payload
does not name its event gets it on the command line (``convgit hook copilot agentStop``). One
line per event, and every problem with its traceback, go to the hook log of the store
(``logs/hooks.log``, which ``convgit hooks status`` names); a problem left an event
unrecorded, and the next event of that agent session catches up on the transcript before
anything else (``behind``), which settles the failure once the turns it concerned are
recorded. The path imports neither typer nor rich nor pydantic.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

    from convgit.store.location import StoreLocation

DEADLINE = 20.0  # seconds; the agent's own timeout for these hooks is 30
LOCK_WAIT = 2.0  # seconds a hook waits for a lock another convgit process holds
MAX_EVENT = 16 << 20  # bytes of stdin read at most
LOG_LIMIT = 1 << 20  # bytes after which the log moves to hooks.log.1


class LateError(Exception):
    """The hook ran past its deadline."""


def log_path(root: Path) -> Path:
    """The hook log of the store at ``root``."""
    return root / "logs" / "hooks.log"


@dataclass(frozen=True)
class LogReport:
    """What the hook log says: events logged, problems among them, the last of each, and
    ``timing``: each event's whole time (from its process's start) through the recorder and
    without it."""

    events: int
    problems: int
    last: str | None
    last_problem: str | None
    timing: dict[str, dict[str, int | None]]

    def to_json(self) -> dict[str, Any]:
        return {
            "events": self.events,
            "problems": self.problems,
            "last": self.last,
            "last_problem": self.last_problem,
            "timing": self.timing,
        }


TIMED = 100  # the newest events whose times ``read_log`` sums up
_WHOLE = re.compile(r" \((\d+) ms since the hook started\): ")


def read_log(path: Path) -> LogReport:
    """The hook log at ``path`` summed up (nothing when there is none)."""
    try:
        text = path.read_text(errors="replace")
    except OSError:
        text = ""
    events = [line for line in text.splitlines() if line[:1].isdigit()]
    problems = [line for line in events if ": problem after " in line]
    times: dict[str, list[int]] = {"recorder": [], "hook": []}
    for line in events[-TIMED:]:
        found = _WHOLE.search(line)
        if found is not None and ": ok in " in line:
            way = "recorder" if " through the recorder (" in line else "hook"
            times[way].append(int(found.group(1)))
    timing = {
        way: {"events": len(found), "median_ms": _median(found)} for way, found in times.items()
    }
    return LogReport(
        len(events),
        len(problems),
        events[-1] if events else None,
        problems[-1] if problems else None,
        timing,
    )


def _median(values: list[int]) -> int | None:
    if not values:
        return None
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) // 2


def run(args: list[str], store_dir: Path | None = None, raw: bytes | None = None) -> int:
    """``convgit hook AGENT [EVENT]``: handle the event on stdin (``raw``: read already, by the
    thin client of a recorder that could not take it); 0 (2 after telling a failure on stderr,
    for an agent that reads it there). ``store_dir``: the store (``--store``), else the one of
    the event's folder (``CONVGIT_STORE`` honoured; outside git, the per-user store of the
    folder, made at its first prompt). ``EVENT``: the agent's name for the event, for an agent
    whose payload does not say it."""
    started = time.monotonic()
    began = time.time()
    # A Stop snapshots on a thread that mostly waits for git while this one reads the session:
    # it gets the interpreter back within half a millisecond of git's answer, not five.
    sys.setswitchinterval(0.0005)
    if os.environ.get("CONVGIT_HOOK_PROBE"):  # `convgit hooks status` asks which convgit runs
        sys.stdout.write(f"convgit {Path(__file__).parent}\n")
        return 0
    stdout = _silence_stdout()
    try:
        _deadline(DEADLINE)
        if raw is None:
            raw = sys.stdin.buffer.read(MAX_EVENT + 1)
        told = handle(
            args, raw, store_dir, began=began, started=started, speaks=stdout is not None,
            since=_since_start(began),
        )  # fmt: skip
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    channel = 2 if told.stderr else stdout
    if told.text and channel is not None:
        with contextlib.suppress(OSError):
            os.write(channel, told.text)
    return 2 if told.text and told.stderr else 0


class Declined(Exception):
    """A recorder does not take this event (another working tree's): the hook takes it."""


@dataclass(frozen=True)
class Told:
    """What a hook says to its agent after an event: ``text`` on stdout (a ``systemMessage``),
    or on stderr with exit status 2 (``stderr``: an agent whose ``TELLS`` is "stderr")."""

    text: bytes = b""
    stderr: bool = False


def handle(
    args: list[str],
    raw: bytes,
    store_dir: Path | None,
    *,
    began: float,
    started: float,
    speaks: bool,
    since: float | None = None,
    accept: Callable[[StoreLocation], None] | None = None,
    how: str = "",
) -> Told:
    """Record the event ``raw`` of ``args`` (AGENT [EVENT]; run in the event's folder), log it,
    and return what the agent should be told (``speaks``: the hook's stdout is open for a
    ``systemMessage``). ``began`` (wall clock) and ``started`` (monotonic): when the hook
    started; ``since``: when its process started, when known. ``accept`` may decline the
    event's store (``Declined``, before anything is done); ``how`` is said in the log's line
    (the recorder's "through the recorder")."""
    agent = args[0] if args else ""
    named = args[1] if len(args) > 1 else None
    root: Path | None = None
    tells = "stdout"
    what = f"{agent or '(no agent)'} (unread event)"
    name = ""
    speaks_now = False
    session: str | None = None
    until: float | None = None
    try:
        from convgit.agents import registry
        from convgit.base import codec, locks
        from convgit.store.location import locate

        locks.cap_waits(LOCK_WAIT)
        root = locate(os.getcwd(), store_dir, per_user=True).root
        integration = registry.integration(agent)
        tells = integration.TELLS
        if len(raw) > MAX_EVENT:
            raise ValueError(f"the event is over {MAX_EVENT >> 20} MiB")
        try:
            payload: Any = codec.decode(raw)
        except ValueError:
            raise ValueError("the event on stdin is not JSON") from None
        event = integration.event(payload, named)
        name = event.called
        what = f"{agent} {name} {event.session_id}"
        session = event.session_id
        location = locate(event.cwd or os.getcwd(), store_dir, per_user=True)
        if accept is not None:
            accept(location)
        root = location.root
        # a systemMessage needs the hook's stdout; stderr is always there
        speaks_now = name in integration.SPEAKS and (speaks or tells == "stderr")
        if location.git is None and name not in integration.OPENS and not root.is_dir():
            root = None  # outside git, a folder that never had a turn gets nothing
            return Told()
        from convgit.agents import hook_failures
        from convgit.agents.live import turns

        hook_failures.take_not_run(root)
        behind = hook_failures.behind(root, agent, event.session_id)
        done = turns.record(location, event, behind=behind)
        until = done.until
        _log(root, f"{what}: ok in {_ms(started)}{how}{_whole(since)}: {done.text}")
        if accept is None:  # the hook's own event: a recorder for the next, when one is wanted
            _start_recorder(location)
        if done.unrecorded:
            log = log_path(root)
            unrecorded = list(done.unrecorded)
            hook_failures.unrecorded(
                root, agent, event.session_id, done.session, unrecorded, log, name
            )
    except Declined:
        raise
    except BaseException as exc:  # the agent must go on, whatever went wrong here
        import traceback

        from convgit.store import load

        load.forget_sessions()  # a recorder reads them whole again: a write may be half done

        problem = _problem(exc)
        _log(root, f"{what}: problem after {_ms(started)}{how}: {problem}", traceback.format_exc())
        if root is not None:
            from convgit.agents import hook_failures

            event_name = name or "(unread event)"
            log = log_path(root)
            hook_failures.failed(root, agent, event_name, problem, log, session=session, at=began)
    if root is None:
        return Told()
    return _tell(root, agent, session, until, speaks_now, tells)


def _start_recorder(location: StoreLocation) -> None:
    """Start the recorder of this working tree in the background when it is wanted
    (``config.recorder_choice``: ``[hooks] recorder``, on by default where watchman is on
    PATH, or ``CONVGIT_RECORDER=on``) and none answered this hook."""
    from convgit.agents.live import client
    from convgit.base.errors import UsageError
    from convgit.store.config import recorder

    try:
        wanted = recorder(location)
    except UsageError as exc:  # CONVGIT_RECORDER of a value it does not take: said, none started
        _log(location.root, f"no recorder started: {exc.message}")
        return
    if os.environ.get("CONVGIT_FAULT") or not wanted:
        return
    found = client.place(os.getcwd())
    if found is None:
        return
    connected = client.connect(os.path.join(found[0], found[1] + b".sock"))
    if connected is not None:  # one runs (busy, or it fell back): no other
        connected[0].close()
        return
    client.spawn(*found)


def _tell(
    root: Path, agent: str, session: str | None, until: float | None, speaks: bool, tells: str
) -> Told:
    """Settle the failures of the event's agent session its recording caught up (``until``:
    those that started before then); what tells those not told yet, when this event can speak:
    through the agent's ``systemMessage`` (JSON on stdout, which a synchronous hook's agent
    shows the user and never sends to the model), or on stderr (``tells``)."""
    try:
        from convgit.agents import hook_failures

        stderr = tells == "stderr"
        untold = hook_failures.settle(root, agent, session, until, speaks)
        if untold and speaks:
            words = hook_failures.message(untold)
            text = words if stderr else json.dumps({"systemMessage": words})
            return Told((text + "\n").encode(), stderr)
    except Exception:
        pass
    return Told()


def _since_start(began: float) -> float | None:
    """When this process started (wall clock), as Linux tells it; None when it does not."""
    from convgit.agents.live.client import started_ns

    found = started_ns() / 1e9
    return found if 0 < found <= began else None


def _whole(since: float | None) -> str:
    """The hook's whole time, from its process's start, for the log's line."""
    if since is None:
        return ""
    return f" ({(time.time() - since) * 1000:.0f} ms since the hook started)"


def _silence_stdout() -> int | None:
    """Nothing, not even a child process, can write to the agent's stdout from here on; the
    agent's stdout is returned (a descriptor of its own), for the message ``_tell`` writes."""
    saved = None
    try:
        saved = os.dup(1)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.close(devnull)
    except OSError:
        pass
    return saved


def _deadline(seconds: float) -> None:
    def late(signum: int, frame: FrameType | None) -> None:
        raise LateError(f"the hook ran past its {seconds:.0f} s deadline")

    signal.signal(signal.SIGALRM, late)
    signal.setitimer(signal.ITIMER_REAL, seconds)


def _problem(exc: BaseException) -> str:
    message = getattr(exc, "message", None)  # a ConvgitError's sentence
    if isinstance(message, str):
        return message
    if isinstance(exc, OSError) and exc.filename and exc.strerror:
        return f"{exc.strerror}: {exc.filename}"
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def _ms(started: float) -> str:
    return f"{(time.monotonic() - started) * 1000:.0f} ms"


def _log(root: Path | None, line: str, details: str = "") -> None:
    """Append to the hook log (stderr when there is no store to log to)."""
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    text = f"{stamp} {line}\n"
    if details:
        text += "".join(f"  {row}\n" for row in details.rstrip().splitlines())
    if root is not None:
        path = log_path(root)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            if path.exists() and path.stat().st_size > LOG_LIMIT:
                os.replace(path, path.with_name(path.name + ".1"))
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(fd, text.encode("utf-8", "replace"))
            finally:
                os.close(fd)
            return
        except OSError:
            pass
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.write(text)
