"""What the html page of a session shows, gathered from both tracks as values for
``convgit.text.html``, which never sees a Session: entries and the tree, labels, markers,
each snapshot's changes since the previous snapshot on its path (git's file-level deltas and
unified diffs), the contents of the files changed, and every restore with its saved state."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from convgit.conversation.refs import saved_id
from convgit.git.plumbing.objects import GITLINK
from convgit.text import html

if TYPE_CHECKING:
    from convgit.git.plumbing.objects import Delta
    from convgit.session import Session
    from convgit.session.snapshots import Status
    from convgit.store.sidecar import Sidecar, SnapshotInfo


def gather(session: Session, status: Status, words: list[str]) -> html.Page:
    """The page of ``session``; ``status`` is ``session.snapshots.status()``, ``words`` its
    sentences."""
    tree = session.conversation.tree
    tree.check(f"Session {session.id}")
    sidecar = session.track.sidecar
    shown = [s for s in sidecar.snapshots.values() if s.entry in tree.entries]
    previous = {
        s.entry: session.track.nearest_snapshot(tree.entries[s.entry]["parentId"]) for s in shown
    }

    def pair(snap: SnapshotInfo) -> tuple[str | None, str]:
        before = previous[snap.entry]
        return (before.tree_id if before else None, snap.tree_id)

    def listed(snap: SnapshotInfo) -> bool:
        """First snapshots list their files (no diff: nothing came before); others, changes."""
        before = previous[snap.entry]
        return (
            snap.files <= html.ROOT_FILES_CAP if before is None else before.tree_id != snap.tree_id
        )

    asked = list(dict.fromkeys(pair(s) for s in shown if listed(s)))
    deltas: dict[tuple[str | None, str], list[Delta]] = {}
    patches: dict[tuple[str | None, str], dict[str, str]] = {}
    blobs: dict[str, bytes | None] = {}
    if asked:
        ws = session.track.workspace()
        deltas = dict(zip(asked, ws.deltas(asked), strict=True))
        changed = [(a, b) for a, b in asked if a is not None]
        patches = dict(zip(changed, ws.patches(changed), strict=True))
        oids = {
            side[1]
            for sides in changed
            for d in deltas[sides]
            for side in (d.old, d.new)
            if side is not None and side[0] != GITLINK
        }
        blobs = ws.blobs(sorted(oids), html.BLOB_CAP)
    views = []
    for s in shown:
        p = previous[s.entry]
        changes: list[html.FileChange] | None = None
        if pair(s) in deltas:
            diffs = patches.get(pair(s), {})
            changes = [
                html.FileChange(d.path, d.status, d.old, d.new, diffs.get(d.path))
                for d in deltas[pair(s)]
            ]
        elif p is not None:
            changes = []  # the same files as the previous snapshot
        views.append(
            html.SnapshotView(
                s.entry, s.commit, s.tree_id, s.files, s.ts, p.entry if p else None, changes,
                s.skipped,
            )
        )  # fmt: skip
    return html.Page(
        session=session.id,
        name=tree.name,
        entries=list(tree.entries.values()),
        children=tree.children,
        path=tree.path() if tree.leaf else [],
        labels=dict(tree.labels),
        leaf=tree.leaf,
        files_at=status.matches,
        workspace=status.workspace,
        status=words,
        snapshots=views,
        restores=restores(sidecar, tree.entries),
        blobs=blobs,
    )


def restores(sidecar: Sidecar, entries: dict[str, dict[str, Any]]) -> list[html.RestoreView]:
    """Every restore the sidecar records, in order, with its saved state (the ``before``
    commit) and the entry where it happened: the note that told the model of it (a note names
    the newest restore it tells of; one written before notes named any, just after it), else
    the last entry written before it."""
    told = {
        str(r["saved"]): i
        for i, r in entries.items()
        if r["type"] == "note" and r.get("source") == "restore" and "saved" in r
    }
    notes = [
        (r["ts"], i)
        for i, r in entries.items()
        if r["type"] == "note" and r.get("source") == "restore" and "saved" not in r
    ]
    records = sidecar.restores
    out = []
    for n, record in enumerate(records):
        ts = str(record["ts"])
        until = str(records[n + 1]["ts"]) if n + 1 < len(records) else None
        at = told.get(saved_id(str(record["before"])))
        if at is None:
            at = next((i for t, i in notes if t >= ts and (until is None or t < until)), None)
        if at is None:
            at = next((i for i, r in reversed(entries.items()) if r["ts"] <= ts), None)
        out.append(
            html.RestoreView(
                target=record.get("entry") or None,
                commit=str(record.get("commit", "")),
                saved=str(record["before"]),
                undo=bool(record.get("undo")),
                changed=dict(record["changed"]),
                paths=record["paths"],
                ts=ts,
                finished=record["before"] in sidecar.finished,
                at=at,
            )
        )
    return out
