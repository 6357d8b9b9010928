"""The Anthropic messages shape: ``tool_use`` blocks, results as ``tool_result`` blocks in a user
turn, consecutive turns of one role merged so roles alternate."""

from __future__ import annotations

from typing import Any

from convgit.tree import Context


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message["content"]
    if message["role"] == "tool":
        text = content if isinstance(content, str) else _joined(content)
        return [
            {
                "type": "tool_result",
                "tool_use_id": message["toolCallId"],
                "content": text,
                "is_error": bool(message.get("isError")),
            }
        ]
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    blocks: list[dict[str, Any]] = []
    for part in content:
        if part.get("type") == "text" and part.get("text"):
            blocks.append({"type": "text", "text": part["text"]})
        elif part.get("type") == "tool_call":
            blocks.append(
                {
                    "type": "tool_use",
                    "id": part["id"],
                    "name": part["name"],
                    "input": part.get("input", {}),
                }
            )
    return blocks


def _joined(content: list[dict[str, Any]]) -> str:
    return "\n".join(p.get("text", "") for p in content if p.get("type") == "text")


def to_anthropic(ctx: Context) -> dict[str, Any]:
    messages: list[dict[str, Any]] = []
    for message in ctx.messages:
        role = "assistant" if message["role"] == "assistant" else "user"
        blocks = _blocks(message)
        if not blocks:
            continue
        if messages and messages[-1]["role"] == role:
            messages[-1]["content"].extend(blocks)
        else:
            messages.append({"role": role, "content": blocks})
    request: dict[str, Any] = {"messages": messages}
    if ctx.model:
        request["model"] = ctx.model["model"]
    return request
