"""The Anthropic Messages API request: ``system`` on top, then turns that start with the user and
alternate (consecutive turns of one role merged, as the API itself would), each tool call's
result as a ``tool_result`` block opening the next user turn, and thinking passed back with its
signature.

Sent: text; images (base64 and URL) in user turns and tool results; tool calls with their input;
tool results with ``is_error``; signed and redacted thinking; the model when it is an Anthropic
one; the thinking level (``request`` says how). Left out, and reported: thinking without a
signature (Anthropic takes back only its own signed thinking), images in assistant messages,
parts of kinds this version does not know, blank text, and messages with nothing left to send.
Tool-call ids outside ``[a-zA-Z0-9_-]`` are rewritten (``:`` and ``|`` become ``_``) on the call
and its result alike. ``max_tokens`` is the caller's to choose.
"""

from __future__ import annotations

import re
from typing import Any

from convgit.base.errors import UsageError
from convgit.conversation.parts import image_source, tool_input
from convgit.conversation.replay import Context
from convgit.providers.request import (
    BUDGETS,
    NO_OUTPUT,
    START_PLACEHOLDER,
    LeftOut,
    blank,
    level,
    model_for,
)
from convgit.schema import tool_call_ids

_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]")


class _Ids:
    """Tool-call ids as the API accepts them, the same for a call and its result; a rewritten
    id never takes an id that is already safe."""

    def __init__(self, messages: list[dict[str, Any]]) -> None:
        used = {m["toolCallId"] for m in messages if m["role"] == "tool"}
        used.update(i for m in messages for i in tool_call_ids(m))
        self.taken = {i for i in used if not _UNSAFE.search(i) and i}
        self.safe: dict[str, str] = {}

    def __call__(self, ident: str) -> str:
        if ident in self.taken and ident not in self.safe:
            return ident
        if ident not in self.safe:
            base = _UNSAFE.sub("_", ident) or "call"
            candidate, n = base, 1
            while candidate in self.taken:
                n += 1
                candidate = f"{base}_{n}"
            self.safe[ident] = candidate
            self.taken.add(candidate)
        return self.safe[ident]


def to_anthropic(
    ctx: Context, *, max_tokens: int | None = None
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The request body and what it leaves out (``replay.dropped`` items)."""
    report = LeftOut("Anthropic", ctx.dropped)
    ids = _Ids(ctx.messages)
    turns: list[dict[str, Any]] = []
    for message in ctx.messages:
        role = "assistant" if message["role"] == "assistant" else "user"
        if message["role"] == "tool":
            blocks = [_tool_result(message, ids, report)]
        else:
            blocks = _blocks(message, ids, report)
        if not blocks:
            report.empty(message)
            continue
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})
    if turns and turns[0]["role"] != "user":
        turns.insert(0, {"role": "user", "content": [_text(START_PLACEHOLDER)]})
    body: dict[str, Any] = {}
    model = model_for(ctx.model, "anthropic", report)
    if model is not None:
        body["model"] = model
    if max_tokens is not None:
        body["max_tokens"] = max_tokens
    if not blank(ctx.system):
        body["system"] = ctx.system
    body.update(_thinking(ctx.thinking, model, max_tokens, report))
    body["messages"] = turns
    return body, report.items


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _blocks(message: dict[str, Any], ids: _Ids, report: LeftOut) -> list[dict[str, Any]]:
    content = message["content"]
    if isinstance(content, str):
        return [] if blank(content) else [_text(content)]
    role = message["role"]
    out: list[dict[str, Any]] = []
    blanks = 0
    for part in content:
        kind = part.get("type")
        if kind == "text":
            if blank(part.get("text")):
                blanks += 1
            else:
                out.append(_text(part["text"]))
        elif kind == "image" and role != "assistant":
            _add_image(part, out, message, report)
        elif kind == "thinking" and role == "assistant":
            signature = part.get("signature")
            if isinstance(signature, str) and signature and isinstance(part.get("thinking"), str):
                block = {"type": "thinking", "thinking": part["thinking"], "signature": signature}
                out.append(block)
            else:
                why = "it has no signature: Anthropic takes back only its own signed thinking"
                report.drop(message, "thinking", why)
        elif kind == "redacted_thinking" and role == "assistant" and not blank(part.get("data")):
            out.append({"type": "redacted_thinking", "data": part["data"]})
        elif kind == "tool_call" and role == "assistant":
            out.append(_tool_use(part, ids, message, report))
        else:
            report.drop(message, f"{kind} part", f"{role} turns cannot carry it")
    if blanks and out:
        report.blank(message)
    return out


def _add_image(
    part: dict[str, Any], out: list[dict[str, Any]], message: dict[str, Any], report: LeftOut
) -> None:
    source = image_source(part)
    if source is None:
        why = "it has neither base64 data of a supported type nor an http(s) URL"
        report.drop(message, "image", why)
    elif isinstance(source, str):
        out.append({"type": "image", "source": {"type": "url", "url": source}})
    else:
        media, data = source
        out.append(
            {"type": "image", "source": {"type": "base64", "media_type": media, "data": data}}
        )


def _tool_use(
    part: dict[str, Any], ids: _Ids, message: dict[str, Any], report: LeftOut
) -> dict[str, Any]:
    arguments = tool_input(part)
    if arguments is None:
        report.drop(message, f"arguments of tool call {part['id']}", "not a JSON object; sent {}")
        arguments = {}
    return {"type": "tool_use", "id": ids(part["id"]), "name": part["name"], "input": arguments}


def _tool_result(message: dict[str, Any], ids: _Ids, report: LeftOut) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": ids(message["toolCallId"])}
    content = message["content"]
    if isinstance(content, str):
        block["content"] = NO_OUTPUT if blank(content) else content
    else:
        parts: list[dict[str, Any]] = []
        for part in content:
            kind = part.get("type")
            if kind == "text" and not blank(part.get("text")):
                parts.append(_text(part["text"]))
            elif kind == "image":
                _add_image(part, parts, message, report)
            elif kind != "text":
                report.drop(message, f"{kind} part", "a tool result carries only text and images")
        if len(parts) == 1 and parts[0]["type"] == "text":
            block["content"] = parts[0]["text"]  # one text, sent as a text result is sent
        else:
            block["content"] = parts or NO_OUTPUT
    if message.get("isError"):
        block["is_error"] = True
    return block


def _thinking(
    value: Any, model: str | None, max_tokens: int | None, report: LeftOut
) -> dict[str, Any]:
    if value is None:
        return {}
    setting = level(value)
    if setting is None:
        report.drop(None, f"thinking level {value!r}", "Anthropic has no setting for it")
        return {}
    if setting == "off":
        return {}  # thinking is opt-in on every model: off is leaving it out
    if isinstance(setting, str) and not _budget_only(model):
        effort = "low" if setting == "minimal" else setting
        return {"thinking": {"type": "adaptive"}, "output_config": {"effort": effort}}
    budget = setting if isinstance(setting, int) else BUDGETS[setting]
    if max_tokens is not None and max_tokens <= budget:
        raise UsageError(
            f"--max-tokens {max_tokens} must exceed the thinking budget of {budget} tokens."
        )
    return {"thinking": {"type": "enabled", "budget_tokens": budget}}


def _budget_only(model: str | None) -> bool:
    """Claude models before 4.6 think within a token budget only (adaptive came with 4.6)."""
    if model is None or not model.startswith("claude-"):
        return False
    numbers = [int(t) for t in model.split("-")[1:] if t.isdigit() and len(t) <= 2]
    return bool(numbers) and (numbers[0], [*numbers, 0][1]) < (4, 6)
