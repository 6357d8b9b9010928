"""The OpenAI Chat Completions request: the system prompt as the first ``system`` message, then
messages that start with the user; each assistant message's tool calls as ``tool_calls``,
answered at once by one ``tool`` message per call (an assistant message that follows one with
tool calls is more of the same reply, recorded block by block: the two become one message).

Sent: text; images (base64 as a data: URL, and URLs) in user messages as ``image_url`` parts;
tool calls with their arguments as a JSON string; tool results, a failed one prefixed with
``TOOL_ERROR_PREFIX`` (a tool message has no error flag); the model when it is an OpenAI one;
the thinking level as ``reasoning_effort``. A tool message carries text only, so the images of
tool results follow, in one user message after the last tool message of that turn. Left out,
and reported: thinking and redacted thinking (Chat Completions takes no reasoning back), images
in assistant messages, parts of kinds this version does not know, blank text, and messages
with nothing left to send. ``max_completion_tokens`` is the caller's to choose.
"""

from __future__ import annotations

from typing import Any

from convgit.base import codec
from convgit.conversation.parts import image_source, tool_input
from convgit.conversation.replay import Context
from convgit.providers.request import (
    NO_OUTPUT,
    START_PLACEHOLDER,
    LeftOut,
    blank,
    level,
    model_for,
)

TOOL_ERROR_PREFIX = "[tool error] "
IMAGES_OF = "The tool result for call {call} included these images:"
IMAGES_ONLY = "(the output is the images in the next user message)"
_NO_REASONING = "Chat Completions takes no reasoning back"


def to_openai(
    ctx: Context, *, max_tokens: int | None = None
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The request body and what it leaves out (``replay.dropped`` items)."""
    report = LeftOut("OpenAI", ctx.dropped)
    messages: list[dict[str, Any]] = []
    images: list[dict[str, Any]] = []  # of the tool results since the last assistant message
    for message in ctx.messages:
        role = message["role"]
        if role != "tool" and images:
            messages.append({"role": "user", "content": images})
            images = []
        if role == "tool":
            messages.append(_tool(message, images, report))
            continue
        out = _user(message, report) if role == "user" else _assistant(message, report)
        if out is None:
            report.empty(message)
        elif role == "assistant" and messages and "tool_calls" in messages[-1]:
            _join_reply(messages[-1], out)  # its calls' results follow the reply's last block
        else:
            messages.append(out)
    if images:
        messages.append({"role": "user", "content": images})
    if messages and messages[0]["role"] != "user":
        messages.insert(0, {"role": "user", "content": START_PLACEHOLDER})
    if not blank(ctx.system):
        messages.insert(0, {"role": "system", "content": ctx.system})
    body: dict[str, Any] = {}
    model = model_for(ctx.model, "openai", report)
    if model is not None:
        body["model"] = model
    if max_tokens is not None:
        body["max_completion_tokens"] = max_tokens
    effort = _effort(ctx.thinking, report)
    if effort is not None:
        body["reasoning_effort"] = effort
    body["messages"] = messages
    return body, report.items


def _texts(message: dict[str, Any], report: LeftOut, allowed: tuple[str, ...]) -> list[Any]:
    """The parts worth sending, in order: non-blank text as strings, images as image parts;
    anything else is reported."""
    content = message["content"]
    if isinstance(content, str):
        return [] if blank(content) else [content]
    role = message["role"]
    out: list[Any] = []
    blanks = 0
    for part in content:
        kind = part.get("type")
        if kind == "text":
            if blank(part.get("text")):
                blanks += 1
            else:
                out.append(part["text"])
        elif kind == "image" and "image" in allowed:
            url = _image_url(part, message, report)
            if url is not None:
                out.append({"type": "image_url", "image_url": {"url": url}})
        elif kind in ("thinking", "redacted_thinking") and role == "assistant":
            report.drop(message, kind, _NO_REASONING)
        elif kind not in allowed:
            report.drop(message, f"{kind} part", f"{role} messages cannot carry it")
    if blanks and out:
        report.blank(message)
    return out


def _image_url(part: dict[str, Any], message: dict[str, Any], report: LeftOut) -> str | None:
    source = image_source(part)
    if source is None:
        why = "it has neither base64 data of a supported type nor an http(s) URL"
        report.drop(message, "image", why)
        return None
    if isinstance(source, str):
        return source
    media, data = source
    return f"data:{media};base64,{data}"


def _user(message: dict[str, Any], report: LeftOut) -> dict[str, Any] | None:
    found = _texts(message, report, ("image",))
    if not found:
        return None
    if all(isinstance(x, str) for x in found):
        return {"role": "user", "content": "\n".join(found)}
    parts = [{"type": "text", "text": x} if isinstance(x, str) else x for x in found]
    return {"role": "user", "content": parts}


def _assistant(message: dict[str, Any], report: LeftOut) -> dict[str, Any] | None:
    text = "\n".join(_texts(message, report, ("tool_call",)))
    calls = []
    for part in message["content"] if isinstance(message["content"], list) else []:
        if part.get("type") != "tool_call":
            continue
        arguments = tool_input(part)
        if arguments is None:
            what = f"arguments of tool call {part['id']}"
            report.drop(message, what, "not a JSON object; sent {}")
            arguments = {}
        function = {"name": part["name"], "arguments": codec.dumps(arguments)}
        calls.append({"id": part["id"], "type": "function", "function": function})
    if not text and not calls:
        return None
    out: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        out["tool_calls"] = calls
    return out


def _join_reply(reply: dict[str, Any], more: dict[str, Any]) -> None:
    """Add the assistant message ``more`` to ``reply``, the one before it: texts joined by a
    line, tool calls in order."""
    texts = [t for t in (reply["content"], more["content"]) if t]
    reply["content"] = "\n".join(texts) or None
    calls = reply.get("tool_calls", []) + more.get("tool_calls", [])
    if calls:
        reply["tool_calls"] = calls


def _tool(message: dict[str, Any], images: list[dict[str, Any]], report: LeftOut) -> dict[str, Any]:
    found = _texts(message, report, ("image",))
    texts = [x for x in found if isinstance(x, str)]
    pictures = [x for x in found if not isinstance(x, str)]
    call = message["toolCallId"]
    if pictures:
        images.append({"type": "text", "text": IMAGES_OF.format(call=call)})
        images.extend(pictures)
    text = "\n".join(texts) or (IMAGES_ONLY if pictures else NO_OUTPUT)
    if message.get("isError"):
        text = TOOL_ERROR_PREFIX + text
    return {"role": "tool", "tool_call_id": call, "content": text}


def _effort(value: Any, report: LeftOut) -> str | None:
    if value is None:
        return None
    setting = level(value)
    if setting is None or isinstance(setting, int):
        report.drop(None, f"thinking level {value!r}", "OpenAI has no setting for it")
        return None
    return "none" if setting == "off" else setting
