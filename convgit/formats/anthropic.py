"""The Anthropic messages shape: ``tool_use`` blocks, results as ``tool_result`` blocks in a user
turn, consecutive turns of one role merged so roles alternate. Images pass through; thinking
goes back only with the signature the API needs to accept it."""

from __future__ import annotations

from typing import Any

from convgit.tree import Context


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message["content"]
    if message["role"] == "tool":
        images = isinstance(content, list) and any(p.get("type") == "image" for p in content)
        result: Any = _joined(content) if not isinstance(content, str) else content
        if images:
            result = [_block(p) for p in content if p.get("type") in ("text", "image")]
        return [
            {
                "type": "tool_result",
                "tool_use_id": message["toolCallId"],
                "content": result,
                "is_error": bool(message.get("isError")),
            }
        ]
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    return [block for block in map(_block, content) if block]


def _block(part: dict[str, Any]) -> dict[str, Any] | None:
    kind = part.get("type")
    if kind == "text":
        return {"type": "text", "text": part["text"]} if part.get("text") else None
    if kind == "tool_call":
        return {
            "type": "tool_use",
            "id": part["id"],
            "name": part["name"],
            "input": part.get("input", {}),
        }
    if kind == "image" and isinstance(part.get("source"), dict):
        return {"type": "image", "source": part["source"]}
    if kind == "thinking" and isinstance(part.get("signature"), str):
        return {"type": "thinking", "thinking": part["thinking"], "signature": part["signature"]}
    if kind == "redacted_thinking" and isinstance(part.get("data"), str):
        return {"type": "redacted_thinking", "data": part["data"]}
    return None


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
