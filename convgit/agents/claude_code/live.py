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
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from convgit.base import codec

AGENT = "claude-code"
TITLE = "Claude Code"
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


# -- the transcript of a resumed path ---------------------------------------------------------


def line_uuids(data: bytes) -> list[tuple[str, str | None]]:
    """(uuid, parentUuid) of every line of a transcript that has a uuid, in file order."""
    found: list[tuple[str, str | None]] = []
    for line in data.splitlines():
        if b'"uuid"' not in line:
            continue
        try:
            value = codec.decode(line)
        except ValueError:
            continue
        if isinstance(value, dict) and isinstance(value.get("uuid"), str):
            parent = value.get("parentUuid")
            found.append((value["uuid"], parent if isinstance(parent, str) else None))
    return found


def resume_lines(path: Iterable[bytes], kept: Callable[[str], bytes | None]) -> list[bytes]:
    """The lines of a transcript that holds exactly ``path`` (the exact text of each line of a
    root-to-entry path, in order) in Claude's own tree: before each line, the lines it hangs
    below through records that became no entry (attachments, system lines, a compaction's
    boundary), found by uuid with ``kept``. Claude resumes it at its last line."""
    lines = list(path)
    seen = {uuid for line in lines if (uuid := _uuid_of(line)) is not None}
    out: list[bytes] = []
    for line in lines:
        above: list[bytes] = []
        parent = _parent_of(line)
        while parent is not None and parent not in seen:
            found = kept(parent)
            if found is None:
                break
            seen.add(parent)
            above.append(found)
            parent = _parent_of(found)
        out.extend(reversed(above))
        out.append(line)
    return out


def _fields(line: bytes) -> dict[str, Any]:
    try:
        value = codec.decode(line)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def uuid_of(line: bytes) -> str | None:
    """The ``uuid`` of a transcript line, if it has one."""
    return _uuid_of(line)


def _uuid_of(line: bytes) -> str | None:
    uuid = _fields(line).get("uuid")
    return uuid if isinstance(uuid, str) else None


def _parent_of(line: bytes) -> str | None:
    parent = _fields(line).get("parentUuid")
    return parent if isinstance(parent, str) else None


def resume_command(agent_session: str, at: str | None = None) -> str:
    """The command that resumes ``agent_session``: at its leaf, or with ``at`` at that record
    (Claude's own ``--resume-session-at``: the model is sent root to ``at``, and the new prompt
    hangs below it in the same transcript)."""
    found = f"claude -r {agent_session}"
    return found if at is None else f"{found} --resume-session-at {at}"


_MESSAGES = ("user", "assistant")


def resumable_at(data: bytes) -> frozenset[str]:
    """The uuids of a transcript's messages that ``claude -r S --resume-session-at UUID``
    reaches: those on the chain Claude loads now (parentUuid from the leaf it picks up; a
    compaction's boundary ends it). Claude picks the leaf from the last ``last-prompt`` record
    (its ``leafUuid``, when that message has no message below it, or when ``explicit``), else
    the last message in the file; to be safe, only what is on the chains of both counts."""
    parents: dict[str, str | None] = {}
    kinds: dict[str, str] = {}
    has_child: set[str] = set()
    last_message: str | None = None
    last_prompt: dict[str, Any] | None = None
    for line in data.splitlines():
        value = _fields(line)
        kind = value.get("type")
        if kind == "last-prompt":
            last_prompt = value
            continue
        uuid = value.get("uuid")
        if not isinstance(uuid, str) or value.get("isSidechain") is True:
            continue
        parent = value.get("parentUuid")
        parents[uuid] = parent if isinstance(parent, str) else None
        kinds[uuid] = str(kind)
        if kind in _MESSAGES:
            last_message = uuid
            if isinstance(parent, str):
                has_child.add(parent)
    leaves = {last_message}
    chosen = None if last_prompt is None else last_prompt.get("leafUuid")
    if isinstance(chosen, str) and kinds.get(chosen) in _MESSAGES:
        if last_prompt is not None and last_prompt.get("explicit") is True:
            leaves = {chosen}
        elif chosen not in has_child:
            leaves.add(chosen)
    chains = []
    for leaf in leaves:
        chain: set[str] = set()
        at = leaf
        while at is not None and at not in chain and at in parents:
            chain.add(at)
            at = parents[at]
        chains.append(chain)
    found = set.intersection(*chains) if chains else set()
    return frozenset(uuid for uuid in found if kinds.get(uuid) in _MESSAGES)
