"""Appending to a session: records checked against the tree as it will be, then the turn's files.

Promises kept here (``Session.append_records`` and ``append_tool_result`` delegate here, and
every use-case writes its records through ``write``):
* an append builds on the leaf the Session last saw (``built_on``); if another process moved it
  since, it is refused (``LeafMovedError``) unless forced;
* every record is validated before anything is written: a bad one means nothing is appended;
  a record resent with its id and content is a no-op, the same id with other content refused;
* a tool result goes only where its call is on the path, or (asked) under its call's branch;
* with snapshots on, a turn's files are snapshotted after it; a snapshot that cannot be taken
  leaves what was appended in place and is recorded as failed;
* the restores not told yet are told above the turn, in the same write, by one note
  (``convgit.session.restore_notes``).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import suppress
from typing import TYPE_CHECKING, Any

from convgit import schema
from convgit.base.errors import (
    ConvgitError,
    InvalidEntryError,
    LeafMovedError,
    RefusedError,
    UsageError,
)
from convgit.conversation import appending
from convgit.session import files as session_files
from convgit.store.sidecar import SAVED_PREFIX

if TYPE_CHECKING:
    from convgit.schema import Entry
    from convgit.session import Session, restore_notes


def write(
    session: Session,
    build: Callable[[], list[dict[str, Any]]],
    *,
    builds_on_leaf: bool,
    force: bool = False,
    checked: bool = False,
) -> list[dict[str, Any]]:
    """Under the lock: take in others' lines, check the leaf (when the records ``build`` makes
    build on it), append them and return them. ``checked``: ``build`` refuses any record that
    ``schema.kind_error`` finds wrong, so the tree does not check their fields again."""
    found = session.tree
    session.check()
    with session.file.appending() as appender:
        news = appender.news
        if news.records:
            found.add_records(news.records, news.first)
            found.finish(since=news.first)
            session.check()
        if builds_on_leaf and not force and found.leaf != session.built_on:
            raise LeafMovedError(
                f"Another process moved the active leaf from {session.built_on} to "
                f"{found.leaf} since this session was read.",
                "refresh (reopen) and try again, or append anyway with force",
            )
        records = build()
        number = session.file.lines + 1
        appender.write(records)
    found.add_records(records, number, checked=checked)
    session.built_on = found.leaf
    return records


def new_entry(session: Session, kind: str, parent: str | None, **fields: Any) -> dict[str, Any]:
    """A record of ``kind`` under ``parent`` with a fresh id and the time now."""
    record: dict[str, Any] = {
        "type": kind,
        "id": schema.new_id(session.tree.entries),
        "parentId": parent,
        "ts": schema.now(),
    }
    record.update(fields)
    return record


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


def append_records(
    session: Session,
    raw: list[dict[str, Any]],
    *,
    force: bool = False,
    follow: bool = False,
    snapshot: bool = True,
) -> list[str]:
    explicit = all("parentId" in r for r in raw)
    placed = ["parentId" in r for r in raw]
    if session.snapshots_enabled:
        session_files.check_worktree(session)
        _ = session.size_cap  # a bad setting is refused before anything is written
    telling = _telling(session)
    told: list[bool] = []

    def build() -> list[dict[str, Any]]:
        known = session.tree.entries
        resent = _resent(raw, known)
        made: dict[str, dict[str, Any]] = {}
        leaf = session.tree.leaf if follow else session.built_on
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
        admitted = fresh + appending.admit(session.tree, fresh, where, session.tree.leaf)
        start = session.tree.leaf if follow else session.built_on
        if telling is None or not _tells_here(session, telling, fresh, where, start):
            return admitted
        told.append(True)
        if telling.text is None:
            return admitted
        note = new_entry(session, "note", start, **telling.note_fields())
        for record, given in zip(fresh, where, strict=True):
            if not given and record["parentId"] == start:
                record["parentId"] = note["id"]  # the note above the turn, on its path
        return [note, *admitted]

    written = write(session, build, builds_on_leaf=not (follow or explicit), force=force)
    if told and telling is not None:
        from convgit.session import restore_notes

        with suppress(ConvgitError, OSError):  # the note, or the files being back, told it
            restore_notes.settle(session, telling)
    if snapshot and session.snapshots_enabled and written:
        _snapshot_turn(session, written)
    return [r["id"] for r in raw]


def _telling(session: Session) -> restore_notes.Telling | None:
    """What this append tells of the restores not told yet; None when there are none, or
    when the files cannot be read now (they stay pending: the append goes on)."""
    from convgit.session import restore_notes  # here: reading and importing never tell restores

    try:
        return restore_notes.prepare(session)
    except (ConvgitError, OSError):
        return None


def _tells_here(
    session: Session,
    telling: restore_notes.Telling,
    fresh: list[dict[str, Any]],
    where: list[bool],
    start: str | None,
) -> bool:
    """True when this append continues the active path from ``start`` (the first record hangs
    there), which waits for no tool result, and no other process told the restores first."""
    if not fresh or where[0] or start is None or fresh[0]["parentId"] != start:
        return False
    if session.tree.open_tool_calls(start):
        return False
    from convgit.session import restore_notes

    return [s.commit for s in restore_notes.pending(session)] == [s.commit for s in telling.chain]


def _snapshot_turn(session: Session, made: list[dict[str, Any]]) -> None:
    """After a reply, the files are snapshotted (one snapshot for a batch: its last reply).
    A user message is snapshotted when the files differ from the nearest snapshot above
    it (hand edits between turns; at the start, the files before the agent touched
    anything), so "back to before the reply" is exact. A snapshot that cannot be taken
    leaves what was appended in place: ``snapshot_error`` says why, and the sidecar
    records it (``status`` names the entry)."""
    session.snapshot_error = None
    session.files_from = None
    messages = [r for r in made if r["type"] == "message"]
    reply = next((r for r in reversed(messages) if r["role"] == "assistant"), None)
    first = next((r for r in messages if r["role"] == "user"), None)
    target = reply if reply is not None else first
    if target is None:
        return
    try:
        session.snapshot(target["id"], only_if_changed=reply is None)
        session.files_from = session_files.files_from(session, target["id"])
    except (ConvgitError, OSError) as exc:
        why = exc.message if isinstance(exc, ConvgitError) else session_files.os_words(exc)
        session.snapshot_error = why
        with suppress(ConvgitError, OSError):  # a full disk may refuse this line too
            session_files.append_sidecar(session, [schema.snapshot_failed(target["id"], why)])


def append_tool_result(
    session: Session,
    call_id: str,
    content: str | list[dict[str, Any]],
    *,
    is_error: bool = False,
    force: bool = False,
    on_call_branch: bool = False,
    ident: str | None = None,
) -> Entry:
    record = new_message("tool", content, ident)
    record["toolCallId"] = call_id
    record["isError"] = is_error
    elsewhere = appending.call_branch(session.tree, call_id, session.built_on)
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
    return session.append(record, force=force)


def _resent(raw: list[dict[str, Any]], known: dict[str, Any]) -> set[int]:
    """The numbers (from 1) of the records that repeat an entry already in the session, with
    its id and content (a retry: appended once, the resend is a no-op). The same id with other
    content is refused; so is a new id that could be read as a saved state's."""
    resent: set[int] = set()
    for number, record in enumerate(raw, 1):
        ident = record.get("id")
        if not isinstance(ident, str):
            continue
        if ident.startswith(SAVED_PREFIX):
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


def tell_now(session: Session, parent: str | None) -> str | None:
    """Tell the pending restores now, by one note under ``parent`` (none when the files are
    back where they were); the note's id, or None. For writers that place entries themselves."""
    from convgit.session import restore_notes

    telling = restore_notes.prepare(session)
    if telling is None:
        return None
    written: list[dict[str, Any]] = []
    if telling.text is not None:
        written = write(
            session,
            lambda: [new_entry(session, "note", parent, **telling.note_fields())],
            builds_on_leaf=False,
        )
    restore_notes.settle(session, telling)
    return str(written[0]["id"]) if written else None
