"""The workspace sidecar as values: ``<sid>.files.jsonl`` read into snapshots by entry, restores
in order, and every damaged line by number. Reading only; ``session`` appends the records."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from convgit import entries, tree
from convgit.errors import CorruptStoreError


@dataclass(frozen=True)
class SnapshotInfo:
    """A snapshot record of the sidecar: the files as they were after ``entry``."""

    entry: str
    commit: str
    tree: str
    files: int
    skipped: list[dict[str, str]]
    ts: str

    def to_json(self) -> dict[str, Any]:
        return {"commit": self.commit, "tree": self.tree, "skipped": self.skipped}


class Sidecar:
    """What the sidecar file says: on or off, snapshots by entry, restores in order."""

    def __init__(self) -> None:
        self.enabled = False
        self.snapshots: dict[str, SnapshotInfo] = {}
        self.restores: list[dict[str, Any]] = []
        self.finished: set[str] = set()  # `before` commits of completed restores
        self.problems: list[tree.Problem] = []

    def add(self, number: int, record: Any) -> None:
        if type(record) is not dict:
            what = getattr(record, "reason", None) or "is not a JSON object"
            self.problems.append(tree.Problem(number, f"of the sidecar {what}"))
            return
        kind = record.get("type")
        problem = entries.kind_error_sidecar(record) if type(kind) is str else "has no 'type'"
        if problem is not None:
            self.problems.append(tree.Problem(number, f"of the sidecar {problem}"))
        elif kind == "sidecar":
            self.enabled = bool(record.get("enabled"))
        elif kind == "snapshot":
            self.snapshots[record["entry"]] = SnapshotInfo(
                record["entry"],
                record["commit"],
                record["tree"],
                record["files"],
                record["skipped"],
                record["ts"],
            )
        elif kind == "restore":
            self.restores.append(record)
        elif kind == "restored" and isinstance(record.get("before"), str):
            self.finished.add(record["before"])

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
