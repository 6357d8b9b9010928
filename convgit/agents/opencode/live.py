"""OpenCode, live: the events convgit's OpenCode plugin hands ``convgit hook opencode``
(``opencode.hooks`` writes the plugin), as the events ``convgit.agents.live`` records; and,
since OpenCode keeps no session file, ``transcript``: the session written from OpenCode's
database (``opencode.transcript``) to a file of convgit's, which the recorder imports.

OpenCode has no hooks of its own: a plugin (a JS module OpenCode loads from
``.opencode/plugins/`` or the user's ``~/.config/opencode/plugins/``) runs the hook with one
JSON object on stdin, synchronously (OpenCode does not wait for a plugin's ``event`` handler: a
process started there and not waited for dies when ``opencode run`` exits): ``event`` (the
OpenCode hook or event), ``session_id``, ``cwd`` (the plugin's project folder), and per event
``prompt_id`` (the id of the user's message), ``tool_name``, ``tool_use_id`` and ``path`` (the
``filePath`` of a file tool).

What each does, in ``convgit.agents.live``'s words (``EVENTS`` below: which the plugin passes
on, and why):
* ``chat.message`` (OpenCode takes a prompt, before it stores it) is a UserPromptSubmit: the
  files the user changed since the last turn are snapshotted for the prompt, and the turn is
  open;
* ``tool.execute.after`` of ``write`` and ``edit`` is a PostToolUse (the file kept in the
  snapshots even when git ignores it; with ``[hooks] tool_snapshots``, of every tool, a
  snapshot for the reply that made the call, recorded once OpenCode has stored that reply);
* the ``session.idle`` event is a Stop: OpenCode has stored the turn's last reply by then; the
  new messages are imported and the files snapshotted as that reply's.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from convgit.agents.live.events import Event, from_own_file
from convgit.agents.opencode import NAME, TITLE

if TYPE_CHECKING:
    from convgit.store.location import StoreLocation

AGENT = NAME
FILE_TOOLS = ("write", "edit")
# the plugin's event -> the event convgit.agents.live records
NAMES = {
    "session.created": "SessionStart",
    "chat.message": "UserPromptSubmit",
    "tool.execute.after": "PostToolUse",
    "session.idle": "Stop",
}
# The events the plugin passes on: each is a process OpenCode waits for, so only those that
# record what no other can. Not passed on: ``session.created`` (the first prompt snapshots the
# files and the turn's end attaches the session).
EVENTS = ("chat.message", "tool.execute.after", "session.idle")
ALL_EVENTS = tuple(NAMES)
# the plugin shows the user what the hook says (a toast in the TUI, stderr in `opencode run`);
# the events are named as OpenCode names them (``said``), here and to the user
SPEAKS = frozenset(NAMES)
OPENS = frozenset({"chat.message"})


def event(payload: Any, name: str | None = None) -> Event:
    """The event the plugin sent, its name kept as OpenCode's; ValueError, in one sentence, for
    one convgit cannot use. OpenCode keeps no file: ``transcript`` writes one.
    ``name`` is not used: the payload names its event."""
    return from_own_file(payload, AGENT, TITLE, NAMES, FILE_TOOLS, keep_name=True)


def carries_prompt(native_text: str, prompt_id: str) -> bool:
    """The prompt's id is the id of OpenCode's user message, which its text holds."""
    return f'"id":"{prompt_id}"' in native_text.replace('": "', '":"')


def transcript(location: StoreLocation, event: Event) -> Path | None:
    """The file the recorder imports for ``event``: the session written from OpenCode's
    database (``opencode.transcript``) beside the session's pointer, when it changed; None for a
    subagent's session (not recorded) or a database kept in memory."""
    from convgit.agents.opencode import transcript as written

    return written.write(location, event.session_id)


# -- installing (``opencode.hooks``: imported only by the ``hooks`` commands) ---------------------

DEFAULT_SCOPE = "project"
TELLS = "stdout"  # what the plugin reads back: a toast, or stderr in `opencode run`
COMMITTED_SCOPES: frozenset[str] = frozenset()
is_prompt = None  # every user message is a prompt
SCOPES = {
    "project": ".opencode/plugins/convgit.js (this project)",
    "user": "~/.config/opencode/plugins/convgit.js (every project, only you)",
}
