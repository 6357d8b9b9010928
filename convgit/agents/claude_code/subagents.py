"""Claude Code's subagents. A subagent's work is a side branch below the assistant entry that
called ``Task``/``Agent``: from its ``agent_progress`` mirrors in the main file, or from its own
file (``<session id>/subagents/*.jsonl``) when the main file has no mirrors of it. ``Subagents``
knows which call spawned which subagent, so a subagent's first line finds its place."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from convgit.agents.claude_code import blocks
from convgit.agents.reading import Known, entry_id
from convgit.base import codec
from convgit.schema import tool_calls_of

SPAWNING_TOOLS = ("Task", "Agent")


def subagent_files(path: Path) -> list[Path]:
    """The subagent files Claude Code writes beside a session: ``<id>/subagents/*.jsonl``."""
    folder = path.with_suffix("") / "subagents"
    return sorted(folder.glob("*.jsonl")) if folder.is_dir() else []


class Subagents:
    """The spawning calls seen so far (``spawns``: tool_use id -> entry) and the subagent each
    one spawned (``agents``: agentId -> tool_use id), carried from import to import in the
    cursor's state, and those of the entries the session imported before."""

    def __init__(self, state: Mapping[str, Any], known: Known) -> None:
        self.known = known
        self.spawns: dict[str, str] = dict(state.get("spawns", {}))
        self.agents: dict[str, str] = dict(state.get("agents", {}))
        self._known_calls: dict[str, str] | None = None
        self._known_mirrors: set[str] | None = None

    def state(self) -> dict[str, Any]:
        return {"spawns": self.spawns, "agents": self.agents}

    def called(self, message: dict[str, Any], ident: str) -> None:
        """Entry ``ident``, the assistant ``message``, may call tools that spawn subagents."""
        for part in tool_calls_of(message):
            if part.get("name") in SPAWNING_TOOLS:
                self.spawns[part["id"]] = ident

    def answered(self, value: dict[str, Any]) -> None:
        """A user line whose tool result names the subagent (``toolUseResult.agentId``) that
        its call spawned."""
        result = value.get("toolUseResult")
        message = value.get("message") or {}
        if not isinstance(result, dict) or not isinstance(result.get("agentId"), str):
            return
        for block in message.get("content") or []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                call = block.get("tool_use_id")
                if isinstance(call, str):
                    self.agents.setdefault(result["agentId"], call)

    def mirrored_by(self, agent: str, call: object) -> None:
        """An ``agent_progress`` line of subagent ``agent`` under the tool call ``call``."""
        if isinstance(call, str):
            self.agents.setdefault(agent, call)

    def spawner(self, agent: str, first: dict[str, Any] | None = None) -> str | None:
        """The entry whose tool call spawned subagent ``agent``, if it is known: by the
        ``agentId`` of the call's result, else (a subagent's file read before the call has
        its result: a live import at SubagentStop) by the call's prompt, the subagent's
        ``first`` line, among the calls no subagent answered yet."""
        call = self.agents.get(agent)
        if call is not None and call in self.spawns:
            return self.spawns[call]
        calls = self._calls_in_session()
        call = call or calls.get(f"agent:{agent}")
        if call is None and first is not None:
            message = first.get("message")
            text = blocks.plain_text(message.get("content")) if isinstance(message, dict) else ""
            call = calls.get(f"prompt:{text}") if text else None
            if call is not None:
                self.agents[agent] = call
        return None if call is None else calls.get(call)

    def mirrored(self, agent: str, uuid: str) -> bool:
        """True for a line of a subagent file whose subagent came into the session from its
        ``agent_progress`` mirrors, and which none of them carried: kept, so the side branch
        the mirrors made stays one line."""
        if self._known_mirrors is None:
            self._known_mirrors = {
                str(native["subagent"])
                for entry in self.known.entries.values()
                if isinstance(native := entry.get("native"), dict)
                and "in" in native
                and "subagent" in native
            }
        return agent in self._known_mirrors and entry_id(uuid) not in self.known.entries

    def _calls_in_session(self) -> dict[str, str]:
        """Spawning calls of entries imported before: tool_use id -> entry,
        ``agent:<agentId>`` -> tool_use id, and ``prompt:<prompt>`` -> the tool_use id of the
        last call with that prompt whose subagent is not known (read once, for a subagent
        file)."""
        if self._known_calls is None:
            calls: dict[str, str] = {}
            for ident, entry in self.known.entries.items():
                if entry.get("type") != "message":
                    continue
                if entry.get("role") == "assistant":
                    for part in tool_calls_of(entry):
                        if part.get("name") in SPAWNING_TOOLS:
                            calls[part["id"]] = ident
                            prompt = (part.get("input") or {}).get("prompt")
                            if isinstance(prompt, str) and prompt:
                                calls[f"prompt:{prompt}"] = part["id"]
                text = (entry.get("native") or {}).get("text")
                if entry.get("role") == "tool" and isinstance(text, str) and '"agentId"' in text:
                    result = (codec.decode(text) or {}).get("toolUseResult")
                    if isinstance(result, dict) and isinstance(result.get("agentId"), str):
                        calls[f"agent:{result['agentId']}"] = str(entry.get("toolCallId"))
            answered = {call for key, call in calls.items() if key.startswith("agent:")}
            for key in [k for k, call in calls.items() if k.startswith("prompt:")]:
                if calls[key] in answered:  # that call's subagent is known: no other is its
                    del calls[key]
            self._known_calls = calls
        return self._known_calls
