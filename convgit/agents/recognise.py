"""Which agent wrote a session file, from its content: what each agent's file has and no other
agent's does (each agent's ``reading.recognises`` says it). ``convgit import FILE`` names the agent
from it, and ``convgit import AGENT FILE`` refuses a file another agent wrote instead of reading it
as a junk session."""

from __future__ import annotations

from typing import Any

from convgit.agents import registry
from convgit.base import codec

_LINES = 64  # the lines read: every agent's files show who wrote them at the start
_BOM = b"\xef\xbb\xbf"


def agent_of(data: bytes) -> str | None:
    """The name of the agent whose session file ``data`` is (each agent's ``reading.recognises``
    asked in the registry's order), or None when it shows no agent's marks."""
    data = data.removeprefix(_BOM)
    records = _first_records(data)
    for agent in registry.agents():
        if agent.reading().recognises(records, data):
            return agent.name
    return None


def _first_records(data: bytes) -> list[dict[str, Any]]:
    """The JSON objects of the first lines (a line that is not one is passed over); none when
    the first line is not a JSON object (a JSON document spread over lines)."""
    found: list[dict[str, Any]] = []
    for number, line in enumerate(data.split(b"\n", _LINES)[:_LINES]):
        if not line.strip():
            continue
        try:
            value = codec.decode(line)
        except ValueError:
            value = None
        if isinstance(value, dict):
            found.append(value)
        elif number == 0 or not found:
            return []
    return found
