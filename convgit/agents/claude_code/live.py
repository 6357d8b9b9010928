"""Claude Code, live: its hook events as values, its settings files, the handler convgit
installs there, and the transcript that hands a convgit path back to it.

What each event does (one command for every event; the event's name comes on stdin), and
which are installed: ``EVENTS`` below, with why. Every event is handled whether installed or not
(an older install, or a user's own handler):
* ``SessionStart``: attach, and keep its ``source`` (resume, fork, compact);
* ``UserPromptSubmit``: attach; the files are snapshotted if they changed since the last
  snapshot (the user's own edits); a turn left open is closed; the turn is open;
* ``PostToolUse`` on the tools that edit files: the file a file tool wrote is listed to be kept
  in the snapshots even when git ignores it (unless ``[snapshots] agent_ignored = false``), and
  a snapshot per tool call, when ``[hooks] tool_snapshots = true`` in config.toml;
* ``Stop``: the new part of the transcript is imported and the files snapshotted as the
  snapshot of the turn's last reply; the turn is closed;
* ``SubagentStop``: the subagent's file is imported (its side branch) and snapshotted;
* ``SessionEnd``: whatever the transcript gained since is imported.
A compaction needs no hook of its own: the transcript's boundary and summary become a
``compaction`` entry at the next import (the next Stop).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from convgit.agents.claude_code import NAME
from convgit.base import codec

AGENT = NAME
TIMEOUT = 30  # seconds, Claude's unit; the handler gives up well before (convgit.agents.hook)
# the tools that write files by name (tool_input.file_path, or notebook_path): a file they
# wrote is kept in the snapshots even when git ignores it (``convgit.git.agent_files``)
FILE_TOOLS = ("Write", "Edit", "MultiEdit", "NotebookEdit")
# The events convgit installs, and why each one: every event is a process Claude starts and
# waits for, so only those that record what no other can. event -> matcher (None: every one).
EVENTS: dict[str, str | None] = {
    # opens the turn: the files the user changed since the last turn are snapshotted for the
    # prompt; a turn left open (interrupted: Claude sends no Stop) is imported and closed first;
    # a new Claude session (or one resumed or forked under a new id) is attached here
    "UserPromptSubmit": None,
    # the paths the agent's file tools wrote or edited (for the files git ignores); per-tool
    # snapshots when turned on. The matcher keeps Claude from starting it for other tools.
    "PostToolUse": "|".join(FILE_TOOLS),
    # closes the turn: the transcript imported, the files snapshotted as the last reply's
    "Stop": None,
    # a subagent's work is a side branch, snapshotted at its end (no other event sees that
    # moment); Claude starts it only when a subagent ends
    "SubagentStop": None,
}
# with ``[hooks] tool_snapshots = true``: a snapshot after every editing tool, Bash included
TOOL_SNAPSHOT_EVENTS: dict[str, str | None] = {"PostToolUse": "|".join((*FILE_TOOLS, "Bash"))}
# Not installed, and why:
# * SessionStart: the first prompt opens the turn and snapshots the files, and the turn's Stop
#   attaches the session (a fork's, or a resume's under a new id, too) from the transcript;
# * SessionEnd: what Claude writes after the last Stop is imported by the next event;
# * PostCompact: Claude writes the compaction to the transcript after the hook ran; the next
#   Stop imports it;
# * ``"async": true`` on any of them: in print mode an async hook is killed when Claude exits,
#   can keep SessionEnd from running, and its message reaches the model.
ALL_EVENTS = (
    "SessionStart",
    "UserPromptSubmit",
    "PostToolUse",
    "Stop",
    "SubagentStop",
    "PostCompact",
    "SessionEnd",
)
# the events whose synchronous hook may speak to the user (a ``systemMessage``): not SessionEnd,
# which Claude runs as it exits
SPEAKS = frozenset(
    {"SessionStart", "UserPromptSubmit", "PostToolUse", "Stop", "SubagentStop", "PostCompact"}
)
# the events that open a turn: outside git, a folder's store is made at the first of them
OPENS = frozenset({"UserPromptSubmit"})
SCOPES = {
    "local": ".claude/settings.local.json (this project, only you)",
    "project": ".claude/settings.json (this project, committed: everyone)",
    "user": "~/.claude/settings.json (every project, only you)",
}
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}")


def handler(program: str | None = None) -> dict[str, Any]:
    """The handler convgit installs for every event (``program``: the convgit to run, default
    the one running now)."""
    from convgit.agents import hook_command

    return {"type": "command", "command": hook_command.command(AGENT, program), "timeout": TIMEOUT}


def events(tool_snapshots: bool = False) -> dict[str, str | None]:
    """The events to install, with their matchers."""
    return {**EVENTS, **TOOL_SNAPSHOT_EVENTS} if tool_snapshots else dict(EVENTS)


def wanted(
    program: str | None = None, tool_snapshots: bool = False
) -> dict[str, tuple[str | None, dict[str, Any]]]:
    made = handler(program)
    return {event: (matcher, made) for event, matcher in events(tool_snapshots).items()}


def is_ours(found: Any) -> bool:
    """A handler convgit installed (this version or another, whichever convgit path it names):
    its command only runs the hook, guarded or not. A command of the user's that runs the hook
    among other things is theirs."""
    from convgit.agents import hook_command

    if not isinstance(found, dict) or found.get("type", "command") != "command":
        return False
    command = found.get("command")
    return isinstance(command, str) and hook_command.is_hook_command(command, AGENT)


def config_dir(env: Mapping[str, str] = os.environ) -> Path:
    """Claude Code's own folder: ``CLAUDE_CONFIG_DIR``, else ``~/.claude``."""
    chosen = env.get("CLAUDE_CONFIG_DIR")
    return Path(chosen).expanduser() if chosen else Path("~/.claude").expanduser()


def settings_file(scope: str, project: Path, env: Mapping[str, str] = os.environ) -> Path:
    """The settings file of ``scope`` (a key of SCOPES) for the project at ``project``."""
    if scope == "user":
        return config_dir(env) / "settings.json"
    name = "settings.local.json" if scope == "local" else "settings.json"
    return project / ".claude" / name


# -- events -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Event:
    """One hook event, the fields convgit uses (every other is ignored)."""

    name: str  # hook_event_name
    session_id: str
    transcript: Path | None
    cwd: Path | None
    source: str | None = None  # SessionStart: startup, resume, clear, compact, fork
    prompt_id: str | None = None
    last_reply: str | None = None  # Stop: last_assistant_message
    tool_name: str | None = None
    tool_use_id: str | None = None
    agent_id: str | None = None  # SubagentStop
    agent_type: str | None = None
    edited: str | None = None  # PostToolUse of a file tool: the file it wrote, as named


def event(payload: Any) -> Event:
    """The event a hook was given; ValueError, in one sentence, for one convgit cannot use."""
    if not isinstance(payload, dict):
        raise ValueError("the event is not a JSON object")
    name = payload.get("hook_event_name")
    if not isinstance(name, str) or not name:
        raise ValueError("the event has no hook_event_name")
    session = payload.get("session_id")
    if not isinstance(session, str) or not _ID.fullmatch(session):
        raise ValueError(f"the {name} event has no usable session_id")

    def text(key: str) -> str | None:
        value = payload.get(key)
        return value if isinstance(value, str) and value else None

    def path(key: str) -> Path | None:
        value = text(key)
        return Path(value).expanduser() if value is not None and "\0" not in value else None

    transcript = path("transcript_path")
    if transcript is not None and not transcript.is_absolute():
        raise ValueError(f"the {name} event's transcript_path is not absolute")
    cwd = path("cwd")
    edited = None
    tool_input = payload.get("tool_input")
    if text("tool_name") in FILE_TOOLS and isinstance(tool_input, dict):
        named = tool_input.get("file_path") or tool_input.get("notebook_path")
        edited = named if isinstance(named, str) and named else None
    return Event(
        name=name,
        session_id=session,
        transcript=transcript,
        cwd=cwd if cwd is not None and cwd.is_absolute() else None,
        source=text("source"),
        prompt_id=text("prompt_id"),
        last_reply=payload.get("last_assistant_message")
        if isinstance(payload.get("last_assistant_message"), str)
        else None,
        tool_name=text("tool_name"),
        tool_use_id=text("tool_use_id"),
        agent_id=text("agent_id"),
        agent_type=text("agent_type"),
        edited=edited,
    )


def carries_prompt(native_text: str, prompt_id: str) -> bool:
    """True when a transcript line (an entry's kept text) is the prompt ``prompt_id``."""
    return f'"promptId":{codec.dumps(prompt_id)}' in native_text
