"""The note that tells the model where restores left the files, written when the conversation
next moves on.

A restore changes files, not the conversation, and a restore is often tried and undone before
anyone speaks again. So a restore writes no note itself: its sidecar record says that the model
is to be told (``"tell": true``). The next write that puts a turn on the active path (a user
message, ``convgit append``, a fork or an edit with text, the navigator's keys for them; the
hooks' turns and ``resume`` write through the same append) first looks for the restores of this
session not told yet (``pending``): the ones after the newest restore already told, either by a
note (its ``"saved"`` names that restore's saved state) or by a ``told`` record of the sidecar.
Then (``prepare``):

* when the files git sees now are the state saved before the first of them (a restore and its
  undo, or restores that came back where they began), nothing is said: a ``told`` record in
  the sidecar closes them;
* otherwise one note goes where the turn would hang, in the same write as the turn, above it:
  where the files are now (the newest restore's target), and which files differ from before
  the first. The note's ``"saved"`` closes them: the note and its mark are one line, so a crash
  leaves either both or neither.

A note goes right above a user message (``goes_above``), never above a reply: a reply answers
what was sent before it, which held no note, so a note between a message and its reply would
claim the model read it before answering. A restore made after a message and before its reply,
or before a ``retry``, is told above the next user message.

What is pending lives in the sidecar (the restore records, written before any file changed),
so a process killed between a restore and the next turn loses no note. A note never lands
between a tool call and its result: while the leaf waits for results it stays pending, and the
append after the last result carries it. Restores made by another session are told in that
session's conversation, not here.

A writer that places entries itself (``resume --restore``, which puts the note on the resumed
path; an agent's hook) tells them with ``Appending.tell_now`` under the entry of its
choice. The turns the hooks import from an agent's transcript hang where the agent put them,
so they carry no note: what a restore did reaches such a model only through the agent (a
restore's note stays pending until a convgit append, or ``Appending.tell_now``, tells it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from convgit import schema
from convgit.base import codec
from convgit.base.valueclass import valueclass

if TYPE_CHECKING:
    from convgit.session.conversation import Conversation
    from convgit.session.track import Track
    from convgit.store.sidecar import SavedState, Sidecar

SOURCE = "restore"
NAMED = 10  # the files a note names (its count covers them all)


@valueclass(frozen=True)
class Telling:
    """What the next append says of the restores in ``chain`` (oldest first): ``text`` is the
    note, or None when the files are back where they were before the first of them."""

    chain: list[SavedState]
    text: str | None

    @property
    def saved(self) -> str:
        """The saved state of the newest restore told, as the note names it."""
        return self.chain[-1].id

    def note_fields(self) -> dict[str, Any]:
        """The fields of the note that tells these restores (``Appending`` writes it)."""
        assert self.text is not None
        return {"text": self.text, "source": SOURCE, "saved": self.saved}


class RestoreNotes:
    """The restores of one session not told yet, and the note that tells them."""

    def __init__(self, conversation: Conversation, track: Track) -> None:
        self.conversation = conversation
        self.track = track

    def pending(self) -> list[SavedState]:
        """This session's restores the model is not told of yet, oldest first."""
        return pending_in(self.track.sidecar, self.conversation.tree.entries)

    def prepare(self) -> Telling | None:
        """What the next append tells of the pending restores (None: none is pending). Reads the
        files once, as a snapshot would (the private index is the stat cache)."""
        chain = self.pending()
        if not chain:
            return None
        ws = self.track.workspace()
        now, _ = self.track.scan()
        changes = ws.changes(chain[0].commit, now)
        if not changes:
            return Telling(chain, None)
        return Telling(chain, _text(chain, [c.path for c in changes]))

    def foreseen(self) -> Telling | None:
        """What the next append will say, as a restore foresees it without reading the files
        (they were just written: reading them would hash every restored file again): nothing when
        the newest restore returned to the files saved before the first one pending, else a note
        naming the files the pending restores changed. The append itself compares the files."""
        chain = self.pending()
        if not chain:
            return None
        if self._returned(chain):
            return Telling(chain, None)
        changed = sorted({path for state in chain for path in state.files})
        return Telling(chain, _text(chain, changed))

    def _returned(self, chain: list[SavedState]) -> bool:
        """Whether the newest restore of ``chain`` brought the files back to the state saved
        before the first: it restored that saved state, or (a whole restore) a commit of the
        same files: after restores and undos in a row, an undo restores the state saved by the
        restore it undoes, another saved state of the same files (two git trees, compared
        without reading the files)."""
        first, last = chain[0], chain[-1]
        if last.target == first.id:
            return True
        if last.paths is not None or not last.restored_to:
            return False
        return not self.track.workspace().changes(first.commit, last.restored_to)

    def told_under(
        self, telling: Telling | None, parent: str | None, made: list[dict[str, Any]]
    ) -> list[dict[str, Any]] | None:
        """Inside a write (under the session's lock, the tree caught up): the records that tell
        ``telling`` under ``parent``, right above a user message (``[note]``, or ``[]`` when the
        files are back where they were), or None when there is nothing to tell: nothing
        pending, or another process told these restores first. The note's id is fresh among
        ``made`` (the records of the same write). The writer hangs its message below the note
        and ``settle``s after the write; it never tells below a tool call waiting for its
        result."""
        if telling is None:
            return None
        if [s.commit for s in self.pending()] != [s.commit for s in telling.chain]:
            return None
        if telling.text is None:
            return []
        return [self.conversation.new_entry("note", parent, made, **telling.note_fields())]

    def settle(self, telling: Telling) -> None:
        """After the append that told them: a ``told`` record closes the restores in the sidecar,
        where ``pending`` looks first (a note closed them already; the record spares the next
        appends reading every note, and a crash before it loses nothing)."""
        self.track.append([schema.told(telling.chain[-1].commit)])


def goes_above(record: dict[str, Any]) -> bool:
    """Whether the note goes right above ``record``: a user message, what the model reads next
    (never a reply: the model wrote it from what was above it then, without the note)."""
    return record.get("type") == "message" and record.get("role") == "user"


def pending_in(sidecar: Sidecar, entries: dict[str, dict[str, Any]]) -> list[SavedState]:
    """``pending`` of a session whose records are ``sidecar`` and entries ``entries``."""
    chain: list[SavedState] = []
    for state in sidecar.saved:
        if state.commit in sidecar.told:
            chain = []
        elif state.tell:
            chain.append(state)
    if not chain:
        return chain
    noted = {  # read only while restores are pending: a note whose told record is not written
        str(entry["saved"])
        for entry in entries.values()
        if entry.get("type") == "note" and entry.get("source") == SOURCE and "saved" in entry
    }
    last = max((at for at, state in enumerate(chain) if state.id in noted), default=-1)
    return chain[last + 1 :]


def _text(chain: list[SavedState], changed: list[str]) -> str:
    last = chain[-1]
    paths = sorted({p for s in chain for p in s.paths or []})
    scope = "" if any(s.paths is None for s in chain) else f" (only {', '.join(paths)})"
    if last.undo:
        what = "the state before the last restore"
    elif last.target is not None:
        what = f"the saved state {last.target}"
    else:
        what = f"the snapshot of entry {last.entry}"
    names = ", ".join(codec.shown(p) for p in changed[:NAMED])
    names += ", ..." if len(changed) > NAMED else ""
    count = "1 file now differs" if len(changed) == 1 else f"{len(changed)} files now differ"
    several = f" ({len(chain)} restores since the conversation last moved on)" * (len(chain) > 1)
    return (
        f"The files were restored to {what}{scope}{several}: {count} from before"
        f" ({names}). The conversation above was not changed; files may differ from what it"
        " describes."
    )
