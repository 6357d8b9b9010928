"""A turn of an agent session, recorded from hook events: ``record`` is the one entry of the
hook (``convgit.agents.hook``) once the agent's adapter read the event
(``convgit.agents.live.events``). It finds the session that mirrors the agent session
(``mirroring``), imports what the transcript gained and moves the turn on, under the agent
session's lock.

The turn, per agent session, in a small state file beside the pointer (``state``), so that a
prompt with no file change reads no session:
* a prompt opens the turn; if the files changed since the last snapshot (the user's own
  edits, or the first prompt), they are committed then and recorded as the snapshot of the
  prompt's entry once the transcript has it (``pending``); ``quick_prompt`` is the common
  prompt: the turn was closed, the files are compared with the last snapshot, and nothing else
  is read (no session, no transcript, no ``git rev-parse``);
* the end of the turn imports, snapshots the files as the snapshot of the turn's last reply
  and closes the turn; a prompt that finds the turn open closes it first (an interrupted turn
  has no Stop); the prompt of an open turn coming again (a retry, or a message typed while a
  tool ran, which Claude hands to the running turn) changes nothing; the files are final at
  the end of a turn, so they are snapshotted on another thread (``BackgroundSnapshot``) while
  the transcript is read;
* an event that follows one of the same agent session that failed or ran no convgit
  (``behind``: ``convgit.agents.hook_failures``) imports the transcript before anything else; a
  turn it brings whose end no event recorded is caught up (``catching_up``), and the replies of
  earlier such turns that no snapshot can cover any more are named (``Recorded.unrecorded``)
  for the user to see;
* the transcript may lag the event a little: the end of the turn waits at most
  ``REPLY_WAIT`` for the reply the agent named; a reply that comes later gets the turn's
  snapshot at the next event (``unsettled``);
* a per-tool snapshot (``[hooks] tool_snapshots``) is the snapshot of the reply that made the
  call; when that reply is not in the transcript yet (OpenCode stores it once its tools ran),
  the files are snapshotted at the tool's end and recorded for it when an import brings it
  (``tools``).

What differs between agents is said by the agent's ``live`` part: ``carries_prompt`` (which
user message is the turn's prompt), ``is_prompt`` (a user message that is no prompt, when it
has such), ``OPENS`` and the events it maps to these words.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from convgit.agents.live import mirroring
from convgit.agents.live.catching_up import WALK, caught_up, in_subagent, is_prompt, turns_since
from convgit.agents.live.events import Event
from convgit.agents.live.state import LiveState, now, skip_json, snapshot_json, snapshot_of
from convgit.base.errors import NotFoundError, SnapshotSkippedError, skipped_words
from convgit.git import names
from convgit.store import config, jsonl
from convgit.store.config import fsmonitor, max_files, size_cap
from convgit.store.location import StoreLocation

if TYPE_CHECKING:  # imported where used: the common prompt reads neither the session nor git
    from convgit.session import Session
    from convgit.workspace import Snapshot, Workspace

REPLY_WAIT = 0.25  # seconds the end of a turn waits for its reply to reach the transcript
_POLL = 0.02


# -- events ---------------------------------------------------------------------------------------


def _title(agent: str) -> str:
    from convgit.agents import registry

    return registry.title(agent) or agent


def _carries_prompt(agent: str, native_text: str, prompt_id: str) -> bool:
    """Whether a user message's kept text is the prompt ``prompt_id`` (the agent's say)."""
    from convgit.agents import registry

    return bool(registry.integration(agent).carries_prompt(native_text, prompt_id))


@dataclass(frozen=True)
class Recorded:
    """What an event did: ``text``, in a few words, for the hook log; ``until``: the events of
    this agent session that started before then are caught up (their turns recorded; None:
    this event caught up nothing); ``unrecorded``: replies that ended turns no event recorded
    the end of, which no snapshot can cover any more; ``session``: the convgit session."""

    text: str
    until: float | None = None
    unrecorded: tuple[str, ...] = ()
    session: str | None = None


def record(location: StoreLocation, event: Event, *, behind: bool = False) -> Recorded:
    """Do what ``event`` asks of the session that mirrors its agent session. ``behind``: an
    earlier event of this agent session failed or ran no convgit, so the transcript is imported
    and its turns caught up first (no answer from the state alone)."""
    began = time.time()
    tool_end = event.name == "PostToolUse"
    settings = config.load(location) if tool_end or event.edited else None  # read once
    per_tool = bool(tool_end and settings and settings.value("hooks", "tool_snapshots"))
    keep = bool(event.edited and settings and settings.value("snapshots", "agent_ignored"))
    if event.name == "PostToolUse" and not (per_tool or keep):
        return Recorded("per-tool snapshots are off")
    title = _title(event.agent)
    lock = location.agent_lock(event.agent, event.session_id)
    with jsonl.exclusive(lock, f"the {title} session {event.session_id}"):
        live = LiveState.load(location, event.agent, event.session_id)
        if keep and not per_tool:  # from the state alone, when it says enough
            sid, known = live.data.get("session"), live.get("workspace")
            if isinstance(sid, str) and known is not None and live.snapshots(location, sid):
                root = Path(str(known["root"]))
                kept = _keep_edited(location.index_path(sid), event, root)
                return Recorded(f"session {sid}: {kept}")
        quick = None
        if event.name == "UserPromptSubmit" and not behind:
            quick = _quick_prompt(location, live, title, event.prompt_id)
        if quick is not None:
            live.save()
            return Recorded(quick)
        if event.name == "SessionStart" and event.source is not None:
            live.set("source", event.source)
        trashed = mirroring.in_trash(location, event, live)
        if trashed is not None:
            return Recorded(f"session {trashed} is in the trash: the event was not recorded")
        early = None
        try:
            if event.name == "Stop":  # the files are final: taken while the session is read
                early = BackgroundSnapshot.from_state(location, live)
            return _record(location, event, live, keep, per_tool, early, began, behind)
        finally:
            if early is not None:
                early.wait()


def _record(
    location: StoreLocation,
    event: Event,
    live: LiveState,
    keep: bool,
    per_tool: bool,
    early: BackgroundSnapshot | None,
    began: float,
    behind: bool,
) -> Recorded:
    """``record`` for the session that mirrors the event's agent session, under its lock;
    ``early``: the files' snapshot at a Stop, started from the state; ``began``: when the
    event's recording started; ``behind``: events of this agent session failed before."""
    session = mirroring.attach(location, event, live)
    if session is None:
        done = "waiting for the transcript to show which session this one continues"
        if event.name == "UserPromptSubmit":
            live.open_turn(event.prompt_id)
            done += _snapshot_unattached(location, event, live)
        elif keep and location.git is not None and location.git.worktree is not None:
            index = mirroring.unattached_index(location, event.agent, event.session_id)
            done += "; " + _keep_edited(index, event, location.git.worktree)
        live.save()
        return Recorded(done)
    imports = event.name != "PostToolUse" or per_tool  # a file tool's event may only keep files
    if imports and "seen" not in live.data:
        live.set("seen", _history(session, event, live, behind))
    live.unrecorded = []
    did = []
    if keep and session.track.snapshots_enabled:
        root = session.track.workspace().root
        did.append(_keep_edited(location.index_path(session.id), event, root))
    if event.name == "Stop":
        did.append(_stop(session, event, live, early))
    elif imports:
        did.append(_STEPS.get(event.name, _catch_up)(session, event, live))
    done = f"session {session.id}: {'; '.join(did) or 'snapshots are off'}"
    if live.unrecorded:
        done += f"; turns recorded without snapshots: {', '.join(live.unrecorded)}"
    live.remember(location, session.id, session.track.snapshots_enabled)
    if session.track.snapshots_enabled:
        ws = session.track.workspace()
        live.remember_workspace(ws)
    until = None
    if imports:
        turn = live.get("turn") or {}
        until = min(began, float(turn.get("at") or 0)) if turn.get("open") else began
        if event.name not in _WITHIN_A_TURN:  # every turn above the leaf is recorded or named
            live.set("seen", session.conversation.tree.leaf or "")
    if _has_entries(session):
        live.set("entries", True)
        _follow(location, session.id)
    live.save()
    return Recorded(done, until, tuple(live.unrecorded), session.id)


_WITHIN_A_TURN = ("PostToolUse", "SubagentStop")  # their imports catch up no turn


def _history(session: Session, event: Event, live: LiveState, behind: bool) -> str:
    """The entry up to which the session's turns are not this agent session's live events to
    catch up (``seen``'s first value). The state saw a turn: what the session held before this
    event. It saw none, and this is the agent session's first event: everything its transcript
    holds now, whatever its files were then. It saw none because its first events failed: all
    but the newest turn the transcript ended, which is theirs."""
    if live.get("turn") is not None:
        return mirroring.read(session).conversation.tree.leaf or ""
    _import(session, event, live)
    tree = session.conversation.tree
    ended = [t for t in turns_since(session, live) if t.reply is not None] if behind else []
    if not ended:
        return tree.leaf or ""
    start = ended[-1].prompt or ended[-1].reply
    assert start is not None
    return str(tree.entries[start]["parentId"] or "")


def _has_entries(session: Session) -> bool:
    """Whether the session, as read by this event, holds an entry (one it did not read is not
    asked: the event changed nothing in it)."""
    return bool(session.conversation.tree.entries)


def _follow(location: StoreLocation, sid: str) -> None:
    """The user's commands follow the agent to session ``sid`` (one with entries), unless the
    session they use is one the user chose (``StoreLocation.follow``)."""
    location.follow(sid)


def _keep_edited(index: Path, event: Event, root: Path) -> str:
    """List the files a file tool wrote to be kept in the snapshots of the private index at
    ``index`` (a session's, or the one of an agent session not attached yet)."""
    from convgit.git.index import agent_files

    said = []
    for edited in event.edited:
        named = edited
        if not os.path.isabs(named) and event.cwd is not None:
            named = os.path.join(event.cwd, named)
        path = agent_files.inside(root, named)
        if path is None:
            said.append(f"{edited} is not in the worktree: not kept")
        elif agent_files.note(index, path):
            said.append(f"{os.fsdecode(path)} kept in the snapshots from now on")
        else:
            said.append(f"{os.fsdecode(path)} kept already")
    return "; ".join(said)


def tool_snapshots(location: StoreLocation) -> bool:
    """``[hooks] tool_snapshots = true``: a snapshot after every editing tool call."""
    return bool(config.load(location).value("hooks", "tool_snapshots"))


def _snapshot_unattached(location: StoreLocation, event: Event, live: LiveState) -> str:
    """The files at the first prompt of an agent session not attached yet, kept ``pending``
    for the prompt's entry once the end of the turn attaches the session."""
    from convgit.workspace import Workspace

    ws = Workspace.of(location)
    if ws is None:
        return ""
    ws.keep_out(location.root)
    ws.track_changes(fsmonitor(location))
    index = mirroring.unattached_index(location, event.agent, event.session_id)
    index.parent.mkdir(parents=True, exist_ok=True)
    message = prompt_message(_title(event.agent), event.prompt_id)
    try:
        snap = ws.snapshot(
            index,
            message=names.commit_message(
                f"convgit snapshot {message}", agent_session=event.session_id
            ),
            parent=None,
            size_cap=size_cap(location),
            max_files=max_files(location),
        )
    except SnapshotSkippedError as exc:
        live.set("pending", skip_json(exc.changed, exc.cap, prompt=event.prompt_id))
        return f"; {exc.words()}"
    live.set("pending", snapshot_json(snap, prompt=event.prompt_id))
    live.set("last", {"commit": snap.commit, "tree": snap.tree_id})
    return "; files snapshotted for the prompt"


def _import(session: Session, event: Event, live: LiveState) -> mirroring.Imported:
    """Import what the transcript gained (``mirroring.import_new``); a reply that came after
    its turn was closed gets the turn's snapshot."""
    found = mirroring.import_new(session, event)
    if found.new:
        _settle_reply(session, live)
        _settle_tools(session, live)
    return found


def _catch_up(session: Session, event: Event, live: LiveState) -> str:
    """SessionEnd, PostCompact, and any event convgit does nothing else for: import, and catch
    up the turns it brought whose end no event recorded (none is open)."""
    new = _import(session, event, live).words()
    turn = live.get("turn")
    if turn is not None and turn.get("open"):
        return new
    return "; ".join(filter(None, [new, caught_up(session, live)]))


def _start(session: Session, event: Event, live: LiveState) -> str:
    return _catch_up(session, event, live)


def _prompt(session: Session, event: Event, live: LiveState) -> str:
    turn = live.get("turn")
    done = []
    if turn is not None and turn.get("open"):
        if turn.get("prompt") == event.prompt_id:
            return "the turn of this prompt is open already"
        found = _import(session, event, live)
        done += [*found.notes, _close(session, live, "interrupted")]
    else:  # turns the transcript gained that no event saw end: theirs are the files now
        found = _import(session, event, live)
        done += [*found.notes, caught_up(session, live)]
    live.open_turn(event.prompt_id)
    if not session.track.snapshots_enabled:
        return "; ".join([*done, "turn open"])
    message = prompt_message(_title(event.agent), event.prompt_id)
    done = [d for d in done if d]
    try:
        snap = after(_last_commit(session, live), lambda p: session.snapshots.take(p, message))
    except SnapshotSkippedError as exc:
        live.set("pending", skip_json(exc.changed, exc.cap, prompt=event.prompt_id))
        return "; ".join([*done, exc.words(), "turn open"])
    if snap.reused:
        done.append("files unchanged")
    else:
        live.set("pending", snapshot_json(snap, prompt=event.prompt_id))
        live.set("last", {"commit": snap.commit, "tree": snap.tree_id})
        done.append("files changed: snapshot taken for the prompt")
    return "; ".join([*done, "turn open"])


def _stop(
    session: Session, event: Event, live: LiveState, started: BackgroundSnapshot | None = None
) -> str:
    """The end of a turn: import (the reply may reach the file just after the event), then
    snapshot the files as the reply's and close the turn. The files are final now, so their
    snapshot is taken on another thread while the transcript is read (``started``: begun
    already, from the state, when it is this session's)."""
    deadline = time.monotonic() + REPLY_WAIT
    early = started
    if early is None or early.session_id != session.id:
        if early is not None:
            early.wait()  # another session's: left unused (no ref keeps it)
        early = BackgroundSnapshot.start(session, live)
    try:
        found = _import(session, event, live)
        missing = None
        while event.last_reply and not _reply_seen(session, event.last_reply):
            if time.monotonic() >= deadline:
                missing = event.last_reply
                break
            time.sleep(_POLL)
            found.add(_import(session, event, live))
        return f"{found.words()}; {_close(session, live, 'stopped', missing, early)}"
    finally:
        if early is not None:
            early.wait()


def _failed(session: Session, event: Event, live: LiveState) -> str:
    """StopFailure: the turn ended on an API error."""
    return f"{_import(session, event, live).words()}; {_close(session, live, 'failed')}"


def _tool(session: Session, event: Event, live: LiveState) -> str:
    """A per-tool snapshot (opt-in), as the snapshot of the reply that called the tool; when the
    agent names no call (Gemini CLI), of the entry the transcript ends at (the reply that
    called it: its results are written once every call of it ran)."""
    new = _import(session, event, live).words()
    if not session.track.snapshots_enabled or session.conversation.tree.leaf is None:
        return new
    _settle_prompt(session, live)
    called = event.tool_use_id
    entry = session.conversation.tree.leaf if called is None else _caller(session, called)
    if entry is None and called is not None:
        return f"{new}; {_defer_tool(session, live, called, event.tool_name)}"
    if entry is None or entry in session.track.sidecar.snapshots:
        return new
    try:
        info = session.snapshots.snapshot(entry, per_turn=True)
    except SnapshotSkippedError as exc:
        return f"{new}; {skipped_words(entry, exc.changed, exc.cap)}"
    live.set("last", {"commit": info.commit, "tree": info.tree_id})
    return f"{new}; snapshot of {entry} after {event.tool_name}"


def _last_commit(session: Session, live: LiveState) -> str | None:
    """The commit the files are compared with: the last snapshot taken for this agent session,
    else the nearest snapshot above the leaf."""
    last = live.get("last")
    if last is not None:
        return str(last["commit"])
    nearest = mirroring.read(session).track.nearest_snapshot(session.conversation.tree.leaf)
    return None if nearest is None else nearest.commit


def _defer_tool(session: Session, live: LiveState, call: str, tool: str | None) -> str:
    """The reply that made the call is not in the transcript yet (OpenCode stores a message
    once its step ended, after its tools ran): the files are snapshotted now, kept in the state
    (``tools``, by call id) and recorded for that reply when an import brings it."""
    what = f"after {tool or 'a tool'} ({call})"
    try:
        snap = after(_last_commit(session, live), lambda p: session.snapshots.take(p, what))
    except SnapshotSkippedError as exc:  # the turn's end stands for it
        return f"no snapshot {what}: {exc.words()}"
    live.set("tools", {**(live.get("tools") or {}), call: snapshot_json(snap)})
    live.set("last", {"commit": snap.commit, "tree": snap.tree_id})
    return f"files snapshotted {what}, for its reply once the transcript has it"


def _settle_tools(session: Session, live: LiveState) -> None:
    """Record the snapshots taken after tools whose reply was not in the transcript then
    (``_defer_tool``) for the replies that made the calls, once they are; the prompt's first."""
    waiting = live.get("tools")
    if not waiting or not session.track.snapshots_enabled:
        return
    _settle_prompt(session, live)
    left = {}
    for call, taken in waiting.items():
        entry = _caller(session, call)
        if entry is None:
            left[call] = taken
        elif entry not in session.track.sidecar.snapshots:
            _record_taken(session, entry, taken)
    live.set("tools", left or None)


def _subagent(session: Session, event: Event, live: LiveState) -> str:
    """A subagent finished: its file is imported (a side branch below the call that started
    it), and the files snapshotted as the snapshot of its last entry."""
    new = _import(session, event, live).words()
    if not session.track.snapshots_enabled or not event.agent_id or not event.agent_type:
        return new  # no type: the compaction's own worker
    entry = _last_of_subagent(session, event.agent_id)
    if entry is None or entry in session.track.sidecar.snapshots:
        return new
    _settle_prompt(session, live)
    try:
        info = session.snapshots.snapshot(entry, per_turn=True)
    except SnapshotSkippedError as exc:
        return f"{new}; {skipped_words(entry, exc.changed, exc.cap)}"
    live.set("last", {"commit": info.commit, "tree": info.tree_id})
    return f"{new}; snapshot of the subagent's {entry}"


_STEPS = {
    "SessionStart": _start,
    "UserPromptSubmit": _prompt,
    "PostToolUse": _tool,
    "Stop": _stop,
    "StopFailure": _failed,
    "SubagentStop": _subagent,
}


# -- the files at a prompt and at a turn's end, from the state ---------------------------------


def after(parent: str | None, snap: Callable[[str | None], Snapshot]) -> Snapshot:
    """``snap(parent)``; when ``parent`` (the state's ``last``, which no ref may keep yet: a
    snapshot waiting for its entry) is gone, collected by `git gc --prune=now`, the files are
    snapshotted without a parent rather than every later turn failing."""
    try:
        return snap(parent)
    except NotFoundError:
        if parent is None:
            raise
        return snap(None)


def prompt_message(title: str, prompt: str | None) -> str:
    return f"at a prompt of {title} ({prompt})"


def take(
    location: StoreLocation, sid: str, ws: Workspace, parent: str | None, what: str
) -> Snapshot:
    """The files now as a commit with parent ``parent`` (``Snapshots.take``, without
    the session: its private index, its lock and the size cap are all it needs)."""
    index = location.index_path(sid)
    index.parent.mkdir(parents=True, exist_ok=True)
    return ws.snapshot(
        index,
        message=names.commit_message(f"convgit snapshot {what}", session=sid),
        parent=parent,
        size_cap=size_cap(location),
        max_files=max_files(location),
    )


def _quick_prompt(
    location: StoreLocation, live: LiveState, title: str, prompt: str | None
) -> str | None:
    """A prompt whose turn is closed, told from the state alone: the files are snapshotted if
    they changed since the last snapshot (kept ``pending`` for the prompt's entry) and the
    turn opens. None when the state does not say enough (the caller reads the session)."""
    sid, turn, last = live.data.get("session"), live.get("turn"), live.get("last")
    if not isinstance(sid, str) or not location.session_path(sid).exists():
        return None
    if turn is not None and turn.get("open"):
        return None
    snapshots = live.knows_snapshots(location, sid)
    if snapshots is None:
        return None
    if live.data.get("entries"):
        location.follow(sid)
    if not snapshots or location.git is None:
        live.open_turn(prompt)
        return f"session {sid}: turn open"
    ws = live.workspace(location)
    if last is None or ws is None:
        return None
    message = prompt_message(title, prompt)
    try:
        snap = after(str(last["commit"]), lambda parent: take(location, sid, ws, parent, message))
    except SnapshotSkippedError as exc:
        live.open_turn(prompt)
        live.set("pending", skip_json(exc.changed, exc.cap, prompt=prompt))
        return f"session {sid}: {exc.words()}; turn open"
    live.open_turn(prompt)
    if snap.reused:
        return f"session {sid}: files unchanged; turn open"
    live.set("pending", snapshot_json(snap, prompt=prompt))
    live.set("last", {"commit": snap.commit, "tree": snap.tree_id})
    return f"session {sid}: files changed: snapshot taken for the prompt; turn open"


class BackgroundSnapshot:
    """The files snapshotted on another thread (at the end of a turn, while the transcript is
    imported), the parent being the last snapshot, for session ``session_id``. Locks are
    reentrant within a process, not a thread: the caller takes no workspace lock until
    ``result()`` returned."""

    def __init__(
        self, session_id: str, parent: str, snap: Callable[[str | None], Snapshot]
    ) -> None:
        self.session_id = session_id
        self.parent = parent
        self._snap: Snapshot | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._take, args=(snap,), daemon=True)
        self._thread.start()

    @classmethod
    def start(cls, session: Session, live: LiveState) -> BackgroundSnapshot | None:
        last = live.get("last")
        if last is None or not session.track.snapshots_enabled:
            return None
        session.track.workspace()  # found before the thread starts: it is not shared while found
        what = "at a turn's end"
        return cls(session.id, str(last["commit"]), lambda p: session.snapshots.take(p, what))

    @classmethod
    def from_state(cls, location: StoreLocation, live: LiveState) -> BackgroundSnapshot | None:
        """Started from the state alone, before the session is read (its snapshot then runs
        beside the reading): None when the state does not say enough (``start`` then)."""
        sid, last = live.data.get("session"), live.get("last")
        if not isinstance(sid, str) or last is None or not live.snapshots(location, sid):
            return None
        ws = live.workspace(location)
        if ws is None or not location.session_path(sid).exists():
            return None
        what = "at a turn's end"
        return cls(sid, str(last["commit"]), lambda p: take(location, sid, ws, p, what))

    def _take(self, snap: Callable[[str | None], Snapshot]) -> None:
        try:
            self._snap = after(self.parent, snap)
        except BaseException as exc:  # given to the thread that asks for the result
            self._error = exc

    def wait(self) -> None:
        self._thread.join()

    def result(self) -> Snapshot:
        self.wait()
        if self._error is not None:
            raise self._error
        assert self._snap is not None
        return self._snap


# -- turns ----------------------------------------------------------------------------------------


def _close(
    session: Session,
    live: LiveState,
    how: str,
    missing: str | None = None,
    early: BackgroundSnapshot | None = None,
) -> str:
    """Close the open turn: the pending prompt snapshot recorded, the files snapshotted as the
    snapshot of the turn's last reply (once: an entry that has a snapshot keeps it). ``missing``:
    the text of a reply not in the transcript yet, which gets the same snapshot later.
    ``early``: the files' snapshot, taken already."""
    turn = live.get("turn") or {}
    live.set("turn", {**turn, "open": False, "closed": how, "ts": now()})
    live.set("tools", None)  # a tool's reply that never came: the turn's end stands for it
    mirroring.read(session)
    if not session.track.snapshots_enabled or session.conversation.tree.leaf is None:
        return f"turn {how}"
    # locks are reentrant within a process, not a thread: nothing below may run beside it
    taken: Snapshot | SnapshotSkippedError | None = None
    if early is not None:
        try:
            taken = early.result()
        except SnapshotSkippedError as exc:  # over the cap: the turn's end is recorded so
            taken = exc
    ended = [t.reply for t in turns_since(session, live) if t.reply is not None]
    prompt, reply = _turn(session, live)
    _settle_prompt(session, live, prompt)
    leaf = session.conversation.tree.leaf
    if reply is None and missing is not None:  # no reply of the turn in the transcript yet
        if taken is None:
            nearest = session.track.nearest_snapshot(leaf)
            try:
                taken = session.snapshots.take(
                    nearest.commit if nearest else None, "at a turn's end"
                )
            except SnapshotSkippedError as exc:
                taken = exc
        if isinstance(taken, SnapshotSkippedError):
            live.set("unsettled", skip_json(taken.changed, taken.cap, entry=leaf, reply=missing))
            return f"the reply is not in the transcript yet; {taken.words()}; turn {how}"
        live.set("last", {"commit": taken.commit, "tree": taken.tree_id})
        live.set("unsettled", snapshot_json(taken, entry=leaf, reply=missing))
        return f"the reply is not in the transcript yet: its snapshot waits for it; turn {how}"
    target = reply or prompt or leaf
    live.unrecorded += [e for e in ended if e != target]  # turns before it no event saw end
    if target in session.track.sidecar.snapshots:
        return f"turn {how}"
    above = session.track.nearest_snapshot(session.conversation.tree.entries[target]["parentId"])
    try:
        if (
            taken is not None
            and early is not None
            and above is not None
            and above.commit == early.parent
        ):
            if isinstance(taken, SnapshotSkippedError):
                raise taken
            info = session.snapshots.record(target, taken)
        else:  # the turn hangs elsewhere than the last snapshot (a rewind): its own parent
            info = session.snapshots.snapshot(target, per_turn=True)
    except SnapshotSkippedError as exc:  # recorded as skipped: no later event tries it again
        if missing is not None:
            live.set("unsettled", skip_json(exc.changed, exc.cap, entry=target, reply=missing))
        return f"{session.snapshots.skip(target, exc.changed, exc.cap)}; turn {how}"
    live.set("last", {"commit": info.commit, "tree": info.tree_id})
    if missing is not None:
        live.set("unsettled", snapshot_json(info, entry=target, reply=missing))
    entries = [e for e in (prompt, target) if e is not None]  # the prompt's snapshot first
    elsewhere = next(filter(None, map(session.snapshots.files_from, entries)), None)
    said = "" if elsewhere is None else f"; {elsewhere.words}"
    return f"snapshot of {target}{said}; turn {how}"


def _turn(session: Session, live: LiveState) -> tuple[str | None, str | None]:
    """The entries of the turn at the leaf: its prompt (the one the pending snapshot is for, or
    the earliest user message) and its last reply, found going up from the leaf to the first
    entry with a snapshot."""
    tree, snapshots = session.conversation.tree, session.track.sidecar.snapshots
    skipped = session.track.sidecar.skipped_turns
    wanted = (live.get("pending") or {}).get("prompt")
    prompt = reply = None
    node = tree.leaf
    for _ in range(WALK):
        if node is None or node in snapshots or node in skipped:
            break
        record = tree.entries[node]
        if record["type"] == "message" and not in_subagent(record):
            if record["role"] == "assistant" and reply is None:
                reply = node
            elif record["role"] == "user" and is_prompt(live.agent, record):
                prompt = node
                said = _native_text(record)
                if isinstance(wanted, str) and _carries_prompt(live.agent, said, wanted):
                    break
        node = record["parentId"]
    return prompt, reply


def _settle_prompt(session: Session, live: LiveState, prompt: str | None = None) -> None:
    """Record the snapshot taken at the prompt for its entry, once the transcript has it."""
    pending = live.get("pending")
    if pending is None:
        return
    if prompt is None:
        prompt, _ = _turn(session, live)
    if prompt is None:
        return
    if prompt not in session.track.sidecar.snapshots:
        _record_taken(session, prompt, pending)
    live.set("pending", None)


def _record_taken(session: Session, entry: str, taken: dict[str, Any]) -> None:
    """Record a snapshot taken earlier in the turn as ``entry``'s. No ref kept it meanwhile:
    one that `git gc --prune=now` collected is given up (the nearest snapshot above the entry
    stands for it), never an error that would stop every later turn. One the turn skipped
    (over ``[snapshots] max_files_per_turn``) is recorded as skipped."""
    over = taken.get("over_cap")
    if isinstance(over, dict):
        session.snapshots.skip(entry, int(over["changed"]), int(over["cap"]))
        return
    snap = snapshot_of(taken)
    try:
        session.snapshots.record(entry, snap)
    except NotFoundError:
        if not session.track.workspace().missing([snap.commit]):
            raise


def _settle_reply(session: Session, live: LiveState) -> None:
    """The reply that reached the transcript after its turn was closed gets the turn's
    snapshot; given up once the conversation has gone past it."""
    unsettled = live.get("unsettled")
    if unsettled is None:
        return
    tree, node = session.conversation.tree, session.conversation.tree.leaf
    for _ in range(WALK):
        if node is None or node == unsettled.get("entry"):
            break
        record = tree.entries[node]
        if _is_reply(record, str(unsettled["reply"])):
            if node not in session.track.sidecar.snapshots:
                _record_taken(session, node, unsettled)
            break
        node = record["parentId"]
    live.set("unsettled", None)


def _reply_seen(session: Session, reply: str) -> bool:
    """True when the turn's last reply in the session is ``reply``."""
    tree, node = session.conversation.tree, session.conversation.tree.leaf
    snapshots = session.track.sidecar.snapshots
    skipped = session.track.sidecar.skipped_turns
    for _ in range(WALK):
        if node is None or node in snapshots or node in skipped:
            return False
        record = tree.entries[node]
        if record["type"] == "message" and record["role"] == "assistant":
            return _is_reply(record, reply)
        if record["type"] == "message" and record["role"] == "user":
            return False
        node = record["parentId"]
    return False


def _is_reply(record: dict[str, Any], reply: str) -> bool:
    if record["type"] != "message" or record["role"] != "assistant":
        return False
    content = record["content"]
    parts = [content] if isinstance(content, str) else [p.get("text", "") for p in content]
    said = "".join(str(p) for p in parts).strip()
    return bool(said) and said in reply


def _caller(session: Session, call_id: str) -> str | None:
    """The reply that holds the tool call ``call_id``, near the leaf."""
    tree, node = session.conversation.tree, session.conversation.tree.leaf
    for _ in range(WALK):
        if node is None:
            return None
        record = tree.entries[node]
        content = record.get("content")
        calls = content if record["type"] == "message" and isinstance(content, list) else []
        if any(p.get("type") == "tool_call" and p.get("id") == call_id for p in calls):
            return node
        node = record["parentId"]
    return None


def _last_of_subagent(session: Session, agent_id: str) -> str | None:
    found = None
    for ident, record in session.conversation.tree.entries.items():
        native = record.get("native")
        if isinstance(native, dict) and native.get("subagent") == agent_id:
            found = ident
    return found


def _native_text(record: dict[str, Any]) -> str:
    native = record.get("native")
    text = native.get("text") if isinstance(native, dict) else None
    return text if isinstance(text, str) else ""
