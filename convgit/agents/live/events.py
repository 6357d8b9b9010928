"""The event convgit records, whichever agent sent it: every agent's adapter (the ``event`` of
its folder's ``live`` part) reads its own payload into an ``Event`` named in convgit's words,
which are Claude Code's hook events (the first agent recorded live):

* ``SessionStart``: a session starts or resumes (``source``);
* ``UserPromptSubmit``: a prompt opens a turn (``prompt_id``: the agent's id for it, if any);
* ``PostToolUse``: a tool call ended (``tool_name``, ``tool_use_id``; ``edited``: the files a
  file tool wrote, as named);
* ``Stop``: the turn ended (``last_reply``: the reply's text, when the agent says it);
* ``StopFailure``, ``SubagentStop``, and anything else: what the transcript gained is imported.

``said`` is the agent's own name for the event, when it has one of its own, for the hook log
and the failures told to the user."""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}")


@dataclass(frozen=True)
class Event:
    """One hook event, the fields convgit uses (every other is ignored)."""

    name: str  # in convgit's words (above)
    session_id: str
    transcript: Path | None
    cwd: Path | None
    agent: str  # the agent that sent it
    source: str | None = None  # SessionStart: startup, resume, clear, compact, fork
    prompt_id: str | None = None
    last_reply: str | None = None  # Stop: the reply's text
    tool_name: str | None = None
    tool_use_id: str | None = None
    agent_id: str | None = None  # SubagentStop
    agent_type: str | None = None
    edited: tuple[str, ...] = ()  # PostToolUse of a file tool: the files it wrote, as named
    said: str | None = None  # the agent's own name for the event, when not ``name``

    @property
    def called(self) -> str:
        """The event as the agent calls it."""
        return self.said or self.name


def usable_id(value: Any) -> str | None:
    """``value`` when it can name an agent session (and a file of the store), else None."""
    return value if isinstance(value, str) and _ID.fullmatch(value) else None


def from_hook(payload: Any, agent: str, file_tools: Collection[str] = ()) -> Event:
    """A hook's payload in Claude Code's dialect (``hook_event_name``, ``session_id``,
    ``transcript_path``, ``cwd``, ...), which Codex and Gemini CLI speak too; ValueError, in one
    sentence, for one convgit cannot use. ``file_tools``: the tools whose ``tool_input``'s
    ``file_path`` (or ``notebook_path``) names the file they wrote."""
    if not isinstance(payload, dict):
        raise ValueError("the event is not a JSON object")
    name = payload.get("hook_event_name")
    if not isinstance(name, str) or not name:
        raise ValueError("the event has no hook_event_name")
    session = usable_id(payload.get("session_id"))
    if session is None:
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
    edited: tuple[str, ...] = ()
    tool_input = payload.get("tool_input")
    if text("tool_name") in file_tools and isinstance(tool_input, dict):
        named = tool_input.get("file_path") or tool_input.get("notebook_path")
        edited = (named,) if isinstance(named, str) and named else ()
    reply = payload.get("last_assistant_message")
    return Event(
        name=name,
        session_id=session,
        transcript=transcript,
        cwd=cwd if cwd is not None and cwd.is_absolute() else None,
        agent=agent,
        source=text("source"),
        prompt_id=text("prompt_id"),
        last_reply=reply if isinstance(reply, str) else None,
        tool_name=text("tool_name"),
        tool_use_id=text("tool_use_id"),
        agent_id=text("agent_id"),
        agent_type=text("agent_type"),
        edited=edited,
    )


def from_own_file(
    payload: Any,
    agent: str,
    title: str,
    names: Mapping[str, str],
    file_tools: Collection[str],
    *,
    keep_name: bool = False,
) -> Event:
    """What the hook file convgit writes into an agent's extensions (pi's extension, OpenCode's
    plugin, ``agents/own_file.py``) sends: ``event`` (the agent's name for it, one of ``names``,
    which maps it to convgit's), ``session_id``, ``transcript_path``, ``cwd``, ``source``,
    ``prompt_id``, ``tool_name``, ``tool_use_id`` and ``path`` (a file tool's). ValueError, in
    one sentence, for one convgit cannot use. ``keep_name``: the agent's name is kept for the
    log and the user (``said``)."""
    if not isinstance(payload, dict):
        raise ValueError("the event is not a JSON object")
    name = payload.get("event")
    if not isinstance(name, str) or name not in names:
        raise ValueError(f"the event names no {title} event convgit knows ({name!r})")
    session = usable_id(payload.get("session_id"))
    if session is None:
        raise ValueError(f"the {name} event has no usable session_id")

    def text(key: str) -> str | None:
        value = payload.get(key)
        return value if isinstance(value, str) and value and "\0" not in value else None

    transcript = text("transcript_path")
    if transcript is not None and not Path(transcript).is_absolute():
        raise ValueError(f"the {name} event's transcript_path is not absolute")
    cwd = text("cwd")
    tool = text("tool_name")
    path = text("path")
    return Event(
        name=names[name],
        session_id=session,
        transcript=None if transcript is None else Path(transcript),
        cwd=Path(cwd) if cwd is not None and Path(cwd).is_absolute() else None,
        agent=agent,
        source=text("source"),
        prompt_id=text("prompt_id"),
        tool_name=tool,
        tool_use_id=text("tool_use_id"),
        edited=(path,) if tool in file_tools and path else (),
        said=name if keep_name else None,
    )
