"""Moving in the conversation: switching, a fork, an edit, a retry, a label, or a new session
forked from one.

Promises kept here (``Moves``, a session's ``moves``):
* no file is touched: only conversation records are written;
* nothing is copied within a session: a branch is new entries under an existing one, and the
  active leaf moves to it;
* a branch is refused inside a tool run (``branching.refusal``): it would leave a call waiting;
* a fork or an edit that writes a message the model is sent next tells it first where restores
  left the files: the note goes above the message, in the same write
  (``convgit.session.restore_notes``); a move that writes no such message leaves them pending;
* a forked session shares the snapshots of the shared path (the same commits), never copies.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from convgit import schema
from convgit.base.errors import ConvgitError, NotFoundError, RefusedError, UsageError
from convgit.conversation import appending, branching, refs, tree
from convgit.session.opening import check_name
from convgit.session.restore_notes import goes_above

if TYPE_CHECKING:
    from convgit.session.conversation import Conversation
    from convgit.session.restore_notes import RestoreNotes, Telling
    from convgit.session.track import Track
    from convgit.store.sidecar import SnapshotInfo


@dataclass(frozen=True)
class ForkCopy:
    """What a session forked at ``target`` starts with: the path's ``records`` (with their
    labels) and the ``snapshots`` it shares."""

    target: str
    records: list[dict[str, Any]]
    snapshots: list[SnapshotInfo]


class Moves:
    """Moving in one session's conversation: never a file changed."""

    def __init__(self, conversation: Conversation, track: Track, notes: RestoreNotes) -> None:
        self.conversation = conversation
        self.track = track
        self.notes = notes
        self.note: str | None = None  # the note the last fork or edit wrote above its message

    def switch(self, ref: str, *, tip: bool = False) -> str:
        """Make ``ref`` the active leaf; with ``tip``, the newest deepest leaf below ``ref`` (the
        end of its branch written to last). Files are not touched."""
        target = self.conversation.resolve(ref)
        if tip:
            target = self.conversation.tree.newest_leaf(target)
        self.conversation.write(lambda: [schema.leaf(target)], builds_on_leaf=False)
        return target

    def branches(self, ref: str | None = None) -> branching.Fork:
        """The branches that start at ``ref`` (default: the nearest fork point at or above the
        active leaf), numbered in the order they were started; see ``branching``."""
        self.conversation.check()
        if ref is not None:
            at: str | None = self.conversation.resolve(ref)
        elif self.conversation.tree.leaf is None:
            raise NotFoundError("The session has no entries yet.", 'convgit user "..."')
        else:
            at = branching.fork_point(self.conversation.tree, self.conversation.tree.leaf)
        return branching.fork_at(self.conversation.tree, at, self.track.read_sidecar().snapshots)

    def switch_branch(self, number: int, ref: str | None = None) -> str:
        """Make the newest deepest leaf of branch ``number`` of ``branches(ref)`` the leaf."""
        target = self.branches(ref).branch(number).leaf
        self.conversation.write(lambda: [schema.leaf(target)], builds_on_leaf=False)
        return target

    def label(self, ref: str, name: str | None, *, force: bool = True, replace: bool = True) -> str:
        """Bookmark ``ref`` as ``name`` (None clears its label). A label names one entry:
        given to another, it moves (``labelled`` tells where it was); with ``force`` False,
        a label on another entry is refused instead. An entry has one label: with ``replace``
        False, a label ``ref`` has already is refused instead of replaced."""
        target = self.conversation.resolve(ref)
        if name is not None:
            _check_label(name)

        def build() -> list[dict[str, Any]]:
            held = (
                [] if name is None else [i for i in self.conversation.labelled(name) if i != target]
            )
            if held and not force:
                raise RefusedError(
                    f"The label '{name}' is on entry {held[-1]} already; nothing was changed.",
                    f"`convgit label {ref} {name} -f` moves it here",
                )
            had = self.conversation.tree.labels.get(target)
            if name is not None and had is not None and had != name and not replace:
                raise RefusedError(
                    f"Entry {target} is labelled '{had}' already, and an entry has one label;"
                    " nothing was changed.",
                    f"`convgit label {ref} {name} -f` replaces '{had}'",
                )
            return [*(schema.label(i, None) for i in held), schema.label(target, name)]

        self.conversation.write(build, builds_on_leaf=False)
        return target

    def rename(self, text: str) -> None:
        """Set the session's display name (``Conversation.name`` reads it)."""
        check_name(text)
        self.conversation.write(lambda: [schema.session_name(text)], builds_on_leaf=False)

    def fork(self, ref: str, text: str | None = None, summary: str | None = None) -> str:
        """Go back to ``ref`` and branch from there. With ``summary``, a ``branch_summary``
        (carrying what the branch left behind learned) is appended under ``ref``; with ``text``,
        a user message starts the new branch. Nothing is copied; files are not touched. Refused
        inside a tool run (``branching.refusal``): the branch would leave a tool call waiting."""
        target = self.conversation.resolve(ref)
        if text is not None:
            appending.check_said(text)
        if summary is not None:
            appending.check_said(summary, "summary")
        refused = branching.refusal(self.conversation.tree, target, f"A fork from {target}")
        if refused is not None:
            raise refused
        left = self.conversation.tree.leaf
        telling = self._telling() if text is not None else None  # told above the message
        told: list[bool] = []

        def build() -> list[dict[str, Any]]:
            records: list[dict[str, Any]] = []
            parent: str | None = target
            if summary is not None:
                records.append(
                    self.conversation.new_entry(
                        "branch_summary", parent, fromId=left or target, summary=summary
                    )
                )
                parent = records[-1]["id"]
            if text is not None:
                parent = self._tell(telling, parent, records, told)
                records.append(
                    self.conversation.new_entry(
                        "message", parent, records, role="user", content=text
                    )
                )
            if not records:
                records.append(schema.leaf(target))
            return records

        self._written(build, telling, told)
        return self.conversation.tree.leaf or target

    def edit(self, ref: str, text: str) -> str:
        """A new version of message ``ref``: a sibling with the same role and new text, which
        becomes the leaf (a new user message hangs below the note that tells restores not told
        yet, when there are some). The original stays in the tree. Refused for a tool result, an
        assistant message whose tool calls are not all answered, and a message whose new version
        would come between a tool call and its result; the hint names where to branch instead."""
        target = self.conversation.resolve(ref)
        appending.check_said(text)
        refused = _edit_refusal(self.conversation.tree, target)
        if refused is not None:
            raise refused
        record = self.conversation.tree.entries[target]
        telling = self._telling() if goes_above(record) else None
        told: list[bool] = []

        def build() -> list[dict[str, Any]]:
            records: list[dict[str, Any]] = []
            parent = self._tell(telling, record["parentId"], records, told)
            role = record["role"]
            records.append(
                self.conversation.new_entry("message", parent, records, role=role, content=text)
            )
            return records

        made = self._written(build, telling, told)
        return str(made[-1]["id"])

    def _telling(self) -> Telling | None:
        """What a message written now tells of the restores not told yet (None: nothing, or the
        files cannot be read now: they stay pending and the move goes on)."""
        try:
            return self.notes.prepare()
        except (ConvgitError, OSError):
            return None

    def _tell(
        self,
        telling: Telling | None,
        parent: str | None,
        records: list[dict[str, Any]],
        told: list[bool],
    ) -> str | None:
        """Inside a write: the note that tells ``telling`` goes into ``records`` under
        ``parent``; the parent the user message then hangs from (a fork and an edit are refused
        inside a tool run, so ``parent`` waits for no result)."""
        telling_records = self.notes.told_under(telling, parent, records)
        if telling_records is None:
            return parent
        told.append(True)
        records.extend(telling_records)
        return str(telling_records[0]["id"]) if telling_records else parent

    def _written(
        self,
        build: Callable[[], list[dict[str, Any]]],
        telling: Telling | None,
        told: list[bool],
    ) -> list[dict[str, Any]]:
        """Write ``build``'s records; the restores they told are closed (``settle``) and the
        note, if one was written, is ``note``."""
        self.note = None
        made = self.conversation.write(build, builds_on_leaf=False)
        if told and telling is not None:
            self.note = next((str(r["id"]) for r in made if r["type"] == "note"), None)
            with suppress(ConvgitError, OSError):  # the note, or the files being back, told it
                self.notes.settle(telling)
        return made

    def retry(self, ref: str = refs.LEAF, *, turn: bool = False) -> str:
        """Get ready to ask again: for an assistant reply, the leaf moves to the message it
        answered (the next reply becomes its sibling); for a user message or tool result, to
        that entry. Refused for an entry that is not a message (a system prompt, a note):
        there is nothing to retry there. With
        ``turn``, to just before the last user message at or above ``ref`` (tool results are not
        user messages), so the next user message starts the new attempt and the turn left
        behind, tool runs and all, is not in its context."""
        target = self.conversation.resolve(ref)
        record = self.conversation.tree.entries[target]
        if turn:
            asked = branching.last_user_message(self.conversation.tree, target)
            before: str | None = self.conversation.tree.entries[asked]["parentId"]
            if before is None:
                raise RefusedError(
                    f"The last user message, {asked}, is the first entry: there is nothing before"
                    " it to go back to.",
                    f"`convgit edit {asked} TEXT` starts the new attempt beside it",
                )
            refused = branching.refusal(self.conversation.tree, before, f"Going back to {before}")
            if refused is not None:
                raise refused
            self.conversation.write(lambda: [schema.leaf(before)], builds_on_leaf=False)
            return before
        if record["type"] != "message":
            reply = _reply_above(self.conversation.tree, target)
            raise RefusedError(
                f"Entry {target} is a {_describe(record)}, not a message: there is nothing to retry"
                " there, and the next reply would go below it as it is.",
                None if reply is None else f"`convgit retry {reply}` tries the reply above again",
            )
        if record["role"] == "assistant":
            parent = record["parentId"]
            if parent is None:
                raise RefusedError(f"Entry {target} is a root; there is nothing to retry from.")
            target = parent
        self.conversation.write(lambda: [schema.leaf(target)], builds_on_leaf=False)
        return target

    def fork_copy(self, ref: str) -> ForkCopy:
        """What a new session forked at ``ref`` starts with (``Session.fork_session``): the
        root-to-``ref`` path with its labels, and the snapshots of that path, to share. Refused
        inside a tool run, as ``fork`` is, and (with snapshots to share) outside git."""
        target = self.conversation.resolve(ref)
        found = self.conversation.tree
        refused = branching.refusal(found, target, f"A fork from {target}")
        if refused is not None:
            raise refused
        path = found.path(target)
        copied = [found.entries[i] for i in path]
        copied += [schema.label(i, found.labels[i]) for i in path if i in found.labels]
        snapshots = self.track.sidecar.snapshots if self.track.file.path.exists() else {}
        shared = [snapshots[i] for i in path if i in snapshots]
        if shared:
            self.track.workspace()  # refuses before anything is made
        return ForkCopy(target, copied, shared)

    def take_in(self, copy: ForkCopy) -> None:
        """Write ``copy`` into this (new) session: its records, and its snapshots shared (the
        same commits, under this session's refs)."""
        self.conversation.write(lambda: copy.records, builds_on_leaf=False)
        if not copy.snapshots:
            return
        from convgit.git import names  # only a fork with snapshots names refs

        ws = self.track.workspace()
        for snap in copy.snapshots:
            ws.set_ref(names.snapshot_ref(self.track.id, snap.entry), snap.commit)
        self.track.append(
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
                for snap in copy.snapshots
            ]
        )


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


def _reply_above(found: tree.Tree, ident: str) -> str | None:
    """The nearest assistant message above ``ident`` on its path."""
    for node in reversed(found.path(ident)):
        record = found.entries[node]
        if record["type"] == "message" and record["role"] == "assistant":
            return node
    return None


def _describe(record: dict[str, Any]) -> str:
    if record["type"] == "message":
        return f"{record['role']} message"
    return f"'{record['type']}' entry"


def _check_label(name: str) -> None:
    problem = refs.label_problem(name)
    if problem is not None:
        raise UsageError(problem)
