"""The restore use-case: bring the files to a snapshot or a saved state, saving the files now first.

Promises kept here (``Restoring.restore``, which a session's ``restoring`` is):
* a restore that changes files saves them first, as a saved state that is recorded (the
  ``restore`` record, before any file changes) and kept by a ref; a restore that would change
  nothing saves nothing, records nothing and moves no undo point;
* ``undo`` returns to the state saved by the newest restore of the working tree, whichever
  session ran it; after restores interrupted one after another, to the state before the first
  of them (``convgit.session.saved_states``); it lists the files it replaces that changed since the
  restore it undoes (they are saved again first, like any restore's);
* while the active path ends in tool calls whose results are not all recorded, a restore is
  refused unless forced, and its note never lands between a call and its result;
* the leaf stays on its branch; when the conversation next moves on, one ``note`` above the
  turn tells the model where the files are then (``convgit.session.restore_notes``), or none when
  they are back where they were (a restore and its undo).
"""

from __future__ import annotations

import dataclasses
import errno
import os
import signal
from contextlib import suppress
from dataclasses import dataclass
from typing import TYPE_CHECKING

from convgit import schema
from convgit.base import codec, faults
from convgit.base.errors import (
    ConvgitError,
    RefusedError,
    RestoreIncompleteError,
    SignalReceived,
    StoppedError,
    UsageError,
    signal_name,
)
from convgit.conversation.refs import is_saved_ref, saved_id
from convgit.git import names
from convgit.git.restore.keeps import Keeps
from convgit.session.saved_states import new_ref
from convgit.store.sidecar import SavedState

if TYPE_CHECKING:
    from convgit.schema.shapes import RestoreJson
    from convgit.session.conversation import Conversation
    from convgit.session.restore_notes import RestoreNotes
    from convgit.session.saved_states import SavedStates
    from convgit.session.snapshots import Snapshots
    from convgit.session.track import Track
    from convgit.workspace import RestoreChanges, RestorePlan

FILES_RECORDED = 200  # the changed paths a restore record lists (its counts cover them all)


@dataclass(frozen=True)
class RestoreResult:
    target: str | None  # entry whose snapshot was restored (None for a saved state or an undo)
    commit: str
    before: str | None  # the saved state's commit (None: a dry run, or nothing to change)
    changes: RestoreChanges
    dry_run: bool
    note: str | None = None
    saved_target: str | None = None  # the saved state restored (``undo``: the newest one)
    undo: bool = False
    note_skipped: str | None = None  # why no note was written although files changed
    interrupted: int = 0  # an undo: the interrupted restores, one after another, it went back over
    agent_files: tuple[str, ...] = ()  # changed files git ignores, kept as the agent wrote them

    @property
    def saved(self) -> str | None:
        """The id of the state saved before this restore changed files."""
        return saved_id(self.before) if self.before else None

    def to_json(self) -> RestoreJson:
        return {
            "entry": self.target,
            "saved_state": self.saved_target,
            "undo": self.undo,
            "commit": self.commit,
            "before": self.before,
            "saved": self.saved,
            "dry_run": self.dry_run,
            "note": self.note,
            "note_skipped": self.note_skipped,
            "interrupted": self.interrupted,
            "changes": [{"path": c.path, "status": c.status} for c in self.changes],
            "replaced": list(self.changes.replaced),
            "left_alone": [{"path": s.path, "reason": s.reason} for s in self.changes.left_alone],
            "agent_files": list(self.agent_files),
        }


@dataclass(frozen=True)
class Restore:
    """One restore as a command asks it (``Restoring.restore``'s words, made one value there
    and passed whole below): ``ref``'s snapshot or saved state, or the newest saved state
    (``undo``); only ``paths``; ``dry_run``; ``force`` past open tool calls; ``clean``; and
    ``settle`` with a dry run. The session turns it into the workspace's ``RestoreRequest``."""

    ref: str | None = None
    paths: tuple[str, ...] | None = None
    dry_run: bool = False
    undo: bool = False
    force: bool = False
    clean: bool = False
    settle: bool = False


class Restoring:
    """Restores of one session's working tree."""

    def __init__(
        self,
        conversation: Conversation,
        track: Track,
        snapshots: Snapshots,
        saved_states: SavedStates,
        notes: RestoreNotes,
    ) -> None:
        self.conversation = conversation
        self.track = track
        self.snapshots = snapshots
        self.saved_states = saved_states
        self.notes = notes

    def _with_agent_files(self, result: RestoreResult) -> RestoreResult:
        """``result`` naming the files it changed that are kept although git ignores them, because
        the agent wrote them (``convgit.git.index.agent_files``)."""
        from convgit.git.index import agent_files

        if not result.changes:
            return result
        listed = agent_files.listed(self.track.index())
        changed = [os.fsencode(c.path) for c in result.changes]
        if not (kept := [p for p in changed if p in listed]):
            return result
        ignored = self.track.workspace().ignored(kept)  # a listed file git takes anyway: not said
        found = tuple(c.path for c in result.changes if os.fsencode(c.path) in ignored)
        return dataclasses.replace(result, agent_files=found) if found else result

    def open_tool_calls(self) -> list[str]:
        """The ids of the tool calls at the end of the active path that have no result yet."""
        leaf = self.conversation.tree.leaf
        return [] if leaf is None else self.conversation.tree.open_tool_calls(leaf)

    def restore(
        self,
        ref: str | None = None,
        *,
        paths: list[str] | None = None,
        dry_run: bool = False,
        undo: bool = False,
        force: bool = False,
        clean: bool = False,
        settle: bool = False,
    ) -> RestoreResult:
        """Bring the files (or ``paths``, relative to the root) to ``ref``'s snapshot or to the
        saved state ``ref`` names (``saved:…``), after saving the files now; ``undo``: to the
        newest saved state; ``clean``: delete the files the target lacks that no snapshot held
        too (``convgit.git.restore.keeps``). Stopped by SIGINT, SIGTERM or SIGHUP, it stops git, and
        says what state it left (``StoppedError``). The result names the changed files git
        ignores that are kept as the agent wrote them. ``settle``, with ``dry_run`` (the
        preview an interactive undo shows before it asks): when nothing would change, the
        interrupted restores it goes back over are settled, as the undo itself would."""
        from convgit.base.process_groups import stopping_on_signals
        from convgit.git.restore.plan import relative_paths

        relative_paths(paths or [])  # an empty or escaping path: refused before any file is read
        progress = _Progress()
        try:
            with stopping_on_signals():
                asked = Restore(
                    ref, None if paths is None else tuple(paths), dry_run, undo, force, clean,
                    settle,
                )  # fmt: skip
                done = self._restore(asked, progress)
        except (SignalReceived, KeyboardInterrupt) as exc:
            raise _stopped(exc, self.track, progress) from None
        return self._with_agent_files(done)

    def _restore(self, asked: Restore, progress: _Progress) -> RestoreResult:
        ref, undo, dry_run = asked.ref, asked.undo, asked.dry_run
        paths = None if asked.paths is None else list(asked.paths)
        ws = self.track.workspace()
        size_cap = self.track.size_cap
        target_entry: str | None = None
        state: SavedState | None = None
        settles: list[SavedState] = []  # the interrupted restores an undo goes back before
        if undo:
            point = self.saved_states.undo_point()
            state, settles = point.state, point.interrupted
            paths = point.paths if paths is None else paths
        elif ref is None:
            raise UsageError("Say which entry's snapshot to restore.", "convgit restore REF")
        elif is_saved_ref(ref):
            state = self.saved_states.find(ref)
        rules: str | None = None  # a saved state records none: today's rules judge it
        if state is not None:
            commit, exact_from, skipped = state.commit, state.restored_to or None, state.skipped
        else:
            assert ref is not None
            snap = self.snapshots.require(ref)
            target_entry, commit, exact_from, rules = snap.entry, snap.commit, None, snap.rules
            skipped = {str(s["path"]): str(s.get("reason", "")) for s in snap.skipped}
        waiting = self.open_tool_calls()
        if waiting and not asked.force and not dry_run:
            raise RefusedError(
                f"The conversation is waiting for the result of tool call {', '.join(waiting)}; "
                "restore once it is recorded.",
                "record the result with `convgit tool`, or restore anyway with --force",
            )
        saved_target = state.id if state is not None else None
        from convgit.workspace import RestoreRequest

        request = RestoreRequest(
            commit, size_cap, paths=None if paths is None else tuple(paths),
            exact_from=exact_from, target_skipped=skipped, target_rules=rules,
            keeps=Keeps(self._held(), asked.clean),
        )  # fmt: skip
        with ws.restoring(request, index=self.track.index()) as planned:
            progress.planned = planned
            changes = planned.changes
            if dry_run:
                if asked.settle and settles and not changes:  # nothing to ask: settled as undone
                    self.saved_states.settle(settles)
                return RestoreResult(
                    target_entry, commit, None, changes, True, None, saved_target, undo,
                    interrupted=len(settles),
                )  # fmt: skip
            if not changes:  # nothing to change: nothing is saved, recorded or moved
                planned.apply()
                if settles:  # the interrupted restores changed nothing that is still changed
                    self.saved_states.settle(settles)
                return RestoreResult(
                    target_entry, commit, None, changes, False, None, saved_target, undo,
                    interrupted=len(settles),
                )  # fmt: skip
            progress.saved_state_ref = new_ref(self.track.id)
            before = planned.save(
                progress.saved_state_ref,
                # one commit per restore (the restore's own id): two restores of the same files in
                # one second would otherwise save one commit, and a note told of the first would
                # count as told of the second (``restore_notes.pending``)
                names.commit_message(
                    "convgit saved state, before a restore",
                    session=self.track.id,
                    restore=schema.new_id(size=6),
                ),
            )
            # recorded before the first file changes: a restore killed half-way is then
            # visible (no `restored` record) and undoable
            faults.point("restore:before-record")
            self._record(planned, target_entry, saved_target, commit, before, paths, undo)
            progress.recorded = True
            faults.point("restore:before-files")
            try:
                planned.apply()
            except (ConvgitError, OSError) as exc:  # a full disk: say where the files are
                raise _incomplete(exc, planned) from None
            faults.point("restore:before-done")
            self.track.append([schema.restored(before)])
        note, skipped_note = self._told(changes)
        return RestoreResult(
            target_entry, commit, before, changes, False,
            note, saved_target, undo, skipped_note, len(settles),
        )  # fmt: skip

    def _told(self, changes: RestoreChanges) -> tuple[str | None, str | None]:
        """The note the model will be told when the conversation next moves on, as things are
        now (None: none), and why none, in words."""
        if not changes:  # every change was left alone: another writer changed those files first
            return None, "no note for the model: no file changed"
        telling = self.notes.foreseen()
        if telling is not None and telling.text is None:
            return None, (
                "no note for the model: the files are back where they were when the conversation"
                " last moved on"
            )
        agent = self.conversation.header().get("agent")
        if isinstance(agent, str) and agent:  # the hooks' turns hang where the agent put them
            return None, (
                f"no note for the model: it reads {agent}'s own session file, which a restore"
                " leaves as it is; say where the files are in your next prompt"
            )
        return (None, None) if telling is None else (telling.text, None)

    def _held(self) -> list[str]:
        """The trees of every snapshot of the session (replaced ones too), newest first."""
        sidecar = self.track.sidecar
        every = [
            *sidecar.snapshots.values(),
            *(s for old in sidecar.replaced.values() for s in old),
        ]
        return [s.tree_id for s in sorted(every, key=lambda s: s.ts, reverse=True)]

    def _record(
        self,
        planned: RestorePlan,
        target_entry: str | None,
        saved_target: str | None,
        commit: str,
        before: str,
        paths: list[str] | None,
        undo: bool,
    ) -> None:
        """The sidecar's ``restore`` record: what is about to change, and the state saved first."""
        counts: dict[str, int] = {}
        for change in planned.changes:
            counts[change.status] = counts.get(change.status, 0) + 1
        shown = None if paths is None else [codec.shown(p) for p in paths]
        self.track.append(
            [
                schema.restore(
                    target_entry,
                    before,
                    commit,
                    counts,
                    saved=saved_target,
                    paths=shown,
                    escaped=shown != paths,
                    files=[change.path for change in planned.changes[:FILES_RECORDED]],
                    skipped=[{"path": s.path, "reason": s.reason} for s in planned.skipped],
                    undo=undo,
                )
            ],
        )


@dataclass
class _Progress:
    """How far a restore got: what an interruption left."""

    planned: RestorePlan | None = None
    saved_state_ref: str | None = None  # the ref keeping the state saved first, once it may exist
    recorded: bool = False  # the restore record is written (files change only after it)


def _incomplete(exc: ConvgitError | OSError, planned: RestorePlan) -> RestoreIncompleteError:
    """A restore that failed while it changed files (a full disk), in one sentence: how far it
    got, why it stopped, and the undo that goes back (every file it did not reach is as it
    was, and none is half-written: each is written beside its place and moved in whole)."""
    if isinstance(exc, OSError):
        where = f" at {os.fsdecode(exc.filename)}" if exc.filename is not None else ""
        why = f"the file system refused{where}: {exc.strerror or exc}"
        if exc.errno == errno.ENOSPC:
            why = f"the disk is full ({exc.strerror or exc})"
    else:
        why = exc.message
    assert planned.saved is not None
    full = isinstance(exc, OSError) and exc.errno == errno.ENOSPC
    return RestoreIncompleteError(
        f"The restore stopped after {planned.done} of {len(planned.changes)} file changes:"
        f" {why.rstrip('.')}; `convgit restore --undo` returns the files to the state saved"
        f" before it, {saved_id(planned.saved)}.",
        hint="free some space on that disk first: the undo writes the files back" if full else None,
    )


def _stopped(exc: BaseException, track: Track, progress: _Progress) -> StoppedError:
    """What an interrupted restore left, in one sentence. Stopped after it saved the files and
    before it recorded the restore, it changed nothing: the saved state's ref goes too (it
    holds the files as they still are), so no saved state is left without its record."""
    signum = exc.signum if isinstance(exc, SignalReceived) else signal.SIGINT
    name = signal_name(signum)
    planned = progress.planned
    if progress.saved_state_ref is not None and not progress.recorded:
        with suppress(ConvgitError, OSError):
            track.workspace().delete_ref(progress.saved_state_ref)
    if planned is None or not planned.applying or planned.saved is None or not planned.done:
        return StoppedError(signum, f"Interrupted by {name}: no file was changed.")
    total = len(planned.changes)
    return StoppedError(
        signum,
        f"Interrupted by {name} after at most {planned.done} of {total} file changes; "
        f"`convgit restore {saved_id(planned.saved)}` returns to the files as they were.",
    )
