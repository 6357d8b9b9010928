"""Claude Code transcripts (``~/.claude/projects/<dir>/<session id>.jsonl`` and the subagent
files beside them) as convgit entries.

What becomes what:
* ``user`` lines: a prompt or in-turn text (caveats, skill text, slash-command output) becomes
  a user message; each ``tool_result`` block a tool message (``isError`` from ``is_error``);
  the ``isCompactSummary`` message a ``compaction`` entry whose summary is its text. A prompt
  the user sent while a turn ran (a ``queued_command`` attachment, handed to the model inside
  that turn) is a user message in the turn too.
* ``assistant`` lines: one assistant message each (text, thinking with its signature,
  tool_use as ``tool_call``); the lines of one API reply (one ``message.id``) stay one message
  per line, in a row, which replay reads as one reply. Synthetic replies (``<synthetic>``
  model: "No response requested." written on resume, API error stand-ins) are kept, not
  entries.
* Everything else (progress, attachment and system lines, file-history snapshots, summaries,
  queue operations, titles, permission modes, last-prompt) is kept as a ``native`` record at
  the entry it follows, and what hangs below it hangs below that entry. A chain that starts
  with such a record gets it as a ``custom`` entry at its root, so a rewind to the very start
  is still a branch of one tree.
* Every entry's id is Claude's ``uuid`` (a second tool result on one line gets ``<uuid>_2``)
  and its ``native`` field keeps the line's exact text.

Where each entry hangs (a turn goes on; a rewind is a branch) is ``claude_parents``'s; a
subagent's work is a side branch below the call that spawned it (``claude_subagents``).

The active leaf is the last entry of the main chain (Claude resumes the newest leaf), or
``last-prompt.leafUuid`` where Claude wrote one after it.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from convgit.agents.claude_code import NAME, TITLE, blocks, kinds
from convgit.agents.claude_code.parents import MAIN, Parents, chain_of
from convgit.agents.claude_code.subagents import Subagents, subagent_files
from convgit.agents.reading import (
    Batch,
    Cursor,
    Importer,
    ImportReport,
    Known,
    Record,
    alternate_key,
    derived_id,
    entry_id,
    kept_record,
    kept_text,
    native_field,
    part_id,
    read_jsonl,
)
from convgit.schema import kind_error

AGENT = NAME
_SESSION_ID = re.compile(rb'"sessionId":\s*"([A-Za-z0-9_.:-]{1,128})"')
_EPOCH = "1970-01-01T00:00:00.000Z"  # the time of a record that carries none, when none came before
_AUTO = object()  # "find the parent": what ``_Fold._entries`` does when given none
_ODD_CONTENT = "has a message convgit cannot read (odd content blocks): kept, not interpreted"


def session_id(data: bytes) -> str | None:
    """The session id most lines carry (a file may hold a few lines of another session)."""
    counts = Counter(_SESSION_ID.findall(data))  # a quote inside a JSON string is escaped
    return counts.most_common(1)[0][0].decode() if counts else None


def parse(data: bytes, cursor: Cursor, known: Known) -> Batch:
    """The batch for ``data``, the transcript's bytes from ``cursor.offset``."""
    fold = _Fold(cursor, known)
    read = read_jsonl(data, cursor)
    for record in read.records:
        fold.take(record)
    if read.torn is not None:
        fold.report.note(
            read.torn, "is incomplete (still being written?): left for the next import"
        )
    state = fold.state()
    return Batch(
        fold.out,
        Cursor(read.offset, read.line, read.index, state),
        fold.leaf if fold.moved else None,
        fold.report,
    )


IMPORTER = Importer(
    agent=AGENT,
    title=TITLE,
    session_id=session_id,
    parse=parse,
    companions=subagent_files,
)


class _Fold:
    """One pass over a transcript's records in file order, carrying what the next record
    needs: where each line hangs (``parents``), which calls spawned subagents
    (``subagents``), the leaf."""

    def __init__(self, cursor: Cursor, known: Known) -> None:
        state = cursor.state
        self.known = known
        self.continuing = cursor.offset > 0
        self.session: str | None = state.get("session") or known.agent_session
        self.parents = Parents(state, known)
        self.subagents = Subagents(state, known)
        self.leaf: str | None = state.get("leaf")
        self.ts: str = state.get("ts") or _EPOCH
        self.moved = False
        self.out: list[dict[str, Any]] = []
        self.report = ImportReport()
        self.texts: dict[str, bytes] = {}  # uuid -> exact text of its first line here

    def state(self) -> dict[str, Any]:
        return {
            "session": self.session,
            **self.parents.state(),
            **self.subagents.state(),
            "leaf": self.leaf,
            "ts": self.ts,
        }

    # -- one record ---------------------------------------------------------------------------

    def take(self, record: Record) -> None:
        value = record.value
        if value is None:
            self.report.note(record.line, f"{record.problem}: kept as it is, not interpreted")
            self._keep(record, derived_id(record), self.parents.tips.get(MAIN))
            return
        stamp = value.get("timestamp")
        if isinstance(stamp, str) and stamp:
            self.ts = stamp
        kind = value.get("type")
        label = kinds.kind_of(value)
        uuid = value.get("uuid")
        if not isinstance(uuid, str) or not uuid:
            self._outside(record, value, label)
            return
        if self._repeated(record, uuid):
            return
        if self.session is None and isinstance(value.get("sessionId"), str):
            self.session = value["sessionId"]
        if not self._ours(value.get("sessionId")):
            self._artifact(record, value, uuid, "line of another session")
            return
        self._note_kind(record, label)
        self.texts[uuid] = record.raw
        chain = chain_of(value)
        if chain != MAIN and kind in ("user", "assistant") and self.subagents.mirrored(chain, uuid):
            self._artifact(record, value, uuid, "subagent line its mirrors did not carry")
            return
        if kind == "user":
            self._user(record, value, uuid)
        elif kind == "assistant":
            self._assistant(record, value, uuid)
        elif kind == "system" and value.get("subtype") == "compact_boundary":
            self._boundary(record, value, uuid)
        elif kind == "progress" and blocks.mirrored_message(value) is not None:
            self._mirror(record, value, uuid)
        elif kind == "attachment" and (queued := blocks.queued_prompt(value)) is not None:
            self._entries(record, value, uuid, chain, queued, turn=False)
        else:
            self._artifact(record, value, uuid, kinds.kept_label(value))

    def _ours(self, session: object) -> bool:
        """A line of this session (or of one this session mirrors too, resumed or forked)."""
        return session is None or session == self.session or session in self.known.agent_sessions

    def _outside(self, record: Record, value: dict[str, Any], label: str) -> None:
        """A line that is no node of Claude's tree (no uuid): kept where it was written."""
        if label == "last-prompt" and isinstance(value.get("leafUuid"), str):
            at = self.parents.anchor(value["leafUuid"])
            if at is not None:
                self.leaf, self.moved = at, True
        self.report.keep(label, record.line)
        self._note_kind(record, label)
        self._keep(record, derived_id(record), self.parents.tips.get(MAIN))

    def _note_kind(self, record: Record, label: str) -> None:
        if label not in kinds.KNOWN:
            self.report.note(record.line, f"has the unknown type {label!r}: kept, not interpreted")

    def _repeated(self, record: Record, uuid: str) -> bool:
        """A uuid seen before in this file (here, or before the cursor) is kept beside the
        first: the same text under its place, other text under the key ``fresh`` would give
        it (noted, unless the first came inside another record, as a mirror)."""
        if uuid in self.parents.anchors:
            at, first = self.parents.anchors[uuid], self.texts.get(uuid)
        elif self.continuing and (entry_id(uuid) in self.known.entries or uuid in self.known.kept):
            at, first = self.parents.known_anchor(uuid), self._known_text(uuid)
        else:
            return False
        if first == record.raw:
            self.report.keep("repeated line", record.line)
            self._keep(record, f"{uuid}@{derived_id(record)}", at)
            return True
        if first is not None:
            self.report.note(
                record.line,
                f"repeats the uuid {uuid} with other content: kept beside the first, not"
                " interpreted",
            )
        self._keep(record, alternate_key(uuid, record.raw), at)
        return True

    def _known_text(self, uuid: str) -> bytes | None:
        entry = self.known.entries.get(entry_id(uuid))
        holder = entry.get("native") if entry is not None else self.known.kept.get(uuid)
        return kept_text(holder) if isinstance(holder, dict) else None

    # -- user and assistant lines ---------------------------------------------------------------

    def _user(self, record: Record, value: dict[str, Any], uuid: str) -> None:
        message = value.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        chain = chain_of(value)
        if value.get("isCompactSummary"):
            summary = blocks.plain_text(content)
            made = {"type": "compaction", "summary": summary, "firstKeptId": None}
            self._entries(record, value, uuid, chain, [made], turn=True)
            return
        made_list = blocks.user_messages(content)
        if made_list is None:
            self._artifact(record, value, uuid, "user line not understood", note=_ODD_CONTENT)
            return
        starts = not value.get("isMeta") and not blocks.is_local_command(content)
        if any(m["role"] == "tool" for m in made_list):
            starts = False
            self.subagents.answered(value)
        self._entries(record, value, uuid, chain, made_list, turn=starts)

    def _assistant(self, record: Record, value: dict[str, Any], uuid: str) -> None:
        message = value.get("message")
        if not isinstance(message, dict):
            self._artifact(record, value, uuid, "assistant line not understood", note=_ODD_CONTENT)
            return
        if message.get("model") == "<synthetic>" or value.get("isApiErrorMessage"):
            self._artifact(record, value, uuid, "assistant/synthetic")
            return
        content = blocks.assistant_content(message.get("content"))
        if content is None:
            self._artifact(record, value, uuid, "assistant line not understood", note=_ODD_CONTENT)
            return
        made = blocks.assistant_message(content)
        ident = self._entries(record, value, uuid, chain_of(value), [made], turn=False)
        if ident is not None:
            self.subagents.called(made, ident)

    def _entries(
        self,
        record: Record,
        value: dict[str, Any],
        uuid: str,
        chain: str,
        made: list[dict[str, Any]],
        *,
        turn: bool,
        parent: Any = _AUTO,
        native: dict[str, Any] | None = None,
    ) -> str | None:
        """Append the entries made from one record, in a row; returns the last one's id."""
        if parent is _AUTO:
            parent = self.parents.attach(chain, self._parent_anchor(record, value, chain))
        first = entry_id(uuid)
        built: list[dict[str, Any]] = []
        above = parent
        for number, fields in enumerate(made, 1):
            entry: dict[str, Any] = {"type": fields["type"], "id": part_id(first, number)}
            entry.update(parentId=above, ts=self.ts)
            entry.update((k, v) for k, v in fields.items() if k != "type")
            entry["native"] = (native or native_field(record, uuid)) if number == 1 else {}
            if number > 1:
                entry["native"] = {"key": uuid, "part": number}
            if chain != MAIN:
                entry["native"]["subagent"] = chain
            built.append(entry)
            above = entry["id"]
        if any(kind_error(entry) is not None for entry in built):  # a hostile line's content
            self.report.keep(f"{value.get('type')} line not understood", record.line)
            self.report.note(record.line, _ODD_CONTENT)
            self._keep(record, uuid, parent)
            self.parents.anchors[uuid] = parent
            return None
        self.out.extend(built)
        ident = self.parents.grew(chain, uuid, built, turn=turn)
        if chain == MAIN:
            self.leaf, self.moved = ident, True
        return ident

    def _parent_anchor(self, record: Record, value: dict[str, Any], chain: str) -> str | None:
        """The entry the record's ``parentUuid`` stands for: that entry, or where the kept
        record it names stands; a subagent's first line hangs below the call that spawned it."""
        parent = value.get("parentUuid")
        if parent is None:
            return self.subagents.spawner(chain, value) if chain != MAIN else None
        if not isinstance(parent, str):
            return None
        if not self.parents.knows(parent):
            self.report.note(
                record.line,
                f"has a parent {parent} that is in neither the file nor the session:"
                " what hangs below it starts a new root",
            )
        return self.parents.anchor(parent)

    # -- what is kept -------------------------------------------------------------------------

    def _artifact(
        self, record: Record, value: dict[str, Any], uuid: str, label: str, *, note: str = ""
    ) -> None:
        """A node of Claude's tree that becomes no entry: kept; its children hang where it
        would. At the root of a chain it becomes a ``custom`` entry, the chain's root."""
        self.report.keep(label, record.line)
        if note:
            self.report.note(record.line, note)
        chain = chain_of(value)
        at = self._parent_anchor(record, value, chain)
        if at is None and chain == MAIN and self._ours(value.get("sessionId")):
            made = {"type": "custom", "kind": f"{AGENT}/{label}"}
            self._entries(record, value, uuid, chain, [made], turn=False, parent=None)
            return
        self._keep(record, uuid, at)
        self.parents.anchors[uuid] = at

    def _keep(self, record: Record, key: str, at: str | None) -> None:
        self.out.append(kept_record(record, key, at, self.ts))

    def _boundary(self, record: Record, value: dict[str, Any], uuid: str) -> None:
        """A compaction boundary starts a new root in Claude's file; here it stands where the
        conversation was (``logicalParentUuid``, else the last entry), and the summary that
        follows becomes the compaction entry."""
        self.report.keep("system/compact_boundary", record.line)
        logical = value.get("logicalParentUuid")
        at = self.parents.anchor(logical) if isinstance(logical, str) else None
        if at is None:
            at = self.parents.tips.get(chain_of(value))
            if isinstance(logical, str):
                self.report.note(
                    record.line,
                    f"is a compaction whose logicalParentUuid {logical} is not in the file:"
                    " it follows the entry before it",
                )
        self._keep(record, uuid, at)
        self.parents.anchors[uuid] = at

    def _mirror(self, record: Record, value: dict[str, Any], uuid: str) -> None:
        """An ``agent_progress`` line: kept on the main chain; the subagent message it carries
        becomes an entry of the subagent's side branch."""
        data = value["data"]
        inner = blocks.mirrored_message(value)
        assert inner is not None
        agent = data.get("agentId") if isinstance(data.get("agentId"), str) else "subagent"
        self.subagents.mirrored_by(agent, value.get("parentToolUseID"))
        at = self._parent_anchor(record, value, MAIN)
        self._keep(record, uuid, at)
        self.parents.anchors[uuid] = at
        inner_uuid = inner["uuid"]
        seen = self.continuing and entry_id(inner_uuid) in self.known.entries
        if inner_uuid in self.parents.anchors or seen:
            return
        parent = self.parents.tips.get(agent) or self.subagents.spawner(agent) or at
        kind = inner.get("type")
        message = inner.get("message")
        if not isinstance(message, dict):
            message = {}
        if kind == "assistant":
            content = blocks.assistant_content(message.get("content"))
            made = None if content is None else [blocks.assistant_message(content)]
        else:
            made = blocks.user_messages(message.get("content"))
        if not made:
            return
        saved, self.ts = self.ts, inner.get("timestamp") or self.ts
        self._entries(
            record,
            inner,
            inner_uuid,
            agent,
            made,
            turn=kind == "user" and all(m["role"] == "user" for m in made),
            parent=parent,
            native={"key": inner_uuid, "in": uuid},
        )
        self.ts = saved


_CLAUDE_ONLY = frozenset(
    {"file-history-snapshot", "queue-operation", "last-prompt", "custom-title", "permission-mode"}
)


def recognises(records: list[dict[str, Any]], data: bytes) -> bool:
    """A transcript: lines carrying both ``uuid`` and ``sessionId``, or records only Claude
    writes."""
    return any(
        isinstance(record.get("sessionId"), str)
        and (isinstance(record.get("uuid"), str) or record.get("type") in _CLAUDE_ONLY)
        for record in records
    )
