"""Merging a remote's copy of a session into the one here: the union of their entries.

Session files are append-only and entries have ids, so two clones that both appended merge by
union: each entry kept once, the remote's new ones appended here in its order (each after its
parent). The same id with different content is a conflict: refused in one sentence that names
both versions, and nothing is written. Each clone keeps its own active leaf (a ``leaf`` record
puts it back after the appended entries). A label the remote gave an entry that has none here
comes too, and so does the session's name when it has none here; labels here win.

On the workspace track the remote's snapshots of entries that have none here come with their
refs; an entry both clones snapshotted keeps its snapshot here. Restores and saved states are
each clone's own (they are of its working tree): an undo here never goes to another clone's
files, so they are not merged (their commits are kept on the remote).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from convgit import schema
from convgit.base.errors import CorruptStoreError, RefusedError
from convgit.conversation import tree
from convgit.conversation.shortids import ShortIds
from convgit.git import names
from convgit.store import jsonl
from convgit.store.sidecar import Sidecar

SHOWN = 40  # characters of a message shown in a conflict's sentence


@dataclass
class Plan:
    """What merging the remote's copy adds here: ``records`` for the session file (new entries,
    labels, name, the leaf put back) and ``snapshots`` for the sidecar with the ``refs`` that
    keep them; ``differ``: entries whose snapshot differs (ours kept)."""

    records: list[dict[str, Any]] = field(default_factory=list)
    entries: list[str] = field(default_factory=list)
    snapshots: list[dict[str, Any]] = field(default_factory=list)
    refs: dict[str, str] = field(default_factory=dict)
    differ: list[str] = field(default_factory=list)


def read_copy(data: bytes, sidecar: bytes, sid: str, remote: str) -> tuple[tree.Tree, Sidecar]:
    """The remote's copy of ``sid`` (its session commit's two files) as a tree and a sidecar;
    one that does not load cleanly is refused (nothing of it is merged)."""
    lines = jsonl.parse_lines(data)
    found = tree.build_records(lines.records, lines.first)
    if found.fatal:
        raise CorruptStoreError(
            f"{remote}'s copy of session {sid} cannot be read safely: {found.fatal[0].sentence()};"
            " nothing was merged."
        )
    side = Sidecar()
    for number, record in jsonl.parse_lines(sidecar).parsed:
        side.add(number, record)
    return found, side


def describe(record: dict[str, Any]) -> str:
    """An entry in a few words: its kind, role and the start of its text."""
    kind = str(record.get("type"))
    what = f"{record.get('role')} message" if kind == "message" else f"a {kind} entry"
    text = schema.text_of(record) if kind == "message" else ""
    text = " ".join(text.split())
    if len(text) > SHOWN:
        text = text[: SHOWN - 1] + "…"
    return f'{what} "{text}"' if text else what


def entries(here: tree.Tree, there: tree.Tree, sid: str, remote: str) -> Plan:
    """The records that bring ``there``'s entries, labels and name into ``here``; a conflict
    (one id, two contents) is refused, naming both."""
    plan = Plan()
    known = here.entries
    for ident, record in there.entries.items():
        mine = known.get(ident)
        if mine is None:
            parent = record.get("parentId")
            if parent is not None and parent not in known and parent not in plan.entries:
                raise CorruptStoreError(
                    f"{remote}'s copy of session {sid} has entry {ident} before its parent;"
                    " nothing was merged."
                )
            plan.records.append(record)
            plan.entries.append(ident)
        elif mine != record:
            short = ShortIds(known).short(ident)
            raise RefusedError(
                f"Entry {short} of session {sid} is {describe(mine)} here and {describe(record)}"
                f" on {remote}; nothing was merged.",
                "the two clones wrote different entries under one id: keep one copy of the"
                " session (`convgit sessions rm` here, then `convgit fetch`), or stop sharing it",
            )
    taken = set(here.labels.values())
    for target, label in there.labels.items():
        if target not in here.labels and label not in taken:
            plan.records.append(schema.label(target, label))
            taken.add(label)
    if here.name is None and there.name is not None:
        plan.records.append(schema.session_name(there.name))
    if plan.entries and here.leaf is not None:
        plan.records.append(schema.leaf(here.leaf))  # each clone keeps its own active leaf
    return plan


def snapshots(plan: Plan, here: Sidecar, there: Sidecar, entries: set[str], sid: str) -> None:
    """Add to ``plan`` the remote's snapshots of ``entries`` that have none here."""
    for entry, snap in there.snapshots.items():
        if entry not in entries:
            continue
        mine = here.snapshots.get(entry)
        if mine is None:
            plan.snapshots.append(
                schema.snapshot(
                    entry, snap.commit, snap.tree_id, snap.files, snap.skipped, ts=snap.ts
                )
            )
            plan.refs[names.snapshot_ref(sid, entry)] = snap.commit
        elif mine.tree_id != snap.tree_id:
            plan.differ.append(entry)
