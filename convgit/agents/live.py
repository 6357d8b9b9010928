"""An agent's session recorded live, from its hooks (``convgit.agents.resume`` hands a path back).

One convgit session mirrors one agent session, found by the agent's session id; a session the
agent resumed under a new id, or forked, continues the convgit session whose lines its file
copies, as a branch (its provenance in an ``agent_session`` record). Every event imports what
the agent's transcript gained since the last import, through the importer ``convgit import``
uses (from the saved byte offset, whole lines only), so an event that was missed or failed is
caught up by the next one, and one delivered twice records nothing twice.

The turn, per agent session, in a small state file beside the pointer
(``agents/<agent>/<id>.live``), so that a prompt with no file change reads no session:
* a prompt opens the turn; if the files changed since the last snapshot (the user's own
  edits, or the first prompt), they are committed then and recorded as the snapshot of the
  prompt's entry once the transcript has it (``pending``);
* the end of the turn imports, snapshots the files as the snapshot of the turn's last reply
  and closes the turn; a prompt that finds the turn open closes it first (an interrupted turn
  has no Stop); the prompt of an open turn coming again (a retry, or a message typed while a
  tool ran, which Claude hands to the running turn) changes nothing;
* the transcript may lag the event a little: the end of the turn waits at most
  ``REPLY_WAIT`` for the reply the agent named; a reply that comes later gets the turn's
  snapshot at the next event (``unsettled``).
"""

from __future__ import annotations

import os
import time
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any

from convgit.agents.claude_code import TITLE
from convgit.agents.claude_code import live as cc
from convgit.agents.claude_code.resume import line_uuids
from convgit.agents.live_state import (
    BackgroundSnapshot,
    Live,
    after,
    now,
    prompt_message,
    quick_prompt,
    snapshot_json,
    snapshot_of,
)
from convgit.base import codec
from convgit.base.errors import NotFoundError, RefusedError
from convgit.store import jsonl
from convgit.store.location import StoreLocation, fsmonitor, load_config, size_cap

if TYPE_CHECKING:  # imported where used: the common prompt reads neither the session nor git
    from convgit.agents import reading as importing
    from convgit.session import Session

AGENT = cc.AGENT
REPLY_WAIT = 0.25  # seconds the end of a turn waits for its reply to reach the transcript
_POLL = 0.02
_WALK = 5000  # how far up from the leaf a turn is looked for


# -- events ---------------------------------------------------------------------------------------


def handle(location: StoreLocation, event: cc.Event) -> str:
    """Do what ``event`` asks of the session that mirrors its agent session; returns what was
    done, in a few words, for the hook log."""
    config = load_config(location) if event.name == "PostToolUse" else {}  # read once
    per_tool = event.name == "PostToolUse" and _tool_snapshots_on(config)
    keep = event.edited is not None and _agent_ignored(config)
    if event.name == "PostToolUse" and not (per_tool or keep):
        return "per-tool snapshots are off"
    lock = location.agent_lock(AGENT, event.session_id)
    with jsonl.exclusive(lock, f"the {TITLE} session {event.session_id}"):
        live = Live.load(location, AGENT, event.session_id)
        if keep and not per_tool:  # from the state alone, when it says enough
            sid, known = live.data.get("session"), live.get("workspace")
            if isinstance(sid, str) and known is not None and live.snapshots(location, sid):
                return f"session {sid}: " + _keep_edited(
                    location, event, sid, Path(str(known["root"]))
                )
        quick = None
        if event.name == "UserPromptSubmit":
            quick = quick_prompt(location, live, TITLE, event.prompt_id)
        if quick is not None:
            live.save()
            return quick
        if event.name == "SessionStart" and event.source is not None:
            live.set("source", event.source)
        trashed = _in_trash(location, event, live)
        if trashed is not None:
            return f"session {trashed} is in the trash: the event was not recorded"
        early = None
        try:
            if event.name == "Stop":  # the files are final: taken while the session is read
                early = BackgroundSnapshot.from_state(location, live)
            return _record(location, event, live, keep, per_tool, early)
        finally:
            if early is not None:
                early.wait()


def _record(
    location: StoreLocation,
    event: cc.Event,
    live: Live,
    keep: bool,
    per_tool: bool,
    early: BackgroundSnapshot | None,
) -> str:
    """``handle`` for the session that mirrors the event's agent session, under its lock;
    ``early``: the files' snapshot at a Stop, started from the state."""
    attached = live.data.get("session")
    session = _attach(location, event, live)
    if session is not None and attached != session.id:
        location.set_current(session.id)  # attached at the end of its first turn
    if session is None:
        done = "waiting for the transcript to show which session this one continues"
        if event.name == "UserPromptSubmit":
            live.open_turn(event.prompt_id)
            done += _snapshot_unattached(location, event, live)
    else:
        did = []
        if keep and session.snapshots_enabled:
            root = session.workspace().root
            did.append(_keep_edited(location, event, session.id, root))
        if event.name == "Stop":
            did.append(_stop(session, event, live, early))
        elif per_tool or not keep:
            did.append(_STEPS.get(event.name, _catch_up)(session, event, live))
        done = f"session {session.id}: {'; '.join(did) or 'snapshots are off'}"
        live.remember(location, session.id, session.snapshots_enabled)
        if session.snapshots_enabled:
            ws = session.workspace()
            live.remember_workspace(ws)
    live.save()
    return done


def _agent_ignored(config: dict[str, Any]) -> bool:
    """Whether a file the agent's file tools wrote is kept although git ignores it
    (``[snapshots] agent_ignored``, on unless false)."""
    found = config.get("snapshots", {})
    return not isinstance(found, dict) or found.get("agent_ignored") is not False


def _keep_edited(location: StoreLocation, event: cc.Event, sid: str, root: Path) -> str:
    """List the file a file tool wrote to be kept in session ``sid``'s snapshots."""
    from convgit.git import agent_files

    assert event.edited is not None
    named = event.edited
    if not os.path.isabs(named) and event.cwd is not None:
        named = os.path.join(event.cwd, named)
    path = agent_files.inside(root, named)
    if path is None:
        return f"{event.edited} is not in the worktree: not kept"
    if agent_files.note(location.index_path(sid), path):
        return f"{os.fsdecode(path)} kept in the snapshots from now on"
    return f"{os.fsdecode(path)} kept already"


def tool_snapshots(location: StoreLocation) -> bool:
    """``[hooks] tool_snapshots = true``: a snapshot after every editing tool call."""
    return _tool_snapshots_on(load_config(location))


def _tool_snapshots_on(config: dict[str, Any]) -> bool:
    hooks = config.get("hooks", {})
    return isinstance(hooks, dict) and hooks.get("tool_snapshots") is True


def _in_trash(location: StoreLocation, event: cc.Event, live: Live) -> str | None:
    """The session in the trash (``convgit sessions rm``) that mirrors the event's agent
    session, if it is there: it records nothing until it is restored."""
    trashed = location.trashed_ids()
    if not trashed:
        return None
    known = live.data.get("session")
    candidates = [known] if isinstance(known, str) else []
    with suppress(OSError):
        candidates.append(location.agent_pointer(AGENT, event.session_id).read_text().strip())
    return next((sid for sid in candidates if sid in trashed), None)


def _attach(location: StoreLocation, event: cc.Event, live: Live) -> Session | None:
    """The session that mirrors the event's agent session; None while a fork or resume under a
    new id cannot be told yet (its transcript is still empty)."""
    from convgit.agents import importing as session_import
    from convgit.session import Session

    known = live.data.get("session")
    if isinstance(known, str) and location.session_path(known).exists():
        # read when a step needs it (`_read_tree`); the working tree as found before
        return Session(location, known, workspace=live.workspace(location))
    found = session_import.find_for_agent(location, AGENT, event.session_id)
    if found is None:
        copied = line_uuids(_read(event.transcript))
        if copied:
            found = _continued(location, event, copied, live)
        elif live.data.get("source") in ("resume", "fork") or (
            event.name == "UserPromptSubmit" and "source" not in live.data
        ):
            # the transcript names the session it continues (a fork, a resume under a new
            # id) once it has lines; at the first prompt, with no SessionStart seen, it is
            # still empty: the end of the turn attaches
            return None
        if found is None:
            found = session_import.for_agent(
                AGENT,
                event.session_id,
                event.cwd or ".",
                store_dir=location.root,
                make_current=False,
            )
    live.set("session", found.id)
    _adopt_index(location, event.session_id, found.id)
    return found


def _snapshot_unattached(location: StoreLocation, event: cc.Event, live: Live) -> str:
    """The files at the first prompt of an agent session not attached yet, kept ``pending``
    for the prompt's entry once the end of the turn attaches the session."""
    git = location.git
    if git is None or git.worktree is None:
        return ""
    from convgit.workspace import Workspace

    ws = Workspace.at(git.git_dir, git.worktree)
    if ws is None:
        return ""
    ws.keep_out(location.root)
    ws.track_changes(fsmonitor(location))
    index = _unattached_index(location, event.session_id)
    index.parent.mkdir(parents=True, exist_ok=True)
    message = prompt_message(TITLE, event.prompt_id)
    snap = ws.snapshot(
        index,
        message=f"convgit snapshot {message}\n\nConvgit-Agent-Session: {event.session_id}\n",
        parent=None,
        size_cap=size_cap(location),
    )
    live.set("pending", snapshot_json(snap, prompt=event.prompt_id))
    live.set("last", {"commit": snap.commit, "tree": snap.tree_id})
    return "; files snapshotted for the prompt"


def _unattached_index(location: StoreLocation, agent_session: str) -> Path:
    """The private index of the snapshot at a first prompt, before the session is known; it
    becomes the session's own when it is attached (its stat cache saves hashing every file
    again at the end of the turn)."""
    name = location.agent_pointer(AGENT, agent_session).name
    return location.root / "index" / f"agent-{name}-{location.worktree_key}"


def _adopt_index(location: StoreLocation, agent_session: str, sid: str) -> None:
    import contextlib
    import os

    found = _unattached_index(location, agent_session)
    if not found.exists():
        return
    target = location.index_path(sid)
    taken = target.exists()
    for suffix in (".state", "", ".flock"):  # the index's state file goes with it
        with contextlib.suppress(OSError):
            if taken or suffix == ".flock":
                Path(f"{found}{suffix}").unlink()
            else:
                os.replace(f"{found}{suffix}", f"{target}{suffix}")
    from convgit.git import watcher

    watcher.forget(found)  # what the watcher's hook kept beside it: found again when needed


def _read_tree(session: Session) -> Session:
    if session.tree.header is None and not session.tree.entries:
        session.reload()
    return session


def _read(path: Path | None) -> bytes:
    if path is None:
        return b""
    try:
        return path.read_bytes()
    except OSError:
        return b""


def _continued(
    location: StoreLocation,
    event: cc.Event,
    copied: list[tuple[str, str | None]],
    live: Live,
) -> Session | None:
    """The session whose lines the transcript starts with (a fork, a resume under a new id),
    recorded as continued by the event's agent session from where the two part."""
    from convgit.agents import importing as session_import
    from convgit.agents import reading as importing
    from convgit.session import Session

    first = copied[0][0]
    marker = codec.dumps(first).encode()
    for sid in location.session_ids():
        header = jsonl.read_header(location.session_path(sid)) or {}
        if header.get("agent") != AGENT:
            continue
        try:
            if marker not in jsonl.read_bytes(location.session_path(sid)):
                continue
        except RefusedError:
            continue
        session = Session(location, sid)
        session.reload()
        known = importing.Known(session.tree.entries, session.tree.kept)
        if importing.entry_id(first) not in known.entries and first not in known.kept:
            continue
        start = None
        for line, _ in copied:
            if importing.entry_id(line) not in known.entries and line not in known.kept:
                break
            start = line
        anchor = None if start is None else _anchor(known, start)
        how = str(live.data.get("source") or "fork")
        session_import.mirror_agent_session(session, AGENT, event.session_id, start=anchor, how=how)
        return session
    return None


def _anchor(known: importing.Known, uuid_: str) -> str | None:
    from convgit.agents import reading as importing

    ident = importing.entry_id(uuid_)
    return ident if ident in known.entries else known.anchor(uuid_)


def _import(session: Session, event: cc.Event, live: Live) -> int:
    """Import what the transcript and its subagent files gained; the number of new entries."""
    from convgit.agents import importing as session_import
    from convgit.agents import reading as importing

    importer = importing.importer(AGENT)
    transcript = event.transcript
    if transcript is None or not transcript.is_file():
        return 0
    new = 0
    _read_tree(session)
    for source in (transcript, *importer.companions(transcript)):
        result = session_import.import_source(
            session, importer, source, agent_session=event.session_id
        )
        new += len(result.new)
    if new:
        _settle_reply(session, live)
    return new


def _catch_up(session: Session, event: cc.Event, live: Live) -> str:
    """SessionEnd, PostCompact, and any event convgit does nothing else for: import."""
    return f"{_import(session, event, live)} new entries"


def _start(session: Session, event: cc.Event, live: Live) -> str:
    session.location.set_current(session.id)
    return _catch_up(session, event, live)


def _prompt(session: Session, event: cc.Event, live: Live) -> str:
    session.location.set_current(session.id)
    turn = live.get("turn")
    done = []
    if turn is not None and turn.get("open"):
        if turn.get("prompt") == event.prompt_id:
            return "the turn of this prompt is open already"
        _import(session, event, live)
        done.append(_close(session, live, "interrupted"))
    live.open_turn(event.prompt_id)
    if not session.snapshots_enabled:
        return "; ".join([*done, "turn open"])
    last = live.get("last")
    if last is not None:
        base: str | None = str(last["commit"])
    else:
        nearest = _read_tree(session).nearest_snapshot(session.tree.leaf)
        base = None if nearest is None else nearest.commit
    message = prompt_message(TITLE, event.prompt_id)
    snap = after(base, lambda parent: session.take_snapshot(parent, message))
    if snap.reused:
        done.append("files unchanged")
    else:
        live.set("pending", snapshot_json(snap, prompt=event.prompt_id))
        live.set("last", {"commit": snap.commit, "tree": snap.tree_id})
        done.append("files changed: snapshot taken for the prompt")
    return "; ".join([*done, "turn open"])


def _stop(
    session: Session, event: cc.Event, live: Live, started: BackgroundSnapshot | None = None
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
        new = _import(session, event, live)
        missing = None
        while event.last_reply and not _reply_seen(session, event.last_reply):
            if time.monotonic() >= deadline:
                missing = event.last_reply
                break
            time.sleep(_POLL)
            new += _import(session, event, live)
        return f"{new} new entries; {_close(session, live, 'stopped', missing, early)}"
    finally:
        if early is not None:
            early.wait()


def _failed(session: Session, event: cc.Event, live: Live) -> str:
    """StopFailure: the turn ended on an API error."""
    return f"{_import(session, event, live)} new entries; {_close(session, live, 'failed')}"


def _tool(session: Session, event: cc.Event, live: Live) -> str:
    """A per-tool snapshot (opt-in), as the snapshot of the reply that called the tool."""
    new = _import(session, event, live)
    if not session.snapshots_enabled or event.tool_use_id is None:
        return f"{new} new entries"
    _settle_prompt(session, live)
    entry = _caller(session, event.tool_use_id)
    if entry is None or entry in session.sidecar.snapshots:
        return f"{new} new entries"
    info = session.snapshot(entry)
    live.set("last", {"commit": info.commit, "tree": info.tree_id})
    return f"{new} new entries; snapshot of {entry} after {event.tool_name}"


def _subagent(session: Session, event: cc.Event, live: Live) -> str:
    """A subagent finished: its file is imported (a side branch below the call that started
    it), and the files snapshotted as the snapshot of its last entry."""
    new = _import(session, event, live)
    if not session.snapshots_enabled or not event.agent_id or not event.agent_type:
        return f"{new} new entries"  # no type: the compaction's own worker
    entry = _last_of_subagent(session, event.agent_id)
    if entry is None or entry in session.sidecar.snapshots:
        return f"{new} new entries"
    _settle_prompt(session, live)
    info = session.snapshot(entry)
    live.set("last", {"commit": info.commit, "tree": info.tree_id})
    return f"{new} new entries; snapshot of the subagent's {entry}"


_STEPS = {
    "SessionStart": _start,
    "UserPromptSubmit": _prompt,
    "PostToolUse": _tool,
    "Stop": _stop,
    "StopFailure": _failed,
    "SubagentStop": _subagent,
}


# -- turns ----------------------------------------------------------------------------------------


def _close(
    session: Session,
    live: Live,
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
    _read_tree(session)
    if not session.snapshots_enabled or session.tree.leaf is None:
        return f"turn {how}"
    # locks are reentrant within a process, not a thread: nothing below may run beside it
    taken = early.result() if early is not None else None
    prompt, reply = _turn(session, live)
    _settle_prompt(session, live, prompt)
    leaf = session.tree.leaf
    if reply is None and missing is not None:  # no reply of the turn in the transcript yet
        if taken is not None:
            snap = taken
        else:
            nearest = session.nearest_snapshot(leaf)
            snap = session.take_snapshot(nearest.commit if nearest else None, "at a turn's end")
        live.set("last", {"commit": snap.commit, "tree": snap.tree_id})
        live.set("unsettled", snapshot_json(snap, entry=leaf, reply=missing))
        return f"the reply is not in the transcript yet: its snapshot waits for it; turn {how}"
    target = reply or prompt or leaf
    if target in session.sidecar.snapshots:
        return f"turn {how}"
    above = session.nearest_snapshot(session.tree.entries[target]["parentId"])
    if (
        taken is not None
        and early is not None
        and above is not None
        and above.commit == early.parent
    ):
        info = session.record_snapshot(target, taken)
    else:  # the turn hangs elsewhere than the last snapshot (a rewind): its own parent
        info = session.snapshot(target)
    live.set("last", {"commit": info.commit, "tree": info.tree_id})
    if missing is not None:
        live.set("unsettled", snapshot_json(info, entry=target, reply=missing))
    from convgit.session import files as session_files

    entries = [e for e in (prompt, target) if e is not None]  # the prompt's snapshot first
    elsewhere = next(filter(None, (session_files.files_from(session, e) for e in entries)), None)
    said = "" if elsewhere is None else f"; {elsewhere.words}"
    return f"snapshot of {target}{said}; turn {how}"


def _turn(session: Session, live: Live) -> tuple[str | None, str | None]:
    """The entries of the turn at the leaf: its prompt (the one the pending snapshot is for, or
    the earliest user message) and its last reply, found going up from the leaf to the first
    entry with a snapshot."""
    tree, snapshots = session.tree, session.sidecar.snapshots
    wanted = (live.get("pending") or {}).get("prompt")
    prompt = reply = None
    node = tree.leaf
    for _ in range(_WALK):
        if node is None or node in snapshots:
            break
        record = tree.entries[node]
        if record["type"] == "message" and not _in_subagent(record):
            if record["role"] == "assistant" and reply is None:
                reply = node
            elif record["role"] == "user":
                prompt = node
                if isinstance(wanted, str) and cc.carries_prompt(_native_text(record), wanted):
                    break
        node = record["parentId"]
    return prompt, reply


def _settle_prompt(session: Session, live: Live, prompt: str | None = None) -> None:
    """Record the snapshot taken at the prompt for its entry, once the transcript has it."""
    pending = live.get("pending")
    if pending is None:
        return
    if prompt is None:
        prompt, _ = _turn(session, live)
    if prompt is None:
        return
    if prompt not in session.sidecar.snapshots:
        _record_taken(session, prompt, pending)
    live.set("pending", None)


def _record_taken(session: Session, entry: str, taken: dict[str, Any]) -> None:
    """Record a snapshot taken earlier in the turn as ``entry``'s. No ref kept it meanwhile:
    one that `git gc --prune=now` collected is given up (the nearest snapshot above the entry
    stands for it), never an error that would stop every later turn."""
    snap = snapshot_of(taken)
    try:
        session.record_snapshot(entry, snap)
    except NotFoundError:
        if not session.workspace().missing([snap.commit]):
            raise


def _settle_reply(session: Session, live: Live) -> None:
    """The reply that reached the transcript after its turn was closed gets the turn's
    snapshot; given up once the conversation has gone past it."""
    unsettled = live.get("unsettled")
    if unsettled is None:
        return
    tree, node = session.tree, session.tree.leaf
    for _ in range(_WALK):
        if node is None or node == unsettled.get("entry"):
            break
        record = tree.entries[node]
        if _is_reply(record, str(unsettled["reply"])):
            if node not in session.sidecar.snapshots:
                _record_taken(session, node, unsettled)
            break
        node = record["parentId"]
    live.set("unsettled", None)


def _reply_seen(session: Session, reply: str) -> bool:
    """True when the turn's last reply in the session is ``reply``."""
    tree, node = session.tree, session.tree.leaf
    snapshots = session.sidecar.snapshots
    for _ in range(_WALK):
        if node is None or node in snapshots:
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
    tree, node = session.tree, session.tree.leaf
    for _ in range(_WALK):
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
    for ident, record in session.tree.entries.items():
        native = record.get("native")
        if isinstance(native, dict) and native.get("subagent") == agent_id:
            found = ident
    return found


def _in_subagent(record: dict[str, Any]) -> bool:
    native = record.get("native")
    return isinstance(native, dict) and "subagent" in native


def _native_text(record: dict[str, Any]) -> str:
    native = record.get("native")
    text = native.get("text") if isinstance(native, dict) else None
    return text if isinstance(text, str) else ""
