"""``Appending``: every append to a session (``session.append``): records checked against the tree
as it will be, the restores not told yet told, then the turn's files.

Promises kept here (every use-case writes its records through ``Conversation.write``):
* an append builds on the leaf the session last saw (``Conversation.built_on``); if another
  process moved it since, it is refused (``LeafMovedError``) unless forced;
* every record is validated before anything is written: a bad one means nothing is appended;
  a record resent with its id and content is a no-op, the same id with other content refused;
* a tool result goes only where its call is on the path, or (asked) under its call's branch;
* with snapshots on, a turn's files are snapshotted after it; a snapshot that cannot be taken
  leaves what was appended in place and is recorded as failed;
* the restores not told yet are told above the turn, in the same write, by one note, never
  between a message and the reply to it (``convgit.session.restore_notes``).
"""

from __future__ import annotations

from collections.abc import Iterable
from contextlib import suppress
from typing import TYPE_CHECKING, Any

from convgit import schema
from convgit.base.errors import (
    ConvgitError,
    InvalidEntryError,
    RefusedError,
    SnapshotSkippedError,
    UsageError,
)
from convgit.conversation import appending
from convgit.conversation.refs import is_saved_ref
from convgit.session.restore_notes import goes_above
from convgit.session.track import os_words

if TYPE_CHECKING:
    from convgit.schema import Entry
    from convgit.session.conversation import Conversation
    from convgit.session.restore_notes import RestoreNotes, Telling
    from convgit.session.snapshots import FilesFrom, Snapshots
    from convgit.session.track import Track


def new_message(role: str, content: Any, ident: str | None = None) -> dict[str, Any]:
    """A message record to append (its id, parent and time are filled in then)."""
    record = {"type": "message", "role": role, "content": content}
    if ident is not None:
        record["id"] = caller_id(ident)
    return record


def caller_id(ident: str) -> str:
    """A caller-chosen entry id (``--id``), as every appended id must be: reference-safe
    (``appending.id_problem``), so it also names a git ref."""
    if appending.id_problem(ident) is not None:
        raise UsageError(
            f"'{ident}' cannot be an entry id: use lowercase letters, digits, '-' and '_'"
            " (starting with a letter or digit; not 'root')."
        )
    return ident


class Appending:
    """Every append to one session: entries checked, restores told, the turn's files snapshotted."""

    def __init__(
        self,
        conversation: Conversation,
        track: Track,
        snapshots: Snapshots,
        notes: RestoreNotes,
    ) -> None:
        self.conversation = conversation
        self.track = track
        self.snapshots = snapshots
        self.notes = notes
        self.snapshot_error: str | None = None  # why the last turn's snapshot was not taken
        # the last turn's snapshot skipped, over ``[snapshots] max_files_per_turn``: why
        self.snapshot_skipped: SnapshotSkippedError | None = None
        # the snapshot on another branch whose files the last turn recorded as its own
        self.files_from: FilesFrom | None = None
        self.note: str | None = None  # the note the last append wrote above its turn

    def entry(self, entry: Entry | dict[str, Any], *, force: bool = False) -> Entry:
        """Append one entry. Without a parent it hangs off the leaf the session built on."""
        return self.entries([entry], force=force)[0]

    def entries(
        self,
        items: Iterable[Entry | dict[str, Any]],
        *,
        force: bool = False,
        follow: bool = False,
    ) -> list[Entry]:
        """Append entries in order under one lock (see ``records``); returns them."""
        ids = self.records(
            [dict(item) if isinstance(item, dict) else item.to_wire() for item in items],
            force=force,
            follow=follow,
        )
        return [schema.entry_from_wire(self.conversation.tree.entries[i]) for i in ids]

    def user(self, text: str, *, force: bool = False, ident: str | None = None) -> Entry:
        """Append a user message (refused empty)."""
        return self.entry_of(self.message("user", text, force=force, ident=ident))

    def entry_of(self, ident: str) -> Entry:
        """The entry ``ident`` as a value (``schema.Entry``)."""
        return schema.entry_from_wire(self.conversation.tree.entries[ident])

    def message(
        self,
        role: str,
        content: str | list[dict[str, Any]],
        *,
        force: bool = False,
        ident: str | None = None,
    ) -> str:
        """``user`` or ``assistant`` (``role``), returning the entry's id alone: a command that
        shows the id never makes the entry a value (``convgit user`` and ``convgit assistant``,
        run every turn, import no ``schema.values``)."""
        if isinstance(content, str):
            appending.check_said(content, "reply" if role == "assistant" else "message")
        (made,) = self.records([new_message(role, content, ident)], force=force)
        return made

    def assistant(
        self,
        content: str | list[dict[str, Any]],
        *,
        force: bool = False,
        ident: str | None = None,
    ) -> Entry:
        """Append the model's reply; with snapshots on, the files are snapshotted right after.
        With ``ident``, sending the same reply again is a no-op (see ``records``). A reply of
        text alone is refused empty."""
        return self.entry_of(self.message("assistant", content, force=force, ident=ident))

    def system(self, text: str | None, *, force: bool = False) -> Entry:
        """Record the system prompt the model is sent from here on (None: none) as a settings
        entry at the active leaf; replay takes the last one on the path, as for ``model``."""
        if text is not None:
            appending.check_said(text, "system prompt")
        return self.entry({"type": "system", "text": text}, force=force)

    def records(
        self,
        raw: list[dict[str, Any]],
        *,
        force: bool = False,
        follow: bool = False,
        snapshot: bool = True,
    ) -> list[str]:
        """Append raw records in order under one lock and return their ids. A record without
        ``parentId`` hangs off the leaf (with ``follow``, the leaf at the moment it is written,
        whoever moved it); missing ids and ``ts`` are filled in; every record is validated
        against the tree as it will be (``appending.admit``) before anything is written, so a
        bad one means nothing is appended. With snapshots on and ``snapshot``, the files are
        snapshotted as the turn's (pass False for records of the past: today's files are not
        theirs)."""
        explicit = all("parentId" in r for r in raw)
        placed = ["parentId" in r for r in raw]
        if self.track.snapshots_enabled:
            self.track.check_worktree()
            _ = self.track.size_cap  # a bad setting is refused before anything is written
        telling = self._telling()
        told: list[bool] = []

        def build() -> list[dict[str, Any]]:
            known = self.conversation.tree.entries
            resent = _resent(raw, known)
            made: dict[str, dict[str, Any]] = {}
            leaf = self.conversation.tree.leaf if follow else self.conversation.built_on
            stamp = schema.now()  # one batch, one moment
            for number, record in enumerate(raw, 1):
                if number in resent:
                    leaf = record["id"]
                    continue
                if record.get("id") is None:
                    record["id"] = appending.fresh_id(known, made)
                if record.get("ts") is None:
                    record["ts"] = stamp
                if "parentId" not in record:
                    record["parentId"] = leaf
                kind = record.get("type")
                if type(kind) is str and (kind in schema.META_FIELDS or kind == "session"):
                    raise InvalidEntryError(f"Entry {number} is a '{kind}' record, not an entry.")
                problem = schema.kind_error(record)
                if problem is None and (record["id"] in known or record["id"] in made):
                    problem = f"repeats the existing id {record['id']}"
                parent = record["parentId"]
                missing = problem is None and parent is not None and parent not in known
                if missing and parent not in made:
                    problem = f"has a parent {parent} that does not exist"
                if problem is not None:
                    raise InvalidEntryError(f"Entry {number} {problem}; nothing was appended.")
                made[record["id"]] = record
                leaf = record["id"]
            fresh = [record for number, record in enumerate(raw, 1) if number not in resent]
            where = [given for number, given in enumerate(placed, 1) if number not in resent]
            admitted = fresh + appending.admit(
                self.conversation.tree, fresh, where, self.conversation.tree.leaf
            )
            start = self.conversation.tree.leaf if follow else self.conversation.built_on
            above = _first_message(fresh, where, start)
            if above is None or not goes_above(fresh[above]):
                return admitted  # a reply never has the note above it: the next user message does
            assert start is not None  # the first record hangs there
            if self.conversation.tree.open_tool_calls(start):
                return admitted  # never between a call and its result: told after the results
            message = fresh[above]
            telling_records = self.notes.told_under(telling, message["parentId"], fresh)
            if telling_records is None:
                return admitted
            told.append(True)
            if telling_records:
                message["parentId"] = telling_records[0]["id"]  # the note above it, on its path
            return [*admitted[:above], *telling_records, *admitted[above:]]

        self.note = None
        written = self.conversation.write(
            build, builds_on_leaf=not (follow or explicit), force=force
        )
        if told and telling is not None:
            self.note = next((str(r["id"]) for r in written if r["type"] == "note"), None)
            with suppress(ConvgitError, OSError):  # the note, or the files being back, told it
                self.notes.settle(telling)
        if snapshot and self.track.snapshots_enabled and written:
            self._snapshot_turn(written)
        return [r["id"] for r in raw]

    def _telling(self) -> Telling | None:
        """What this append tells of the restores not told yet; None when there are none, or
        when the files cannot be read now (they stay pending: the append goes on)."""
        try:
            return self.notes.prepare()
        except (ConvgitError, OSError):
            return None

    def _snapshot_turn(self, made: list[dict[str, Any]]) -> None:
        """After a reply, the files are snapshotted (one snapshot for a batch: its last reply).
        A user message is snapshotted when the files differ from the nearest snapshot above
        it (hand edits between turns; at the start, the files before the agent touched
        anything), so "back to before the reply" is exact. One over ``[snapshots]
        max_files_per_turn`` is skipped (``snapshot_skipped``). A snapshot that cannot be taken
        leaves what was appended in place: ``snapshot_error`` says why, and the sidecar
        records it (``status`` names the entry)."""
        self.snapshot_error = None
        self.snapshot_skipped = None
        self.files_from = None
        messages = [r for r in made if r["type"] == "message"]
        reply = next((r for r in reversed(messages) if r["role"] == "assistant"), None)
        first = next((r for r in messages if r["role"] == "user"), None)
        target = reply if reply is not None else first
        if target is None:
            return
        try:
            self.snapshots.snapshot(target["id"], only_if_changed=reply is None, per_turn=True)
            self.files_from = self.snapshots.files_from(target["id"])
        except SnapshotSkippedError as exc:  # recorded as skipped: no later turn tries it again
            self.snapshot_skipped = exc
        except (ConvgitError, OSError) as exc:
            why = exc.message if isinstance(exc, ConvgitError) else os_words(exc)
            self.snapshot_error = why
            with suppress(ConvgitError, OSError):  # a full disk may refuse this line too
                self.track.append([schema.snapshot_failed(target["id"], why)])

    def tool_result(
        self,
        call_id: str,
        content: str | list[dict[str, Any]],
        *,
        is_error: bool = False,
        force: bool = False,
        on_call_branch: bool = False,
        ident: str | None = None,
    ) -> Entry:
        """Append the result of tool call ``call_id`` at the leaf, when the active path holds
        the call. A call on another branch is refused, unless ``on_call_branch``: then the
        result goes under that branch's newest entry and the active leaf stays where it is. A
        call no assistant message made is refused (``NotFoundError``)."""
        record = new_message("tool", content, ident)
        record["toolCallId"] = call_id
        record["isError"] = is_error
        elsewhere = appending.call_branch(
            self.conversation.tree, call_id, self.conversation.built_on
        )
        if elsewhere is not None:
            made_in, branch = elsewhere
            if not on_call_branch:
                raise RefusedError(
                    f"Tool call {call_id} was made on another branch (entry {made_in}), not on"
                    f" the active path: its result would answer nothing here.",
                    f"`convgit tool {call_id} TEXT --on-call-branch` files it under {branch},"
                    " the newest entry of that branch, and the active leaf stays",
                )
            record["parentId"] = branch
        return self.entry(record, force=force)

    def tell_now(self, parent: str | None) -> str | None:
        """Tell the pending restores now, by one note under ``parent`` (none when the files are
        back where they were); the note's id, or None. For writers that place entries themselves."""
        telling = self.notes.prepare()
        if telling is None:
            return None
        written: list[dict[str, Any]] = []
        if telling.text is not None:
            written = self.conversation.write(
                lambda: [self.conversation.new_entry("note", parent, **telling.note_fields())],
                builds_on_leaf=False,
            )
        self.notes.settle(telling)
        return str(written[0]["id"]) if written else None


def _first_message(fresh: list[dict[str, Any]], where: list[bool], start: str | None) -> int | None:
    """Where the first message of a write that continues the active path from ``start`` is in
    ``fresh``: each record before it hangs from the one before (the first from ``start``),
    none placed by the caller. None when the write does not continue the path so."""
    parent = start
    for at, record in enumerate(fresh):
        if start is None or where[at] or record["parentId"] != parent:
            return None
        if record["type"] == "message":
            return at
        parent = record["id"]
    return None


def _resent(raw: list[dict[str, Any]], known: dict[str, Any]) -> set[int]:
    """The numbers (from 1) of the records that repeat an entry already in the session, with
    its id and content (a retry: appended once, the resend is a no-op). The same id with other
    content is refused; so is a new id that could be read as a saved state's."""
    resent: set[int] = set()
    for number, record in enumerate(raw, 1):
        ident = record.get("id")
        if not isinstance(ident, str):
            continue
        if is_saved_ref(ident):
            raise InvalidEntryError(
                f"Entry {number} has the id {ident}, which names a saved state; nothing was"
                " appended."
            )
        existing = known.get(ident)
        if existing is None:
            continue
        ignored = {"ts"} if "parentId" in record else {"ts", "parentId"}
        mine = {k: v for k, v in record.items() if k not in ignored}
        theirs = {k: v for k, v in existing.items() if k not in ignored}
        if mine != theirs:
            raise InvalidEntryError(
                f"Entry {number} repeats the id {ident} with other content; nothing was appended.",
                "an id names one entry: send the same entry, or choose another id",
            )
        resent.add(number)
    return resent
