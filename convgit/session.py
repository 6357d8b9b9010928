"""The use-cases that bind both tracks. One screen per use-case.

A ``Session`` is one conversation file (and, in a git repository, its sidecar of snapshots).
Promises kept here:
* moving in the conversation (switch, fork, edit, retry, label) never changes a file;
* an append builds on the leaf this Session last saw; if another process moved it since, the
  append is refused (``LeafMovedError``) unless ``force=True``;
* restore saves the working tree first and records it, so ``restore(undo=True)`` returns to
  the exact prior bytes; it tells the model in a ``note`` entry, and never moves the leaf
  to another branch;
* every appended record is checked against the tree as it will be (``appending``), and a tool
  result goes only where its call is on the path: filed on another branch, it leaves the active
  leaf where it was.
* a side-by-side run never touches the working tree; its notes go to the end of each REF's
  branch and never move the active leaf to another branch.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, overload

from convgit import (
    branching,
    forking,
    opening,
    restoring,
    schema,
    session_append,
    session_files,
    session_import,
    session_runs,
    verify,
)
from convgit.conversation import appending, replay, tree
from convgit.errors import (
    LeafMovedError,
    NotFoundError,
    UsageError,
)
from convgit.restoring import RestoreResult
from convgit.schema import Entry
from convgit.session_runs import WORKING_TREE
from convgit.store import load, sessions
from convgit.store.location import StoreLocation, locate, size_cap
from convgit.store.sidecar import SAVED_PREFIX, SavedState, Sidecar, SnapshotInfo

if TYPE_CHECKING:
    from convgit.formats import importing
    from convgit.session_files import Status
    from convgit.session_import import ImportResult
    from convgit.session_runs import RunReport
    from convgit.workspace import Change, Snapshot, Workspace

__all__ = [
    "DEFAULT_SIZE_CAP",
    "RestoreResult",
    "Session",
]

MIB = 1024 * 1024
DEFAULT_SIZE_CAP = 10 * MIB


class Session:
    """One conversation tree and its optional workspace sidecar."""

    def __init__(
        self,
        location: StoreLocation,
        sid: str,
        *,
        fsync: bool = False,
        workspace: Workspace | None = None,
    ) -> None:
        """``workspace``: the working tree, when the caller knows it already (found once by
        ``Workspace.discover``); otherwise it is discovered when first needed."""
        self.location = location
        self.id = sid
        self.file = sessions.session_file(location, sid, fsync=fsync)
        self.sidecar_file = sessions.sidecar_file(location, sid, fsync=fsync)
        self.tree = tree.Tree()
        self._built_on: str | None = None
        self._sidecar: Sidecar | None = None
        self._workspace: Workspace | None = workspace
        self.snapshot_error: str | None = None  # why the last turn's snapshot was not taken

    # -- opening --------------------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        path: str | Path = ".",
        create: bool = False,
        *,
        session: str | None = None,
        store_dir: str | Path | None = None,
        fsync: bool = False,
    ) -> Session:
        """Open ``session`` (default: ``CONVGIT_SESSION``, else the one ``init`` made current);
        with ``create=True`` and no current session, start one."""
        return opening.open(cls, path, create, session=session, store_dir=store_dir, fsync=fsync)

    @classmethod
    def create(
        cls,
        path: str | Path = ".",
        *,
        store_dir: str | Path | None = None,
        name: str | None = None,
        snapshots: bool | None = None,
        fsync: bool = False,
        forked_from: dict[str, str] | None = None,
        agent: tuple[str, str] | None = None,
        make_current: bool = True,
    ) -> Session:
        """Start a new session and make it current. Snapshots default to on inside git.
        ``agent``: (agent name, the agent's session id) of the session this one mirrors."""
        return opening.start(
            cls,
            locate(path, store_dir),
            name=name,
            snapshots=snapshots,
            fsync=fsync,
            forked_from=forked_from,
            agent=agent,
            make_current=make_current,
        )

    def reload(self) -> None:
        """Read the whole session again; the leaf this Session builds on becomes the active one."""
        self.tree = load.session(self.file, self.id)[1]
        self._built_on = self.tree.leaf
        self._sidecar = None

    def refresh(self) -> None:
        """Accept what other processes appended: the next append builds on the active leaf."""
        self.reload()

    # -- reading --------------------------------------------------------------------------------

    @property
    def display_name(self) -> str | None:
        return self.tree.name

    @property
    def leaf(self) -> str | None:
        return self.tree.leaf

    def resolve(self, ref: str) -> str:
        self.tree.check(f"Session {self.id}")
        return self.tree.resolve(ref)

    def entry(self, ref: str) -> Entry:
        return schema.entry_from_wire(self.tree.entries[self.resolve(ref)])

    def path(self, ref: str | None = None) -> list[Entry]:
        """The entries from the root to ``ref`` (default: the active leaf)."""
        self.tree.check(f"Session {self.id}")
        leaf = None if ref is None else self.resolve(ref)
        return [schema.entry_from_wire(self.tree.entries[i]) for i in self.tree.path(leaf)]

    def all_entries(self) -> list[Entry]:
        """Every entry, in file order."""
        self.tree.check(f"Session {self.id}")
        return [schema.entry_from_wire(r) for r in self.tree.entries.values()]

    def context(self, ref: str | None = None) -> replay.Context:
        """What the model is sent at ``ref`` (default: the active leaf); see ``replay``."""
        self.tree.check(f"Session {self.id}")
        return replay.replay(self.tree, None if ref is None else self.resolve(ref))

    # -- verification (fsck and repair live in verify.py) ------------------------------------

    def problems(self) -> list[tree.Problem]:
        """Everything fsck reports: fatal problems and tolerated ones, by line; in git, also
        every snapshot and saved state the sidecar names whose commit git no longer has
        (``lost_commits``)."""
        found = verify.problems(self.tree, self.read_sidecar())
        if not any(p.fatal for p in found):
            found += self.lost_commits()
        return sorted(found, key=lambda p: (p.line or 0, p.what))

    def lost_commits(self) -> list[tree.Problem]:
        """The sidecar's records whose snapshot or saved-state commit is not in the repository
        (a ref deleted by hand, then git gc): their files are gone, repair cannot help."""
        return session_files.lost_commits(self)

    def repair(self) -> verify.RepairReport:
        """Move every line fsck rejects aside, keeping a backup (``verify.repair``); the session
        is read again afterwards."""
        report = verify.repair(self.file, self.sidecar_file, self.id)
        self.reload()
        return report

    # -- writing the conversation -------------------------------------------------------------

    def _write(
        self,
        build: Callable[[], list[dict[str, Any]]],
        *,
        builds_on_leaf: bool,
        force: bool = False,
    ) -> list[dict[str, Any]]:
        """Under the lock: take in others' lines, check the leaf, append what ``build`` makes."""
        self.tree.check(f"Session {self.id}")
        with self.file.appending() as appender:
            news = appender.news
            if news.records:
                self.tree.add_records(news.records, news.first)
                self.tree.finish(since=news.first)
                self.tree.check(f"Session {self.id}")
            if builds_on_leaf and not force and self.tree.leaf != self._built_on:
                raise LeafMovedError(
                    f"Another process moved the active leaf from {self._built_on} to "
                    f"{self.tree.leaf} since this session was read.",
                    "refresh (reopen) and try again, or append anyway with force",
                )
            records = build()
            number = self.file.lines + 1
            appender.write(records)
        self.tree.add_records(records, number)
        self._built_on = self.tree.leaf
        return records

    def _new_entry(self, kind: str, parent: str | None, **fields: Any) -> dict[str, Any]:
        record: dict[str, Any] = {
            "type": kind,
            "id": schema.new_id(self.tree.entries),
            "parentId": parent,
            "ts": schema.now(),
        }
        record.update(fields)
        return record

    def append(self, entry: Entry | dict[str, Any], *, force: bool = False) -> Entry:
        """Append one entry. Without a parent it hangs off the leaf this Session built on."""
        return self.append_many([entry], force=force)[0]

    def append_many(
        self,
        items: Iterable[Entry | dict[str, Any]],
        *,
        force: bool = False,
        follow: bool = False,
    ) -> list[Entry]:
        """Append entries in order under one lock (see ``append_records``); returns them."""
        ids = self.append_records(
            [item.to_wire() if isinstance(item, Entry) else dict(item) for item in items],
            force=force,
            follow=follow,
        )
        return [schema.entry_from_wire(self.tree.entries[i]) for i in ids]

    def append_records(
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
        return session_append.append_records(
            self, raw, force=force, follow=follow, snapshot=snapshot
        )

    def append_user(self, text: str, *, force: bool = False, ident: str | None = None) -> Entry:
        return self.append(self._new_message("user", text, ident), force=force)

    def append_assistant(
        self,
        content: str | list[dict[str, Any]],
        *,
        force: bool = False,
        ident: str | None = None,
    ) -> Entry:
        """Append the model's reply; with snapshots on, the files are snapshotted right after.
        With ``ident``, sending the same reply again is a no-op (see ``append_records``)."""
        return self.append(self._new_message("assistant", content, ident), force=force)

    def append_tool_result(
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
        the call. A call on another branch is refused, unless ``on_call_branch``: then the result
        goes under that branch's newest entry and the active leaf stays where it is. A call no
        assistant message made is refused (``NotFoundError``)."""
        return session_append.append_tool_result(
            self,
            call_id,
            content,
            is_error=is_error,
            force=force,
            on_call_branch=on_call_branch,
            ident=ident,
        )

    def set_system(self, text: str | None, *, force: bool = False) -> Entry:
        """Record the system prompt the model is sent from here on (None: none) as a settings
        entry at the active leaf; replay takes the last one on the path, as for ``model``."""
        return self.append({"type": "system", "text": text}, force=force)

    def _new_message(self, role: str, content: Any, ident: str | None = None) -> dict[str, Any]:
        record = {"type": "message", "role": role, "content": content}
        if ident is not None:
            record["id"] = caller_id(ident)
        return record

    # -- importing an agent's session ----------------------------------------------------------

    @classmethod
    def for_agent(
        cls,
        agent: str,
        agent_session_id: str,
        path: str | Path = ".",
        *,
        store_dir: str | Path | None = None,
        fsync: bool = False,
        make_current: bool = True,
        forked_from: Callable[[], dict[str, str] | None] | None = None,
    ) -> Session:
        """The session that mirrors ``agent``'s session ``agent_session_id`` (its header names
        both, or it records that session as resumed or forked from it), started when there is
        none; one per agent session, whoever asks first. ``forked_from``: asked only when the
        session is started, for its ``forkedFrom``."""
        return session_import.for_agent(
            cls,
            agent,
            agent_session_id,
            path,
            store_dir=store_dir,
            fsync=fsync,
            make_current=make_current,
            forked_from=forked_from,
        )

    @classmethod
    def find_for_agent(
        cls,
        location: StoreLocation,
        agent: str,
        agent_session_id: str,
        *,
        fsync: bool = False,
    ) -> Session | None:
        """The session that mirrors ``agent``'s session ``agent_session_id``, if one does."""
        return session_import.find_for_agent(cls, location, agent, agent_session_id, fsync=fsync)

    def agent_sessions(self, agent: str) -> frozenset[str]:
        """The sessions of ``agent`` this one mirrors: its header's, and those that continue it
        (resumed from one of its entries, or forked from it)."""
        found = {ident for name, ident in self.tree.agent_sessions if name == agent}
        header = self.tree.header or {}
        if header.get("agent") == agent and isinstance(header.get("agentSession"), str):
            found.add(header["agentSession"])
        return frozenset(found)

    def mirror_agent_session(
        self,
        agent: str,
        agent_session_id: str,
        *,
        start: str | None,
        how: str,
        leaf: str | None = None,
    ) -> None:
        """Record that ``agent``'s session ``agent_session_id`` continues this one, from entry
        ``start`` (``how``: "resume", "fork"…): its file is imported here, its turns a branch.
        With ``leaf``, the active leaf moves there (files are not touched)."""
        session_import.mirror_agent_session(
            self, agent, agent_session_id, start=start, how=how, leaf=leaf
        )

    @classmethod
    def import_file(
        cls,
        agent: str,
        source: str | Path,
        path: str | Path = ".",
        *,
        agent_session_id: str | None = None,
        store_dir: str | Path | None = None,
        fsync: bool = False,
        make_current: bool = True,
    ) -> list[ImportResult]:
        """Import ``agent``'s session file ``source`` into the session that mirrors it (then the
        files the importer names as its companions: a session's subagent files). Only what is
        new is added; nothing is snapshotted. ``agent_session_id`` spares reading the whole
        file to learn it (the live hooks know it)."""
        return session_import.import_file(
            cls,
            agent,
            source,
            path,
            agent_session_id=agent_session_id,
            store_dir=store_dir,
            fsync=fsync,
            make_current=make_current,
        )

    def import_source(
        self,
        importer: importing.Importer,
        source: Path,
        whole: bytes | None = None,
        *,
        agent_session: str | None = None,
    ) -> ImportResult:
        """Under the lock: read ``source`` from where its last import stopped (all of it when
        it was rewritten, or ``whole`` when given), append what is new, the leaf the agent
        would continue from, and where this import stopped. ``agent_session``: the agent's
        session that wrote ``source``, when it is not the one the header names (a resumed or
        forked one)."""
        return session_import.import_source(
            self, importer, source, whole, agent_session=agent_session
        )

    # -- moving in the conversation (never changes a file) --------------------------------------

    def switch(self, ref: str, *, tip: bool = False) -> str:
        """Make ``ref`` the active leaf; with ``tip``, the newest deepest leaf below ``ref`` (the
        end of its branch written to last). Files are not touched."""
        target = self.resolve(ref)
        if tip:
            target = self.tree.newest_leaf(target)
        self._write(lambda: [schema.leaf(target)], builds_on_leaf=False)
        return target

    def branches(self, ref: str | None = None) -> branching.Fork:
        """The branches that start at ``ref`` (default: the nearest fork point at or above the
        active leaf), numbered in the order they were started; see ``branching``."""
        self.tree.check(f"Session {self.id}")
        if ref is not None:
            at: str | None = self.resolve(ref)
        elif self.tree.leaf is None:
            raise NotFoundError("The session has no entries yet.", 'convgit user "..."')
        else:
            at = branching.fork_point(self.tree, self.tree.leaf)
        return branching.fork_at(self.tree, at, self.read_sidecar().snapshots)

    def switch_branch(self, number: int, ref: str | None = None) -> str:
        """Make the newest deepest leaf of branch ``number`` of ``branches(ref)`` the leaf."""
        target = self.branches(ref).branch(number).leaf
        self._write(lambda: [schema.leaf(target)], builds_on_leaf=False)
        return target

    def fork(self, ref: str, text: str | None = None, summary: str | None = None) -> str:
        """Go back to ``ref`` and branch from there. With ``summary``, a ``branch_summary``
        (carrying what the branch left behind learned) is appended under ``ref``; with ``text``,
        a user message starts the new branch. Nothing is copied; files are not touched. Refused
        inside a tool run (``branching.refusal``): the branch would leave a tool call waiting."""
        return forking.fork(self, ref, text, summary)

    def edit(self, ref: str, text: str) -> str:
        """A new version of message ``ref``: a sibling with the same role and new text, which
        becomes the leaf. The original stays in the tree. Refused for a tool result, an
        assistant message whose tool calls are not all answered, and a message whose new version
        would come between a tool call and its result; the hint names where to branch instead."""
        return forking.edit(self, ref, text)

    def retry(self, ref: str = "@", *, turn: bool = False) -> str:
        """Get ready to ask again: for an assistant reply, the leaf moves to the message it
        answered (the next reply becomes its sibling); for any other entry, to that entry. With
        ``turn``, to just before the last user message at or above ``ref`` (tool results are not
        user messages), so the next user message starts the new attempt and the turn left
        behind, tool runs and all, is not in its context."""
        return forking.retry(self, ref, turn=turn)

    def fork_session(self, ref: str, *, name: str | None = None) -> Session:
        """A new session, made current, whose history is the root-to-``ref`` path of this one
        (the same entries with their ids, and their labels) and whose header records where it
        came from (``forkedFrom``: this session and ``ref``). This session is not changed. The
        snapshots of the shared path are shared, not copied: the new session's records and refs
        name the same commits. Refused inside a tool run, as ``fork`` is."""
        return forking.fork_session(self, ref, name=name)

    def label(self, ref: str, name: str | None) -> str:
        """Bookmark ``ref`` as ``name`` (None clears its label). A label names one entry:
        given to another, it moves (``labelled`` tells where it was)."""
        target = self.resolve(ref)
        if name is not None:
            _check_label(name)

        def build() -> list[dict[str, Any]]:
            held = [] if name is None else [i for i in self.labelled(name) if i != target]
            return [*(schema.label(i, None) for i in held), schema.label(target, name)]

        self._write(build, builds_on_leaf=False)
        return target

    def labelled(self, name: str) -> list[str]:
        """The entries labelled ``name`` (one, unless an older writer labelled several)."""
        return [ident for ident, label in self.tree.labels.items() if label == name]

    def rename(self, text: str) -> None:
        """Set the session's display name (``display_name`` reads it)."""
        self._write(lambda: [schema.session_name(text)], builds_on_leaf=False)

    # -- the workspace track --------------------------------------------------------------------

    @property
    def sidecar(self) -> Sidecar:
        """The snapshot records; refuses (exit 3) when any line of them is damaged."""
        sidecar = self.read_sidecar()
        sidecar.check(self.id)
        return sidecar

    def read_sidecar(self) -> Sidecar:
        """The snapshot records as they are, damaged lines listed in ``problems``."""
        if self._sidecar is None:
            self._sidecar = load.sidecar(self.sidecar_file)[1]
        return self._sidecar

    @property
    def snapshots_enabled(self) -> bool:
        return self.location.git is not None and self.sidecar.enabled

    def set_snapshots(self, enabled: bool) -> None:
        if enabled:
            self.workspace()  # refuses outside git
        self._sidecar_append(schema.sidecar_switch(enabled))

    def _sidecar_append(self, record: dict[str, Any]) -> None:
        sidecar = self.sidecar  # read first: the append then catches up from where it ended
        for number, theirs in self.sidecar_file.append([record]).parsed:
            sidecar.add(number, theirs)
        sidecar.add(self.sidecar_file.lines, record)

    def workspace(self) -> Workspace:
        """The git working tree beside this session; refuses plainly when there is none."""
        return session_files.workspace(self)

    @property
    def size_cap(self) -> int:
        """``[snapshots] size_cap_mib`` of config.toml (default 10) in bytes; a value that is
        not a positive number is refused (CorruptStoreError)."""
        return size_cap(self.location)

    def snapshot_of(self, ref: str) -> SnapshotInfo | None:
        return self.sidecar.snapshots.get(self.resolve(ref))

    def nearest_snapshot(self, ident: str | None) -> SnapshotInfo | None:
        """The snapshot of ``ident`` or of its nearest ancestor that has one."""
        snapshots = self.sidecar.snapshots
        node = ident
        while node is not None:
            if node in snapshots:
                return snapshots[node]
            node = self.tree.entries[node]["parentId"]
        return None

    @overload
    def snapshot(
        self, ref: str = "@", *, only_if_changed: Literal[False] = False
    ) -> SnapshotInfo: ...

    @overload
    def snapshot(self, ref: str, *, only_if_changed: bool) -> SnapshotInfo | None: ...

    def snapshot(self, ref: str = "@", *, only_if_changed: bool = False) -> SnapshotInfo | None:
        """Record the working tree as a commit for entry ``ref``. Its parent is the snapshot of
        the nearest ancestor that has one, or, when ``ref`` has a snapshot already, that
        snapshot: it is never lost (``replaces`` names it; unchanged files keep it as it is).
        With ``only_if_changed``, nothing is recorded (None) when the files are those of the
        nearest snapshot above. Never touches HEAD, the index, branches or files."""
        return session_files.snapshot(self, ref, only_if_changed=only_if_changed)

    def take_snapshot(self, parent: str | None, what: str) -> Snapshot:
        """The working tree now as a commit whose parent is the snapshot commit ``parent``
        (``reused``: the files are that snapshot's), for no entry yet: ``record_snapshot``
        records it once the entry exists (the files a user had when sending a prompt the agent
        has not written down). ``what`` goes into the commit message."""
        return session_files.take_snapshot(self, parent, what)

    def record_snapshot(self, ref: str, snap: Snapshot) -> SnapshotInfo:
        """Record ``snap`` (from ``take_snapshot``, or another entry's) as entry ``ref``'s. A
        snapshot the entry had already stays reachable (``replaces`` names it, and a ref under
        ``refs/convgit/<sid>/replaced/`` keeps it unless the new commit descends from it)."""
        return session_files.record_snapshot(self, ref, snap)

    def workspace_lock(self) -> AbstractContextManager[None]:
        """Held by whatever reads or rewrites this session's snapshots as a whole (redaction)."""
        return session_files.workspace_lock(self)

    def status(self) -> Status:
        """Where the conversation is, and which snapshot (if any) the files match right now."""
        return session_files.status(self)

    def diff(self, a: str, b: str | None = None) -> list[Change]:
        """Changes from ``a``'s snapshot (or the saved state ``a`` names) to ``b``'s (default:
        the working tree now). A file that one side left out (over the size cap, unreadable)
        is ``left alone``, never added or deleted: that side does not know its content."""
        return session_files.diff(self, a, b)

    def saved_state(self, ref: str) -> SavedState:
        """The saved state ``ref`` (``saved:…``) names; see ``convgit.store.sidecar``."""
        return self.sidecar.saved_state(ref)

    def restore(
        self,
        ref: str | None = None,
        *,
        paths: list[str] | None = None,
        dry_run: bool = False,
        undo: bool = False,
        force: bool = False,
    ) -> RestoreResult:
        """Bring the files (or ``paths``, relative to the root) to ``ref``'s snapshot or to a
        saved state (``saved:…``), after saving the files now; ``undo``: return to the newest
        saved state. See ``convgit.restoring`` for what is promised."""
        return restoring.restore(self, ref, paths=paths, dry_run=dry_run, undo=undo, force=force)

    def add_worktree(self, ref: str, directory: Path) -> str:
        """Check ``ref``'s snapshot (or the saved state ``ref`` names) out in ``directory`` (a
        detached git worktree), side by side; the main working tree is not touched. Returns
        the commit checked out."""
        return session_files.add_worktree(self, ref, directory)

    def run(
        self,
        refs: Sequence[str],
        command: Sequence[str],
        *,
        jobs: int | None = None,
        timeout: float | None = None,
        links: Sequence[str] = (),
        note: bool = False,
    ) -> RunReport:
        """Run ``command`` on each REF's snapshot side by side, each in a temporary worktree
        that is removed afterwards (``sidebyside.run``; the main working tree is never
        touched). The REF ``.`` is the files of the working tree now, taken as a snapshot
        would take them. With ``note``, each result is recorded as a ``note`` entry (source
        ``run``) where its REF's branch continues (``_note_parent``)."""
        return session_runs.run(
            self, refs, command, jobs=jobs, timeout=timeout, links=links, note=note
        )

    # -- values for the command line and render: what a command reads, without reaching into
    # the conversation's index or the workspace

    def view(self) -> SessionView:
        """The conversation as values for showing entries (the index's own records, not copies)."""
        return SessionView(
            id=self.id,
            name=self.tree.name,
            entries=self.tree.entries,
            labels=self.tree.labels,
            leaf=self.tree.leaf,
            snapshots=self.sidecar.snapshots.keys(),
        )

    def check(self) -> None:
        """Refuse a session whose file fsck rejects (CorruptStoreError), as reading commands do."""
        self.tree.check(f"Session {self.id}")

    def record(self, ident: str) -> dict[str, Any]:
        """Entry ``ident`` as written in the file (a copy), with its ``label`` when it has one."""
        record = dict(self.tree.entries[ident])
        label = self.tree.labels.get(ident)
        if label is not None:
            record["label"] = label
        return record

    def records(self, ref: str | None = None) -> list[dict[str, Any]]:
        """The records from the root to ``ref`` (default: the active leaf), as written."""
        self.check()
        leaf = None if ref is None else self.resolve(ref)
        return [self.tree.entries[i] for i in self.tree.path(leaf)]

    def path_ids(self, ref: str | None = None) -> list[str]:
        """The ids from the root to ``ref`` (default: the active leaf)."""
        self.check()
        return self.tree.path(None if ref is None else self.resolve(ref))

    def children(self) -> dict[str | None, list[str]]:
        """Each entry's children (the roots under ``None``), in file order."""
        return self.tree.children

    def header(self) -> dict[str, Any]:
        """The session file's header record ({} for a file without one)."""
        return self.tree.header or {}

    def kept(self) -> dict[str, dict[str, Any]]:
        """An agent's own records kept beside the entries, by key, for its exporter."""
        return self.tree.kept

    def worktree_root(self) -> Path:
        """The root folder of the git working tree beside this session."""
        return self.workspace().root

    def worktrees(self) -> list[tuple[Path, str]]:
        """convgit's side-by-side worktrees of this repository: (folder, commit checked out)."""
        return self.workspace().list_worktrees()

    def remove_worktree(self, directory: Path) -> None:
        """Remove a worktree ``convgit worktree`` made; one with changes, or one convgit did not
        make, is refused."""
        self.workspace().remove_worktree(directory)


# -- small pure pieces ------------------------------------------------------------------------


def caller_id(ident: str) -> str:
    """A caller-chosen entry id (``--id``), as every appended id must be: reference-safe
    (``appending.id_problem``), so it also names a git ref."""
    if appending.id_problem(ident) is not None:
        raise UsageError(
            f"'{ident}' cannot be an entry id: use lowercase letters, digits, '-' and '_'"
            " (starting with a letter or digit; not 'root')."
        )
    return ident


def _check_label(name: str) -> None:
    if (
        not name
        or name != name.strip()
        or any(c in name for c in "~ \t\n")
        or name.startswith(":")  # `:N` is the N-th user message
        or name in ("@", "HEAD", "root", WORKING_TREE)
        or name.startswith(SAVED_PREFIX)
    ):
        raise UsageError(
            f"'{name}' cannot be a label: use a word without spaces or '~', not starting with"
            f" ':' or {SAVED_PREFIX} (which name user messages and saved states), and not @,"
            " HEAD, root or ."
        )


@dataclass(frozen=True)
class SessionView:
    """A session's conversation as values, for showing its entries: the records by id, labels,
    the active leaf and the entries that have a snapshot."""

    id: str
    name: str | None
    entries: Mapping[str, dict[str, Any]]
    labels: Mapping[str, str]
    leaf: str | None
    snapshots: Collection[str]
