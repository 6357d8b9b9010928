"""The three wire formats the agents speak, each both ways: a `Reply` as the streamed body the
agent's SDK expects, and a request's conversation as `Item`s.

* Anthropic Messages (Claude Code): ``POST /v1/messages``, Server-Sent Events ``message_start``,
  ``content_block_start/delta/stop`` per block, ``message_delta`` (stop_reason), ``message_stop``.
* OpenAI chat completions (pi's ``openai-completions`` api, Copilot CLI's provider):
  ``POST /v1/chat/completions``, ``data:`` chunks with ``choices[0].delta``, a finish chunk, a
  usage chunk, ``data: [DONE]``; a call whose input is text is a custom tool's
  (``{"type": "custom", "custom": {"name", "input"}}``: Copilot CLI's ``apply_patch``).
* OpenAI Responses (Codex): ``POST /v1/responses``, ``response.created``, one
  ``response.output_item.done`` per item, ``response.completed``.
* Gemini API v1beta (Gemini CLI): ``POST /v1beta/models/MODEL:streamGenerateContent?alt=sse``,
  one ``data:`` event holding the whole ``GenerateContentResponse`` (its candidate's parts: text,
  then one ``functionCall`` per call); the model is named in the path, and streaming by the
  method (``:generateContent`` is the CLI's utility calls, answered whole).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable

from tests.agents.script import Item, JsonObject, Reply

USAGE_IN, USAGE_OUT = 10, 5


def _sse(events: Iterable[tuple[str | None, object]]) -> bytes:
    parts = []
    for name, data in events:
        payload = data if isinstance(data, str) else json.dumps(data)
        parts.append(f"event: {name}\ndata: {payload}\n\n" if name else f"data: {payload}\n\n")
    return "".join(parts).encode()


def _text_of(content: object) -> str:
    """The text of a string, or of a list of text-like blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return ""


def _user_item(text: str) -> Item:
    return Item("context" if text.lstrip().startswith("<") else "prompt", text)


class Dialect:
    """One wire format. ``stream`` answers a scripted request, ``side`` an unscripted one."""

    name = ""
    error_type = "invalid_request_error"

    def stream(self, reply: Reply, n: int, model: str) -> bytes:
        raise NotImplementedError

    def whole(self, text: str, n: int, model: str) -> JsonObject:
        """A non-streamed reply of plain text (for side requests made without ``stream``)."""
        raise NotImplementedError

    def side(self, body: JsonObject, n: int, path: str = "") -> tuple[str, bytes]:
        """A sensible answer to a request the script did not expect: plain text, streamed the
        way the request asked."""
        text = "(scripted model: side reply)"
        model = self.model(path, body)
        if self.streams(path, body):
            return "text/event-stream", self.stream(Reply(text=text), n, model)
        return "application/json", json.dumps(self.whole(text, n, model)).encode()

    def error(self, message: str) -> bytes:
        return json.dumps({"error": {"message": message, "type": self.error_type}}).encode()

    def items(self, body: JsonObject) -> list[Item]:
        raise NotImplementedError

    def streams(self, path: str, body: JsonObject) -> bool:
        """Whether the request asked for a streamed answer."""
        return bool(body.get("stream"))

    def model(self, path: str, body: JsonObject) -> str:
        return str(body.get("model", "scripted"))

    @staticmethod
    def call_id(n: int, i: int) -> str:
        return f"call_{n}_{i}"


class Anthropic(Dialect):
    name = "anthropic"

    @staticmethod
    def call_id(n: int, i: int) -> str:
        return f"toolu_{n:04d}_{i}"

    def stream(self, reply: Reply, n: int, model: str) -> bytes:
        message: JsonObject = {
            "id": f"msg_{n:04d}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": USAGE_IN, "output_tokens": 1},
        }
        events: list[tuple[str | None, object]] = [
            ("message_start", {"type": "message_start", "message": message})
        ]
        blocks: list[tuple[JsonObject, JsonObject]] = []
        if reply.text:
            blocks.append(
                ({"type": "text", "text": ""}, {"type": "text_delta", "text": reply.text})
            )
        for i, c in enumerate(reply.calls):
            assert isinstance(c.input, dict), f"Claude Code tools take an object: {c}"
            start = {"type": "tool_use", "id": c.id or self.call_id(n, i), "name": c.name}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(c.input)}
            blocks.append(({**start, "input": {}}, delta))
        for index, (start, delta) in enumerate(blocks):
            events.append(
                (
                    "content_block_start",
                    {"type": "content_block_start", "index": index, "content_block": start},
                )
            )
            events.append(
                (
                    "content_block_delta",
                    {"type": "content_block_delta", "index": index, "delta": delta},
                )
            )
            events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
        stop = "tool_use" if reply.calls else "end_turn"
        events.append(
            (
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": stop, "stop_sequence": None},
                    "usage": {"output_tokens": USAGE_OUT},
                },
            )
        )
        events.append(("message_stop", {"type": "message_stop"}))
        return _sse(events)

    def whole(self, text: str, n: int, model: str) -> JsonObject:
        return {
            "id": f"msg_{n:04d}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": USAGE_IN, "output_tokens": USAGE_OUT},
        }

    def error(self, message: str) -> bytes:
        return json.dumps(
            {"type": "error", "error": {"type": self.error_type, "message": message}}
        ).encode()

    def items(self, body: JsonObject) -> list[Item]:
        found: list[Item] = []
        for message in body.get("messages") or []:
            if not isinstance(message, dict):
                continue
            content = message.get("content")
            blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
            for block in blocks or []:
                kind = block.get("type")
                role, text = message.get("role"), str(block.get("text", ""))
                if kind == "text" and role == "user":
                    found.append(_user_item(text))
                elif kind == "text":
                    found.append(Item("text" if role == "assistant" else "context", text))
                elif kind == "tool_use":
                    found.append(
                        Item("call", name=block["name"], input=block["input"], call_id=block["id"])
                    )
                elif kind == "tool_result":
                    text = _text_of(block.get("content"))
                    found.append(Item("result", text, call_id=block["tool_use_id"]))
        return found


class Chat(Dialect):
    name = "chat"

    def _chunk(self, n: int, model: str, delta: JsonObject, finish: str | None) -> JsonObject:
        return {
            "id": f"chatcmpl-{n}",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    def stream(self, reply: Reply, n: int, model: str) -> bytes:
        chunks: list[object] = [self._chunk(n, model, {"role": "assistant"}, None)]
        if reply.text:
            chunks.append(self._chunk(n, model, {"content": reply.text}, None))
        for i, c in enumerate(reply.calls):
            tool: JsonObject = {"index": i, "id": c.id or self.call_id(n, i)}
            if isinstance(c.input, str):  # a custom tool's text (Copilot CLI's apply_patch)
                tool.update(type="custom", custom={"name": c.name, "input": c.input})
            else:
                function = {"name": c.name, "arguments": json.dumps(c.input)}
                tool.update(type="function", function=function)
            chunks.append(self._chunk(n, model, {"tool_calls": [tool]}, None))
        chunks.append(self._chunk(n, model, {}, "tool_calls" if reply.calls else "stop"))
        usage = {
            "prompt_tokens": USAGE_IN,
            "completion_tokens": USAGE_OUT,
            "total_tokens": USAGE_IN + USAGE_OUT,
        }
        chunks.append({**self._chunk(n, model, {}, None), "choices": [], "usage": usage})
        chunks.append("[DONE]")
        return _sse((None, c) for c in chunks)

    def whole(self, text: str, n: int, model: str) -> JsonObject:
        return {
            "id": f"chatcmpl-{n}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop",
                }
            ],
        }

    def items(self, body: JsonObject) -> list[Item]:
        found: list[Item] = []
        for message in body.get("messages") or []:
            if not isinstance(message, dict):
                continue
            role, text = message.get("role"), _text_of(message.get("content"))
            if role == "user":
                found.append(_user_item(text))
            elif role == "assistant":
                if text:
                    found.append(Item("text", text))
                for tool in message.get("tool_calls") or []:
                    if tool.get("type") == "custom":
                        custom = tool["custom"]
                        found.append(
                            Item(
                                "call",
                                name=custom["name"],
                                input=custom.get("input"),
                                call_id=tool["id"],
                            )
                        )
                        continue
                    function = tool["function"]
                    found.append(
                        Item(
                            "call",
                            name=function["name"],
                            input=json.loads(function["arguments"] or "{}"),
                            call_id=tool["id"],
                        )
                    )
            elif role == "tool":
                found.append(Item("result", text, call_id=str(message.get("tool_call_id"))))
        return found


class Responses(Dialect):
    name = "responses"

    def _output(self, reply: Reply, n: int) -> list[JsonObject]:
        output: list[JsonObject] = []
        if reply.text:
            content = [{"type": "output_text", "text": reply.text, "annotations": []}]
            output.append(
                {
                    "type": "message",
                    "id": f"msg_{n}",
                    "role": "assistant",
                    "status": "completed",
                    "content": content,
                }
            )
        for i, c in enumerate(reply.calls):
            base = {"call_id": c.id or self.call_id(n, i), "name": c.name, "status": "completed"}
            if isinstance(c.input, str):
                output.append(
                    {"type": "custom_tool_call", "id": f"ctc_{n}_{i}", **base, "input": c.input}
                )
            else:
                arguments = json.dumps(c.input)
                output.append(
                    {"type": "function_call", "id": f"fc_{n}_{i}", **base, "arguments": arguments}
                )
        return output

    def _response(self, n: int, model: str, output: list[JsonObject], status: str) -> JsonObject:
        usage = {
            "input_tokens": USAGE_IN,
            "output_tokens": USAGE_OUT,
            "total_tokens": USAGE_IN + USAGE_OUT,
        }
        return {
            "id": f"resp_{n}",
            "object": "response",
            "created_at": int(time.time()),
            "model": model,
            "status": status,
            "output": output,
            "usage": usage if status == "completed" else None,
        }

    def stream(self, reply: Reply, n: int, model: str) -> bytes:
        output = self._output(reply, n)
        events: list[tuple[str | None, object]] = []
        created = self._response(n, model, [], "in_progress")
        events.append(("response.created", {"type": "response.created", "response": created}))
        for index, item in enumerate(output):
            done = {"type": "response.output_item.done", "output_index": index, "item": item}
            events.append(("response.output_item.done", done))
        completed = self._response(n, model, output, "completed")
        events.append(("response.completed", {"type": "response.completed", "response": completed}))
        return _sse(events)

    def whole(self, text: str, n: int, model: str) -> JsonObject:
        return self._response(n, model, self._output(Reply(text=text), n), "completed")

    def items(self, body: JsonObject) -> list[Item]:
        found: list[Item] = []
        entries = body.get("input")
        if isinstance(entries, str):
            return [_user_item(entries)]
        for entry in entries or []:
            kind = entry.get("type", "message")
            if kind == "message":
                text, role = _text_of(entry.get("content")), entry.get("role")
                if role == "user":
                    found.append(_user_item(text))
                elif role == "assistant":
                    found.append(Item("text", text))
                else:
                    found.append(Item("context", text))
            elif kind in ("function_call", "custom_tool_call"):
                raw = entry.get("arguments") if kind == "function_call" else entry.get("input")
                parsed = json.loads(raw or "{}") if kind == "function_call" else raw
                found.append(
                    Item("call", name=entry["name"], input=parsed, call_id=entry["call_id"])
                )
            elif kind.endswith("_call_output"):
                found.append(
                    Item("result", _text_of(entry.get("output")), call_id=entry["call_id"])
                )
        return found


class Gemini(Dialect):
    name = "gemini"
    prefix = "/v1beta/models/"

    @staticmethod
    def call_id(n: int, i: int) -> str:
        return f"scripted_call_{n}_{i}"

    def streams(self, path: str, body: JsonObject) -> bool:
        return path.endswith(":streamGenerateContent")

    def model(self, path: str, body: JsonObject) -> str:
        return path[len(self.prefix) :].split(":")[0] or "scripted"

    def _response(self, parts: list[JsonObject], model: str) -> JsonObject:
        usage = {
            "promptTokenCount": USAGE_IN,
            "candidatesTokenCount": USAGE_OUT,
            "totalTokenCount": USAGE_IN + USAGE_OUT,
        }
        candidate = {"content": {"role": "model", "parts": parts}, "finishReason": "STOP"}
        return {"candidates": [{**candidate, "index": 0}], "usageMetadata": usage,
                "modelVersion": model}  # fmt: skip

    def _parts(self, reply: Reply, n: int) -> list[JsonObject]:
        parts: list[JsonObject] = [{"text": reply.text}] if reply.text else []
        for i, c in enumerate(reply.calls):
            assert isinstance(c.input, dict), f"Gemini CLI's tools take an object: {c}"
            call = {"id": c.id or self.call_id(n, i), "name": c.name, "args": c.input}
            parts.append({"functionCall": call})
        return parts

    def stream(self, reply: Reply, n: int, model: str) -> bytes:
        return _sse([(None, self._response(self._parts(reply, n), model))])

    def whole(self, text: str, n: int, model: str) -> JsonObject:
        return self._response([{"text": text}], model)

    def side(self, body: JsonObject, n: int, path: str = "") -> tuple[str, bytes]:
        config = body.get("generationConfig") or {}
        if config.get("responseMimeType") == "application/json":  # a utility call's JSON
            whole = self._response([{"text": "{}"}], self.model(path, body))
            return "application/json", json.dumps(whole).encode()
        return super().side(body, n, path)

    def error(self, message: str) -> bytes:
        error = {"code": 400, "message": message, "status": "INVALID_ARGUMENT"}
        return json.dumps({"error": error}).encode()

    def items(self, body: JsonObject) -> list[Item]:
        found: list[Item] = []
        for content in body.get("contents") or []:
            role = content.get("role")
            for part in content.get("parts") or []:
                if "functionCall" in part:
                    call = part["functionCall"]
                    found.append(Item("call", name=call["name"], input=call.get("args"),
                                      call_id=str(call.get("id", ""))))  # fmt: skip
                elif "functionResponse" in part:
                    answer = part["functionResponse"]
                    response = answer.get("response") or {}
                    text = response.get("output", response.get("error", ""))
                    found.append(Item("result", str(text), call_id=str(answer.get("id", ""))))
                elif isinstance(part.get("text"), str) and not part.get("thought"):
                    text = part["text"]
                    found.append(_user_item(text) if role == "user" else Item("text", text))
        return found


GEMINI = Gemini()
DIALECTS: dict[str, Dialect] = {
    "/v1/messages": Anthropic(),
    "/v1/chat/completions": Chat(),
    "/v1/responses": Responses(),
}
BY_NAME = {d.name: d for d in [*DIALECTS.values(), GEMINI]}


def dialect_for(path: str) -> Dialect | None:
    """The wire format of a request to ``path``: by its whole path, or for the Gemini API by
    its method (``/v1beta/models/MODEL:METHOD``)."""
    found = DIALECTS.get(path)
    methods = (":streamGenerateContent", ":generateContent")
    if found is None and path.startswith(Gemini.prefix) and path.endswith(methods):
        return GEMINI
    return found
