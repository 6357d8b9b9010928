"""``Session``: one conversation file (and, in a git repository, its sidecar of snapshots), the
facade of the use-cases that bind both tracks. Each method states its contract and delegates to
the module that keeps it: ``opening``, ``session_append`` (every record checked against the tree
as it will be; an append builds on the leaf this Session last saw), ``moves`` (switch, fork,
edit, retry, label: never a file changed), ``session_files`` (snapshots, status, diff),
``restoring`` (the files saved first, ``undo`` back to their exact bytes) and ``session_runs``
(side by side, the working tree never touched). ``session_import`` stands above it."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, overload

from convgit import schema
from convgit.conversation import tree
from convgit.session import appending as session_append
from convgit.session import files as session_files
from convgit.session import opening
from convgit.store import load, sessions
from convgit.store.location import StoreLocation, locate, size_cap
from convgit.store.sidecar import SavedState, Sidecar, SnapshotInfo

# moves, restoring, saved_states, session_runs and verify are imported where used: an agent's
# hook, which records turns and takes snapshots, starts without them
if TYPE_CHECKING:
    from convgit.conversation import branching, replay
    from convgit.conversation.view import SessionView
    from convgit.schema import Entry
    from convgit.session import verify
    from convgit.session.files import FilesFrom, Status
    from convgit.session.restoring import RestoreResult
    from convgit.session.runs import RunReport
    from convgit.workspace import Change, Snapshot, Workspace

__all__ = ["Session"]


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
        self.built_on: str | None = None  # the leaf the next append builds on
        self._sidecar: Sidecar | None = None
        self._workspace: Workspace | None = workspace
        self.snapshot_error: str | None = None  # why the last turn's snapshot was not taken
        # the snapshot on another branch whose files the last turn recorded as its own
        self.files_from: FilesFrom | None = None

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
        self.built_on = self.tree.leaf
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
        self.check()
        return self.tree.resolve(ref)

    def entry(self, ref: str) -> Entry:
        return schema.entry_from_wire(self.tree.entries[self.resolve(ref)])

    def path(self, ref: str | None = None) -> list[Entry]:
        """The entries from the root to ``ref`` (default: the active leaf)."""
        self.check()
        leaf = None if ref is None else self.resolve(ref)
        return [schema.entry_from_wire(self.tree.entries[i]) for i in self.tree.path(leaf)]

    def all_entries(self) -> list[Entry]:
        """Every entry, in file order."""
        self.check()
        return [schema.entry_from_wire(r) for r in self.tree.entries.values()]

    def context(self, ref: str | None = None) -> replay.Context:
        """What the model is sent at ``ref`` (default: the active leaf); see ``replay``."""
        from convgit.conversation import replay

        self.check()
        return replay.replay(self.tree, None if ref is None else self.resolve(ref))

    # -- verification (fsck and repair live in verify.py) ------------------------------------

    def problems(self) -> list[tree.Problem]:
        """Everything fsck reports: fatal problems and tolerated ones, by line; in git, also
        every snapshot and saved state the sidecar names whose commit git no longer has
        (``lost_commits``)."""
        from convgit.session import verify

        found = verify.problems(self.tree, self.read_sidecar())
        if not any(p.fatal for p in found):
            found += self.lost_commits()
            from convgit.session import saved_states

            found += saved_states.unrecorded_problems(self, self.read_sidecar())
        return sorted(found, key=lambda p: (p.line or 0, p.what))

    def lost_commits(self) -> list[tree.Problem]:
        """The sidecar's records whose snapshot or saved-state commit is not in the repository
        (a ref deleted by hand, then git gc): their files are gone, repair cannot help."""
        return session_files.lost_commits(self)

    def repair(self) -> verify.RepairReport:
        """Move every line fsck rejects aside, keeping a backup (``verify.repair``); the session
        is read again afterwards."""
        from convgit.session import verify

        report = verify.repair(self.file, self.sidecar_file, self.id)
        self.reload()  # then the saved states whose record is lost, from their refs
        from convgit.session import saved_states

        return replace(report, records=saved_states.rebuild(self))

    # -- writing the conversation -------------------------------------------------------------

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
            [dict(item) if isinstance(item, dict) else item.to_wire() for item in items],
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
        return self.append(session_append.new_message("user", text, ident), force=force)

    def append_assistant(
        self,
        content: str | list[dict[str, Any]],
        *,
        force: bool = False,
        ident: str | None = None,
    ) -> Entry:
        """Append the model's reply; with snapshots on, the files are snapshotted right after.
        With ``ident``, sending the same reply again is a no-op (see ``append_records``)."""
        return self.append(session_append.new_message("assistant", content, ident), force=force)

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

    # -- moving in the conversation (never changes a file) --------------------------------------

    def switch(self, ref: str, *, tip: bool = False) -> str:
        """Make ``ref`` the active leaf; with ``tip``, the newest deepest leaf below ``ref`` (the
        end of its branch written to last). Files are not touched."""
        from convgit.session import moves

        return moves.switch(self, ref, tip=tip)

    def branches(self, ref: str | None = None) -> branching.Fork:
        """The branches that start at ``ref`` (default: the nearest fork point at or above the
        active leaf), numbered in the order they were started; see ``branching``."""
        from convgit.session import moves

        return moves.branches(self, ref)

    def switch_branch(self, number: int, ref: str | None = None) -> str:
        """Make the newest deepest leaf of branch ``number`` of ``branches(ref)`` the leaf."""
        from convgit.session import moves

        return moves.switch_branch(self, number, ref)

    def fork(self, ref: str, text: str | None = None, summary: str | None = None) -> str:
        """Go back to ``ref`` and branch from there. With ``summary``, a ``branch_summary``
        (carrying what the branch left behind learned) is appended under ``ref``; with ``text``,
        a user message starts the new branch. Nothing is copied; files are not touched. Refused
        inside a tool run (``branching.refusal``): the branch would leave a tool call waiting."""
        from convgit.session import moves

        return moves.fork(self, ref, text, summary)

    def edit(self, ref: str, text: str) -> str:
        """A new version of message ``ref``: a sibling with the same role and new text, which
        becomes the leaf. The original stays in the tree. Refused for a tool result, an
        assistant message whose tool calls are not all answered, and a message whose new version
        would come between a tool call and its result; the hint names where to branch instead."""
        from convgit.session import moves

        return moves.edit(self, ref, text)

    def retry(self, ref: str = "@", *, turn: bool = False) -> str:
        """Get ready to ask again: for an assistant reply, the leaf moves to the message it
        answered (the next reply becomes its sibling); for any other entry, to that entry. With
        ``turn``, to just before the last user message at or above ``ref`` (tool results are not
        user messages), so the next user message starts the new attempt and the turn left
        behind, tool runs and all, is not in its context."""
        from convgit.session import moves

        return moves.retry(self, ref, turn=turn)

    def fork_session(self, ref: str, *, name: str | None = None) -> Session:
        """A new session, made current, whose history is the root-to-``ref`` path of this one
        (the same entries with their ids, and their labels) and whose header records where it
        came from (``forkedFrom``: this session and ``ref``). This session is not changed. The
        snapshots of the shared path are shared, not copied: the new session's records and refs
        name the same commits. Refused inside a tool run, as ``fork`` is."""
        from convgit.session import moves

        return moves.fork_session(self, ref, name=name)

    def label(self, ref: str, name: str | None, *, force: bool = True) -> str:
        """Bookmark ``ref`` as ``name`` (None clears its label). A label names one entry:
        given to another, it moves (``labelled`` tells where it was); with ``force`` False,
        a label on another entry is refused instead."""
        from convgit.session import moves

        return moves.label(self, ref, name, force=force)

    def labelled(self, name: str) -> list[str]:
        """The entries labelled ``name`` (one, unless an older writer labelled several)."""
        return [ident for ident, label in self.tree.labels.items() if label == name]

    def rename(self, text: str) -> None:
        """Set the session's display name (``display_name`` reads it)."""
        from convgit.session import moves

        moves.rename(self, text)

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
        session_files.append_sidecar(self, [schema.sidecar_switch(enabled)])

    def workspace(self) -> Workspace:
        """The git working tree beside this session; refuses plainly when there is none."""
        if self._workspace is None:
            self._workspace = session_files.find_workspace(self)
        return self._workspace

    @property
    def size_cap(self) -> int:
        """``[snapshots] size_cap_mib`` of config.toml (default 10) in bytes; a value that is
        not a positive number is refused (CorruptStoreError)."""
        return size_cap(self.location)

    def snapshot_of(self, ref: str) -> SnapshotInfo | None:
        return self.sidecar.snapshots.get(self.resolve(ref))

    def nearest_snapshot(self, ident: str | None) -> SnapshotInfo | None:
        """The snapshot of ``ident`` or of its nearest ancestor that has one."""
        return session_files.nearest_snapshot(self, ident)

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
        from convgit.session import saved_states

        return session_files.status(self, saved_states.interrupted(self))

    def diff(self, a: str, b: str | None = None) -> list[Change]:
        """Changes from ``a``'s snapshot (or the saved state ``a`` names) to ``b``'s (default:
        the working tree now). A file that one side left out (over the size cap, unreadable)
        is ``left alone``, never added or deleted: that side does not know its content."""
        return session_files.diff(self, a, b)

    def saved_state(self, ref: str) -> SavedState:
        """The saved state of the working tree that ``ref`` (``saved:…``) names, in this session
        or another (``convgit.session.saved_states``)."""
        from convgit.session import saved_states

        return saved_states.find(self, ref)

    def restore(
        self,
        ref: str | None = None,
        *,
        paths: list[str] | None = None,
        dry_run: bool = False,
        undo: bool = False,
        force: bool = False,
        clean: bool = False,
    ) -> RestoreResult:
        """Bring the files (or ``paths``, relative to the root) to ``ref``'s snapshot or to a
        saved state (``saved:…``), after saving the files now; ``undo``: return to the newest
        saved state; ``clean``: delete the user's own files the target lacks too. See
        ``convgit.session.restoring`` for what is promised."""
        from convgit.git.restoreplan import relative_paths

        relative_paths(paths or [])  # an empty or escaping path: refused before any file is read
        from convgit.session import restoring

        result = restoring.restore(
            self, ref, paths=paths, dry_run=dry_run, undo=undo, force=force, clean=clean
        )
        return restoring.with_agent_files(self, result)

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
        ``run``) at the end of its REF's branch (see ``session_runs``)."""
        from convgit.session import runs as session_runs

        return session_runs.run(
            self, refs, command, jobs=jobs, timeout=timeout, links=links, note=note
        )

    # -- values for the command line and render: what a command reads, without reaching into
    # the conversation's index or the workspace

    def view(self) -> SessionView:
        """The conversation as values for showing entries (the index's own records, not copies)."""
        from convgit.conversation.view import SessionView

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
