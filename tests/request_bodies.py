"""Is a request body one the provider accepts? Checked with the providers' own SDK types (through
pydantic, with extra keys forbidden and every lazily validated iterable consumed, so nested
blocks are really looked at), and with the ordering rules the types cannot express."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import anthropic.types as at
import openai.types.chat as ot
from anthropic.types.message_create_params import MessageCreateParamsNonStreaming as AnthropicBody
from openai.types.chat.completion_create_params import (
    CompletionCreateParamsNonStreaming as OpenAIBody,
)
from pydantic import ConfigDict, TypeAdapter, ValidationError

from convgit.conversation.replay import Context
from convgit.providers import export

_STRICT = ConfigDict(extra="forbid")
ANTHROPIC_MESSAGES = TypeAdapter(list[at.MessageParam], config=_STRICT)
# MessageParam also admits the SDK's response models, which take any extra key: the request
# blocks alone, strictly
ANTHROPIC_BLOCKS = TypeAdapter(list[at.ContentBlockParam], config=_STRICT)
# a TypedDict takes no config of its own here: a list of one carries it
ANTHROPIC_BODY = TypeAdapter(list[AnthropicBody], config=_STRICT)
OPENAI_MESSAGES = TypeAdapter(list[ot.ChatCompletionMessageParam], config=_STRICT)
OPENAI_BODY = TypeAdapter(list[OpenAIBody], config=_STRICT)
# a 1x1 PNG, base64
PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAE"
    "hQGAhKmMIQAAAABJRU5ErkJggg=="
)
TOOL_USE_ID = re.compile(r"[a-zA-Z0-9_-]+")  # what the Messages API checks tool_use ids against


class InvalidBody(AssertionError):
    pass


def consumed(value: Any) -> Any:
    """``value`` with every iterable read to the end: pydantic validates an ``Iterable[...]``
    field only as it is iterated."""
    if isinstance(value, Mapping):
        return {key: consumed(item) for key, item in value.items()}
    if isinstance(value, (str, bytes, int, float, bool)) or value is None:
        return value
    if isinstance(value, Iterable):
        return [consumed(item) for item in value]
    return value


def validate(adapter: TypeAdapter[Any], value: Any, what: str) -> None:
    try:
        consumed(adapter.validate_python(value))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(x) for x in first["loc"])
        message = f"{what}: {exc.error_count()} errors, e.g. {where}: {first['msg']}"
        raise InvalidBody(message) from None


def check_anthropic(body: dict[str, Any], *, caller: tuple[str, ...] = ()) -> None:
    """A Messages API body, missing nothing but the fields in ``caller`` (the caller's to set)."""
    for name in ("model", "max_tokens"):
        if name not in body and name not in caller:
            raise InvalidBody(f"the body lacks {name}")
    filled = {"model": "claude-x", "max_tokens": 64000, **body}
    validate(ANTHROPIC_BODY, [filled], "body")
    messages = body["messages"]
    validate(ANTHROPIC_MESSAGES, messages, "messages")
    for n, message in enumerate(messages):
        if message["role"] not in ("user", "assistant"):
            raise InvalidBody(f"message {n} has role {message['role']}: system goes on top")
        if not isinstance(message["content"], list) or not message["content"]:
            raise InvalidBody(f"message {n} has no content blocks")
        validate(ANTHROPIC_BLOCKS, message["content"], f"message {n}")
    _anthropic_order(messages)
    if "system" in body and _blank_system(body["system"]):
        raise InvalidBody("the system prompt is blank")


def _blank_system(system: Any) -> bool:
    if isinstance(system, str):
        return not system.strip()
    return not system or any(not block["text"].strip() for block in system)


def _anthropic_order(messages: list[dict[str, Any]]) -> None:
    if messages and messages[0]["role"] != "user":
        raise InvalidBody("the messages do not start with a user turn")
    open_calls: list[str] = []
    seen: set[str] = set()
    for n, message in enumerate(messages):
        if n and message["role"] == messages[n - 1]["role"]:
            raise InvalidBody(f"messages {n - 1} and {n} are both {message['role']} turns")
        blocks = message["content"]
        results = [b["tool_use_id"] for b in blocks if b["type"] == "tool_result"]
        if sorted(results) != sorted(open_calls):
            raise InvalidBody(f"message {n} answers {results}, not the open calls {open_calls}")
        if results and any(b["type"] != "tool_result" for b in blocks[: len(results)]):
            raise InvalidBody(f"message {n}: tool_result blocks must come first")
        open_calls = []
        for block in blocks:
            _no_blank_text(block, n)
            kind = block["type"]
            if (
                kind in ("thinking", "redacted_thinking", "tool_use")
                and message["role"] != "assistant"
            ):
                raise InvalidBody(f"message {n}: a {kind} block in a user turn")
            if kind == "image" and message["role"] != "user":
                raise InvalidBody(f"message {n}: an image in an assistant turn")
            if kind == "tool_use":
                if not TOOL_USE_ID.fullmatch(block["id"]) or block["id"] in seen:
                    raise InvalidBody(f"message {n}: tool_use id {block['id']!r}")
                seen.add(block["id"])
                open_calls.append(block["id"])
    if open_calls:
        raise InvalidBody(f"the last assistant turn leaves the calls {open_calls} unanswered")


def _no_blank_text(block: dict[str, Any], n: int) -> None:
    if block["type"] == "text" and not block["text"].strip():
        raise InvalidBody(f"message {n} has a blank text block")
    if block["type"] == "tool_result":
        content = block.get("content")
        if isinstance(content, str) and not content.strip():
            raise InvalidBody(f"message {n} has a blank tool result")
        if isinstance(content, list):
            if not content:
                raise InvalidBody(f"message {n} has a tool result with an empty content list")
            for inner in content:
                _no_blank_text(inner, n)


def check_openai(body: dict[str, Any], *, caller: tuple[str, ...] = ()) -> None:
    """A Chat Completions body, missing nothing but the fields in ``caller``."""
    if "model" not in body and "model" not in caller:
        raise InvalidBody("the body lacks model")
    validate(OPENAI_BODY, [{"model": "gpt-x", **body}], "body")
    messages = body["messages"]
    validate(OPENAI_MESSAGES, messages, "messages")
    _openai_order(messages)


def _openai_order(messages: list[dict[str, Any]]) -> None:
    roles = [m["role"] for m in messages]
    if "system" in roles[1:] or "developer" in roles:
        raise InvalidBody("a system message after the first")
    talk = messages[1:] if roles[:1] == ["system"] else messages
    if talk and talk[0]["role"] != "user":
        raise InvalidBody("the messages do not start with a user turn")
    expected: list[str] = []
    for n, message in enumerate(talk):
        role = message["role"]
        if role == "tool":
            if message["tool_call_id"] not in expected:
                raise InvalidBody(f"message {n} answers {message['tool_call_id']}, not {expected}")
            expected.remove(message["tool_call_id"])
        elif expected:
            raise InvalidBody(f"message {n} comes before the calls {expected} are answered")
        _no_blank_content(message, n)
        if role == "assistant":
            expected = [call["id"] for call in message.get("tool_calls", [])]
            if message.get("content") is None and not expected:
                raise InvalidBody(f"message {n} is an assistant message with nothing in it")
    if expected:
        raise InvalidBody(f"the calls {expected} are never answered")


def _no_blank_content(message: dict[str, Any], n: int) -> None:
    content = message.get("content")
    if isinstance(content, str) and not content.strip():
        raise InvalidBody(f"message {n} has blank content")
    if isinstance(content, list):
        if not content:
            raise InvalidBody(f"message {n} has an empty content list")
        for part in content:
            if part["type"] == "text" and not part["text"].strip():
                raise InvalidBody(f"message {n} has a blank text part")


@dataclass
class Sent:
    """Both request bodies of one context, each checked, and what each left out."""

    anthropic: dict[str, Any]
    openai: dict[str, Any]
    anthropic_dropped: list[dict[str, Any]]
    openai_dropped: list[dict[str, Any]]


def sent(ctx: Context, *, max_tokens: int | None = None) -> Sent:
    """Export ``ctx`` both ways and check both bodies (the model and ``max_tokens`` may be left
    to the caller)."""
    caller = ("model", "max_tokens")
    anthropic, anthropic_dropped = export(ctx, "anthropic", max_tokens=max_tokens)
    check_anthropic(anthropic, caller=caller)
    openai, openai_dropped = export(ctx, "openai", max_tokens=max_tokens)
    check_openai(openai, caller=caller)
    return Sent(anthropic, openai, anthropic_dropped, openai_dropped)
