"""Moving in the conversation: switching, a fork, an edit, a retry, a label, or a new session
forked from one.

Promises kept here (``Session``'s moves delegate here):
* no file is touched: only conversation records are written;
* nothing is copied within a session: a branch is new entries under an existing one, and the
  active leaf moves to it;
* a branch is refused inside a tool run (``branching.refusal``): it would leave a call waiting;
* a forked session shares the snapshots of the shared path (the same commits), never copies.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from convgit import schema
from convgit.base.errors import NotFoundError, RefusedError, UsageError
from convgit.conversation import appending, branching, tree
from convgit.session import appending as session_append
from convgit.session import files as session_files
from convgit.session import opening
from convgit.session.runs import WORKING_TREE
from convgit.store.sidecar import SAVED_PREFIX

if TYPE_CHECKING:
    from convgit.session import Session


def switch(session: Session, ref: str, *, tip: bool = False) -> str:
    target = session.resolve(ref)
    if tip:
        target = session.tree.newest_leaf(target)
    session_append.write(session, lambda: [schema.leaf(target)], builds_on_leaf=False)
    return target


def branches(session: Session, ref: str | None = None) -> branching.Fork:
    session.check()
    if ref is not None:
        at: str | None = session.resolve(ref)
    elif session.tree.leaf is None:
        raise NotFoundError("The session has no entries yet.", 'convgit user "..."')
    else:
        at = branching.fork_point(session.tree, session.tree.leaf)
    return branching.fork_at(session.tree, at, session.read_sidecar().snapshots)


def switch_branch(session: Session, number: int, ref: str | None = None) -> str:
    target = branches(session, ref).branch(number).leaf
    session_append.write(session, lambda: [schema.leaf(target)], builds_on_leaf=False)
    return target


def label(session: Session, ref: str, name: str | None, *, force: bool = True) -> str:
    target = session.resolve(ref)
    if name is not None:
        _check_label(name)

    def build() -> list[dict[str, Any]]:
        held = [] if name is None else [i for i in session.labelled(name) if i != target]
        if held and not force:
            raise RefusedError(
                f"The label '{name}' is on entry {held[-1]} already; nothing was changed.",
                f"`convgit label {ref} {name} -f` moves it here",
            )
        return [*(schema.label(i, None) for i in held), schema.label(target, name)]

    session_append.write(session, build, builds_on_leaf=False)
    return target


def rename(session: Session, text: str) -> None:
    opening.check_name(text)
    session_append.write(session, lambda: [schema.session_name(text)], builds_on_leaf=False)


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
                session_append.new_entry(
                    session, "branch_summary", parent, fromId=left or target, summary=summary
                )
            )
            parent = records[-1]["id"]
        if text is not None:
            made = session_append.new_entry(session, "message", parent, role="user", content=text)
            if records and made["id"] == records[0]["id"]:
                made["id"] = appending.fresh_id(
                    session.tree.entries, {records[0]["id"]: records[0]}
                )
            records.append(made)
        if not records:
            records.append(schema.leaf(target))
        return records

    session_append.write(session, build, builds_on_leaf=False)
    return session.tree.leaf or target


def edit(session: Session, ref: str, text: str) -> str:
    target = session.resolve(ref)
    refused = _edit_refusal(session.tree, target)
    if refused is not None:
        raise refused
    record = session.tree.entries[target]
    parent = record["parentId"]
    made = session_append.write(
        session,
        lambda: [
            session_append.new_entry(session, "message", parent, role=record["role"], content=text)
        ],
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
        session_append.write(session, lambda: [schema.leaf(before)], builds_on_leaf=False)
        return before
    if record["type"] == "message" and record["role"] == "assistant":
        parent = record["parentId"]
        if parent is None:
            raise RefusedError(f"Entry {target} is a root; there is nothing to retry from.")
        target = parent
    session_append.write(session, lambda: [schema.leaf(target)], builds_on_leaf=False)
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
    new = opening.start(
        type(session),
        session.location,
        name=name,
        snapshots=session.snapshots_enabled,
        fsync=session.file.fsync,
        forked_from={"session": session.id, "entry": target},
    )
    session_append.write(new, lambda: copied, builds_on_leaf=False)
    if ws is not None:
        for snap in shared:
            ws.set_ref(f"refs/convgit/{new.id}/{snap.entry}", snap.commit)
        session_files.append_sidecar(
            new,
            [
                schema.snapshot(
                    snap.entry,
                    snap.commit,
                    snap.tree_id,
                    snap.files,
                    snap.skipped,
                    ts=snap.ts,
                    rules=snap.rules,
                )
                for snap in shared
            ],
        )
    return new


def _edit_refusal(found: tree.Tree, target: str) -> RefusedError | None:
    """Why ``convgit edit`` refuses a new version of ``target``, or None. A hint names only
    what then runs (``edit CALLER`` would be refused too: its calls are open at itself)."""
    record = found.entries[target]
    if record["type"] != "message" or record["role"] == "tool":
        caller = _caller(found, target)  # a reply that makes calls is never edited: retried
        hint = None if caller is None else f"`convgit retry {caller}`, the call it answers"
        return RefusedError(
            f"Entry {target} is a {_describe(record)}; only user and assistant messages can"
            " be edited.",
            hint,
        )
    run = branching.tool_run(found, target)
    if run is not None:
        caller, waiting = run
        return RefusedError(
            f"Entry {target} is an assistant message whose tool calls are not all answered"
            f" ({', '.join(waiting)}): a new version beside it would leave its run unfinished.",
            branching.right_points(found, caller, target),
        )
    parent = record["parentId"]
    if parent is not None:
        what = f"A new version of {target} (beside it, below {parent})"
        return branching.refusal(found, parent, what)
    return None


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


def _check_label(name: str) -> None:
    if (
        not name
        or name != name.strip()
        or any(c in name for c in "~ \t\n")
        or name.startswith(":")  # `:N` is the N-th user message
        or name in ("@", "HEAD", "root", WORKING_TREE)
        or name.startswith(SAVED_PREFIX)
        or "@{" in name  # REF@{N} names a replaced snapshot
    ):
        raise UsageError(
            f"'{name}' cannot be a label: use a word without spaces, '~' or '@{{', not starting"
            f" with ':' or {SAVED_PREFIX} (which name user messages and saved states), and not @,"
            " HEAD, root or ."
        )
