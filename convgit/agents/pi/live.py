"""pi, live: the events convgit's pi extension hands ``convgit hook pi`` (``pi.hooks`` writes
the extension), as the events ``convgit.agents.live`` records.

pi has no hooks of its own: an extension (a TypeScript module pi loads from
``.pi/extensions/`` or the user's ``~/.pi/agent/extensions/``) subscribes to pi's events and, at
each, runs the hook with one JSON object on stdin: ``event`` (pi's event name), ``session_id``,
``transcript_path`` (the session file; pi writes it once the first reply exists), ``leaf``,
``cwd``, and per event ``source`` (session_start's ``reason``), ``prompt_id`` (made by the
extension for each prompt), ``tool_name``, ``tool_use_id`` and ``path`` (a file tool's).

What each does, in ``convgit.agents.live``'s words (``EVENTS`` below: which the extension passes
on, and why):
* ``session_start`` is a SessionStart (``reason`` its source: ``fork`` and ``resume`` mean the
  file may continue a session convgit mirrors);
* ``agent_start`` (pi starts working on a prompt) is a UserPromptSubmit: the files the user
  changed since the last turn are snapshotted for the prompt, and the turn is open;
* ``tool_execution_end`` of ``write`` and ``edit`` is a PostToolUse (the file kept in the
  snapshots even when git ignores it; a snapshot per tool call when ``[hooks] tool_snapshots``
  is on, then for every tool, ``bash`` included);
* ``agent_end`` is a Stop: pi has written the turn's last reply already; the new entries are
  imported and the files snapshotted as that reply's;
* ``turn_end`` and ``session_shutdown`` import what the file gained (SessionEnd).
"""

from __future__ import annotations

from typing import Any

from convgit.agents.live.events import Event, from_own_file
from convgit.agents.pi import NAME, TITLE

AGENT = NAME
FILE_TOOLS = ("write", "edit")
# pi's event -> the event convgit.agents.live records
NAMES = {
    "session_start": "SessionStart",
    "agent_start": "UserPromptSubmit",
    "tool_execution_end": "PostToolUse",
    "turn_end": "TurnEnd",
    "agent_end": "Stop",
    "session_shutdown": "SessionEnd",
}
# The pi events the extension passes on: each is a process pi waits for (in print mode, every
# turn is a pi process of its own), so only those that record what no other can. Not passed on:
# ``session_start`` (the first prompt snapshots the files and the turn's end attaches the
# session, a fork's too, from its file), ``turn_end`` (``agent_end`` imports the whole turn),
# ``session_shutdown`` (pi writes nothing after ``agent_end``; the next event imports anything).
EVENTS = ("agent_start", "tool_execution_end", "agent_end")
ALL_EVENTS = tuple(NAMES)
# the extension tells the user (a notice on pi's screen, stderr in print mode) at these
SPEAKS = frozenset({"SessionStart", "UserPromptSubmit", "PostToolUse", "TurnEnd", "Stop"})
OPENS = frozenset({"UserPromptSubmit"})


def event(payload: Any, name: str | None = None) -> Event:
    """The event the extension sent; ValueError, in one sentence, for one convgit cannot use.
    ``name`` is not used: the payload names its event."""
    return from_own_file(payload, AGENT, TITLE, NAMES, FILE_TOOLS)


def carries_prompt(native_text: str, prompt_id: str) -> bool:
    """pi's entries do not carry the prompt's id: the turn's prompt is its first user message."""
    return False


# -- installing (``pi.hooks``: imported only by the ``hooks`` commands) --------------------------

DEFAULT_SCOPE = "project"
TELLS = "stdout"  # what the extension reads back: a notice, or stderr in print mode
COMMITTED_SCOPES: frozenset[str] = frozenset()
is_prompt = None  # every user message is a prompt
transcript = None  # the session file is a file of its own
SCOPES = {
    "project": ".pi/extensions/convgit.ts (this project)",
    "user": "~/.pi/agent/extensions/convgit.ts (every project, only you)",
}
