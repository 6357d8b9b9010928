"""pi's session files (``~/.pi/agent/sessions/--<cwd>--/<time>_<id>.jsonl``), versions 1 to 3.

Every pi entry becomes one convgit entry that keeps its exact text (``native``), so the tree is
pi's tree: v2 and v3 entries keep their ids and parents (ids are unique per file, and each pi
file is a session of its own); v1 entries, which have none, get ids from their place in the file
and hang in a line, as pi's own migration does, and a v1 compaction's ``firstKeptEntryIndex``
counts the header as 0 and every object of a line as one. The active leaf is the last entry of
the file, as pi loads it. ``label`` and ``session_info`` are tree nodes in pi: they stay entries
(``custom``, not replayed) and also become convgit's label and name. ``parentSession`` (v1:
``branchedFrom``) names the file a fork was made from (``fork_source``).

Tolerated and reported, as pi tolerates them: a torn last line (left for the next import), a
record written twice (imported once), a line that is not a JSON object (kept as it is), a parent
that is not in the file (the entry is a root, as pi's path walk stops there). Refused: a file
that is no pi session, a version other than 1 to 3, and one id used by two different records.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any

from convgit import schema
from convgit.agents.pi import NAME, TITLE
from convgit.agents.reading import (
    Batch,
    Cursor,
    ForkSource,
    Importer,
    ImportReport,
    Known,
    Record,
    derived_id,
    entry_id,
    kept_record,
    kept_text,
    native_field,
    read_jsonl,
)
from convgit.base import codec
from convgit.base.errors import NotAPiSessionError

VERSIONS = (1, 2, 3)
LABEL_KIND = "pi.label"  # a pi label entry, kept as a tree node
SESSION_INFO_KIND = "pi.session_info"
_BOM = b"\xef\xbb\xbf"
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def session_id(data: bytes) -> str | None:
    """The pi session id in the header of a whole file, or None when it is no pi session."""
    first = data.split(b"\n", 1)[0].strip()
    try:
        value = codec.decode(first.removeprefix(_BOM))
    except ValueError:
        return None
    if type(value) is dict and value.get("type") == "session" and type(value.get("id")) is str:
        return str(value["id"])
    return None


def parse(data: bytes, cursor: Cursor, known: Known) -> Batch:
    """The batch for ``data`` (the file from ``cursor.offset``); see the module docstring."""
    read = read_jsonl(data, cursor)
    reader = _Reader(dict(cursor.state), known)
    records = read.records
    if cursor.offset == 0:
        if not records:
            raise NotAPiSessionError(
                "This file is not a pi session: it has no header line."
                if read.torn is None
                else "This file is not a pi session yet: its only line is incomplete."
            )
        reader.header(records[0])
        records = records[1:]
    for record in records:
        reader.take(record)
    if read.torn is not None:
        reader.report.note(
            read.torn, "is incomplete (pi may still be writing it): left for the next import"
        )
    return Batch(
        reader.out,
        Cursor(read.offset, read.line, read.index, reader.state),
        leaf=reader.leaf,
        report=reader.report,
    )


def fork_source(data: bytes) -> ForkSource | None:
    """The file a fork was made from (``parentSession``; v1: ``branchedFrom``), and the entries
    the fork copied from it (pi copies them with their ids)."""
    try:
        header = codec.decode(data.split(b"\n", 1)[0].strip().removeprefix(_BOM))
    except ValueError:
        return None
    if not isinstance(header, dict) or header.get("type") != "session":
        return None
    source = header.get("parentSession", header.get("branchedFrom"))
    if not isinstance(source, str) or not source:
        return None
    try:
        batch = parse(data, Cursor(), Known())
    except NotAPiSessionError:
        return None
    shared = tuple(r["id"] for r in batch.records if "parentId" in r)
    ts = _iso(header.get("timestamp"))
    return ForkSource("pi", session=_session_in_path(source), path=source, shared=shared, before=ts)


IMPORTER = Importer(
    agent=NAME, title=TITLE, session_id=session_id, parse=parse, fork_source=fork_source
)


class _Reader:
    """One pass over a file's records, in order; ``state`` carries what the next import needs."""

    def __init__(self, state: dict[str, Any], known: Known) -> None:
        self.state = state
        self.known = known
        self.report = ImportReport()
        self.out: list[dict[str, Any]] = []
        self.leaf: str | None = None
        # the entries of this batch: id -> (parent, native text, line)
        self.parents: dict[str, str | None] = {}
        self.texts: dict[str, tuple[bytes, int]] = {}

    # -- the header -------------------------------------------------------------------------

    def header(self, record: Record) -> None:
        value = record.value
        if value is None or value.get("type") != "session":
            raise NotAPiSessionError(
                "This file is not a pi session: its first line is not a session header.",
                "pi writes a line with type 'session' first",
            )
        if type(value.get("id")) is not str or not value["id"]:
            raise NotAPiSessionError("This pi session's header has no id.")
        version = value.get("version", 1)
        if type(version) is not int or version not in VERSIONS:
            newer = type(version) is int and version > VERSIONS[-1]
            raise NotAPiSessionError(
                f"This pi session is written in session format version {version!r}; convgit"
                " reads versions 1 to 3.",
                "a newer pi wrote it: upgrade convgit" if newer else "pi writes 1, 2 or 3",
            )
        ts = _iso(value.get("timestamp")) or "1970-01-01T00:00:00.000Z"
        self.state.update(version=version, session=value["id"], ts=ts, count=1, previous=None)
        self.out.append(kept_record(record, "session", None, ts))

    # -- records ----------------------------------------------------------------------------

    def take(self, record: Record) -> None:
        index = self.state["count"]
        self.state["count"] = index + 1
        value = record.value
        if value is None:
            self._keep(record, f"{record.problem}: kept as it is, not interpreted")
            return
        parent: str | None
        if self.state["version"] == 1:
            # v1 entries have no ids: one from the record's place and text (pi's migration
            # makes random ones, which a second import could not find again)
            ident = derived_id(record, "p")
            parent = self.state["previous"]
        else:
            native, above = value.get("id"), value.get("parentId")
            if type(native) is not str or not native or not (above is None or type(above) is str):
                self._keep(record, "has no string id and parentId: kept as it is, not a tree node")
                return
            ident = entry_id(native)
            parent = None if above is None else entry_id(above)
        if self._repeated(ident, record):
            return
        if parent is not None and not self._exists(parent):
            self.report.note(
                record.line,
                f"(entry {ident}) has a parent {parent} that is not in the file: a root, as pi"
                " reads it",
            )
            parent = None
        ts = _iso(value.get("timestamp")) or self.state["ts"]
        entry = self._convert(value, record, ident, parent, ts)
        entry["native"] = native_field(record, ident)
        self.parents[ident] = parent
        self.texts[ident] = (record.raw, record.line)
        self.state["previous"] = ident
        self.out.append(entry)
        if ident not in self.known.entries:
            self.leaf = ident
            if entry["type"] == "custom":
                self.out.extend(self._meta(entry, ts))

    def _keep(self, record: Record, what: str) -> None:
        at = self.state["previous"]
        self.out.append(kept_record(record, derived_id(record, "x"), at, self.state["ts"]))
        self.report.keep("line that is no entry", record.line)
        self.report.note(record.line, what)

    def _repeated(self, ident: str, record: Record) -> bool:
        """True for a second copy of a record (skipped, noted); refuses another record with the
        same id."""
        earlier = self.texts.get(ident)
        if earlier is not None:
            text, line = earlier
        else:
            had = self.known.entries.get(ident)
            if had is None:
                return False
            found = kept_text(had.get("native") or {})
            if found is None:
                return False
            text, line = found, None
        if text == record.raw:
            if earlier is not None:
                self.report.note(record.line, f"repeats line {line} exactly: imported once")
                return True
            return False  # the same record, imported before: emitted again for ``fresh``
        if earlier is None and _exported_as(text, record.value):
            return False  # convgit wrote it in v3's words (a resumed file): kept beside it
        where = f"line {line}" if line is not None else "an entry imported before"
        raise NotAPiSessionError(
            f"Line {record.line} of this pi session uses the id {ident} of {where} for another"
            " record; convgit cannot tell which one the entries below it hang from.",
            "fix the file: give one of the two records another id",
        )

    def _exists(self, ident: str) -> bool:
        return ident in self.parents or ident in self.known.entries

    def _parent_of(self, ident: str) -> str | None:
        if ident in self.parents:
            return self.parents[ident]
        parent = self.known.entries.get(ident, {}).get("parentId")
        return parent if isinstance(parent, str) else None

    def _ancestor(self, ident: str, of: str | None) -> bool:
        node = of
        for _ in range(len(self.parents) + len(self.known.entries) + 1):
            if node is None:
                return False
            if node == ident:
                return True
            node = self._parent_of(node)
        return False

    # -- converting ---------------------------------------------------------------------------

    def _convert(
        self, value: dict[str, Any], record: Record, ident: str, parent: str | None, ts: str
    ) -> dict[str, Any]:
        base: dict[str, Any] = {"id": ident, "parentId": parent, "ts": ts}
        kind = value.get("type")
        if kind == "message" and isinstance(value.get("message"), dict):
            made = _message(value["message"])
            if made is not None:
                return {"type": "message", **base, **made}
        elif kind == "model_change" and _strings(value, "provider", "modelId"):
            return {
                "type": "model",
                **base,
                "provider": value["provider"],
                "model": value["modelId"],
            }
        elif kind == "thinking_level_change" and type(value.get("thinkingLevel")) in (str, int):
            return {"type": "thinking", **base, "level": value["thinkingLevel"]}
        elif kind == "compaction" and type(value.get("summary")) is str:
            return {
                "type": "compaction",
                **base,
                "summary": value["summary"],
                "firstKeptId": self._first_kept(value, record, ident, parent),
            }
        elif kind == "branch_summary" and type(value.get("summary")) is str:
            source = value.get("fromId")
            if type(source) is str and self._exists(entry_id(source)):
                source = entry_id(source)
            return {
                "type": "branch_summary",
                **base,
                "summary": value["summary"],
                "fromId": source if type(source) is str else "root",
            }
        elif kind == "custom" and type(value.get("customType")) is str:
            return {
                "type": "custom",
                **base,
                "kind": value["customType"],
                "data": value.get("data"),
            }
        elif kind == "custom_message" and "content" in value:
            return {
                "type": "message",
                **base,
                "role": "user",
                "content": _content(value["content"]),
            }
        elif kind == "label" and type(value.get("targetId")) is str:
            data = {"targetId": value["targetId"], "label": value.get("label")}
            return {"type": "custom", **base, "kind": LABEL_KIND, "data": data}
        elif kind == "session_info":
            data = {"name": value.get("name")}
            return {"type": "custom", **base, "kind": SESSION_INFO_KIND, "data": data}
        what = (
            f"message ({value['message'].get('role')})"
            if kind == "message" and isinstance(value.get("message"), dict)
            else str(kind)
        )
        self.report.keep(what, record.line)
        return {"type": "custom", **base, "kind": f"pi.{kind}", "data": None}

    def _first_kept(
        self, value: dict[str, Any], record: Record, ident: str, parent: str | None
    ) -> str | None:
        """The entry a compaction keeps from, when it is on the compaction's path; None (keep
        nothing before it) otherwise, which is what pi replays in that case."""
        if self.state["version"] == 1:
            index = value.get("firstKeptEntryIndex")
            target = self._at_index(index) if type(index) is int else None
        else:
            target = value.get("firstKeptEntryId")
        if isinstance(target, str) and self._ancestor(entry_id(target), parent):
            return entry_id(target)
        if target is not None or "firstKeptEntryIndex" in value or "firstKeptEntryId" in value:
            self.report.note(
                record.line,
                f"(compaction {ident}) keeps from a record that is not before it: it keeps"
                " nothing, as pi replays it",
            )
        return None

    def _at_index(self, index: int) -> str | None:
        """The v1 entry at ``index`` of the file's records (the header is 0): v1 is a line, so
        it is found by walking up from the newest entry."""
        steps = self.state["count"] - 2 - index  # the compaction being read is count - 1
        node: str | None = self.state["previous"]
        if index < 1 or steps < 0:
            return None
        for _ in range(steps):
            if node is None:
                return None
            node = self._parent_of(node)
        return node

    def _meta(self, entry: dict[str, Any], ts: str) -> list[dict[str, Any]]:
        """convgit's label and name records for a pi label or session_info entry."""
        if entry["type"] != "custom" or not isinstance(entry.get("data"), dict):
            return []
        data = entry["data"]
        target = entry_id(data["targetId"]) if entry["kind"] == LABEL_KIND else ""
        if entry["kind"] == LABEL_KIND and self._exists(target):
            label = data["label"] if isinstance(data["label"], str) and data["label"] else None
            return [schema.label(target, label, ts=ts)]
        if entry["kind"] == SESSION_INFO_KIND and isinstance(data["name"], str):
            return [schema.session_name(data["name"], ts=ts)]
        return []


def _exported_as(kept: bytes, value: dict[str, Any] | None) -> bool:
    """Whether ``value`` is the v1 or v2 record ``kept`` as ``convgit export --format pi`` (and
    so ``convgit resume``) writes it in v3: with an id and parent, v2's ``hookMessage`` as
    ``custom``, a compaction keeping from an entry rather than an index."""
    from convgit.agents.pi import export as pi_export

    try:
        old = codec.decode(kept)
    except ValueError:
        return False
    if value is None or type(old) is not dict or not ("id" not in old or pi_export.is_v2(old)):
        return False
    first = value.get("firstKeptEntryId")
    upgraded = pi_export.upgraded(
        old, str(value.get("id")), value.get("parentId"), str(first) if first else ""
    )
    return bool(upgraded == value)


# -- pi messages as convgit messages ----------------------------------------------------------


def _message(message: dict[str, Any]) -> dict[str, Any] | None:
    """The role, content and result fields of a pi AgentMessage, or None for a role that does
    not become a model message."""
    role = message.get("role")
    if role == "user" and "content" in message:
        return {"role": "user", "content": _content(message["content"])}
    if role == "assistant" and "content" in message:
        anthropic = message.get("api") == "anthropic-messages"
        return {"role": "assistant", "content": _content(message["content"], anthropic)}
    if role == "toolResult" and type(message.get("toolCallId")) is str:
        return {
            "role": "tool",
            "toolCallId": message["toolCallId"],
            "isError": message.get("isError") is True,
            "content": _content(message.get("content", "")),
        }
    if role in ("custom", "hookMessage") and "content" in message:
        return {"role": "user", "content": _content(message["content"])}
    if role == "bashExecution" and not message.get("excludeFromContext"):
        return {"role": "user", "content": [{"type": "text", "text": _bash_text(message)}]}
    return None


def _content(content: Any, anthropic: bool = False) -> str | list[dict[str, Any]]:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return [] if content is None else [{"type": "pi.content", "value": content}]
    return [_part(block, anthropic) for block in content]


def _part(block: Any, anthropic: bool) -> dict[str, Any]:
    kind = block.get("type") if type(block) is dict else None
    if kind == "text" and type(block.get("text")) is str:  # most blocks: first, and cheap
        return {"type": "text", "text": block["text"]}
    if type(kind) is not str:
        return {"type": "pi.block", "value": block}
    if kind == "thinking" and isinstance(block.get("thinking"), str):
        part = {"type": "thinking", "thinking": block["thinking"]}
        if anthropic and isinstance(block.get("thinkingSignature"), str):
            part["signature"] = block["thinkingSignature"]  # only Anthropic's API checks it
        return part
    if kind == "toolCall" and type(block.get("id")) is str and type(block.get("name")) is str:
        return {
            "type": "tool_call",
            "id": block["id"],
            "name": block["name"],
            "input": block.get("arguments", {}),
        }
    if kind == "image" and _strings(block, "data", "mimeType"):
        source = {"type": "base64", "media_type": block["mimeType"], "data": block["data"]}
        return {"type": "image", "source": source}
    if kind in ("text", "thinking", "tool_call"):
        return {"type": f"pi.{kind}", "value": block}  # malformed: kept, never replayed
    return dict(block)


def _bash_text(message: Mapping[str, Any]) -> str:
    """A ``!command`` run by the user, as pi puts it in the model's context."""
    text = f"Ran `{message.get('command', '')}`\n"
    output = message.get("output")
    text += f"```\n{output}\n```" if output else "(no output)"
    code = message.get("exitCode")
    if message.get("cancelled"):
        text += "\n\n(command cancelled)"
    elif isinstance(code, int) and code != 0:
        text += f"\n\nCommand exited with code {code}"
    if message.get("truncated") and message.get("fullOutputPath"):
        text += f"\n\n[Output truncated. Full output: {message['fullOutputPath']}]"
    return text


def _strings(value: Mapping[str, Any], *names: str) -> bool:
    return all(isinstance(value.get(name), str) for name in names)


def _iso(value: Any) -> str | None:
    """An ISO timestamp as convgit writes them, from pi's ISO string or Unix milliseconds."""
    if isinstance(value, str) and value:
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        moment = datetime.fromtimestamp(value / 1000, timezone.utc)
        return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return None


def _session_in_path(path: str) -> str | None:
    """pi names a session file ``<time>_<session id>.jsonl``: the id, when the name has one."""
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    found = _UUID.search(name.lower())
    return found.group(0) if found else None


def recognises(records: list[dict[str, Any]], data: bytes) -> bool:
    """A pi session: the first line is the header ``{"type": "session", "id", ...}`` with a
    ``version``, a ``cwd`` or a ``timestamp`` (and no ``uuid``, which Claude's lines have)."""
    first = records[0] if records else {}
    header = first.get("type") == "session" and isinstance(first.get("id"), str)
    return (
        header and "uuid" not in first and any(k in first for k in ("version", "cwd", "timestamp"))
    )
