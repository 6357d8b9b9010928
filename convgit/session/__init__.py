"""``Session``: one conversation file (and, in a git repository, its sidecar of snapshots), made of
parts that each get what they need when built, never the session itself:

* ``conversation`` (``Conversation``): the file, its index (``tree``), reading and ``write``;
* ``track`` (``Track``): the sidecar, the working tree beside it, its lock and size cap;
* ``append`` (``Appending``): every append, checked, the restores told, the turn's files taken;
* ``moves`` (``Moves``): switch, fork, edit, retry, label, rename: never a file changed;
* ``snapshots`` (``Snapshots``): taking and recording snapshots, status, diff, worktrees;
* ``saved_states`` (``SavedStates``) and ``restore_notes`` (``RestoreNotes``);
* ``restoring`` (``Restoring``): the files saved first, ``undo`` back to their exact bytes;
* ``runs`` (``Runs``): side by side, the working tree never touched.

The parts past ``conversation`` and ``track`` are built when first used, so an agent's hook
(which appends and snapshots) imports no more than it needs. ``Session`` itself opens, creates
and forks sessions, and answers what needs both tracks at once (``problems``, ``repair``,
``view``)."""

from __future__ import annotations

from dataclasses import replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from convgit.session import opening
from convgit.session.conversation import Conversation
from convgit.session.track import Track
from convgit.store import sessions
from convgit.store.location import StoreLocation, locate

if TYPE_CHECKING:
    from convgit.conversation import tree
    from convgit.conversation.view import SessionView
    from convgit.session import verify
    from convgit.session.appending import Appending
    from convgit.session.moves import Moves
    from convgit.session.restore_notes import RestoreNotes
    from convgit.session.restoring import Restoring
    from convgit.session.runs import Runs
    from convgit.session.saved_states import SavedStates
    from convgit.session.snapshots import Snapshots
    from convgit.workspace import Workspace

__all__ = ["Session"]


class Session:
    """One conversation tree and its optional workspace sidecar, as parts."""

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
        self.conversation = Conversation(location, sid, fsync=fsync)
        self.track = Track(self.conversation, fsync=fsync, workspace=workspace)

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
        location = locate(path, store_dir)
        sid = opening.find(location, session)
        if sid is None:
            if create:
                return cls.create(path, store_dir=store_dir, fsync=fsync)
            raise sessions.no_session(location, "There is no current convgit session here.")
        opened = cls(location, sid, fsync=fsync)
        opened.reload()
        return opened

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
        location: StoreLocation | None = None,
    ) -> Session:
        """Start a new session and make it current. Snapshots default to on inside git.
        ``agent``: (agent name, the agent's session id) of the session this one mirrors;
        ``location``: the store, when the caller has it (else found from ``path``)."""
        where = location or locate(path, store_dir)
        sid = opening.start(
            where, name=name, snapshots=snapshots, forked_from=forked_from, agent=agent
        )
        session = cls(where, sid, fsync=fsync)
        session.reload()
        if name is not None:
            session.moves.rename(name)
        if make_current:
            where.set_current(sid)
        return session

    def fork_session(self, ref: str, *, name: str | None = None) -> Session:
        """A new session, made current, whose history is the root-to-``ref`` path of this one
        (the same entries with their ids, and their labels) and whose header records where it
        came from (``forkedFrom``: this session and ``ref``). This session is not changed. The
        snapshots of the shared path are shared, not copied: the new session's records and refs
        name the same commits. Refused inside a tool run, as ``fork`` is."""
        copy = self.moves.fork_copy(ref)
        new = Session.create(
            location=self.location,
            name=name,
            snapshots=self.track.snapshots_enabled,
            fsync=self.conversation.file.fsync,
            forked_from={"session": self.id, "entry": copy.target},
        )
        new.moves.take_in(copy)
        return new

    def reload(self) -> None:
        """Read the whole session again, accepting what other processes appended: the leaf
        this Session builds on becomes the active one."""
        self.conversation.reload()
        self.track.reload()

    # -- the parts built when first used --------------------------------------------------------

    @cached_property
    def append(self) -> Appending:
        from convgit.session.appending import Appending

        return Appending(self.conversation, self.track, self.snapshots, self.restore_notes)

    @cached_property
    def moves(self) -> Moves:
        from convgit.session.moves import Moves

        return Moves(self.conversation, self.track, self.restore_notes)

    @cached_property
    def snapshots(self) -> Snapshots:
        from convgit.session.snapshots import Snapshots

        return Snapshots(self.conversation, self.track, self.saved_states)

    @cached_property
    def saved_states(self) -> SavedStates:
        from convgit.session.saved_states import SavedStates

        return SavedStates(self.conversation, self.track)

    @cached_property
    def restore_notes(self) -> RestoreNotes:
        from convgit.session.restore_notes import RestoreNotes

        return RestoreNotes(self.conversation, self.track)

    @cached_property
    def restoring(self) -> Restoring:
        from convgit.session.restoring import Restoring

        return Restoring(
            self.conversation, self.track, self.snapshots, self.saved_states, self.restore_notes
        )

    @cached_property
    def runs(self) -> Runs:
        from convgit.session.runs import Runs

        return Runs(self.conversation, self.track, self.snapshots)

    # -- both tracks at once --------------------------------------------------------------------

    def problems(self) -> list[tree.Problem]:
        """Everything fsck reports: fatal problems and tolerated ones, by line; in git, also
        every snapshot and saved state the sidecar names whose commit git no longer has
        (``Track.lost_commits``)."""
        from convgit.session import verify

        sidecar = self.track.read_sidecar()
        found = verify.problems(self.conversation.tree, sidecar)
        if not any(p.fatal for p in found):
            found += self.track.lost_commits()
            found += self.saved_states.unrecorded_problems(sidecar)
        return sorted(found, key=lambda p: (p.line or 0, p.what))

    def repair(self) -> verify.RepairReport:
        """Move every line fsck rejects aside, keeping a backup (``verify.repair``); the session
        is read again afterwards, then the saved states whose record is lost are recorded again
        from their refs."""
        from convgit.session import verify

        report = verify.repair(self.conversation.file, self.track.file, self.id)
        self.reload()
        return replace(report, records=self.saved_states.rebuild())

    def view(self) -> SessionView:
        """The conversation as values for showing entries (the index's own records, not copies)."""
        from convgit.conversation.view import SessionView

        found = self.conversation.tree
        return SessionView(
            id=self.id,
            name=found.name,
            entries=found.entries,
            labels=found.labels,
            leaf=found.leaf,
            snapshots=self.track.sidecar.snapshots.keys(),
        )
