"""Branching the conversation: a fork, an edit, a retry, or a new session forked from one.

Promises kept here (``Session.fork``, ``edit``, ``retry`` and ``fork_session`` delegate here):
* nothing is copied within a session and no file is touched: a branch is new entries under
  an existing one, and the active leaf moves to it;
* a branch is refused inside a tool run (``branching.refusal``): it would leave a call waiting;
* a forked session shares the snapshots of the shared path (the same commits), never copies.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from convgit import branching, opening, schema
from convgit.conversation import appending, tree
from convgit.errors import RefusedError

if TYPE_CHECKING:
    from convgit.session import Session


def fork(session: Session, ref: str, text: str | None = None, summary: str | None = None) -> str:
    target = session.resolve(ref)
    refused = branching.refusal(session.tree, target, f"A fork from {target}")
    if refused is not None:
        raise refused
    left = session.tree.leaf

    def build() -> list[dict[str, Any]]:
        records: list[dict[str, Any]] = []
        parent = target
        if summary is not None:
            records.append(
                session._new_entry("branch_summary", parent, fromId=left or target, summary=summary)
            )
            parent = records[-1]["id"]
        if text is not None:
            made = session._new_entry("message", parent, role="user", content=text)
            if records and made["id"] == records[0]["id"]:
                made["id"] = appending.fresh_id(
                    session.tree.entries, {records[0]["id"]: records[0]}
                )
            records.append(made)
        if not records:
            records.append(schema.leaf(target))
        return records

    session._write(build, builds_on_leaf=False)
    return session.tree.leaf or target


def edit(session: Session, ref: str, text: str) -> str:
    target = session.resolve(ref)
    record = session.tree.entries[target]
    if record["type"] != "message" or record["role"] == "tool":
        caller = _caller(session.tree, target)
        raise RefusedError(
            f"Entry {target} is a {_describe(record)}; only user and assistant messages can"
            " be edited.",
            None if caller is None else f"edit or retry {caller}, the call it answers",
        )
    run = branching.tool_run(session.tree, target)
    if run is not None:
        caller, waiting = run
        raise RefusedError(
            f"Entry {target} is an assistant message whose tool calls are not all answered"
            f" ({', '.join(waiting)}): a new version beside it would leave its run unfinished.",
            branching.right_points(session.tree, caller, target),
        )
    parent = record["parentId"]
    if parent is not None:
        what = f"A new version of {target} (beside it, below {parent})"
        refused = branching.refusal(session.tree, parent, what)
        if refused is not None:
            raise refused
    made = session._write(
        lambda: [session._new_entry("message", parent, role=record["role"], content=text)],
        builds_on_leaf=False,
    )
    return str(made[0]["id"])


def retry(session: Session, ref: str = "@", *, turn: bool = False) -> str:
    target = session.resolve(ref)
    record = session.tree.entries[target]
    if turn:
        asked = branching.last_user_message(session.tree, target)
        before: str | None = session.tree.entries[asked]["parentId"]
        if before is None:
            raise RefusedError(
                f"The last user message, {asked}, is the first entry: there is nothing before"
                " it to go back to.",
                f"`convgit edit {asked} TEXT` starts the new attempt beside it",
            )
        refused = branching.refusal(session.tree, before, f"Going back to {before}")
        if refused is not None:
            raise refused
        session._write(lambda: [schema.leaf(before)], builds_on_leaf=False)
        return before
    if record["type"] == "message" and record["role"] == "assistant":
        parent = record["parentId"]
        if parent is None:
            raise RefusedError(f"Entry {target} is a root; there is nothing to retry from.")
        target = parent
    session._write(lambda: [schema.leaf(target)], builds_on_leaf=False)
    return target


def fork_session(session: Session, ref: str, *, name: str | None = None) -> Session:
    target = session.resolve(ref)
    refused = branching.refusal(session.tree, target, f"A fork from {target}")
    if refused is not None:
        raise refused
    path = session.tree.path(target)
    labels = session.tree.labels
    copied = [session.tree.entries[i] for i in path]
    copied += [schema.label(i, labels[i]) for i in path if i in labels]
    snapshots = session.sidecar.snapshots if session.sidecar_file.path.exists() else {}
    shared = [snapshots[i] for i in path if i in snapshots]
    ws = session.workspace() if shared else None  # refuses before anything is made
    from convgit.session import Session  # the class that starts a session; it imports this module

    new = opening.start(
        Session,
        session.location,
        name=name,
        snapshots=session.snapshots_enabled,
        fsync=session.file.fsync,
        forked_from={"session": session.id, "entry": target},
    )
    new._write(lambda: copied, builds_on_leaf=False)
    if ws is not None:
        for snap in shared:
            ws.set_ref(f"refs/convgit/{new.id}/{snap.entry}", snap.commit)
        new.sidecar_file.append(
            [
                schema.snapshot(
                    snap.entry, snap.commit, snap.tree_id, snap.files, snap.skipped, ts=snap.ts
                )
                for snap in shared
            ]
        )
        new._sidecar = None
    return new


def _caller(found: tree.Tree, ident: str) -> str | None:
    """The assistant message that made the call tool result ``ident`` answers, above it."""
    record = found.entries[ident]
    if record["type"] != "message" or record["role"] != "tool":
        return None
    node: str | None = record["parentId"]
    while node is not None:
        above = found.entries[node]
        if above["type"] == "message" and record["toolCallId"] in schema.tool_call_ids(above):
            return node
        node = above["parentId"]
    return None


def _describe(record: dict[str, Any]) -> str:
    if record["type"] == "message":
        return f"{record['role']} message"
    return f"'{record['type']}' entry"
