"""Which agent wrote a session file, from its content: what each agent's file has and no other
agent's does. ``convgit import FILE`` names the agent from it, and ``convgit import AGENT FILE``
refuses a file another agent wrote instead of reading it as a junk session.

* Codex: a rollout's lines are ``{"type", "payload"}``, the first a ``session_meta``.
* pi: the first line is the header ``{"type": "session", "id", ...}`` (with a ``version``, a
  ``cwd`` or a ``timestamp``), the entries ``{"type", "id", "parentId"}``.
* Claude Code: lines carrying both ``uuid`` and ``sessionId``, or records only Claude writes
  (``file-history-snapshot``, ``queue-operation``, ``last-prompt``…).
* Gemini CLI: one JSON document with ``sessionId`` and ``messages``, or JSON lines whose first
  is the chat's ``{"sessionId", "projectHash", ...}`` without a ``uuid``.
"""

from __future__ import annotations

from typing import Any

from convgit.base import codec

TITLES = {"claude-code": "Claude Code", "codex": "Codex", "gemini": "Gemini CLI", "pi": "pi"}
_LINES = 64  # the lines read: every agent's files show who wrote them at the start
_BOM = b"\xef\xbb\xbf"
_CLAUDE_ONLY = frozenset(
    {"file-history-snapshot", "queue-operation", "last-prompt", "custom-title", "permission-mode"}
)
_CODEX_KINDS = frozenset(
    {"session_meta", "response_item", "event_msg", "turn_context", "compacted"}
)


def agent_of(data: bytes) -> str | None:
    """The agent whose session file ``data`` is (a key of ``TITLES``), or None when it shows no
    agent's marks."""
    data = data.removeprefix(_BOM)
    records = _first_records(data)
    if not records:
        return "gemini" if _gemini_document(data) else None
    first = records[0]
    if any(_codex(r) for r in records[:2]):
        return "codex"
    header = first.get("type") == "session" and isinstance(first.get("id"), str)
    if header and "uuid" not in first and any(k in first for k in ("version", "cwd", "timestamp")):
        return "pi"
    for record in records:
        if isinstance(record.get("uuid"), str) and isinstance(record.get("sessionId"), str):
            return "claude-code"
        if record.get("type") in _CLAUDE_ONLY and isinstance(record.get("sessionId"), str):
            return "claude-code"
    if isinstance(first.get("sessionId"), str) and "uuid" not in first and "type" not in first:
        return "gemini"
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


def _codex(record: dict[str, Any]) -> bool:
    return record.get("type") in _CODEX_KINDS and isinstance(record.get("payload"), dict)


def _gemini_document(data: bytes) -> bool:
    if not data.lstrip().startswith(b"{") or b'"sessionId"' not in data[:4096]:
        return False
    try:
        value = codec.decode(data)
    except ValueError:
        return False
    return (
        isinstance(value, dict)
        and isinstance(value.get("sessionId"), str)
        and isinstance(value.get("messages"), list)
    )
