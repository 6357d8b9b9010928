"""Codex, live: its hook events as the events ``convgit.agents.live`` records, the hooks file
convgit's handlers go in (``$CODEX_HOME/hooks.json``), and which are installed.

Codex's hooks speak Claude Code's dialect (``hook_event_name``, ``session_id``,
``transcript_path`` the rollout, ``cwd``; ``turn_id`` at a prompt and at Stop; ``tool_name``
``Bash`` or ``apply_patch``), so an event is read as Claude Code's, under Codex's name, the
turn's id standing for the prompt's. What each does is what it does for Claude Code:
* ``UserPromptSubmit``: the files the user changed since the last turn are snapshotted for the
  prompt; the turn is open;
* ``Stop``: the rollout's new records imported (the reply is in it already at Stop), the files
  snapshotted as the turn's last reply's; the turn closed;
* ``PostToolUse`` on ``apply_patch``: the files the patch wrote (named in it) are kept in the
  snapshots even when git ignores them (unless ``[snapshots] agent_ignored = false``); on
  ``Bash|apply_patch`` with ``[hooks] tool_snapshots = true``, a snapshot per tool call.
Not installed: SessionStart (the first prompt attaches, and a resume ``convgit resume`` wrote
is attached already), SessionEnd (Codex clamps it to 3 s; the next event imports what it would).

Codex runs a hook only once it is trusted: ``hooks`` (``codex.hooks``) writes the trust entry
for each handler convgit added, and ``hooks status`` says when one would be skipped.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from convgit.agents import hook_command
from convgit.agents.codex import NAME
from convgit.agents.live.events import Event, from_hook

AGENT = NAME
TIMEOUT = 30  # seconds; the handler gives up well before (convgit.agents.hook)
# the prompt, the turn's end, and the files apply_patch wrote (kept even when git ignores them:
# only this event names them); a matcher on the tool's name, so Codex starts no process for others
EVENTS: dict[str, str | None] = {
    "UserPromptSubmit": None,
    "PostToolUse": "apply_patch",
    "Stop": None,
}
TOOL_SNAPSHOT_EVENTS: dict[str, str | None] = {"PostToolUse": "Bash|apply_patch"}
ALL_EVENTS = ("SessionStart", "UserPromptSubmit", "PostToolUse", "Stop", "SessionEnd")
SPEAKS = frozenset({"SessionStart", "UserPromptSubmit", "PostToolUse", "Stop"})
OPENS = frozenset({"UserPromptSubmit"})
DEFAULT_SCOPE = "user"
TELLS = "stdout"
COMMITTED_SCOPES: frozenset[str] = frozenset()
OWN_KEYS: frozenset[str] = frozenset()
is_prompt = None  # a user message Codex marks as context is no entry of its own
transcript = None  # the rollout is a file of its own
SCOPES = {"user": "$CODEX_HOME/hooks.json (~/.codex: every project, only you)"}


def event(payload: Any, name: str | None = None) -> Event:
    """The event a hook was given; ValueError, in one sentence, for one convgit cannot use.
    ``apply_patch``'s files are read from its patch (``tool_input.command``): the files it adds,
    updates or moves to, as named (relative to the event's cwd).
    ``name`` is not used: the payload names its event."""
    found = from_hook(payload, AGENT)
    turn = payload.get("turn_id")
    tool_input = payload.get("tool_input")
    patch = tool_input.get("command") if isinstance(tool_input, dict) else None
    written = patched(patch) if found.tool_name == PATCH and isinstance(patch, str) else ()
    return dataclasses.replace(
        found, prompt_id=turn if isinstance(turn, str) and turn else None, edited=written
    )


PATCH = "apply_patch"
# the lines of a patch that name a file it leaves written (deleted files are not kept)
_WRITES = ("*** Add File: ", "*** Update File: ", "*** Move to: ")


def patched(patch: str) -> tuple[str, ...]:
    """The files a Codex patch writes, in order, each once."""
    found: dict[str, None] = {}
    for line in patch.splitlines():
        for mark in _WRITES:
            if line.startswith(mark) and (name := line[len(mark) :].strip()):
                found[name] = None
    return tuple(found)


def carries_prompt(native_text: str, prompt_id: str) -> bool:
    """Codex's records do not carry the turn's id: the turn's prompt is its first user message."""
    return False


def codex_home(env: Mapping[str, str] = os.environ) -> Path:
    chosen = env.get("CODEX_HOME")
    return Path(chosen).expanduser() if chosen else Path("~/.codex").expanduser()


def settings_file(scope: str, project: Path, env: Mapping[str, str] = os.environ) -> Path:
    return codex_home(env) / "hooks.json"


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
