"""The workspace sidecar as values: ``<sid>.files.jsonl`` read into snapshots by entry, restores
and the saved states before them in order, and every damaged line by number. Reading only;
``session`` appends the records.

A saved state (the files as they were just before a restore changed them) is named
``saved:`` and the first 12 hex digits of its commit; any unique prefix of 4 or more digits
after ``saved:`` names it too. No entry reference starts with ``saved:`` (labels and
caller-chosen ids that do are refused), so the two can never be confused.
"""

from __future__ import annotations

from dataclasses import field, replace
from typing import Any

from convgit import schema
from convgit.base import codec
from convgit.base.errors import AmbiguousRefError, CorruptStoreError, NotFoundError
from convgit.base.valueclass import valueclass
from convgit.conversation import tree
from convgit.conversation.refs import saved_digits, saved_id


@valueclass(frozen=True)
class SavedState:
    """The files just before a restore changed them, as the ``restore`` record that saved
    them says (line ``line`` of the sidecar)."""

    commit: str
    restored_to: str  # the commit that restore brought the files to
    ts: str
    entry: str | None  # the entry whose snapshot that restore brought back (None: no entry)
    undo: bool
    paths: list[str] | None
    files: list[str]  # the files that restore changed (the first 200)
    changed: dict[str, int]
    skipped: dict[str, str] = field(default_factory=dict)  # paths the saved state left out
    target: str | None = None  # the saved state that restore brought back, if it was one
    line: int = 0
    session: str = ""  # the session whose restore saved it (its ref is under refs/convgit/<sid>/)
    recorded: bool = True  # False: found from its ref alone, its sidecar record is missing
    rebuilt: bool = False  # its record was rebuilt from the ref by ``repair``
    finished: bool = True  # False: the restore it preceded never finished (interrupted)
    tell: bool = False  # the model is to be told of its restore (``convgit.session.restore_notes``)

    @property
    def id(self) -> str:
        return saved_id(self.commit)

    @property
    def preceded(self) -> str:
        """What the restore it preceded did, in words."""
        if self.undo:
            what = "restore --undo"
        elif self.target:
            what = f"restore {self.target}"
        else:
            what = f"restore {self.entry}" if self.entry else "restore"
        return what + (f" --path {' --path '.join(self.paths)}" if self.paths else "")

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "commit": self.commit,
            "ts": self.ts,
            "session": self.session,
            "recorded": self.recorded,
            "rebuilt": self.rebuilt,
            "interrupted": not self.finished,
            "before": {
                "entry": self.entry,
                "saved": self.target,
                "undo": self.undo,
                "paths": self.paths,
                "commit": self.restored_to,
            },
            "changed": self.changed,
            "files": self.files,
        }


@valueclass(frozen=True)
class SnapshotInfo:
    """A snapshot record of the sidecar: the files as they were after ``entry``."""

    entry: str
    commit: str
    tree_id: str  # the git tree id of ``commit``
    files: int
    skipped: list[dict[str, str]]
    ts: str
    replaces: str | None = None  # the entry's previous snapshot (this one's parent)
    rules: str | None = None  # the id of the ignore rules outside the working tree then

    def to_json(self) -> dict[str, Any]:
        return {
            "commit": self.commit,
            "tree": self.tree_id,
            "skipped": self.skipped,
            "replaces": self.replaces,
        }


@valueclass(frozen=True)
class Pruned:
    """A commit ``convgit gc`` let go: ``entry``'s snapshot (``what`` "snapshot"), one a newer
    snapshot of ``entry`` replaced ("replaced"), or a saved state ("saved"); ``ts``: when."""

    entry: str
    commit: str
    what: str
    ts: str

    @property
    def day(self) -> str:
        return self.ts[:10]


class Sidecar:
    """What the sidecar file says: on or off, snapshots by entry, restores in order."""

    def __init__(self) -> None:
        self.enabled = False
        self.snapshots: dict[str, SnapshotInfo] = {}
        # entry -> the snapshots a newer one replaced, oldest first (each kept by a ref)
        self.replaced: dict[str, list[SnapshotInfo]] = {}
        self.restores: list[dict[str, Any]] = []
        self.saved: list[SavedState] = []  # the state before each restore, oldest first
        self.finished: set[str] = set()  # `before` commits of completed restores
        self.told: set[str] = set()  # `before` commits of restores told without a note
        # entry -> the snapshot that could not be taken for it, since the last one recorded
        self.failed: dict[str, dict[str, Any]] = {}
        # entry -> the turn's snapshot skipped for it (over ``[snapshots] max_files_per_turn``),
        # while the entry has no snapshot; the newest such since the last snapshot recorded
        self.skipped_turns: dict[str, dict[str, Any]] = {}
        self.last_skipped: dict[str, Any] | None = None
        self.lines: dict[str, int] = {}  # commit -> the line of the record that names it
        # what ``convgit gc`` let go: commit -> what it was, and entry -> its snapshot let go
        self.pruned: dict[str, Pruned] = {}
        self.moved: dict[str, str] = {}  # every commit gc gave a new id: old -> newest
        self.gc_runs: set[str] = set()  # the ``ts`` of each gc whose records are here
        self.let_go: dict[str, Pruned] = {}
        self.problems: list[tree.Problem] = []

    def add(self, number: int, record: Any) -> None:
        if type(record) is not dict:
            what = getattr(record, "reason", None) or "is not a JSON object"
            self.problems.append(tree.Problem(number, f"of the sidecar {what}"))
            return
        kind = record.get("type")
        if type(kind) is not str:
            self.problems.append(tree.Problem(number, "of the sidecar has no 'type'"))
            return
        problem, record = schema.sidecar_record(record)
        if problem is not None:
            self.problems.append(tree.Problem(number, f"of the sidecar {problem}"))
        elif record is None:
            return  # a damaged record of a kind read leniently: as if not written
        elif kind == "sidecar":
            self.enabled = record["enabled"]
        elif kind == "snapshot":
            older = self.snapshots.get(record["entry"])
            if older is not None and older.commit != record["commit"]:
                self.replaced.setdefault(older.entry, []).append(older)
            self.snapshots[record["entry"]] = SnapshotInfo(
                record["entry"],
                record["commit"],
                record["tree"],
                record["files"],
                record["skipped"],
                record["ts"],
                record.get("replaces"),
                record.get("rules"),
            )
            self.failed.clear()  # the files are recorded again
            self.skipped_turns.pop(record["entry"], None)
            self.last_skipped = None
            self.lines[record["commit"]] = number
            self.let_go.pop(record["entry"], None)
        elif kind == "restore":
            self.restores.append(record)
            self.saved.append(_saved_state(number, record))
            self.lines.setdefault(record["before"], number)
        elif kind == "restored":
            self.finished.add(record["before"])
        elif kind == "told":
            self.told.add(record["before"])
        elif kind == "snapshot_failed":
            self.failed[record["entry"]] = record
        elif kind == "snapshot_skipped":
            if record["entry"] not in self.snapshots:
                self.skipped_turns[record["entry"]] = record
                self.last_skipped = record
        elif kind == "rebased":
            self.gc_runs.add(record["ts"])
            self._rebase({k: v for k, v in record["commits"].items() if type(v) is str})
        elif kind == "pruned":
            self.gc_runs.add(record["ts"])
            self._prune(Pruned(record["entry"], record["commit"], record["what"], record["ts"]))

    def _rebase(self, moved: dict[str, str]) -> None:
        """``convgit gc`` gave these commits new ids (the same trees): name them by the new."""

        def moved_info(snap: SnapshotInfo) -> SnapshotInfo:
            replaces = moved.get(snap.replaces, snap.replaces) if snap.replaces else None
            return replace(snap, commit=moved.get(snap.commit, snap.commit), replaces=replaces)

        self.snapshots = {e: moved_info(s) for e, s in self.snapshots.items()}
        self.saved = [
            replace(s, restored_to=moved.get(s.restored_to, s.restored_to)) for s in self.saved
        ]
        self.replaced = {e: [moved_info(s) for s in old] for e, old in self.replaced.items()}
        self.moved = {old: moved.get(new, new) for old, new in self.moved.items()}
        self.moved.update(moved)
        for old, new in moved.items():
            if old in self.lines:
                self.lines[new] = self.lines.pop(old)

    def _prune(self, gone: Pruned) -> None:
        """``convgit gc`` let ``gone.commit`` go: it is no snapshot or saved state any more."""
        self.pruned[gone.commit] = gone
        self.lines.pop(gone.commit, None)
        current = self.snapshots.get(gone.entry)
        if gone.what == "snapshot" and current is not None and current.commit == gone.commit:
            del self.snapshots[gone.entry]
            self.let_go[gone.entry] = gone
        elif gone.what == "replaced" and gone.entry in self.replaced:
            kept = [s for s in self.replaced[gone.entry] if s.commit != gone.commit]
            self.replaced[gone.entry] = kept
        elif gone.what == "saved":
            self.saved = [s for s in self.saved if s.commit != gone.commit]

    def check(self, sid: str) -> None:
        """Refuse to act on a damaged sidecar: a lost record could make undo pick a wrong state."""
        fatal = [p for p in self.problems if p.fatal]
        if fatal:
            raise CorruptStoreError(
                f"The snapshot records of session {sid} cannot be read safely:"
                f" {fatal[0].sentence()}.",
                "run `convgit fsck` for the full report and `convgit repair` to fix it",
            )

    @property
    def interrupted(self) -> dict[str, Any] | None:
        """The last restore if it never finished (a crash half-way): ``--undo`` recovers it."""
        if self.restores and self.restores[-1]["before"] not in self.finished:
            return self.restores[-1]
        return None

    def snapshot_by_commit(self, ref: str) -> SnapshotInfo | None:
        """The snapshot (an entry's now, or one replaced) whose commit ``ref`` begins (at least
        7 hex digits, as git shortens them); None when none does."""
        wanted = ref.strip().lower()
        if len(wanted) < 7 or any(c not in "0123456789abcdef" for c in wanted):
            return None
        every = [*self.snapshots.values(), *(s for older in self.replaced.values() for s in older)]
        found = {s.commit: s for s in every if s.commit.startswith(wanted)}
        if not found:  # a commit gc gave a new id (same files): the id printed before still works
            moved = {self.moved[old] for old in self.moved if old.startswith(wanted)}
            found = {s.commit: s for s in every if s.commit in moved}
        if len(found) > 1:
            raise AmbiguousRefError(
                f"'{ref}' begins {len(found)} snapshot commits.", "give more digits of the commit"
            )
        return next(iter(found.values()), None)


def find_saved(states: list[SavedState], ref: str) -> SavedState:
    """The one of ``states`` that ``ref`` names (``saved:`` and a prefix of its commit)."""
    wanted = saved_digits(ref)
    if len(wanted) < 4 or any(c not in "0123456789abcdef" for c in wanted):
        raise NotFoundError(
            f"'{ref}' is not a saved state: give saved: and at least 4 hex digits.",
            "convgit restores",
        )
    found = {s.commit: s for s in states if s.commit.startswith(wanted)}
    if not found:
        raise NotFoundError(f"There is no saved state {ref}.", "convgit restores")
    if len(found) > 1:
        raise AmbiguousRefError(
            f"'{ref}' matches {len(found)} saved states.", "give more digits of the id"
        )
    return next(iter(found.values()))


def _saved_state(number: int, record: dict[str, Any]) -> SavedState:
    paths = record["paths"]
    if paths is not None and record.get("escaped"):
        paths = [codec.unshown(p) for p in paths]
    return SavedState(
        commit=record["before"],
        restored_to=record.get("commit", ""),
        ts=record["ts"],
        entry=record["entry"] or None,
        undo=record.get("undo", False),
        paths=paths,
        files=[str(f) for f in record.get("files", [])],
        changed=record["changed"],
        skipped={
            str(s["path"]): str(s.get("reason", ""))
            for s in record.get("skipped", [])
            if isinstance(s, dict) and "path" in s
        },
        target=record.get("saved"),
        line=number,
        rebuilt=record.get("rebuilt", False),
        tell=record.get("tell", False),
    )
