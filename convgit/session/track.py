"""``Track``: the workspace track of one session, its sidecar of records and the git working
tree beside it.

Promises kept here:
* the sidecar is read once and caught up on each append (``append``); a damaged line refuses
  (``sidecar``) unless the caller reads it as it is (``read_sidecar``);
* the working tree is found when first needed, and refused plainly when there is none, or when
  the session belongs to another worktree of the same repository;
* one snapshot or restore at a time per session and worktree (``lock``: its private index's).
"""

from __future__ import annotations

import os
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from convgit import schema
from convgit.base.errors import ConvgitError, NoWorkspaceError, RefusedError
from convgit.conversation import tree
from convgit.store import load, sessions
from convgit.store.config import fsmonitor, max_files, size_cap
from convgit.store.location import find_git

if TYPE_CHECKING:
    from convgit.session.conversation import Conversation
    from convgit.store.sidecar import Pruned, Sidecar, SnapshotInfo
    from convgit.workspace import LeftAlone, Workspace


class Track:
    """The sidecar of ``conversation``'s session and the working tree beside it."""

    def __init__(
        self,
        conversation: Conversation,
        *,
        fsync: bool = False,
        workspace: Workspace | None = None,
    ) -> None:
        """``workspace``: the working tree, when the caller knows it already (found once by
        ``Workspace.discover``); otherwise it is discovered when first needed."""
        self.conversation = conversation
        self.location = conversation.location
        self.id = conversation.id
        self.file = sessions.sidecar_file(self.location, self.id, fsync=fsync)
        self._sidecar: Sidecar | None = None
        self._workspace = workspace

    def reload(self) -> None:
        """Read the sidecar again when next asked."""
        self._sidecar = None

    # -- the sidecar ----------------------------------------------------------------------------

    @property
    def sidecar(self) -> Sidecar:
        """The snapshot records; refuses (exit 3) when any line of them is damaged."""
        sidecar = self.read_sidecar()
        sidecar.check(self.id)
        return sidecar

    def read_sidecar(self) -> Sidecar:
        """The snapshot records as they are, damaged lines listed in ``problems``."""
        if self._sidecar is None:
            self._sidecar = load.sidecar(self.file)[1]
        return self._sidecar

    def append(self, records: list[dict[str, Any]]) -> None:
        """Append ``records`` to the sidecar, taking in what other processes appended first."""
        sidecar = self.sidecar  # read first: the append then catches up from where it ended
        for number, theirs in self.file.append(records).parsed:
            sidecar.add(number, theirs)
        first = self.file.lines - len(records) + 1
        for number, record in enumerate(records, first):
            sidecar.add(number, record)

    @property
    def snapshots_enabled(self) -> bool:
        return self.location.git is not None and self.sidecar.enabled

    def set_snapshots(self, enabled: bool) -> None:
        if enabled:
            self.workspace()  # refuses outside git
        self.append([schema.sidecar_switch(enabled)])

    @property
    def size_cap(self) -> int:
        """``[snapshots] size_cap_mib`` of config.toml (default 10) in bytes; a value that is
        not a positive number is refused (CorruptStoreError)."""
        return size_cap(self.location)

    @property
    def max_files(self) -> int:
        """``[snapshots] max_files_per_turn`` of config.toml (default 50,000; 0: no cap): a
        turn's snapshot that would take more new or changed files is skipped."""
        return max_files(self.location)

    def snapshot_of(self, ref: str) -> SnapshotInfo | None:
        return self.sidecar.snapshots.get(self.conversation.resolve(ref))

    def nearest_snapshot(self, ident: str | None) -> SnapshotInfo | None:
        """The snapshot of ``ident`` or of its nearest ancestor that has one."""
        snapshots = self.sidecar.snapshots
        entries = self.conversation.tree.entries
        node = ident
        while node is not None:
            if node in snapshots:
                return snapshots[node]
            node = entries[node]["parentId"]
        return None

    def let_go_above(self, ident: str | None) -> Pruned | None:
        """What gc let go of the snapshot that held ``ident``'s files (its own, or the nearest
        above it that had one then), when it let that go; None when the files' snapshot
        stays."""
        snapshots, let_go = self.sidecar.snapshots, self.sidecar.let_go
        entries = self.conversation.tree.entries
        node = ident
        while node is not None:
            if node in snapshots:
                return None
            if node in let_go:
                return let_go[node]
            node = entries[node]["parentId"]
        return None

    def lost_commits(self) -> list[tree.Problem]:
        """The sidecar's records whose snapshot or saved-state commit is not in the repository
        (a ref deleted by hand, then git gc): their files are gone, repair cannot help."""
        sidecar = self.read_sidecar()
        if self.location.git is None or not sidecar.lines:
            return []
        try:
            missing = self.workspace().missing(list(sidecar.lines))
        except ConvgitError:
            return []
        return [
            tree.Problem(
                sidecar.lines[commit],
                f"of the sidecar names the commit {commit[:12]}, which is not in the repository"
                " any more (its ref was deleted and git gc pruned it)",
            )
            for commit in sorted(missing, key=lambda c: sidecar.lines[c])
        ]

    # -- the working tree -----------------------------------------------------------------------

    def workspace(self) -> Workspace:
        """The git working tree beside this session; refuses plainly when there is none."""
        if self._workspace is None:
            self._workspace = self._find_workspace()
        return self._workspace

    def _find_workspace(self) -> Workspace:
        git = self.location.git
        if git is None or git.worktree is None:
            raise NoWorkspaceError(
                "The workspace track needs a git repository with a working tree, and this"
                " session has none.",
                "run convgit inside a git repository",
            )
        self.check_worktree()
        from convgit.workspace import Workspace  # only commands that touch files need git

        found = Workspace.of(self.location)
        if found is None:
            raise NoWorkspaceError("No git working tree was found for this session.")
        found.keep_out(self.location.root)
        found.track_changes(fsmonitor(self.location))
        return found

    def check_worktree(self) -> None:
        """Refuse to act on this worktree's files for a session of another worktree of the
        same repository (its snapshots are of that worktree's files)."""
        home = self.other_worktree(self.conversation.tree.header)
        if home is not None:
            raise RefusedError(
                f"Session {self.id} belongs to the worktree at {home}; convgit will not use its"
                " snapshots on the files here.",
                f"run it there: convgit -C {home} …",
            )

    def other_worktree(self, header: dict[str, Any] | None) -> Path | None:
        """The other worktree of this repository that a session with ``header`` belongs to,
        if it belongs to one (None: this worktree, or a folder that is no worktree any more)."""
        git = self.location.git
        recorded = (header or {}).get("cwd")
        if git is None or git.worktree is None or not isinstance(recorded, str):
            return None
        home = Path(recorded)
        if home == git.worktree or not (home / ".git").exists():
            return None  # the same worktree, or one that is gone (a moved repository)
        theirs = find_git(home)
        if theirs is not None and theirs.worktree == home and theirs.common_dir == git.common_dir:
            return home
        return None

    def index(self) -> Path:
        """This session's private index (``convgit.git.index.private_index``)."""
        path = self.location.index_path(self.id)
        path.parent.mkdir(parents=True, exist_ok=True)
        return path

    def lock(self) -> AbstractContextManager[None]:
        """One snapshot or restore at a time per session and worktree: its private index's
        lock; held too by whatever reads or rewrites this session's snapshots as a whole
        (redaction)."""
        from convgit.git.index import private_index

        return private_index.locked(self.index())

    def scan(self) -> tuple[str, tuple[LeftAlone, ...]]:
        """The tree of the files now, as a snapshot would take them (objects are written, no
        commit is made), and the paths it left out; under the lock."""
        with self.lock():
            return self.workspace().scan(self.index(), size_cap=self.size_cap)


def os_words(exc: OSError) -> str:
    """An operating system error as one sentence."""
    where = f" ({os.fsdecode(exc.filename)})" if exc.filename is not None else ""
    return f"{exc.strerror or exc}{where}."
