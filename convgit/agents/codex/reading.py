"""Codex rollouts (``~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl``).

A rollout is linear: each record follows the one before. The ``response_item`` records are what
the model saw, and each becomes one entry, in a line: a user prompt, an assistant's reasoning,
text or tool call (an assistant reply is several entries in a row, which replay reads as one),
a tool's output. Everything else is kept with its exact text beside the entry it follows and
is not interpreted: ``event_msg`` records mirror the response items (the prompt, the reply, the
reasoning summary, the command's output) or mark turns, and are never imported twice;
``session_meta`` holds the instructions and the thread's origin.

* Injected context is not a user prompt: developer messages (permissions), and user messages
  that Codex itself marks as context (``# AGENTS.md instructions``, ``<environment_context>``,
  ``<turn_aborted>``…) or that no ``user_message`` event mirrors, become ``custom`` entries
  (kept in order, not replayed).
* ``function_call``, ``custom_tool_call`` and the like pair with their outputs by ``call_id``.
* ``turn_context`` becomes a ``model`` (and ``thinking``) entry when the model (or its
  reasoning effort) changes; ``compacted`` becomes a compaction that replaces what came before,
  followed by the ``replacement_history`` Codex continued from.
* A subagent's rollout (``parent_thread_id``) is a fork of its parent thread; a file cut
  mid-turn imports up to the cut, a last line still being written waits for the next import;
  a line written twice in a row is imported once.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from typing import Any

from convgit.agents.codex import NAME, TITLE
from convgit.agents.reading import (
    Batch,
    Cursor,
    ForkSource,
    Importer,
    ImportReport,
    Known,
    Record,
    derived_id,
    kept_record,
    native_field,
    read_jsonl,
)
from convgit.base import codec
from convgit.base.errors import NotARolloutError

INSTRUCTIONS = "codex.instructions"  # injected context: kept in order, not replayed
# the text with which Codex marks a user message as context rather than the user's own words
CONTEXT_MARKS = (
    "# agents.md instructions",
    "<environment_context",
    "<user_instructions",
    "<permissions instructions",
    "<turn_aborted",
    "<user_shell_command",
    "<skill",
    "<subagent_notification",
    "<collaboration_mode",
    "<personality_spec",
    "<model_switch",
    "<context_update",
    "<realtime_conversation",
    "<codex_internal_context",
    "<recommended_plugins",
    "<hook_prompt",
    "<external_",
)
ENCRYPTED_SUMMARY = "Codex compacted the conversation here; its summary is encrypted."
_KEY = re.compile(r"[a-z](\d+)-[0-9a-f]{8}")  # derived_id of the first object of a line
_MODEL_ITEMS = frozenset({"reasoning", "function_call", "custom_tool_call", "web_search_call"})


# What Codex 0.171 writes beside the turns: the workspace state it saw, the tokens of a response.
_BOOKKEEPING = frozenset({"world_state", "token_usage_record"})


def session_id(data: bytes) -> str | None:
    """The thread id in the ``session_meta`` first line of a rollout, or None."""
    meta = _meta(data.split(b"\n", 1)[0])
    return None if meta is None else str(meta["id"])


def line_of(key: str) -> int | None:
    """The line of its rollout a record was read from, by the key (or entry id) this importer
    gave it; None for a key it did not make from a line (the first object of it)."""
    found = _KEY.fullmatch(key)
    return None if found is None else int(found.group(1))


def _meta(line: bytes) -> dict[str, Any] | None:
    try:
        value = codec.decode(line.strip())
    except ValueError:
        return None
    if type(value) is not dict or value.get("type") != "session_meta":
        return None
    payload = value.get("payload")
    if type(payload) is not dict or type(payload.get("id")) is not str:
        return None
    return payload


def parse(data: bytes, cursor: Cursor, known: Known) -> Batch:
    """The batch for ``data``, the rollout from ``cursor.offset``; see the module docstring."""
    read = read_jsonl(data, cursor)
    reader = _Reader(dict(cursor.state))
    records = read.records
    if cursor.offset == 0:
        if not records or records[0].value is None or _meta(records[0].raw) is None:
            raise NotARolloutError(
                "This file is not a Codex rollout: its first line is not a session_meta record.",
                "Codex writes rollouts under ~/.codex/sessions/",
            )
        reader.session_meta(records[0])
        records = records[1:]
    reader.mirrored = _mirrored_prompts(records, reader.state.get("mirrors", False))
    for record in records:
        reader.take(record)
    reader.finish()
    if read.torn is not None:
        reader.report.note(
            read.torn, "is incomplete (Codex may still be writing it): left for the next import"
        )
    new = [r["id"] for r in reader.out if "parentId" in r and r["id"] not in known.entries]
    return Batch(
        reader.out,
        Cursor(read.offset, read.line, read.index, reader.state),
        leaf=new[-1] if new else None,
        report=reader.report,
    )


def fork_source(data: bytes) -> ForkSource | None:
    """The thread a subagent's rollout was spawned from (or a fork's source thread): the
    entry forked from is the parent's spawn call that names this thread."""
    meta = _meta(data.split(b"\n", 1)[0])
    if meta is None:
        return None
    source = meta.get("source")
    spawn = source.get("subagent") if type(source) is dict else None
    spawn = spawn.get("thread_spawn") if type(spawn) is dict else None
    parent = meta.get("parent_thread_id") or (
        spawn.get("parent_thread_id") if type(spawn) is dict else None
    )
    parent = parent or meta.get("forked_from_id")
    if type(parent) is not str or not parent:
        return None
    ts = meta.get("timestamp") if type(meta.get("timestamp")) is str else None
    return ForkSource("codex", session=parent, mention=str(meta["id"]), before=ts)


IMPORTER = Importer(
    agent=NAME, title=TITLE, session_id=session_id, parse=parse, fork_source=fork_source
)


def _mirrored_prompts(records: list[Record], mirrors: bool) -> set[int]:
    """The positions of user messages that a ``user_message`` event mirrors (the event comes
    after the item, before the next response item). A rollout with no such events at all
    (older Codex) mirrors every user message that Codex does not mark as context."""
    found: set[int] = set()
    candidate: int | None = None
    any_event = mirrors
    for position, record in enumerate(records):
        value = record.value or {}
        found_payload = value.get("payload")
        payload: dict[str, Any] = found_payload if type(found_payload) is dict else {}
        if value.get("type") == "response_item":
            candidate = None
            if payload.get("type") == "message" and payload.get("role") == "user":
                candidate = position
        elif value.get("type") == "event_msg" and payload.get("type") == "user_message":
            any_event = True
            if candidate is not None:
                found.add(candidate)
                candidate = None
    if candidate is not None:
        found.add(candidate)  # the batch ends before its mirror: Codex writes it next
    if not any_event:
        return {p for p, r in enumerate(records) if _is_user_item(r)}
    return found


def _is_user_item(record: Record) -> bool:
    value = record.value or {}
    payload = value.get("payload")
    return (
        value.get("type") == "response_item"
        and type(payload) is dict
        and payload.get("type") == "message"
        and payload.get("role") == "user"
    )


class _Reader:
    """One pass over a rollout's records; ``state`` carries what the next import needs."""

    def __init__(self, state: dict[str, Any]) -> None:
        self.state = state
        self.report = ImportReport()
        self.out: list[dict[str, Any]] = []
        self.mirrored: set[int] = set()
        self.position = -1
        self.last: tuple[int, bytes] | None = None  # the last record read: line, bytes

    def session_meta(self, record: Record) -> None:
        meta = _meta(record.raw) or {}
        ts = _ts(record.value or {}) or str(meta.get("timestamp") or "1970-01-01T00:00:00.000Z")
        self.state.update(
            session=meta["id"],
            previous=None,
            ts=ts,
            model=None,
            effort=None,
            provider=meta.get("model_provider")
            if type(meta.get("model_provider")) is str
            else "openai",
        )
        self.out.append(kept_record(record, "session", None, ts))

    def take(self, record: Record) -> None:
        self.position += 1
        if self._repeats(record):
            return
        value = record.value
        if value is None:
            self._keep(record, "line", f"{record.problem}: kept as it is, not interpreted")
            return
        ts = value.get("timestamp")
        if type(ts) is not str or not ts:
            ts = self.state["ts"]
        self.state["ts"] = ts
        kind, payload = value.get("type"), value.get("payload")
        if type(payload) is not dict:
            self._keep(record, str(kind), "has no payload object: kept as it is, not interpreted")
        elif kind == "response_item":
            self._item(record, payload, ts)
        elif kind == "turn_context":
            self._turn_context(record, payload, ts)
        elif kind == "compacted":
            self._compacted(record, payload, ts)
        elif kind == "event_msg":
            if payload.get("type") == "user_message":
                self.state["mirrors"] = True
            self.out.append(
                kept_record(record, derived_id(record, "e"), self.state["previous"], ts)
            )
        elif kind == "session_meta":
            self.out.append(
                kept_record(record, derived_id(record, "s"), self.state["previous"], ts)
            )
        elif kind in _BOOKKEEPING:  # known, kept and counted, nothing to interpret
            self.out.append(
                kept_record(record, derived_id(record, "x"), self.state["previous"], ts)
            )
            self.report.keep(str(kind), record.line)
        else:
            self._keep(record, str(kind), "is a record kind this importer does not know: kept")

    def _repeats(self, record: Record) -> bool:
        """Whether ``record`` is the one before it written again, byte for byte (noted)."""
        last = self.last
        if last is None:
            saved = self.state.get("last")
            if isinstance(saved, list) and saved[1] == _digest(record.raw):
                last = (int(saved[0]), record.raw)
        elif last[1] != record.raw:
            last = None
        if last is not None:
            self.report.note(record.line, f"repeats line {last[0]} exactly: imported once")
            return True
        self.last = (record.line, record.raw)
        return False

    def finish(self) -> None:
        """Leave in ``state`` what the next import needs of the last record."""
        if self.last is not None:
            self.state["last"] = [self.last[0], _digest(self.last[1])]

    def _keep(self, record: Record, kind: str, what: str) -> None:
        self.out.append(
            kept_record(record, derived_id(record, "x"), self.state["previous"], self.state["ts"])
        )
        self.report.keep(kind, record.line)
        self.report.note(record.line, what)

    def _entry(self, record: Record, fields: dict[str, Any], ts: str, part: int = 0) -> None:
        first = derived_id(record)
        ident = first if part == 0 else f"{first}_{part + 1}"
        entry = {"type": fields["type"], "id": ident, "parentId": self.state["previous"], "ts": ts}
        entry.update(fields)
        entry["native"] = native_field(record, ident) if part == 0 else {"key": ident, "in": first}
        self.out.append(entry)
        self.state["previous"] = ident

    # -- response items -------------------------------------------------------------------------

    def _item(self, record: Record, payload: dict[str, Any], ts: str) -> None:
        self._entry(record, self._fields(payload, record, self.position), ts)

    def _fields(
        self, payload: dict[str, Any], record: Record | None, position: int | None
    ) -> dict[str, Any]:
        """The entry a response item makes (``position``: its place in the batch, None for an
        item of a compaction's replacement history)."""
        kind = payload.get("type")
        if kind == "message":
            role = payload.get("role")
            content = payload.get("content")
            if role == "assistant":
                return _message("assistant", content)
            elif (
                role == "user"
                and not _marked(content)
                and (position is None or position in self.mirrored)
            ):
                return _message("user", content)
            else:
                return {"type": "custom", "kind": INSTRUCTIONS, "data": {"role": role}}
        elif kind == "reasoning":
            return {"type": "message", "role": "assistant", "content": [_reasoning(payload)]}
        elif kind == "web_search_call":
            part = {"type": "web_search", "action": payload.get("action")}
            return {"type": "message", "role": "assistant", "content": [part]}
        elif type(payload.get("call_id")) is str and str(kind).endswith("_output"):
            return {
                "type": "message",
                "role": "tool",
                "toolCallId": payload["call_id"],
                "content": _output_text(payload.get("output")),
            }
        elif type(payload.get("call_id")) is str and str(kind).endswith("_call"):
            call = {
                "type": "tool_call",
                "id": payload["call_id"],
                "name": _call_name(payload),
                "input": _call_input(payload),
            }
            return {"type": "message", "role": "assistant", "content": [call]}
        else:
            if record is not None:
                self.report.keep(f"response item {kind}", record.line)
            return {"type": "custom", "kind": f"codex.{kind}", "data": None}

    # -- settings and compaction ----------------------------------------------------------------

    def _turn_context(self, record: Record, payload: dict[str, Any], ts: str) -> None:
        made = []
        model = payload.get("model")
        if type(model) is str and model and model != self.state.get("model"):
            self.state["model"] = model
            made.append({"type": "model", "provider": self.state["provider"], "model": model})
        effort = payload.get("effort")
        if type(effort) is str and effort and effort != self.state.get("effort"):
            self.state["effort"] = effort
            made.append({"type": "thinking", "level": effort})
        if not made:
            self.out.append(
                kept_record(record, derived_id(record, "t"), self.state["previous"], ts)
            )
        for part, fields in enumerate(made):
            self._entry(record, fields, ts, part)

    def _compacted(self, record: Record, payload: dict[str, Any], ts: str) -> None:
        summary = payload.get("message")
        history = payload.get("replacement_history")
        text = summary if type(summary) is str and summary.strip() else ENCRYPTED_SUMMARY
        made = [{"type": "compaction", "summary": text, "firstKeptId": None}]
        for item in history if type(history) is list else []:
            if type(item) is dict and item.get("type") != "compaction":
                made.append(self._fields(item, None, None))
        for part, fields in enumerate(made):
            self._entry(record, fields, ts, part)


# -- pieces ---------------------------------------------------------------------------------


def _digest(raw: bytes) -> str:
    return hashlib.blake2b(raw, digest_size=8).hexdigest()


def _ts(value: Mapping[str, Any]) -> str | None:
    ts = value.get("timestamp")
    return ts if type(ts) is str and ts else None


def _texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    return [p["text"] for p in content if type(p) is dict and type(p.get("text")) is str]


def _marked(content: Any) -> bool:
    """Codex's own test for a user message that is context, not the user's words."""
    return any(text.lstrip().lower().startswith(CONTEXT_MARKS) for text in _texts(content))


def _message(role: str, content: Any) -> dict[str, Any]:
    parts: list[dict[str, Any]] = []
    for part in content if isinstance(content, list) else [{"type": "input_text", "text": content}]:
        kind = part.get("type") if type(part) is dict else None
        if kind in ("input_text", "output_text") and type(part.get("text")) is str:
            parts.append({"type": "text", "text": part["text"]})
        elif kind == "input_image" and type(part.get("image_url")) is str:
            parts.append({"type": "image", "source": {"type": "url", "url": part["image_url"]}})
        else:
            parts.append({"type": f"codex.{kind}", "value": part})
    return {"type": "message", "role": role, "content": parts}


def _reasoning(payload: Mapping[str, Any]) -> dict[str, Any]:
    """A thinking part with the reasoning's readable text (its summary, or its content when
    the provider sends it); the encrypted reasoning stays in the kept record."""
    texts = _texts(payload.get("summary")) + _texts(payload.get("content"))
    return {"type": "thinking", "thinking": "\n\n".join(texts)}


def _call_name(payload: Mapping[str, Any]) -> str:
    name = payload.get("name")
    if type(name) is not str:
        return str(payload.get("type", "tool"))
    namespace = payload.get("namespace")
    return f"{namespace}.{name}" if type(namespace) is str and namespace else name


def _call_input(payload: Mapping[str, Any]) -> Any:
    arguments = payload.get("arguments")
    if type(arguments) is str:
        try:
            parsed = codec.decode(arguments)
        except ValueError:
            parsed = None
        return parsed if type(parsed) is dict else {"arguments": arguments}
    if "input" in payload:
        return {"input": payload["input"]}
    rest = {k: v for k, v in payload.items() if k not in ("type", "call_id", "id", "status")}
    return rest


def _output_text(output: Any) -> str:
    if type(output) is str:
        return output
    texts = _texts(output)
    if texts:
        return "\n".join(texts)
    if type(output) is dict and type(output.get("content")) is str:
        return str(output["content"])
    return codec.dumps(output)


_KINDS = frozenset({"session_meta", "response_item", "event_msg", "turn_context", "compacted"})


def recognises(records: list[dict[str, Any]], data: bytes) -> bool:
    """A rollout: one of its first two lines is ``{"type", "payload"}`` of a kind Codex writes."""
    return any(r.get("type") in _KINDS and isinstance(r.get("payload"), dict) for r in records[:2])
