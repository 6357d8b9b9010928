"""The saved states of a working tree: the files as they were just before each restore changed
them, whichever session of the store ran the restore.

A saved state is found from its ref, ``refs/convgit/<sid>/safety/<time>`` (which keeps it from
git gc), and read from the ``restore`` record that its session's sidecar holds. A ref whose
record is lost (the sidecar deleted, or its write failed) is still a saved state: listed as
``recorded`` False, restorable by its id, named by ``fsck``, and recorded again by ``repair``.

Promises kept here:
* ``restore --undo`` undoes the newest restore of the working tree, whichever session of the
  store ran it (sessions of another worktree of the repository are not looked at): the printed
  hint of a restore undoes that restore from any session, as long as it is the newest;
* after restores interrupted one after another (a restore killed half-way, then its undo killed
  too), the undo goes back to the state before the first of them, never to a half-written one;
* ``saved:ID`` names any saved state of the working tree.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING

from convgit import schema
from convgit.base.errors import NotFoundError, RefusedError
from convgit.base.valueclass import valueclass
from convgit.conversation import refs, tree
from convgit.git import names
from convgit.store import jsonl, sessions
from convgit.store.sidecar import Pruned, SavedState, Sidecar, find_saved

if TYPE_CHECKING:
    from convgit.session.conversation import Conversation
    from convgit.session.track import Track

_STAMP = re.compile(r"(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)(\d{3})Z")


def new_ref(sid: str) -> str:
    """The ref that keeps the state a restore of session ``sid`` saves now."""
    stamp = schema.now().replace(":", "").replace("-", "").replace(".", "")
    return names.saved_state_ref(sid, stamp)


@valueclass(frozen=True)
class UndoPoint:
    """Where ``restore --undo`` goes: ``state`` at ``paths``; ``interrupted``: the restores
    interrupted one after another that it settles, newest first (empty when none was)."""

    state: SavedState
    paths: list[str] | None
    interrupted: list[SavedState]


class SavedStates:
    """The saved states of the working tree, as one session sees them."""

    def __init__(self, conversation: Conversation, track: Track) -> None:
        self.conversation = conversation
        self.track = track

    def of_worktree(self) -> list[SavedState]:
        """Every saved state of this working tree, newest first, across the sessions of the
        store."""
        found = self._refs()
        sids = {self.track.id} | {
            sid for sid in found if self.track.location.session_path(sid).exists()
        }
        states: list[SavedState] = []
        for sid in sorted(sids):
            sidecar = self._sidecar(sid)
            if sidecar is None:
                continue
            recorded = {s.commit for s in sidecar.saved}
            for state in sidecar.saved:
                finished = state.commit in sidecar.finished or state.rebuilt
                states.append(replace(state, session=sid, finished=finished))
            for commit, stamp in found.get(sid, {}).items():
                if commit not in recorded:
                    states.append(_from_ref(sid, commit, stamp))
        return sorted(states, key=lambda s: (s.ts, s.line), reverse=True)

    def interrupted(self) -> list[SavedState]:
        """The newest restores of the working tree that never finished, one after another (newest
        first): each began on the files the one before left half-written."""
        return _chain(self.of_worktree())

    def undo_point(self) -> UndoPoint:
        """Where ``restore --undo`` goes: the state before the newest restore of the working tree,
        or, when the newest restores were interrupted one after another, the state before the first
        of them, at every path they were limited to."""
        states = self.of_worktree()
        if not states:
            raise RefusedError("There is no saved state to return to.", "convgit restores")
        chain = _chain(states)
        if not chain:
            return UndoPoint(states[0], states[0].paths, [])
        paths: list[str] | None = None
        if all(s.paths is not None for s in chain):
            paths = sorted({p for s in chain for p in s.paths or []})
        return UndoPoint(chain[-1], paths, chain)

    def find(self, ref: str) -> SavedState:
        """The saved state of the working tree that ``ref`` (``saved:`` and a prefix) names; one
        ``convgit gc`` let go says so."""
        try:
            return find_saved(self.of_worktree(), ref)
        except NotFoundError:
            gone = self._let_go(ref)
            if gone is None:
                raise
            raise NotFoundError(
                f"The saved state {ref.strip()} was let go by gc on {gone.day}.", "convgit restores"
            ) from None

    def _let_go(self, ref: str) -> Pruned | None:
        """The saved state gc let go that ``ref`` names, in any session of the store."""
        wanted = refs.saved_digits(ref)
        if len(wanted) < 4:
            return None
        for sid in self.track.location.session_ids():
            sidecar = self.track.sidecar if sid == self.track.id else self._sidecar(sid)
            for commit, gone in (sidecar.pruned if sidecar is not None else {}).items():
                if gone.what == "saved" and commit.startswith(wanted):
                    return gone
        return None

    def settle(self, chain: list[SavedState]) -> None:
        """Record the interrupted restores of ``chain`` as over: an undo found the files already
        back where they began."""
        for state in chain:
            if state.session == self.track.id:
                self.track.append([schema.restored(state.commit)])
            else:
                sessions.sidecar_file(self.track.location, state.session).append(
                    [schema.restored(state.commit)]
                )

    def unrecorded(self, sidecar: Sidecar) -> list[tuple[str, SavedState]]:
        """This session's saved states that have a ref and no record in ``sidecar``: (the ref,
        the state as its ref alone tells it)."""
        known = {s.commit for s in sidecar.saved}
        return [
            (names.saved_state_ref(self.track.id, stamp), _from_ref(self.track.id, commit, stamp))
            for commit, stamp in self._refs().get(self.track.id, {}).items()
            if commit not in known
        ]

    def unrecorded_problems(self, sidecar: Sidecar | None = None) -> list[tree.Problem]:
        """What ``fsck`` says of each saved state whose record is lost (``repair`` writes it)."""
        if sidecar is None:
            sidecar = self.track.read_sidecar()
        return [
            tree.Problem(
                None,
                f"of the sidecar has no record of the saved state {state.id}, which the ref {ref}"
                " keeps; `convgit repair` records it again",
            )
            for ref, state in self.unrecorded(sidecar)
        ]

    def rebuild(self) -> int:
        """Write the lost record of each of this session's saved states found from its ref alone
        (``repair``): the state and when it was saved; what its restore did is not known. Returns
        how many were written."""
        if self.track.location.git is None:
            return 0
        lost = [state for _, state in self.unrecorded(self.track.read_sidecar())]
        records = []
        for state in sorted(lost, key=lambda s: s.ts):
            records += [
                schema.rebuilt_restore(state.commit, state.ts),
                schema.restored(state.commit),
            ]
        if records:
            self.track.append(records)
        return len(lost)

    def _refs(self) -> dict[str, dict[str, str]]:
        """session id -> {commit: the time in its ref's name} for every saved state's ref."""
        git = self.track.location.git
        if git is None or git.worktree is None:
            return {}
        if self.track.other_worktree(self.conversation.tree.header) is not None:
            return {}  # its saved states are of another worktree's files: its own record has them
        found: dict[str, dict[str, str]] = {}
        for name, commit in self.track.workspace().saved_state_refs().items():
            parsed = names.parse_saved_state_ref(name)
            if parsed is not None:
                found.setdefault(parsed[0], {})[commit] = parsed[1]
        return found

    def _sidecar(self, sid: str) -> Sidecar | None:
        """Session ``sid``'s sidecar (None for a session of another worktree). This session's is
        checked; another's damaged lines are read as missing, never a reason to refuse here (its
        saved states are still found from their refs; its own commands refuse until repaired)."""
        if sid == self.track.id:
            return self.track.sidecar
        header = jsonl.read_header(self.track.location.session_path(sid))
        if self.track.other_worktree(header) is not None:
            return None
        return sessions.read_sidecar(self.track.location, sid)


def _chain(states: list[SavedState]) -> list[SavedState]:
    chain: list[SavedState] = []
    for state in states:
        if not state.recorded:
            # killed between its ref and its record, a restore changed no file (its record is
            # written first); a record lost later tells nothing: either way, look past it
            continue
        if state.finished:
            break
        chain.append(state)
    return chain


def _from_ref(sid: str, commit: str, stamp: str) -> SavedState:
    """A saved state known from its ref alone: its commit, and when it was saved."""
    matched = _STAMP.fullmatch(stamp)
    ts = stamp
    if matched is not None:
        y, mo, d, h, mi, s, ms = matched.groups()
        ts = f"{y}-{mo}-{d}T{h}:{mi}:{s}.{ms}Z"
    return SavedState(
        commit=commit,
        restored_to="",
        ts=ts,
        entry=None,
        undo=False,
        paths=None,
        files=[],
        changed={},
        session=sid,
        recorded=False,
    )
