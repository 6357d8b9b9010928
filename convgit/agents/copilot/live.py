"""GitHub Copilot CLI, live: its hook events as the events ``convgit.agents.live`` records, the
hooks file convgit's handlers go in, and which are installed.

Copilot CLI reads hooks from ``.github/hooks/*.json`` in the project (once the folder is
trusted) and from ``$COPILOT_HOME/hooks/*.json`` (``~/.copilot``): ``{"hooks": {EVENT: [...]}}``,
in Claude Code's shape (``convgit.agents.hooks`` merges the handlers in), ``timeout`` in seconds.
Its own events (camelCase) hand the hook ``sessionId``, ``cwd`` and ``timestamp`` and no name of
the event, so each handler names its event on the command line (``convgit hook copilot
agentStop``); ``transcriptPath`` comes at ``agentStop`` only, and the events file is found from
the session id elsewhere (``$COPILOT_HOME/session-state/<id>/events.jsonl``).

What each does:
* ``userPromptSubmitted`` (before the CLI writes the prompt): the files the user changed since
  the last turn are snapshotted for the prompt; a turn left open (killed) is imported and
  closed first; the turn is open. The prompt's ``timestamp`` stands for its id;
* ``postToolUse`` of the tools that write files by name (``create``, ``edit``, and
  ``apply_patch``, whose patch names them): those files are kept in the snapshots even when
  git ignores them (unless ``[snapshots] agent_ignored = false``); every tool, ``bash``
  included, with a snapshot per call, with ``[hooks] tool_snapshots = true``;
* ``agentStop``: the events file imported once it holds the turn's end (the CLI writes the
  file behind its hooks: the hook waits, at most ``BEHIND`` seconds, until the file holds this
  hook's own start after the turn's prompt), the files snapshotted as the snapshot of the
  turn's last reply; the turn closed;
* ``sessionStart``, ``sessionEnd``, ``subagentStop``, ``errorOccurred``: what the file gained
  is imported.

The hook tells the user of a failure the CLI's way: its text on stderr and exit status 2, which
the CLI shows as a warning (``! ...``, and a ``session.warning`` in the file) and never sends to
the model (``TELLS``).
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from convgit.agents import hook_command
from convgit.agents.codex.live import patched
from convgit.agents.copilot import NAME, TITLE
from convgit.agents.live.events import Event, usable_id

AGENT = NAME
TIMEOUT = 30  # seconds, the CLI's unit; the handler gives up well before (agents.hook)
FILE_TOOLS = ("create", "edit")  # tools whose ``path`` names the file they wrote
PATCH = "apply_patch"  # the GPT models' file tool: its patch names the files
SHELL = "bash"
# The events convgit installs, and why each one: every event is a process the CLI starts and
# waits for, so only those that record what no other can. event -> matcher (None: every one);
# a matcher is a regular expression the tool's whole name must match.
EVENTS: dict[str, str | None] = {
    # opens the turn: the files the user changed since the last turn are snapshotted for the
    # prompt; a turn left open (the CLI was killed) is closed first
    "userPromptSubmitted": None,
    # the files the file tools wrote (for the files git ignores)
    "postToolUse": "|".join((*FILE_TOOLS, PATCH)),
    # closes the turn: the events file imported, the files snapshotted as the last reply's
    "agentStop": None,
}
TOOL_SNAPSHOT_EVENTS: dict[str, str | None] = {"postToolUse": "|".join((*FILE_TOOLS, PATCH, SHELL))}
# Handled when delivered, not installed, and why:
# * sessionStart: the first prompt attaches the session and snapshots the files;
# * sessionEnd: in print mode it comes right after agentStop, which imported the turn; what the
#   CLI writes after it (its shutdown summary) the next event imports;
# * subagentStop: a subagent's events are in the session's own file, imported at agentStop;
# * errorOccurred: a failed request; the next prompt closes the turn it left open.
ALL_EVENTS = (
    "sessionStart",
    "userPromptSubmitted",
    "postToolUse",
    "subagentStop",
    "agentStop",
    "errorOccurred",
    "sessionEnd",
)
# the CLI's event -> the event convgit.agents.live records
NAMES = {
    "sessionStart": "SessionStart",
    "userPromptSubmitted": "UserPromptSubmit",
    "postToolUse": "PostToolUse",
    "agentStop": "Stop",
    "subagentStop": "SubagentStop",
    "errorOccurred": "ErrorOccurred",
    "sessionEnd": "SessionEnd",
}
# the events whose hook may tell the user (the CLI shows a warning for each of them)
SPEAKS = frozenset({"sessionStart", "userPromptSubmitted", "postToolUse", "agentStop"})
OPENS = frozenset({"userPromptSubmitted"})
# how the hook tells the user of failures: on stderr, with exit status 2 (``agents.hook``)
TELLS = "stderr"
DEFAULT_SCOPE = "project"
COMMITTED_SCOPES: frozenset[str] = frozenset()
OWN_KEYS: frozenset[str] = frozenset()
transcript = None  # the events file is a file of its own
SCOPES = {
    "project": ".github/hooks/convgit.json (this project, once the CLI trusts its folder)",
    "user": "~/.copilot/hooks/convgit.json (every project, only you; $COPILOT_HOME honoured)",
}


def copilot_home(env: Mapping[str, str] = os.environ) -> Path:
    """The CLI's own folder: ``$COPILOT_HOME``, else ``~/.copilot``."""
    chosen = env.get("COPILOT_HOME")
    return Path(chosen).expanduser() if chosen else Path("~/.copilot").expanduser()


def settings_file(scope: str, project: Path, env: Mapping[str, str] = os.environ) -> Path:
    """The hooks file of ``scope`` (a key of SCOPES) for the project at ``project``."""
    if scope == "user":
        return copilot_home(env) / "hooks" / "convgit.json"
    return project / ".github" / "hooks" / "convgit.json"


def events_file(session: str, env: Mapping[str, str] = os.environ) -> Path:
    """Where the CLI keeps session ``session``'s events."""
    return copilot_home(env) / "session-state" / session / "events.jsonl"


def handler(event: str, program: str | None = None) -> dict[str, Any]:
    """The handler convgit installs for ``event`` (``program``: the convgit to run): its command
    names the event, which the CLI's payload does not."""
    made = hook_command.handler(AGENT, program, TIMEOUT)
    made["command"] = _with_event(str(made["command"]), event)
    return made


def _with_event(command: str, event: str) -> str:
    """``command`` (``hook_command.command``) running ``hook copilot EVENT``."""
    run = f" hook {AGENT}"
    return command.replace(run, f"{run} {event}")


def events(tool_snapshots: bool = False) -> dict[str, str | None]:
    """The events to install, with their matchers."""
    return hook_command.events(EVENTS, TOOL_SNAPSHOT_EVENTS, tool_snapshots)


def wanted(
    program: str | None = None, tool_snapshots: bool = False
) -> dict[str, tuple[str | None, dict[str, Any]]]:
    return {
        event: (matcher, handler(event, program))
        for event, matcher in events(tool_snapshots).items()
    }


def is_ours(found: Any) -> bool:
    """A handler convgit installed, whichever convgit path it names (``hook_command``)."""
    return hook_command.is_handler(found, AGENT)


# -- events -------------------------------------------------------------------------------------


def event(payload: Any, name: str | None = None) -> Event:
    """The event a hook was given, ``name`` being the CLI's name for it (from the handler's
    command); ValueError, in one sentence, for one convgit cannot use."""
    if name not in NAMES:
        known = ", ".join(NAMES)
        raise ValueError(f"the hook names no {TITLE} event convgit knows ({name!r}: {known})")
    if not isinstance(payload, dict):
        raise ValueError("the event is not a JSON object")
    session = usable_id(payload.get("sessionId"))
    if session is None:
        raise ValueError(f"the {name} event has no usable sessionId")

    def text(key: str) -> str | None:
        value = payload.get(key)
        return value if isinstance(value, str) and value and "\0" not in value else None

    transcript = text("transcriptPath")
    if transcript is not None and not Path(transcript).is_absolute():
        raise ValueError(f"the {name} event's transcriptPath is not absolute")
    stamp = payload.get("timestamp")
    if name == "agentStop" and isinstance(stamp, int):
        caught_up(Path(transcript) if transcript else events_file(session), stamp)
    cwd = text("cwd")
    tool = text("toolName")
    return Event(
        name=NAMES[name],
        session_id=session,
        transcript=Path(transcript) if transcript else events_file(session),
        cwd=Path(cwd) if cwd is not None and Path(cwd).is_absolute() else None,
        agent=AGENT,
        source=text("source"),
        prompt_id=str(stamp) if name == "userPromptSubmitted" and stamp is not None else None,
        tool_name=tool,
        edited=_written(tool, payload.get("toolArgs")),
        said=name,
    )


BEHIND = 5.0  # seconds: how long an agentStop hook waits for the CLI to write the turn's end
_STOP_STARTED = b'"hookType":"agentStop"'


def caught_up(events: Path, stamp: int, wait: float = BEHIND) -> bool:
    """Whether the events file holds the turn an ``agentStop`` hook is called for, waiting up to
    ``wait`` seconds for it: the CLI logs the turn's replies, then this hook's start (its input
    with the event's ``timestamp``), and writes the file behind; that line in the file says the
    turn is all in. Past the wait (an older CLI that logs no hook starts, a file that is gone)
    the hook goes on with what the file holds, and the next event catches up the rest."""
    ours = b'"timestamp":%d,' % stamp
    deadline = time.monotonic() + wait
    while True:
        try:
            data = events.read_bytes()
        except OSError:
            data = b""
        if any(ours in line for line in data.splitlines() if _STOP_STARTED in line):
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.02)


def _written(tool: str | None, arguments: Any) -> tuple[str, ...]:
    """The files a file tool wrote, as named."""
    if tool in FILE_TOOLS and isinstance(arguments, dict):
        path = arguments.get("path")
        return (path,) if isinstance(path, str) and path else ()
    if tool == PATCH and isinstance(arguments, str):
        return patched(arguments)
    return ()


def carries_prompt(native_text: str, prompt_id: str) -> bool:
    """The CLI's events do not carry the hook's timestamp: the turn's prompt is the nearest."""
    return True


def is_prompt(record: dict[str, Any]) -> bool:
    """Whether a user message is one the user typed, not one the CLI put in (an autopilot
    continuation, a skill's hidden text: a ``source``)."""
    from convgit.base import codec

    native = record.get("native")
    text = native.get("text") if isinstance(native, dict) else None
    try:
        value = codec.decode(text) if isinstance(text, str) else None
    except ValueError:
        return True
    data = value.get("data") if isinstance(value, dict) else None
    if not isinstance(data, dict):
        return True
    return not data.get("isAutopilotContinuation") and not data.get("source")
