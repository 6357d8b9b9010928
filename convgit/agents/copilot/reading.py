"""GitHub Copilot CLI's session files (``~/.copilot/session-state/<id>/events.jsonl``,
``$COPILOT_HOME`` honoured), as the CLI 1.0.x writes them (its schema ships with it:
``schemas/session-events.schema.json``): one event a line, ``{"type", "data", "id",
"timestamp", "parentId"}``, the ids UUIDs.

An events file is a line of events: the CLI's ``parentId`` names the event before, or one it
never writes (its live-only events: deltas, telemetry). So each event hangs below the one before
it in the file. The events the model sees become entries, with the event's id:

* ``user.message`` is a user entry (``content``, what the user typed; ``transformedContent``,
  what the model was sent with the CLI's wrapping, stays in the kept text);
* ``assistant.message`` is an assistant entry: its ``reasoningText`` as thinking, its
  ``content``, and its ``toolRequests`` as tool calls (a ``model`` entry comes first when its
  ``model`` differs from the one before);
* ``tool.execution_complete`` is a tool entry (``result.content``, or ``error.message`` when
  ``success`` is false);
* ``session.model_change`` is a ``model`` entry, ``session.compaction_complete`` with its
  ``summaryContent`` a compaction.

Every other event (``session.start``, the system prompt, turns' starts and ends, hooks, usage,
warnings) is kept with its exact text beside the entry it follows, under its own id, and not
interpreted. A subagent's events (``parentToolCallId``: they run inside the ``task`` tool's
call) are kept the same way: the call and its result are the turn's.

The CLI only appends, except ``/rewind``, which takes the events after a point out of the file:
the next import reads it whole again, skips what the session has, and what the CLI writes after
the point hangs below it, a branch beside the events rewound. A torn last line waits for the next
import; a line that is not JSON, or an event without an id, is kept as it is and noted.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from convgit.agents.copilot import NAME, TITLE
from convgit.agents.reading import (
    Batch,
    Cursor,
    Importer,
    ImportReport,
    Known,
    Record,
    derived_id,
    entry_id,
    kept_record,
    native_field,
    read_jsonl,
)
from convgit.base import codec
from convgit.base.errors import NotACopilotSessionError

PROVIDER = "github-copilot"
START = "session.start"
# the event types the CLI writes that make entries; every other is kept
ENTRIES = frozenset(
    {
        "user.message",
        "assistant.message",
        "tool.execution_complete",
        "session.model_change",
        "session.compaction_complete",
    }
)
_EPOCH = "1970-01-01T00:00:00.000Z"
_BOM = b"\xef\xbb\xbf"


def session_id(data: bytes) -> str | None:
    """The session id in the ``session.start`` first line of a whole file, or None."""
    start = _start(data.removeprefix(_BOM).split(b"\n", 1)[0])
    return None if start is None else str(start["sessionId"])


def _start(line: bytes) -> dict[str, Any] | None:
    """The data of a ``session.start`` event, when ``line`` is one naming its session."""
    try:
        value = codec.decode(line.strip())
    except ValueError:
        return None
    if type(value) is not dict or value.get("type") != START:
        return None
    data = value.get("data")
    if type(data) is not dict or type(data.get("sessionId")) is not str or not data["sessionId"]:
        return None
    return data


def parse(data: bytes, cursor: Cursor, known: Known) -> Batch:
    """The batch for ``data``, the events file from ``cursor.offset``; see the module docstring."""
    data = data.removeprefix(_BOM) if cursor.offset == 0 else data
    read = read_jsonl(data, cursor)
    reader = _Reader(dict(cursor.state), known)
    records = read.records
    if cursor.offset == 0:
        if not records or records[0].value is None or _start(records[0].raw) is None:
            raise NotACopilotSessionError(
                f"This file is not a {TITLE} session: its first line is not a session.start event.",
                "the CLI writes ~/.copilot/session-state/<session id>/events.jsonl",
            )
        reader.state.update(previous=None, ts=_EPOCH, model=None)
    for record in records:
        reader.take(record)
    if read.torn is not None:
        reader.report.note(
            read.torn, f"is incomplete ({TITLE} may still be writing it): left for the next import"
        )
    return Batch(
        reader.out,
        Cursor(read.offset, read.line, read.index, reader.state),
        leaf=reader.new[-1] if reader.new else None,
        report=reader.report,
    )


IMPORTER = Importer(agent=NAME, title=TITLE, session_id=session_id, parse=parse)


class _Reader:
    """One pass over an events file's lines; ``state`` carries what the next import needs: the
    entry the next hangs below (``previous``), the last time and model seen."""

    def __init__(self, state: dict[str, Any], known: Known) -> None:
        self.state = state
        self.known = known
        self.report = ImportReport()
        self.out: list[dict[str, Any]] = []
        self.new: list[str] = []
        self.made: set[str] = set()  # entry ids and kept keys this batch emitted
        self.subagents = False

    def take(self, record: Record) -> None:
        value = record.value
        if value is None:
            self._keep(record, derived_id(record, "x"), f"{record.problem}: kept as it is")
            self.report.keep("line that is not an event", record.line)
            return
        ts = value.get("timestamp")
        if type(ts) is str and ts:
            self.state["ts"] = ts
        kind, data, native = value.get("type"), value.get("data"), value.get("id")
        if type(native) is not str or not native or type(data) is not dict:
            self._keep(record, derived_id(record, "x"), "is no event with an id and data: kept")
            self.report.keep(str(kind), record.line)
            return
        ident = entry_id(native)
        if ident in self.made:
            self.report.note(record.line, f"repeats the id of an event before it ({native}): kept")
            self._keep(record, derived_id(record, "x"), None)
            return
        if kind not in ENTRIES or "parentToolCallId" in data:
            if "parentToolCallId" in data and not self.subagents:
                self.subagents = True
                self.report.note(record.line, "a subagent's events: kept, not entries")
            self._keep(record, native, None)
            return
        made = self._entries(str(kind), data, ident, record)
        if not made:
            self._keep(record, native, None)
            self.report.keep(str(kind), record.line)
            return
        for entry in made:
            self._emit(entry)

    # -- emitting -------------------------------------------------------------------------------

    def _keep(self, record: Record, key: str, note: str | None) -> None:
        at = self.state.get("previous")
        self.out.append(kept_record(record, key, at, str(self.state.get("ts") or _EPOCH)))
        self.made.add(key)
        if note is not None:
            self.report.note(record.line, note)

    def _emit(self, entry: dict[str, Any]) -> None:
        ident = entry["id"]
        had = self.known.entries.get(ident)
        if had is None:
            entry["parentId"] = self.state.get("previous")
            self.new.append(ident)
        else:  # emitted for ``fresh``, which drops it; what follows hangs below it
            entry["parentId"] = had.get("parentId")
        entry["ts"] = str(self.state.get("ts") or _EPOCH)
        self.out.append(entry)
        self.made.add(ident)
        self.state["previous"] = ident

    # -- events as entries ----------------------------------------------------------------------

    def _entries(
        self, kind: str, data: dict[str, Any], ident: str, record: Record
    ) -> list[dict[str, Any]]:
        native = native_field(record, ident)
        if kind == "user.message":
            content = data.get("content")
            if type(content) is not str:
                return []
            parts: list[dict[str, Any]] = [{"type": "text", "text": content}]
            for attached in data.get("attachments") or []:
                parts.append({"type": "copilot.attachment", "value": attached})
            return [{"type": "message", "id": ident, "role": "user", "content": parts,
                     "native": native}]  # fmt: skip
        if kind == "assistant.message":
            return self._assistant(data, ident, native)
        if kind == "tool.execution_complete":
            call = data.get("toolCallId")
            if type(call) is not str or not call:
                return []
            failed = data.get("success") is not True
            return [
                {
                    "type": "message",
                    "id": ident,
                    "role": "tool",
                    "toolCallId": call,
                    "isError": failed,
                    "content": result_text(data),
                    "native": native,
                }
            ]
        if kind == "session.model_change":
            model = data.get("newModel")
            if type(model) is not str or not model:
                return []
            self.state["model"] = model
            return [{"type": "model", "id": ident, "provider": _provider(data), "model": model,
                     "native": native}]  # fmt: skip
        summary = data.get("summaryContent")  # session.compaction_complete
        if data.get("success") is not True or type(summary) is not str or not summary:
            return []
        return [{"type": "compaction", "id": ident, "summary": summary, "firstKeptId": None,
                 "native": native}]  # fmt: skip

    def _assistant(
        self, data: dict[str, Any], ident: str, native: dict[str, Any]
    ) -> list[dict[str, Any]]:
        made: list[dict[str, Any]] = []
        model = data.get("model")
        if type(model) is str and model and model != self.state.get("model"):
            self.state["model"] = model
            key = f"model-{ident}"
            made.append({"type": "model", "id": key, "provider": _provider(data), "model": model,
                         "native": {"key": key, "in": ident}})  # fmt: skip
        parts: list[dict[str, Any]] = []
        thinking = data.get("reasoningText")
        if type(thinking) is str and thinking:
            parts.append({"type": "thinking", "thinking": thinking})
        text = data.get("content")
        if type(text) is str and text:
            parts.append({"type": "text", "text": text})
        for number, request in enumerate(data.get("toolRequests") or []):
            parts.append(_call(request, ident, number))
        made.append({"type": "message", "id": ident, "role": "assistant", "content": parts,
                     "native": native})  # fmt: skip
        if made[0]["type"] == "model" and ident in self.known.entries:
            made = made[1:]  # its model was decided when it was first imported
        return made


def _call(request: Any, message: str, number: int) -> dict[str, Any]:
    """A tool request as a tool call: a function tool's arguments as its input, a custom
    tool's text (``apply_patch``'s patch) as ``{"input": text}``."""
    if type(request) is not dict:
        return {"type": "copilot.tool_request", "value": request}
    ident = request.get("toolCallId")
    name = request.get("name")
    arguments = request.get("arguments")
    return {
        "type": "tool_call",
        "id": ident if type(ident) is str and ident else f"{message}-call{number + 1}",
        "name": name if type(name) is str and name else "tool",
        "input": arguments if type(arguments) is dict else {"input": arguments},
    }


def result_text(data: Mapping[str, Any]) -> str:
    """What a tool answered, as the CLI sends it back to the model: its result's ``content``,
    else its error's ``message``."""
    result, error = data.get("result"), data.get("error")
    if type(result) is dict and type(result.get("content")) is str:
        return str(result["content"])
    if type(error) is dict and type(error.get("message")) is str:
        return str(error["message"])
    if type(error) is str:
        return error
    return codec.dumps(result if result is not None else error)


def _provider(data: Mapping[str, Any]) -> str:
    found = data.get("providerId")
    return found if type(found) is str and found else PROVIDER


def recognises(records: list[dict[str, Any]], data: bytes) -> bool:
    """An events file: its first line is a ``session.start`` event, ``{"type", "data", "id",
    "timestamp", "parentId"}``, its data naming the session and the CLI that wrote it."""
    first = records[0] if records else {}
    start = first.get("data")
    return (
        first.get("type") == START
        and type(start) is dict
        and type(start.get("sessionId")) is str
        and "producer" in start
        and all(key in first for key in ("id", "timestamp", "parentId"))
    )
