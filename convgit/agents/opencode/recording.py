"""An OpenCode event recorded: the session's transcript written from OpenCode's database
(``opencode.transcript``) to a file of convgit's own beside the session's pointer
(``agents/opencode/<id>.export.json``), then the event handled as every agent's is
(``convgit.agents.live``), importing from that file."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from convgit.agents import live, settings
from convgit.agents.claude_code import live as cc
from convgit.agents.opencode import transcript
from convgit.agents.opencode.live import AGENT
from convgit.store.location import StoreLocation


def transcript_file(location: StoreLocation, session: str) -> Path:
    pointer = location.agent_pointer(AGENT, session)
    return pointer.with_name(pointer.name + ".export.json")


def handle(location: StoreLocation, event: cc.Event) -> str:
    """Write the transcript of the event's session, then record the event."""
    found = transcript.databases()
    if not found:
        return "OpenCode keeps this session in memory: nothing to record"
    try:
        data = transcript.export(found, event.session_id)
    except transcript.SubagentSessionError as exc:
        return f"{exc}: not recorded"
    path = transcript_file(location, event.session_id)
    try:
        same = path.read_bytes() == data
    except OSError:
        same = False
    if not same:
        path.parent.mkdir(parents=True, exist_ok=True)
        settings.write_atomically(path, data, 0o600)
    return live.handle(location, dataclasses.replace(event, transcript=path))
