"""Gemini CLI, live: its hook events as values, its settings files and the handler convgit
installs there (``convgit.agents.hooks`` merges it in; the shape is Claude Code's:
``{"hooks": {EVENT: [{"matcher": M, "hooks": [HANDLER]}]}}``, the timeout in milliseconds).
``convgit.agents.live`` records the events (``NAMES``: what each is in its words).

What each event does (one command for every event; the event's name comes on stdin). Every
event is handled whether installed or not (a user's own handler, an older install):
* ``BeforeAgent`` (a prompt): attach; the files are snapshotted if they changed since the last
  snapshot (the user's own edits); a turn left open is closed; the turn is open;
* ``AfterAgent`` (the turn's end; the session file holds the reply by then): the new part of
  the session file is imported and the files snapshotted as the snapshot of the turn's last
  reply; the turn is closed;
* ``AfterTool`` on the tools that write files by name: the file is kept in the snapshots even
  when git ignores it (unless ``[snapshots] agent_ignored = false``), and a snapshot per tool
  call, the shell included, when ``[hooks] tool_snapshots = true``;
* ``SessionStart`` (of a new session), ``PreCompress``, ``SessionEnd``: what the session file
  gained is imported. At a resume's SessionStart the CLI names a file it is about to leave
  (its ``transcript_path``): that event imports nothing.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from convgit.agents import hook_command
from convgit.agents.gemini import NAME
from convgit.agents.live.events import Event, from_hook

AGENT = NAME
TIMEOUT = 30000  # milliseconds, Gemini's unit; the handler gives up well before (agents.hook)
NAME = "convgit"  # the handler's name: what Gemini shows when it asks about project hooks
# the tools that write a file by name (tool_input.file_path)
FILE_TOOLS = ("write_file", "replace")
SHELL = "run_shell_command"
# The events convgit installs, and why each one: every event is a process Gemini starts and
# waits for, so only those that record what no other can. event -> matcher (None: every one).
EVENTS: dict[str, str | None] = {
    # opens the turn: the files the user changed since the last turn are snapshotted for the
    # prompt; a turn left open (a failed request ends it without AfterAgent) is closed first
    "BeforeAgent": None,
    # closes the turn: the session file imported, the files snapshotted as the last reply's
    "AfterAgent": None,
    # the paths the file tools wrote (for the files git ignores); a regular expression on the
    # tool's name, so Gemini starts it for these tools only
    "AfterTool": "|".join(FILE_TOOLS),
}
# with ``[hooks] tool_snapshots = true``: a snapshot after every editing tool, the shell's too
TOOL_SNAPSHOT_EVENTS: dict[str, str | None] = {"AfterTool": "|".join((*FILE_TOOLS, SHELL))}
# Handled when delivered, not installed, and why:
# * SessionStart: the first prompt's BeforeAgent attaches the session and snapshots the files;
#   at a resume it names a file the CLI leaves at once;
# * PreCompress: 0.61.0 fires it before every model request once the history is not empty
#   (before it checks whether to compress): a process per step; a compression rewrites the
#   session file, which the turn's AfterAgent imports;
# * SessionEnd: Gemini does not wait for it; what it writes after AfterAgent (its
#   ``lastUpdated``) the next event imports.
ALL_EVENTS = (
    "SessionStart",
    "BeforeAgent",
    "AfterTool",
    "AfterAgent",
    "PreCompress",
    "SessionEnd",
)
# the events whose hook may speak to the user (its stdout's ``systemMessage``, which Gemini
# shows as ``Hook system message: ...`` and never sends to the model): not SessionEnd
SPEAKS = frozenset({"SessionStart", "BeforeAgent", "AfterTool", "AfterAgent", "PreCompress"})
# the events that open a turn: outside git, a folder's store is made at the first of them
OPENS = frozenset({"BeforeAgent"})
SCOPES = {
    "project": ".gemini/settings.json (this project: everyone who opens it)",
    "user": "~/.gemini/settings.json (every project, only you)",
}
DEFAULT_SCOPE = "project"
TELLS = "stdout"
COMMITTED_SCOPES: frozenset[str] = frozenset()
OWN_KEYS: frozenset[str] = frozenset()
transcript = None  # the chat file is a file of its own


def handler(program: str | None = None) -> dict[str, Any]:
    """The handler convgit installs for every event (``program``: the convgit to run)."""
    return hook_command.handler(AGENT, program, TIMEOUT, name=NAME)


def events(tool_snapshots: bool = False) -> dict[str, str | None]:
    """The events to install, with their matchers."""
    return hook_command.events(EVENTS, TOOL_SNAPSHOT_EVENTS, tool_snapshots)


def wanted(
    program: str | None = None, tool_snapshots: bool = False
) -> dict[str, tuple[str | None, dict[str, Any]]]:
    return hook_command.wanted(handler(program), events(tool_snapshots))


def is_ours(found: Any) -> bool:
    """A handler convgit installed, whichever convgit path it names (``hook_command``)."""
    return hook_command.is_handler(found, AGENT)


def home(env: Mapping[str, str] = os.environ) -> Path:
    """Gemini CLI's own folder: ``$GEMINI_CLI_HOME/.gemini``, else ``~/.gemini``."""
    chosen = env.get("GEMINI_CLI_HOME")
    return (Path(chosen).expanduser() if chosen else Path("~").expanduser()) / ".gemini"


def settings_file(scope: str, project: Path, env: Mapping[str, str] = os.environ) -> Path:
    """The settings file of ``scope`` (a key of SCOPES) for the project at ``project``."""
    if scope == "user":
        return home(env) / "settings.json"
    return project / ".gemini" / "settings.json"


# -- events -------------------------------------------------------------------------------------

# Gemini's event -> the event convgit records (``convgit.agents.live.events``); the others
# (SessionStart, PreCompress, SessionEnd) keep their names: what the session file gained is
# imported
NAMES = {"BeforeAgent": "UserPromptSubmit", "AfterAgent": "Stop", "AfterTool": "PostToolUse"}
CONTEXT = "<session_context>"  # the CLI's own first user message of a session


def event(payload: Any, name: str | None = None) -> Event:
    """The event a hook was given, in convgit's words, Gemini's name kept in ``said``;
    ValueError, in one sentence, for one convgit cannot use. The prompt's ``timestamp`` stands
    for its id. A resume's SessionStart names a file the CLI leaves at once: no transcript.
    ``name`` is not used: the payload names its event."""
    found = from_hook(payload, AGENT, FILE_TOOLS)
    name = found.name
    stamp = payload.get("timestamp")
    resumed = name == "SessionStart" and found.source not in (None, "startup")
    return dataclasses.replace(
        found,
        name=NAMES.get(name, name),
        said=name if name in NAMES else None,
        prompt_id=stamp if isinstance(stamp, str) and stamp else None,
        transcript=None if resumed else found.transcript,
        edited=found.edited if name == "AfterTool" else (),
    )


def carries_prompt(native_text: str, prompt_id: str) -> bool:
    """Gemini hands no message to a running turn: the turn's prompt is the nearest one."""
    return True


def is_prompt(record: dict[str, Any]) -> bool:
    """Whether a user message is a prompt the user typed, not the CLI's session context."""
    content = record["content"]
    parts = [{"type": "text", "text": content}] if isinstance(content, str) else content
    texts = [str(p.get("text", "")) for p in parts if p.get("type") == "text"]
    return bool(texts) and not texts[0].lstrip().startswith(CONTEXT)
