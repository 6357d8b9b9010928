"""A Gemini CLI session recorded live, from its hooks (``gemini.live`` reads the events).

One convgit session mirrors one Gemini session, found by its session id (``--resume`` keeps
it; a session file ``convgit resume`` wrote has an id of its own, recorded as continuing the
convgit session it came from). Every event imports what the session file gained, through the
importer ``convgit import gemini`` uses, so an event that was missed or failed is caught up by
the next one, and one delivered twice records nothing twice.

The turn, per Gemini session, in the live state beside the pointer (``convgit.agents.live_state``):
* ``BeforeAgent`` opens the turn; if the files changed since the last snapshot (the user's own
  edits, or the first prompt), they are committed then and recorded as the snapshot of the
  prompt's entry once the session file has it (``pending``); a turn found open (a request that
  failed ends a turn without ``AfterAgent``) is closed first;
* ``AfterAgent`` imports and snapshots the files as the snapshot of the turn's last reply (the
  CLI has written the reply when it runs the hook) and closes the turn.
"""

from __future__ import annotations

import os
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any

from convgit.agents.gemini import TITLE
from convgit.agents.gemini.live import AGENT, Event
from convgit.agents.live_state import Live, after, now, prompt_message, quick_prompt, snapshot_json
from convgit.base.errors import NotFoundError
from convgit.store import jsonl
from convgit.store.location import StoreLocation, load_config

if TYPE_CHECKING:
    from convgit.session import Session

_WALK = 5000  # how far up from the leaf a turn is looked for
_CONTEXT = "<session_context>"  # the CLI's own first user message of a session


def handle(location: StoreLocation, event: Event) -> str:
    """Do what ``event`` asks of the session that mirrors its Gemini session; returns what was
    done, in a few words, for the hook log."""
    config = load_config(location) if event.name == "AfterTool" else {}
    per_tool = event.name == "AfterTool" and _tool_snapshots_on(config)
    keep = event.edited is not None and _agent_ignored(config)
    if event.name == "AfterTool" and not (per_tool or keep):
        return "per-tool snapshots are off"
    lock = location.agent_lock(AGENT, event.session_id)
    with jsonl.exclusive(lock, f"the {TITLE} session {event.session_id}"):
        live = Live.load(location, AGENT, event.session_id)
        if event.name == "BeforeAgent":
            quick = quick_prompt(location, live, TITLE, event.timestamp)
            if quick is not None:
                live.save()
                return quick
        if event.name == "SessionStart" and event.source is not None:
            live.set("source", event.source)
        trashed = _in_trash(location, event, live)
        if trashed is not None:
            return f"session {trashed} is in the trash: the event was not recorded"
        session = _attach(location, event, live)
        did = []
        if keep and session.snapshots_enabled:
            did.append(_keep_edited(location, event, session.id, session.workspace().root))
        if per_tool or not keep:
            did.append(_STEPS.get(event.name, _catch_up)(session, event, live))
        live.remember(location, session.id, session.snapshots_enabled)
        if session.snapshots_enabled:
            live.remember_workspace(session.workspace())
        live.save()
        return f"session {session.id}: {'; '.join(did) or 'snapshots are off'}"


def _attach(location: StoreLocation, event: Event, live: Live) -> Session:
    """The session that mirrors the event's Gemini session, started when there is none."""
    from convgit.agents import importing as session_import
    from convgit.session import Session

    known = live.data.get("session")
    if isinstance(known, str) and location.session_path(known).exists():
        return Session(location, known, workspace=live.workspace(location))
    found = session_import.find_for_agent(location, AGENT, event.session_id)
    if found is None:
        found = session_import.for_agent(
            AGENT,
            event.session_id,
            event.cwd or ".",
            store_dir=location.root,
            make_current=False,
        )
    live.set("session", found.id)
    location.set_current(found.id)
    return found


def _in_trash(location: StoreLocation, event: Event, live: Live) -> str | None:
    """The session in the trash (``convgit sessions rm``) that mirrors the event's Gemini
    session, if it is there: it records nothing until it is restored."""
    trashed = location.trashed_ids()
    if not trashed:
        return None
    known = live.data.get("session")
    candidates = [known] if isinstance(known, str) else []
    with suppress(OSError):
        candidates.append(location.agent_pointer(AGENT, event.session_id).read_text().strip())
    return next((sid for sid in candidates if sid in trashed), None)


def _read_tree(session: Session) -> Session:
    if session.tree.header is None and not session.tree.entries:
        session.reload()
    return session


def _import(session: Session, event: Event) -> int:
    """Import what the session file gained; the number of new entries. A resume's
    SessionStart names a file the CLI leaves at once: nothing is read from it."""
    from convgit.agents import importing as session_import
    from convgit.agents import reading as importing

    transcript = event.transcript
    if transcript is None or not transcript.is_file():
        return 0
    if event.name == "SessionStart" and event.source not in (None, "startup"):
        return 0
    _read_tree(session)
    result = session_import.import_source(
        session, importing.importer(AGENT), transcript, agent_session=event.session_id
    )
    return len(result.new)


def _catch_up(session: Session, event: Event, live: Live) -> str:
    """SessionStart, PreCompress, SessionEnd, and any event convgit does nothing else for."""
    return f"{_import(session, event)} new entries"


def _prompt(session: Session, event: Event, live: Live) -> str:
    turn = live.get("turn")
    done = []
    if turn is not None and turn.get("open"):
        _import(session, event)
        done.append(_close(session, live, "interrupted"))
    live.open_turn(event.timestamp)
    if not session.snapshots_enabled:
        return "; ".join([*done, "turn open"])
    last = live.get("last")
    if last is not None:
        base: str | None = str(last["commit"])
    else:
        nearest = _read_tree(session).nearest_snapshot(session.tree.leaf)
        base = None if nearest is None else nearest.commit
    message = prompt_message(TITLE, event.timestamp)
    snap = after(base, lambda parent: session.take_snapshot(parent, message))
    if snap.reused:
        done.append("files unchanged")
    else:
        live.set("pending", snapshot_json(snap, prompt=event.timestamp))
        live.set("last", {"commit": snap.commit, "tree": snap.tree_id})
        done.append("files changed: snapshot taken for the prompt")
    return "; ".join([*done, "turn open"])


def _stop(session: Session, event: Event, live: Live) -> str:
    new = _import(session, event)
    return f"{new} new entries; {_close(session, live, 'stopped')}"


def _tool(session: Session, event: Event, live: Live) -> str:
    """A per-tool snapshot (opt-in), as the snapshot of the entry the session file ends at
    (the reply that called the tool: its result is written once every call of it ran)."""
    new = _import(session, event)
    if not session.snapshots_enabled or session.tree.leaf is None:
        return f"{new} new entries"
    _settle_prompt(session, live)
    leaf = session.tree.leaf
    if leaf in session.sidecar.snapshots:
        return f"{new} new entries"
    info = session.snapshot(leaf)
    live.set("last", {"commit": info.commit, "tree": info.tree_id})
    return f"{new} new entries; snapshot of {leaf} after {event.tool_name}"


_STEPS = {"BeforeAgent": _prompt, "AfterAgent": _stop, "AfterTool": _tool}


# -- turns ----------------------------------------------------------------------------------------


def _close(session: Session, live: Live, how: str) -> str:
    """Close the open turn: the pending prompt snapshot recorded, the files snapshotted as the
    snapshot of the turn's last reply (once: an entry that has a snapshot keeps it)."""
    turn = live.get("turn") or {}
    live.set("turn", {**turn, "open": False, "closed": how, "ts": now()})
    _read_tree(session)
    if not session.snapshots_enabled or session.tree.leaf is None:
        return f"turn {how}"
    prompt, reply = _turn(session)
    _settle_prompt(session, live, prompt)
    target = reply or prompt or session.tree.leaf
    if target in session.sidecar.snapshots:
        return f"turn {how}"
    info = session.snapshot(target)
    live.set("last", {"commit": info.commit, "tree": info.tree_id})
    return f"snapshot of {target}; turn {how}"


def _turn(session: Session) -> tuple[str | None, str | None]:
    """The entries of the turn at the leaf, going up to the first entry with a snapshot: its
    prompt (the user's text, not a tool's answer nor the CLI's session context) and its last
    reply."""
    tree, snapshots = session.tree, session.sidecar.snapshots
    prompt = reply = None
    node = tree.leaf
    for _ in range(_WALK):
        if node is None or node in snapshots:
            break
        record = tree.entries[node]
        if record["type"] == "message":
            if record["role"] == "assistant" and reply is None:
                reply = node
            elif record["role"] == "user" and _is_prompt(record):
                prompt = node
                break
        node = record["parentId"]
    return prompt, reply


def _is_prompt(record: dict[str, Any]) -> bool:
    content = record["content"]
    parts = [{"type": "text", "text": content}] if isinstance(content, str) else content
    texts = [str(p.get("text", "")) for p in parts if p.get("type") == "text"]
    return bool(texts) and not texts[0].lstrip().startswith(_CONTEXT)


def _settle_prompt(session: Session, live: Live, prompt: str | None = None) -> None:
    """Record the snapshot taken at the prompt for its entry, once the session file has it."""
    pending = live.get("pending")
    if pending is None:
        return
    if prompt is None:
        prompt, _ = _turn(session)
    if prompt is None:
        return
    if prompt not in session.sidecar.snapshots:
        from convgit.agents.live_state import snapshot_of

        snap = snapshot_of(pending)
        try:
            session.record_snapshot(prompt, snap)
        except NotFoundError:  # collected by `git gc --prune=now`: the nearest above stands
            if not session.workspace().missing([snap.commit]):
                raise
    live.set("pending", None)


# -- files the tools wrote ------------------------------------------------------------------------


def _agent_ignored(config: dict[str, Any]) -> bool:
    """``[snapshots] agent_ignored``, on unless false (as for Claude Code)."""
    found = config.get("snapshots", {})
    return not isinstance(found, dict) or found.get("agent_ignored") is not False


def _tool_snapshots_on(config: dict[str, Any]) -> bool:
    hooks = config.get("hooks", {})
    return isinstance(hooks, dict) and hooks.get("tool_snapshots") is True


def _keep_edited(location: StoreLocation, event: Event, sid: str, root: Path) -> str:
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
