"""Replay: what the model sees at one leaf, from the path root -> leaf alone.

Settings (model, thinking level, system prompt) take the last value on the path; a compaction
replaces what it summarises; branch summaries and notes become user messages; every tool call
is followed at once by its result, wherever on the path after the call the result was recorded.
What replay leaves out (a result whose call is not before it on the path, a second result for
one call) is listed in ``Context.dropped``, never left out silently.
"""

from __future__ import annotations

from dataclasses import field
from typing import Any

from convgit.base.errors import CorruptStoreError
from convgit.base.valueclass import valueclass
from convgit.conversation.tree import Tree
from convgit.schema import tool_call_ids

COMPACTION_PREFIX = "The conversation before this point was compacted into this summary:\n\n"
BRANCH_SUMMARY_PREFIX = "A branch of this conversation was left behind; what it learned:\n\n"
NOTE_PREFIX = "Note from convgit: "
MISSING_RESULT = "No result was recorded for this tool call (the conversation moved on without it)."


@valueclass
class Context:
    """What the model sees at one leaf: settings and messages, tool calls paired with results.
    ``system`` is the system prompt (None: none recorded); ``dropped`` lists, as ``{"entry",
    "what", "why"}``, what replay could not place."""

    leaf: str | None
    model: dict[str, Any] | None = None
    thinking: Any = None
    messages: list[dict[str, Any]] = field(default_factory=list)
    system: str | None = None
    dropped: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "leaf": self.leaf,
            "model": self.model,
            "thinking": self.thinking,
            "system": self.system,
            "messages": self.messages,
            "dropped": self.dropped,
        }


def dropped(entry: str | None, what: str, why: str) -> dict[str, Any]:
    """One thing left out of what the model is sent, and why."""
    return {"entry": entry, "what": what, "why": why}


def replay(tree: Tree, leaf: str | None = None) -> Context:
    """Walk root -> leaf and interpret in order. Siblings never leak in: only the path is read."""
    tree.check()
    path = tree.path(leaf)
    position = {ident: i for i, ident in enumerate(path)}
    ctx = Context(leaf=path[-1] if path else None)
    sourced: list[tuple[int, dict[str, Any]]] = []  # (path position of the source, message)
    for i, ident in enumerate(path):
        record = tree.entries[ident]
        kind = record["type"]
        if kind == "message":
            sourced.append((i, _message(record)))
        elif kind == "model":
            ctx.model = {"provider": record["provider"], "model": record["model"]}
        elif kind == "thinking":
            ctx.thinking = record["level"]
        elif kind == "system":
            ctx.system = record["text"]
        elif kind == "compaction":
            kept = record["firstKeptId"]
            if kept is None:
                start = i
            elif kept in position and position[kept] < i:
                start = position[kept]
            else:
                raise CorruptStoreError(
                    f"Compaction {ident} keeps from {kept}, which is not before it on its path.",
                    "convgit fsck",
                )
            summary = _context_note(ident, "compaction", COMPACTION_PREFIX + record["summary"])
            sourced = [(start, summary)] + [(p, m) for p, m in sourced if p >= start]
        elif kind == "branch_summary":
            text = BRANCH_SUMMARY_PREFIX + record["summary"]
            sourced.append((i, _context_note(ident, "branch_summary", text)))
        elif kind == "note":
            sourced.append((i, _context_note(ident, "note", NOTE_PREFIX + record["text"])))
        # custom and unknown kinds are kept in the file and not replayed
    ctx.messages = pair_tool_calls([m for _, m in sourced], ctx.dropped)
    return ctx


def _message(record: dict[str, Any]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": record["role"], "content": record["content"]}
    if record["role"] == "tool":
        message["toolCallId"] = record["toolCallId"]
        message["isError"] = bool(record.get("isError", False))
    message["id"] = record["id"]
    return message


def _context_note(ident: str, kind: str, text: str) -> dict[str, Any]:
    return {"role": "user", "content": text, "kind": kind, "id": ident}


def pair_tool_calls(
    messages: list[dict[str, Any]], report: list[dict[str, Any]] | None = None
) -> list[dict[str, Any]]:
    """Every tool call is followed at once by its result: the first result after the call that
    answers no earlier call, wherever it was recorded (a user may have typed, or a note landed,
    while the tool ran), or an explicit error placeholder when there is none. Assistant messages
    recorded one after another, with nothing between them, are one reply (agents that stream a
    reply record it block by block): the results of its calls follow its last block (a reply
    ends before a block that repeats one of its call ids). A result with no unanswered call of
    its id before it is left out and listed in ``report``."""
    waiting: dict[str, list[tuple[int, str]]] = {}  # call id -> its unanswered calls, in order
    answers: dict[tuple[int, str], dict[str, Any]] = {}  # (message index, call id) -> result
    answered: set[str] = set()
    for index, message in enumerate(messages):
        if message["role"] != "tool":
            for call in tool_call_ids(message):
                waiting.setdefault(call, []).append((index, call))
            continue
        call = message["toolCallId"]
        if waiting.get(call):
            answers[waiting[call].pop(0)] = message
            answered.add(call)
        elif report is not None:
            why = (
                f"call {call} already has a result on this path"
                if call in answered
                else f"no assistant message before it on this path made call {call}"
            )
            report.append(dropped(message.get("id"), f"tool result for call {call}", why))
    out: list[dict[str, Any]] = []
    owed: list[dict[str, Any]] = []  # the results of the reply being read, in call order
    previous = None
    for index, message in enumerate(messages):
        role = message["role"]
        calls = tool_call_ids(message)
        repeated = any(result["toolCallId"] in calls for result in owed)
        if role != "assistant" or previous != "assistant" or repeated:
            out += owed
            owed.clear()
        previous = role
        if role == "tool":
            continue
        out.append(message)
        for call in calls:
            result = answers.get((index, call))
            if result is None:
                result = {"role": "tool", "content": MISSING_RESULT, "toolCallId": call}
                result["isError"] = True
            owed.append(result)
    return out + owed
