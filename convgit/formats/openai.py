"""The OpenAI chat-completions shape: tool calls as ``tool_calls``, results as ``tool`` messages.
Assistant messages in a row are one reply, so they become one message: OpenAI wants a call's
result right after the message that made it."""

from __future__ import annotations

from typing import Any

from convgit import codec
from convgit.tree import Context


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(p["text"] for p in content if p.get("type") == "text")


def to_openai(ctx: Context) -> dict[str, Any]:
    messages: list[dict[str, Any]] = []
    for message in ctx.messages:
        role, content = message["role"], message["content"]
        if role == "tool":
            messages.append(
                {"role": "tool", "tool_call_id": message["toolCallId"], "content": _text(content)}
            )
            continue
        calls = [
            {
                "id": p["id"],
                "type": "function",
                "function": {"name": p["name"], "arguments": codec.dumps(p.get("input", {}))},
            }
            for p in (content if role == "assistant" and isinstance(content, list) else [])
            if p.get("type") == "tool_call"
        ]
        text = _text(content)
        if role == "assistant" and messages and messages[-1]["role"] == "assistant":
            previous = messages[-1]
            joined = "\n".join(t for t in (previous["content"], text) if t)
            previous["content"] = joined or None
            if calls:
                previous["tool_calls"] = previous.get("tool_calls", []) + calls
            continue
        out: dict[str, Any] = {"role": role, "content": text}
        if calls:
            out["tool_calls"] = calls
            out["content"] = out["content"] or None
        messages.append(out)
    request: dict[str, Any] = {"messages": messages}
    if ctx.model:
        request["model"] = ctx.model["model"]
    return request
