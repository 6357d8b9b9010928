"""Qwen Code, live: its hook events as the events ``convgit.agents.live`` records, its settings
files and the handler convgit installs there (``convgit.agents.hooks`` merges it in; Claude
Code's shape, ``{"hooks": {EVENT: [{"matcher": M, "hooks": [HANDLER]}]}}``, the timeout in
seconds).

Qwen Code's hooks speak Claude Code's dialect (``hook_event_name``, ``session_id``,
``transcript_path`` the chat file, ``cwd``, ``prompt_id`` at every event of a prompt's turn,
``tool_name`` and ``tool_input.file_path``, ``last_assistant_message`` at Stop), so an event is
read as Claude Code's. What each does:
* ``UserPromptSubmit`` with a prompt: the files the user changed since the last turn are
  snapshotted for the prompt; a turn left open (killed, or ended by a failed request) is
  imported and closed first; the turn is open. Qwen Code 0.24 fires it again before each model
  request that carries tool results, with an empty prompt: that is no prompt, and only imports
  what the chat file gained;
* ``PostToolUse`` of the tools that write a file by name (``write_file``, ``edit``,
  ``notebook_edit``): the file is kept in the snapshots even when git ignores it (unless
  ``[snapshots] agent_ignored = false``); every tool, the shell included, with a snapshot per
  call, with ``[hooks] tool_snapshots = true``;
* ``Stop``: the chat file's new records imported (the reply is in it already), the files
  snapshotted as the snapshot of the turn's last reply; the turn closed;
* ``SessionStart``, ``StopFailure``, ``PreCompact``, ``PostCompact``, ``SessionEnd``: what the
  file gained is imported (``StopFailure`` closes the turn as failed).

Qwen Code shows a hook's ``systemMessage`` (the hook's JSON on stdout) at ``Stop`` only: in its
terminal UI, and on stderr in print mode's text output; never to the model. A failure at
another event is told there.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from convgit.agents import hook_command
from convgit.agents.live.events import Event, from_hook
from convgit.agents.qwen import NAME

AGENT = NAME
TIMEOUT = 30  # seconds, Qwen's unit; the handler gives up well before (agents.hook)
# the tools that write a file by name (tool_input.file_path, notebook_edit's notebook_path)
FILE_TOOLS = ("write_file", "edit", "notebook_edit")
SHELL = "run_shell_command"
# The events convgit installs, and why each one: every event is a process Qwen starts and waits
# for, so only those that record what no other can. event -> matcher (None: every one).
EVENTS: dict[str, str | None] = {
    # opens the turn: the files the user changed since the last turn are snapshotted for the
    # prompt; a turn left open (killed, a failed request) is closed first
    "UserPromptSubmit": None,
    # the files the file tools wrote (for the files git ignores); a regular expression on the
    # tool's name, so Qwen starts no process for the others
    "PostToolUse": "|".join(FILE_TOOLS),
    # closes the turn: the chat file imported, the files snapshotted as the last reply's
    "Stop": None,
}
# with ``[hooks] tool_snapshots = true``: a snapshot after every editing tool, the shell's too
TOOL_SNAPSHOT_EVENTS: dict[str, str | None] = {"PostToolUse": "|".join((*FILE_TOOLS, SHELL))}
# Handled when delivered, not installed, and why:
# * SessionStart: the first prompt attaches the session and snapshots the files;
# * StopFailure: a failed request's turn is closed by the next prompt;
# * PreCompact, PostCompact: the compression is a record of the chat file the next Stop imports;
# * SessionEnd: what Qwen writes after the last Stop the next event imports.
ALL_EVENTS = (
    "SessionStart",
    "UserPromptSubmit",
    "PostToolUse",
    "Stop",
    "StopFailure",
    "PreCompact",
    "PostCompact",
    "SessionEnd",
)
# the events whose hook Qwen shows the user a systemMessage of
SPEAKS = frozenset({"Stop"})
OPENS = frozenset({"UserPromptSubmit"})
SCOPES = {
    "project": ".qwen/settings.json (this project: everyone who opens it)",
    "user": "~/.qwen/settings.json (every project, only you; $QWEN_HOME honoured)",
}
DEFAULT_SCOPE = "project"
TELLS = "stdout"
COMMITTED_SCOPES: frozenset[str] = frozenset()
transcript = None  # the chat file is a file of its own
# what Qwen writes into a settings file itself (its settings' version, at its next start): no
# meaning of the user's, so uninstalling gives back a file Qwen has touched since
OWN_KEYS = frozenset({"$version"})
# user messages Qwen itself puts in, which are no prompt (its own ``UserPromptSubmit`` skips them)
NOT_PROMPTS = frozenset({"cron", "notification", "goal_runtime"})
CONTINUES = "ToolResults"  # an empty UserPromptSubmit: the turn goes on with tool results


def handler(program: str | None = None) -> dict[str, Any]:
    """The handler convgit installs for every event (``program``: the convgit to run)."""
    return hook_command.handler(AGENT, program, TIMEOUT)


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


def qwen_home(env: Mapping[str, str] = os.environ) -> Path:
    """Qwen Code's own folder: ``$QWEN_HOME``, else ``~/.qwen``."""
    chosen = env.get("QWEN_HOME")
    return Path(chosen).expanduser() if chosen else Path("~/.qwen").expanduser()


def settings_file(scope: str, project: Path, env: Mapping[str, str] = os.environ) -> Path:
    """The settings file of ``scope`` (a key of SCOPES) for the project at ``project``."""
    if scope == "user":
        return qwen_home(env) / "settings.json"
    return project / ".qwen" / "settings.json"


# -- events -------------------------------------------------------------------------------------


def event(payload: Any, name: str | None = None) -> Event:
    """The event a hook was given, in convgit's words; ValueError, in one sentence, for one
    convgit cannot use. A ``UserPromptSubmit`` without a prompt goes on with tool results.
    ``name`` is not used: the payload names its event."""
    found = from_hook(payload, AGENT, FILE_TOOLS)
    if found.name == "UserPromptSubmit" and not _prompted(payload):
        return dataclasses.replace(found, name=CONTINUES, said="UserPromptSubmit")
    return found


def _prompted(payload: Mapping[str, Any]) -> bool:
    said = payload.get("submitted_prompt") or payload.get("prompt")
    return isinstance(said, str) and bool(said.strip())


def carries_prompt(native_text: str, prompt_id: str) -> bool:
    """Qwen's records do not carry the prompt's id: the turn's prompt is the nearest."""
    return True


def is_prompt(record: dict[str, Any]) -> bool:
    """Whether a user message is one the user typed, not one Qwen put in (a cron job's, a
    notification, a goal's turn: its ``subtype``)."""
    from convgit.base import codec

    native = record.get("native")
    text = native.get("text") if isinstance(native, dict) else None
    try:
        value = codec.decode(text) if isinstance(text, str) else None
    except ValueError:
        return True
    return not isinstance(value, dict) or value.get("subtype") not in NOT_PROMPTS
