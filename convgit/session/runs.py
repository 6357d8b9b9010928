"""Side-by-side runs of a session: a command on REFs' snapshots, each in its own worktree.

Promises kept here (``Runs.run``, a session's ``runs``):
* a run never touches the working tree; the REF ``.`` is the files of the working tree now,
  taken as a snapshot would take them;
* with ``note``, each result is a ``note`` at the end of its REF's branch, never between a
  tool call and its result, and the active leaf never moves to another branch.
"""

from __future__ import annotations

import dataclasses
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from convgit import schema
from convgit.base.errors import NotFoundError, RefusedError, UsageError
from convgit.conversation import appending
from convgit.conversation.refs import WORKING_TREE
from convgit.git import names
from convgit.git.restore.plan import relative_paths

if TYPE_CHECKING:
    from convgit.session.conversation import Conversation
    from convgit.session.snapshots import Snapshots
    from convgit.session.track import Track
    from convgit.workspace.sidebyside import Outcome


@dataclass(frozen=True)
class RunRow:
    """One REF of a side-by-side run: the entry whose snapshot it ran on (None: the files of
    the working tree), how the command ended, and the id of the note that recorded it."""

    ref: str
    entry: str | None
    outcome: Outcome
    note: str | None = None

    def to_json(self) -> dict[str, Any]:
        outcome = self.outcome
        return {
            "ref": self.ref,
            "entry": self.entry,
            "commit": outcome.target.commit,
            "exit_code": outcome.exit_code,
            "seconds": round(outcome.seconds, 3),
            "timed_out": outcome.timed_out,
            "output": str(outcome.log),
        }


@dataclass(frozen=True)
class RunReport:
    """A side-by-side run: a row per REF in the order given, and a sentence for each note
    that could not be recorded (its branch came to wait for a tool result meanwhile)."""

    rows: list[RunRow]
    unnoted: list[str]


class Runs:
    """Side-by-side runs of one session's snapshots."""

    def __init__(self, conversation: Conversation, track: Track, snapshots: Snapshots) -> None:
        self.conversation = conversation
        self.track = track
        self.snapshots = snapshots

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
        ``run``) at the end of its REF's branch."""
        from convgit.workspace import sidebyside

        if not refs:
            raise UsageError("Give at least one REF to run on.", "convgit run REF... -- COMMAND")
        relative_paths(links)  # an empty or escaping path: refused before any file is read
        ws = self.track.workspace()
        snaps = [None if ref == WORKING_TREE else self.snapshots.require(ref) for ref in refs]
        if note:
            for snap in snaps:
                self._note_parent(None if snap is None else snap.entry)  # refuses before any run
        files = self._files_now() if None in snaps else ""
        targets = [
            sidebyside.Target("files", files, "the files of the working tree")
            if snap is None
            else sidebyside.Target(snap.entry, snap.commit, f"the snapshot of {snap.entry}")
            for snap in snaps
        ]
        outcomes = sidebyside.run(
            ws, targets, command, logs=self.track.location.root / "runs",
            jobs=jobs, timeout=timeout, links=links,
        )  # fmt: skip
        rows = [
            RunRow(ref, None if snap is None else snap.entry, outcome)
            for ref, snap, outcome in zip(refs, snaps, outcomes, strict=True)
        ]
        return self._note_runs(rows, command) if note else RunReport(rows, [])

    def _files_now(self) -> str:
        """A commit of the files of the working tree now (no ref, no sidecar record)."""
        message = names.commit_message("convgit: the working tree for a run", session=self.track.id)
        with self.track.lock():
            made = self.track.workspace().snapshot(
                self.track.index(), message=message, parent=None, size_cap=self.track.size_cap
            )
        return made.commit

    def _note_parent(self, entry: str | None) -> str:
        """Where a note about ``entry``'s files goes: the active leaf when it is at or below
        ``entry`` (always, for the files of the working tree: ``entry`` None), else the newest
        deepest leaf below ``entry``. Refused where it would come between a tool call and its
        result."""
        leaf = self.conversation.tree.leaf
        if leaf is not None and (entry is None or entry in self.conversation.tree.path(leaf)):
            place = leaf
        elif entry is None:
            raise NotFoundError("The session has no entry to record a note on.")
        else:
            place = self.conversation.tree.newest_leaf(entry)
        waiting = self.conversation.tree.open_tool_calls(place)
        if waiting:
            raise RefusedError(
                f"The branch of {entry or 'the active leaf'} ends at {place}, which waits for the"
                f" result of tool call {waiting[0]}: a note there would come between the call"
                " and its result.",
                "run without --note, or once the tool result is recorded",
            )
        return place

    def _note_runs(self, rows: list[RunRow], command: Sequence[str]) -> RunReport:
        """Append a note per row under its branch's end, in one write. The active leaf stays
        where it is, unless a note hangs below it: then it follows the note, on its branch."""
        noted: list[RunRow] = []
        unnoted: list[str] = []

        def build() -> list[dict[str, Any]]:
            noted.clear()
            unnoted.clear()
            leaf = self.conversation.tree.leaf
            ends: dict[str, str] = {}  # where each branch's notes have got to
            made: dict[str, dict[str, Any]] = {}
            for row in rows:
                try:
                    place = self._note_parent(row.entry)
                except (RefusedError, NotFoundError) as exc:  # the branch moved during the run
                    unnoted.append(exc.message)
                    noted.append(row)
                    continue
                record = self.conversation.new_entry(
                    "note", ends.get(place, place), text=_run_note(row, command), source="run"
                )
                record["id"] = appending.fresh_id(self.conversation.tree.entries, made)
                made[record["id"]] = record
                ends[place] = record["id"]
                noted.append(dataclasses.replace(row, note=record["id"]))
            records = list(made.values())
            wanted = None if leaf is None else ends.get(leaf, leaf)
            if records and wanted is not None and records[-1]["id"] != wanted:
                records.append(schema.leaf(wanted))
            return records

        self.conversation.write(build, builds_on_leaf=False)
        return RunReport(noted, unnoted)


def _run_note(row: RunRow, command: Sequence[str]) -> str:
    outcome = row.outcome
    on = "the files of the working tree" if row.entry is None else f"the snapshot of {row.entry}"
    if outcome.timed_out:
        ended = f"was stopped after {outcome.seconds:.1f} s (timeout)"
    else:
        ended = f"exited with code {outcome.exit_code} after {outcome.seconds:.1f} s"
    text = f"`{shlex.join(command)}` {ended}, run by convgit on {on}."
    if outcome.tail:
        text += " Its last lines:\n" + "\n".join(outcome.tail)
    return f"{text}\nFull output: {outcome.log}"
