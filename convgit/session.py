"""The use-cases that bind both tracks. One screen per use-case.

A ``Session`` is one conversation file (and, in a git repository, its sidecar of snapshots).
Promises kept here:
* moving in the conversation (switch, fork, edit, retry, label) never changes a file;
* an append builds on the leaf this Session last saw; if another process moved it since, the
  append is refused (``LeafMovedError``) unless ``force=True``;
* restore saves the working tree first and records it, so ``restore(undo=True)`` returns to
  the exact prior bytes; it tells the model in a ``note`` entry, and never moves the leaf
  to another branch.
"""

from __future__ import annotations

import gc
import os
import re
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, overload

from convgit import entries, faults, repair, restoring, store, tree
from convgit.entries import Entry
from convgit.errors import (
    AmbiguousRefError,
    ConvgitError,
    CorruptStoreError,
    InvalidEntryError,
    LeafMovedError,
    NotFoundError,
    NoWorkspaceError,
    RefusedError,
    UsageError,
)
from convgit.restoring import RestoreResult
from convgit.sidecar import SAVED_PREFIX, SavedState, Sidecar, SnapshotInfo, is_saved_ref

if TYPE_CHECKING:
    from convgit.workspace import Change, Workspace

__all__ = ["DEFAULT_SIZE_CAP", "RestoreResult", "Session", "Status", "list_sessions"]

MIB = 1024 * 1024
_SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
DEFAULT_SIZE_CAP = 10 * MIB


@dataclass
class Status:
    """Both tracks at once: where the conversation is and where the files are."""

    session: str
    name: str | None
    leaf: str | None
    leaf_snapshot: str | None  # entry id of the nearest snapshot at or above the leaf
    workspace: bool
    sidecar: bool
    matches: str | None = None
    changed: list[str] = field(default_factory=list)
    diverged: bool = False
    interrupted_restore: dict[str, Any] | None = None
    left_alone: list[dict[str, str]] = field(default_factory=list)  # path, reason
    not_recorded: dict[str, Any] | None = None  # the last failed snapshot: entry, error, ts
    files_error: str | None = None  # why the files could not be read now

    def to_json(self) -> dict[str, Any]:
        return {
            "session": self.session,
            "name": self.name,
            "leaf": self.leaf,
            "leaf_snapshot": self.leaf_snapshot,
            "workspace": self.workspace,
            "snapshots": self.sidecar,
            "files": {"matches": self.matches, "changed": self.changed},
            "left_alone": self.left_alone,
            "diverged": self.diverged,
            "interrupted_restore": self.interrupted_restore,
            "not_recorded": self.not_recorded,
            "files_error": self.files_error,
        }


def _new_session_id() -> str:
    return os.urandom(6).hex()


class Session:
    """One conversation tree and its optional workspace sidecar."""

    def __init__(self, location: store.StoreLocation, sid: str, *, fsync: bool = False) -> None:
        self.location = location
        self.id = sid
        self.file = store.JsonlFile(
            location.session_path(sid), location.lock_path(sid), fsync=fsync
        )
        self.sidecar_file = store.JsonlFile(
            location.sidecar_path(sid), location.lock_path(sid + ".files"), fsync=fsync
        )
        self.tree = tree.Tree()
        self._built_on: str | None = None
        self._sidecar: Sidecar | None = None
        self._workspace: Workspace | None = None
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
        location = store.locate(path, store_dir)
        sid = session or os.environ.get("CONVGIT_SESSION") or location.current()
        if sid is None:
            if create:
                return cls.create(path, store_dir=store_dir, fsync=fsync)
            raise NotFoundError("There is no current convgit session here.", "convgit init")
        self = cls(location, find_session(location, sid), fsync=fsync)
        self.reload()
        return self

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
    ) -> Session:
        """Start a new session and make it current. Snapshots default to on inside git."""
        location = store.locate(path, store_dir)
        if snapshots and location.git is None:
            raise NoWorkspaceError(
                "Snapshots need a git repository, and this folder is not in one.",
                "run `git init` first, or use --no-snapshots",
            )
        if location.git is not None and snapshots is not False:
            _check_workspace_root(location.git.worktree)
        sid = _new_session_id()
        while location.session_path(sid).exists():
            sid = _new_session_id()
        cwd = str(location.git.worktree if location.git and location.git.worktree else Path.cwd())
        store.create(location.session_path(sid), entries.header(sid, cwd, forked_from))
        self = cls(location, sid, fsync=fsync)
        self.reload()
        if location.git is not None and snapshots is not False:
            self.sidecar_file.append([{"type": "sidecar", "enabled": True, "ts": entries.now()}])
        if name:
            self.name(name)
        location.set_current(sid)
        return self

    def reload(self) -> None:
        """Read the whole session again; the leaf this Session builds on becomes the active one."""
        collecting = gc.isenabled()
        gc.disable()  # a million small dicts would trigger dozens of useless full collections
        try:
            lines = self.file.read()
            self.tree = tree.build_records(lines.records, lines.first)
            if collecting and not gc.get_freeze_count():
                # what was loaded lives as long as the session: move it to the oldest generation
                # now, rather than let the next young collections walk it entry by entry
                gc.freeze()
                gc.unfreeze()
        finally:
            if collecting:
                gc.enable()
        if lines.torn is not None:
            self.tree.tolerate(
                tree.Problem(
                    len(lines.records) + 1,
                    "is torn (a writer stopped mid-line); readers ignore it and the next write"
                    " moves it to the quarantine file",
                    fatal=False,
                )
            )
        if lines.bom:
            self.tree.tolerate(
                tree.Problem(1, "starts with a UTF-8 byte-order mark; read without it", fatal=False)
            )
        if lines.unterminated:
            self.tree.tolerate(
                tree.Problem(
                    len(lines.records), "has no final newline; the next write adds it", fatal=False
                )
            )
        for number in lines.crlf:
            self.tree.tolerate(tree.Problem(number, "ends with CRLF; read as LF", fatal=False))
        if self.tree.header is not None and self.tree.header.get("id") != self.id:
            self.tree.tolerate(
                tree.Problem(1, f"names session {self.tree.header.get('id')!r}", fatal=False)
            )
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
        return entries.entry_from_wire(self.tree.entries[self.resolve(ref)])

    def path(self, ref: str | None = None) -> list[Entry]:
        """The entries from the root to ``ref`` (default: the active leaf)."""
        self.tree.check(f"Session {self.id}")
        leaf = None if ref is None else self.resolve(ref)
        return [entries.entry_from_wire(self.tree.entries[i]) for i in self.tree.path(leaf)]

    def all_entries(self) -> list[Entry]:
        """Every entry, in file order."""
        self.tree.check(f"Session {self.id}")
        return [entries.entry_from_wire(r) for r in self.tree.entries.values()]

    def context(self, ref: str | None = None) -> tree.Context:
        self.tree.check(f"Session {self.id}")
        return tree.replay(self.tree, None if ref is None else self.resolve(ref))

    # -- verification (fsck and repair live in repair.py) ------------------------------------

    def problems(self) -> list[tree.Problem]:
        """Everything fsck reports: fatal problems and tolerated ones, by line; in git, also
        every snapshot and saved state the sidecar names whose commit git no longer has
        (``lost_commits``)."""
        found = repair.problems(self)
        if not any(p.fatal for p in found):
            found += self.lost_commits()
        return sorted(found, key=lambda p: (p.line or 0, p.what))

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

    def repair(self) -> repair.RepairReport:
        """Move every line fsck rejects aside, keeping a backup; see ``repair.repair``."""
        return repair.repair(self)

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
            "id": entries.new_id(self.tree.entries),
            "parentId": parent,
            "ts": entries.now(),
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
        return [entries.entry_from_wire(self.tree.entries[i]) for i in ids]

    def append_records(
        self, raw: list[dict[str, Any]], *, force: bool = False, follow: bool = False
    ) -> list[str]:
        """Append raw records in order under one lock and return their ids. A record without
        ``parentId`` hangs off the leaf (with ``follow``, the leaf at the moment it is written,
        whoever moved it); missing ids and ``ts`` are filled in; every record is validated
        before anything is written, so a bad one means nothing is appended."""
        explicit = all("parentId" in r for r in raw)
        if self.snapshots_enabled:
            self._check_worktree()
            _ = self.size_cap  # a bad setting is refused before anything is written

        def build() -> list[dict[str, Any]]:
            known = self.tree.entries
            resent = _resent(raw, known)
            made: dict[str, dict[str, Any]] = {}
            leaf = self.tree.leaf if follow else self._built_on
            stamp = entries.now()  # one batch, one moment
            for number, record in enumerate(raw, 1):
                if number in resent:
                    leaf = record["id"]
                    continue
                if record.get("id") is None:
                    record["id"] = _fresh_id(known, made)
                if record.get("ts") is None:
                    record["ts"] = stamp
                if "parentId" not in record:
                    record["parentId"] = leaf
                kind = record.get("type")
                if type(kind) is str and (kind in entries.META_FIELDS or kind == "session"):
                    raise InvalidEntryError(f"Entry {number} is a '{kind}' record, not an entry.")
                problem = entries.kind_error(record)
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
            return [record for number, record in enumerate(raw, 1) if number not in resent]

        written = self._write(build, builds_on_leaf=not (follow or explicit), force=force)
        if self.snapshots_enabled and written:
            self._snapshot_turn(written)
        return [r["id"] for r in raw]

    def _snapshot_turn(self, made: list[dict[str, Any]]) -> None:
        """After a reply, the files are snapshotted (one snapshot for a batch: its last reply).
        A user message is snapshotted when the files differ from the nearest snapshot above
        it (hand edits between turns; at the start, the files before the agent touched
        anything), so "back to before the reply" is exact. A snapshot that cannot be taken
        leaves what was appended in place: ``snapshot_error`` says why, and the sidecar
        records it (``status`` names the entry)."""
        self.snapshot_error = None
        messages = [r for r in made if r["type"] == "message"]
        reply = next((r for r in reversed(messages) if r["role"] == "assistant"), None)
        first = next((r for r in messages if r["role"] == "user"), None)
        target = reply if reply is not None else first
        if target is None:
            return
        try:
            self.snapshot(target["id"], only_if_changed=reply is None)
        except (ConvgitError, OSError) as exc:
            why = exc.message if isinstance(exc, ConvgitError) else _os_words(exc)
            self.snapshot_error = why
            record = {"type": "snapshot_failed", "entry": target["id"], "error": why}
            with suppress(ConvgitError, OSError):  # a full disk may refuse this line too
                self._sidecar_append({**record, "ts": entries.now()})

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
        ident: str | None = None,
    ) -> Entry:
        record = self._new_message("tool", content, ident)
        record["toolCallId"] = call_id
        record["isError"] = is_error
        return self.append(record, force=force)

    def _new_message(self, role: str, content: Any, ident: str | None = None) -> dict[str, Any]:
        record = {"type": "message", "role": role, "content": content}
        if ident is not None:
            record["id"] = caller_id(ident)
        return record

    # -- moving in the conversation (never changes a file) --------------------------------------

    def switch(self, ref: str) -> str:
        """Make ``ref`` the active leaf. Files are not touched."""
        target = self.resolve(ref)
        self._write(lambda: [entries.leaf(target)], builds_on_leaf=False)
        return target

    def fork(self, ref: str, text: str | None = None, summary: str | None = None) -> str:
        """Go back to ``ref`` and branch from there. With ``summary``, a ``branch_summary``
        (carrying what the branch left behind learned) is appended under ``ref``; with ``text``,
        a user message starts the new branch. Nothing is copied; files are not touched."""
        target = self.resolve(ref)
        left = self.tree.leaf

        def build() -> list[dict[str, Any]]:
            records: list[dict[str, Any]] = []
            parent = target
            if summary is not None:
                records.append(
                    self._new_entry(
                        "branch_summary", parent, fromId=left or target, summary=summary
                    )
                )
                parent = records[-1]["id"]
            if text is not None:
                made = self._new_entry("message", parent, role="user", content=text)
                if records and made["id"] == records[0]["id"]:
                    made["id"] = _fresh_id(self.tree.entries, {records[0]["id"]: records[0]})
                records.append(made)
            if not records:
                records.append(entries.leaf(target))
            return records

        self._write(build, builds_on_leaf=False)
        return self.tree.leaf or target

    def edit(self, ref: str, text: str) -> str:
        """A new version of message ``ref``: a sibling with the same role and new text, which
        becomes the leaf. The original stays in the tree."""
        target = self.resolve(ref)
        record = self.tree.entries[target]
        if record["type"] != "message" or record["role"] == "tool":
            raise RefusedError(
                f"Entry {target} is a {_describe(record)}; only user and assistant messages can"
                " be edited."
            )
        parent = record["parentId"]
        made = self._write(
            lambda: [self._new_entry("message", parent, role=record["role"], content=text)],
            builds_on_leaf=False,
        )
        return str(made[0]["id"])

    def retry(self, ref: str = "@") -> str:
        """Get ready to ask again: for an assistant reply, the leaf moves to the message it
        answered (the next reply becomes its sibling); for any other entry, to that entry."""
        target = self.resolve(ref)
        record = self.tree.entries[target]
        if record["type"] == "message" and record["role"] == "assistant":
            parent = record["parentId"]
            if parent is None:
                raise RefusedError(f"Entry {target} is a root; there is nothing to retry from.")
            target = parent
        self._write(lambda: [entries.leaf(target)], builds_on_leaf=False)
        return target

    def label(self, ref: str, name: str | None) -> str:
        """Bookmark ``ref`` as ``name`` (None clears its label). A label names one entry:
        given to another, it moves (``labelled`` tells where it was)."""
        target = self.resolve(ref)
        if name is not None:
            _check_label(name)

        def build() -> list[dict[str, Any]]:
            held = [] if name is None else [i for i in self.labelled(name) if i != target]
            return [*(entries.label(i, None) for i in held), entries.label(target, name)]

        self._write(build, builds_on_leaf=False)
        return target

    def labelled(self, name: str) -> list[str]:
        """The entries labelled ``name`` (one, unless an older writer labelled several)."""
        return [ident for ident, label in self.tree.labels.items() if label == name]

    def name(self, text: str) -> None:
        """Set the session's display name."""
        self._write(lambda: [entries.session_name(text)], builds_on_leaf=False)

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
            sidecar = Sidecar()
            if self.sidecar_file.path.exists():
                lines = self.sidecar_file.read()
                for number, record in lines.parsed:
                    sidecar.add(number, record)
                if lines.torn is not None:
                    sidecar.problems.append(
                        tree.Problem(
                            len(lines.records) + 1,
                            "of the sidecar is torn; the next write moves it to the quarantine",
                            fatal=False,
                        )
                    )
            self._sidecar = sidecar
        return self._sidecar

    @property
    def snapshots_enabled(self) -> bool:
        return self.location.git is not None and self.sidecar.enabled

    def set_snapshots(self, enabled: bool) -> None:
        if enabled:
            self.workspace()  # refuses outside git
        self._sidecar_append({"type": "sidecar", "enabled": enabled, "ts": entries.now()})

    def _sidecar_append(self, record: dict[str, Any]) -> None:
        sidecar = self.sidecar  # read first: the append then catches up from where it ended
        for number, theirs in self.sidecar_file.append([record]).parsed:
            sidecar.add(number, theirs)
        sidecar.add(self.sidecar_file.lines, record)

    def workspace(self) -> Workspace:
        """The git working tree beside this session; refuses plainly when there is none."""
        if self._workspace is None:
            git = self.location.git
            if git is None or git.worktree is None:
                raise NoWorkspaceError(
                    "The workspace track needs a git repository with a working tree, and this"
                    " session has none.",
                    "run convgit inside a git repository",
                )
            self._check_worktree()
            from convgit.workspace import Workspace  # only commands that touch files need git

            found = Workspace.discover(git.worktree)
            if found is None:
                raise NoWorkspaceError("No git working tree was found for this session.")
            found.keep_out(self.location.root)
            self._workspace = found
        return self._workspace

    def _check_worktree(self) -> None:
        """Refuse to act on this worktree's files for a session of another worktree of the
        same repository (its snapshots are of that worktree's files)."""
        git = self.location.git
        recorded = (self.tree.header or {}).get("cwd")
        if git is None or git.worktree is None or not isinstance(recorded, str):
            return
        home = Path(recorded)
        if home == git.worktree or not (home / ".git").exists():
            return  # the same worktree, or one that is gone (a moved repository)
        theirs = store.find_git(home)
        if theirs is not None and theirs.worktree == home and theirs.common_dir == git.common_dir:
            raise RefusedError(
                f"Session {self.id} belongs to the worktree at {home}; convgit will not use its"
                " snapshots on the files here.",
                f"run it there: convgit -C {home} …",
            )

    @property
    def size_cap(self) -> int:
        """``[snapshots] size_cap_mib`` of config.toml (default 10) in bytes; a value that is
        not a positive number is refused (CorruptStoreError)."""
        value = store.load_config(self.location).get("snapshots", {}).get("size_cap_mib", 10)
        if type(value) not in (int, float) or not 0 < value < 1 << 40:
            raise CorruptStoreError(
                f"config.toml sets size_cap_mib to {value!r}; it must be a positive number of MiB.",
                f"edit {self.location.root / 'config.toml'}",
            )
        return int(value * MIB)

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
        target = self.resolve(ref)
        ws = self.workspace()
        size_cap = self.size_cap
        existing = self.sidecar.snapshots.get(target)
        parent = existing or self.nearest_snapshot(self.tree.entries[target]["parentId"])
        message = (
            f"convgit snapshot of {target}\n\nConvgit-Session: {self.id}\nConvgit-Entry: {target}\n"
        )
        with self._workspace_lock():
            faults.point("snapshot:before-stage")
            snap = ws.snapshot(
                self._index(),
                message=message,
                parent=parent.commit if parent else None,
                size_cap=size_cap,
            )
            if snap.reused and (existing is not None or only_if_changed):
                return existing
            faults.point("snapshot:before-ref")
            ws.set_ref(f"refs/convgit/{self.id}/{target}", snap.commit)
            faults.point("snapshot:before-record")
        record = {
            "type": "snapshot",
            "entry": target,
            "commit": snap.commit,
            "tree": snap.tree,
            "ts": entries.now(),
            "files": snap.files,
            "skipped": [{"path": s.path, "reason": s.reason} for s in snap.skipped],
        }
        if existing is not None:
            record["replaces"] = existing.commit
        self._sidecar_append(record)
        if not snap.reused:
            from convgit import maintenance

            maintenance.note(ws, self.location.root, snap.written)
        return self.sidecar.snapshots[target]

    def _index(self) -> Path:
        path = self.location.index_path(self.id)
        path.parent.mkdir(parents=True, exist_ok=True)
        return path

    def _workspace_lock(self) -> AbstractContextManager[None]:
        """One snapshot or restore at a time per session and worktree."""
        lock = self.location.lock_path(f"{self.id}-{self.location.worktree_key}")
        return store.exclusive(lock, "the private index")

    def status(self) -> Status:
        """Where the conversation is, and which snapshot (if any) the files match right now."""
        self.tree.check(f"Session {self.id}")
        leaf = self.tree.leaf
        leaf_snap = self.nearest_snapshot(leaf)
        result = Status(
            session=self.id,
            name=self.tree.name,
            leaf=leaf,
            leaf_snapshot=leaf_snap.entry if leaf_snap else None,
            workspace=self.location.git is not None,
            sidecar=self.snapshots_enabled,
            interrupted_restore=self.sidecar.interrupted,
        )
        failed = [f for f in self.sidecar.failed.values() if f["entry"] in self.tree.entries]
        if failed:
            last = max(failed, key=lambda f: str(f.get("ts", "")))
            result.not_recorded = {k: last.get(k) for k in ("entry", "error", "ts")}
        if self.location.git is None or not self.sidecar.snapshots:
            return result
        ws = self.workspace()
        size_cap = self.size_cap
        try:
            with self._workspace_lock():
                current, skipped = ws.scan(self._index(), size_cap=size_cap)
        except (ConvgitError, OSError) as exc:  # git cannot stage the files (a failing filter)
            result.files_error = exc.message if isinstance(exc, ConvgitError) else _os_words(exc)
            return result
        result.matches = self._matching_entry(current)
        if leaf_snap is not None:
            now = {s.path: s.reason for s in skipped}
            changes = self._compared(ws, leaf_snap.tree, _skipped(leaf_snap), current, now)
            result.changed = [c.path for c in changes if c.status != LEFT_ALONE]
            result.left_alone = [
                {"path": c.path, "reason": c.reason} for c in changes if c.status == LEFT_ALONE
            ]
        on_path = set(self.tree.path()) if leaf else set()
        result.diverged = result.matches is not None and result.matches not in on_path
        return result

    def _matching_entry(self, tree_id: str) -> str | None:
        """An entry whose snapshot tree is ``tree_id``: the nearest on the active path, else the
        most recent snapshot anywhere."""
        snapshots = self.sidecar.snapshots
        for ident in reversed(self.tree.path()) if self.tree.leaf else []:
            if ident in snapshots and snapshots[ident].tree == tree_id:
                return ident
        found = [
            s for s in snapshots.values() if s.tree == tree_id and s.entry in self.tree.entries
        ]
        return max(found, key=lambda s: s.ts).entry if found else None

    def diff(self, a: str, b: str | None = None) -> list[Change]:
        """Changes from ``a``'s snapshot (or the saved state ``a`` names) to ``b``'s (default:
        the working tree now). A file that one side left out (over the size cap, unreadable)
        is ``left alone``, never added or deleted: that side does not know its content."""
        ws = self.workspace()
        left, left_skipped = self._files_of(a)
        if b is None:
            with self._workspace_lock():
                right, found = ws.scan(self._index(), size_cap=self.size_cap)
            right_skipped = {s.path: s.reason for s in found}
        else:
            right, right_skipped = self._files_of(b)
        return self._compared(ws, left, left_skipped, right, right_skipped)

    def _files_of(self, ref: str) -> tuple[str, dict[str, str]]:
        """The commit or tree of ``ref`` (a snapshot's entry or a saved state) and the paths
        it left out, with why."""
        if is_saved_ref(ref):
            state = self.sidecar.saved_state(ref)
            return state.commit, state.skipped
        snap = self._require_snapshot(ref)
        return snap.tree, _skipped(snap)

    def saved_state(self, ref: str) -> SavedState:
        """The saved state ``ref`` (``saved:…``) names; see ``convgit.sidecar``."""
        return self.sidecar.saved_state(ref)

    @staticmethod
    def _compared(
        ws: Workspace, a: str, a_skipped: dict[str, str], b: str, b_skipped: dict[str, str]
    ) -> list[Change]:
        from convgit.workspace import Change

        out: list[Change] = []
        for change in ws.changes(a, b):
            lacking = {"added": a_skipped, "deleted": b_skipped}.get(change.status, {})
            why = next((lacking[p] for p in _and_above(change.path) if p in lacking), None)
            if why is None:
                out.append(change)
            else:
                out.append(Change(change.path, LEFT_ALONE, _reason_word(why)))
        return out

    def _require_snapshot(self, ref: str) -> SnapshotInfo:
        target = self.resolve(ref)
        snap = self.sidecar.snapshots.get(target)
        if snap is None:
            nearest = self.nearest_snapshot(target)
            hint = f"its nearest snapshot is at {nearest.entry}" if nearest else "convgit snapshot"
            raise NotFoundError(f"Entry {target} has no snapshot.", hint)
        return snap

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
        if is_saved_ref(ref):
            commit = self.sidecar.saved_state(ref).commit
        else:
            commit = self._require_snapshot(ref).commit
        self.workspace().add_worktree(commit, directory)
        return commit


def find_session(location: store.StoreLocation, ref: str) -> str:
    """The id of the session ``ref`` names: its id, a unique prefix of it, or its unique name."""
    if _SESSION_ID.fullmatch(ref):
        if location.session_path(ref).exists():
            return ref
        matches = [s for s in location.session_ids() if s.startswith(ref)]
        if len(matches) == 1:
            return matches[0]
        if len(matches) > 1:
            raise AmbiguousRefError(
                f"'{ref}' matches {len(matches)} sessions.", "give more characters of the id"
            )
    named = [row["id"] for row in _rows(location) if row.get("name") == ref]
    if len(named) > 1:
        raise AmbiguousRefError(
            f"{len(named)} sessions are named '{ref}'.", "give the session's id (convgit sessions)"
        )
    if not named:
        raise NotFoundError(f"There is no session '{ref}' here.", "convgit sessions")
    return str(named[0])


def use(path: str | Path, ref: str, store_dir: str | Path | None = None) -> str:
    """Make the session ``ref`` names (id, prefix or unique name) current here; its id."""
    location = store.locate(path, store_dir)
    sid = find_session(location, ref)
    location.set_current(sid)
    return sid


def list_sessions(
    path: str | Path = ".", store_dir: str | Path | None = None
) -> list[dict[str, Any]]:
    """Every session of the store, with what a listing shows; a corrupt one says why."""
    return _rows(store.locate(path, store_dir))


def _rows(location: store.StoreLocation) -> list[dict[str, Any]]:
    current = location.current()
    found: list[dict[str, Any]] = []
    for sid in location.session_ids():
        row: dict[str, Any] = {
            "id": sid,
            "path": str(location.session_path(sid)),
            "current": sid == current,
        }
        try:
            session = Session(location, sid)
            session.reload()
            t = session.tree
            row.update(
                entries=len(t.entries),
                leaf=t.leaf,
                name=t.name,
                created=(t.header or {}).get("created"),
                snapshots=session.snapshots_enabled,
                error=t.fatal[0].sentence() if t.fatal else None,
            )
        except ConvgitError as exc:
            row.update(entries=0, leaf=None, name=None, created=None, error=exc.message)
        found.append(row)
    return found


# -- small pure pieces ------------------------------------------------------------------------


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


LEFT_ALONE = "left alone"  # a change's status when one side does not know the file's content


def _skipped(snap: SnapshotInfo) -> dict[str, str]:
    return {str(s["path"]): str(s.get("reason", "")) for s in snap.skipped}


def _and_above(path: str) -> list[str]:
    parts = path.split("/")
    return ["/".join(parts[:i]) for i in range(len(parts), 0, -1)]


def _reason_word(reason: str) -> str:
    """A skipped path's reason in a word or two: "size cap" for every file above the cap."""
    return "size cap" if "size cap" in reason else reason


_CALLER_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


def caller_id(ident: str) -> str:
    """A caller-chosen entry id: letters, digits, ``.``, ``_`` and ``-`` (it names a git ref)."""
    if not _CALLER_ID.fullmatch(ident) or ident.endswith((".", ".lock")) or ".." in ident:
        raise UsageError(
            f"'{ident}' cannot be an entry id: use up to 128 letters, digits, '.', '_' or '-'."
        )
    return ident


def _os_words(exc: OSError) -> str:
    """An operating system error as one sentence."""
    where = f" ({os.fsdecode(exc.filename)})" if exc.filename is not None else ""
    return f"{exc.strerror or exc}{where}."


def _fresh_id(known: dict[str, Any], made: dict[str, Any]) -> str:
    while True:
        candidate = entries.new_id(known)
        if candidate not in made:
            return candidate


def _describe(record: dict[str, Any]) -> str:
    if record["type"] == "message":
        return f"{record['role']} message"
    return f"'{record['type']}' entry"


def _check_label(name: str) -> None:
    if (
        not name
        or name != name.strip()
        or any(c in name for c in "~ \t\n")
        or name
        in (
            "@",
            "HEAD",
            "root",
        )
        or name.startswith(SAVED_PREFIX)
    ):
        raise UsageError(
            f"'{name}' cannot be a label: use a word without spaces or '~' (not @, HEAD or root,"
            f" nor starting with {SAVED_PREFIX}, which names saved states)."
        )


def _check_workspace_root(worktree: Path | None) -> None:
    if worktree is None:
        return
    home = Path.home().resolve()
    if worktree.resolve() in (home, Path("/").resolve()):
        raise RefusedError(
            f"The git repository here has its root at {worktree}; convgit will not snapshot a"
            " whole home directory or file system.",
            "run convgit inside a project's repository, or use --no-snapshots",
        )


def _restore_note(
    target: str | None, changes: list[Change], paths: list[str] | None, undo: bool
) -> str:
    scope = "" if not paths else f" (only {', '.join(paths)})"
    what = "the state before the last restore" if undo else f"the snapshot of entry {target}"
    names = ", ".join(c.path for c in changes[:10]) + (", ..." if len(changes) > 10 else "")
    count = f"{len(changes)} file" + ("" if len(changes) == 1 else "s")
    return (
        f"The files were restored to {what}{scope}: {count} changed ({names})."
        " The conversation above was not changed; files may differ from what it describes."
    )
