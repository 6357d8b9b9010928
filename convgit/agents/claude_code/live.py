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
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from convgit.agents import hook_command
from convgit.agents.claude_code import NAME
from convgit.agents.live.events import Event, from_hook
from convgit.base import codec

AGENT = NAME
TIMEOUT = 30  # seconds, Claude's unit; the handler gives up well before (convgit.agents.hook)
# the tools that write files by name (tool_input.file_path, or notebook_path): a file they
# wrote is kept in the snapshots even when git ignores it (``convgit.git.index.agent_files``)
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
TELLS = "stdout"  # a systemMessage on stdout, which Claude shows the user
DEFAULT_SCOPE = "local"
OWN_KEYS: frozenset[str] = frozenset()
is_prompt = None  # every user message of a transcript is a prompt
transcript = None  # the transcript is a file of its own
SCOPES = {
    "local": ".claude/settings.local.json (this project, only you)",
    "project": ".claude/settings.json (this project, committed: everyone)",
    "user": "~/.claude/settings.json (every project, only you)",
}
# the scope whose file is meant to be committed: never kept out of git, even when the install
# made it (``convgit.agents.exclude``); ``local``'s is kept out always, as Claude keeps it
COMMITTED_SCOPES = frozenset({"project"})


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


def event(payload: Any, name: str | None = None) -> Event:
    """The event a hook was given; ValueError, in one sentence, for one convgit cannot use.
    ``name`` is not used: the payload names its event."""
    return from_hook(payload, AGENT, FILE_TOOLS)


def carries_prompt(native_text: str, prompt_id: str) -> bool:
    """True when a transcript line (an entry's kept text) is the prompt ``prompt_id``."""
    return f'"promptId":{codec.dumps(prompt_id)}' in native_text
