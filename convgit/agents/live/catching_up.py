"""Catching up a lost turn: a turn the transcript brought whose end no hook event recorded (its
Stop failed, or ran no convgit), found when a later event of the same agent session imports it
(``convgit.agents.live.turns``). Its last reply gets the files as they are now (the snapshot the
turn's end would have taken, later), never the next prompt's; the replies of earlier such
turns, which no snapshot can cover any more, are named for the user to see. The turns looked at
are those below the nearest snapshot (or turn recorded as skipped) and below the last entry an
event of this agent session caught up to (``seen``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from convgit.agents.live.state import LiveState
from convgit.base.errors import SnapshotSkippedError, skipped_words

if TYPE_CHECKING:
    from convgit.session import Session

WALK = 5000  # how far up from the leaf a turn is looked for


def is_prompt(agent: str, record: dict[str, Any]) -> bool:
    """Whether a user message is a prompt, not the agent's own text (the agent's say: every
    user message is, unless its ``live`` part has ``is_prompt``)."""
    from convgit.agents import registry

    said = registry.integration(agent).is_prompt
    return True if said is None else bool(said(record))


@dataclass
class Turn:
    """A turn found in the conversation: its first prompt, and the reply that ended it (one
    that calls no tool; None while it runs, or when it was cut short)."""

    prompt: str | None
    reply: str | None = None


def turns_since(session: Session, live: LiveState) -> list[Turn]:
    """The turns on the path to the leaf below its nearest snapshot, and below the last entry
    an event of this agent session caught up to (``seen``), oldest first. A user message while
    a turn runs (typed while a tool ran) belongs to it."""
    tree, snapshots = session.conversation.tree, session.track.sidecar.snapshots
    skipped = session.track.sidecar.skipped_turns  # recorded as turns without a snapshot
    seen = live.data.get("seen")
    chain = []
    node = tree.leaf
    for _ in range(WALK):
        if node is None or node in snapshots or node in skipped or node == seen:
            break
        chain.append(node)
        node = tree.entries[node]["parentId"]
    turns: list[Turn] = []
    for ident in reversed(chain):
        record = tree.entries[ident]
        if record["type"] != "message" or in_subagent(record):
            continue
        if record["role"] == "user" and is_prompt(live.agent, record):
            if not turns or turns[-1].reply is not None:
                turns.append(Turn(ident))
        elif record["role"] == "assistant":
            if not turns:
                turns.append(Turn(None))
            content = record.get("content")
            calls = isinstance(content, list) and any(
                isinstance(p, dict) and p.get("type") == "tool_call" for p in content
            )
            turns[-1].reply = None if calls else ident
    return turns


def caught_up(session: Session, live: LiveState) -> str:
    """The turns the transcript brought whose end no event recorded (their Stop failed or ran
    no convgit): the newest one's reply gets the files now, what the end of its turn would
    have snapshotted (or later: a catch-up, never the next prompt's snapshot); the replies of
    the earlier ones cannot have theirs any more, and are named."""
    if not session.track.snapshots_enabled:
        return ""
    ended = [t.reply for t in turns_since(session, live) if t.reply is not None]
    if not ended:
        return ""
    *earlier, newest = ended
    live.unrecorded += earlier
    try:  # skipped: recorded so, and never caught up again
        info = session.snapshots.snapshot(newest, per_turn=True)
    except SnapshotSkippedError as exc:
        return f"caught up: {skipped_words(newest, exc.changed, exc.cap)}"
    live.set("last", {"commit": info.commit, "tree": info.tree_id})
    return f"caught up: snapshot of {newest}, whose turn's end no event recorded"


def in_subagent(record: dict[str, Any]) -> bool:
    native = record.get("native")
    return isinstance(native, dict) and "subagent" in native
