"""Claude Code, handed a convgit path: its own way in when a transcript it keeps has the path on
the branch it would load (``claude -r S --resume-session-at UUID``), otherwise a new transcript
of the path beside the one imported."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from convgit.agents import importing, reading
from convgit.agents.claude_code import NAME, TITLE
from convgit.agents.protocol import Written
from convgit.agents.resume import imported, kept_line
from convgit.base import codec
from convgit.base.errors import NotFoundError, RefusedError

if TYPE_CHECKING:
    from convgit.session import Session


def hand_back(session: Session, target: str) -> Written:
    """Claude's own way in when a transcript it keeps has the path on the branch it would load
    (``claude -r S --resume-session-at UUID``); otherwise a new transcript of the path, beside
    the one imported, which does not become the newest (``claude -c`` continues what it did)."""
    lines = _path_lines(session, target)
    at = uuid_of(lines[-1]) if lines else None
    if at is not None:
        for transcript in _transcripts(session):
            try:
                data = transcript.read_bytes()
            except OSError:
                continue
            if at in resumable_at(data):
                own = transcript.stem
                return Written(own, transcript, None, resume_command(own, at), at)
    folder = _transcript_folder(session)
    new = str(uuid.uuid4())
    written = resume_lines(lines, lambda key: kept_line(session, key))
    data = b"".join(line + b"\n" for line in written)
    path = folder / f"{new}.jsonl"
    return Written(new, path, data, resume_command(new), keep_newest=True)


def _transcripts(session: Session) -> list[Path]:
    """The Claude transcripts (not a subagent's) the session was imported from, of sessions it
    mirrors, newest import last."""
    mirrored = importing.agent_sessions(session, NAME)
    return [
        path
        for path in imported(session, NAME)
        if path.parent.name != "subagents" and path.stem in mirrored
    ]


def _path_lines(session: Session, target: str) -> list[bytes]:
    """The exact text of each transcript line the path from the root to ``target`` was made
    from, in order (a line that made several entries, once)."""
    tree = session.conversation.tree
    native = tree.entries[target].get("native")
    if not isinstance(native, dict):
        raise RefusedError(
            f"Entry {target} was written by convgit, not by {TITLE}; {TITLE} can resume"
            " only at an entry of its own.",
            "pick the reply or prompt above it",
        )
    if "subagent" in native:
        raise RefusedError(
            f"Entry {target} is in a subagent's side branch; {TITLE} resumes the main"
            " conversation only.",
            "pick the call that started the subagent, or an entry below it",
        )
    lines = []
    for ident in tree.path(target):
        found = tree.entries[ident].get("native")
        if not isinstance(found, dict) or "part" in found or "in" in found:
            continue
        text = reading.kept_text(found)
        if text is not None:
            lines.append(text)
    return lines


def _transcript_folder(session: Session) -> Path:
    """Where the agent keeps this session's transcripts: beside the one imported."""
    for agent, source in session.conversation.tree.imports:
        path = Path(source)
        if agent == NAME and path.parent.name != "subagents":
            return path.parent
    raise NotFoundError(
        f"Session {session.id} was never imported from a {TITLE} transcript, so convgit does"
        " not know where to write one.",
    )


# -- the transcript of a resumed path ---------------------------------------------------------


def line_uuids(data: bytes) -> list[tuple[str, str | None]]:
    """(uuid, parentUuid) of every line of a transcript that has a uuid, in file order."""
    found: list[tuple[str, str | None]] = []
    for line in data.splitlines():
        if b'"uuid"' not in line:
            continue
        try:
            value = codec.decode(line)
        except ValueError:
            continue
        if isinstance(value, dict) and isinstance(value.get("uuid"), str):
            parent = value.get("parentUuid")
            found.append((value["uuid"], parent if isinstance(parent, str) else None))
    return found


def resume_lines(path: Iterable[bytes], kept: Callable[[str], bytes | None]) -> list[bytes]:
    """The lines of a transcript that holds exactly ``path`` (the exact text of each line of a
    root-to-entry path, in order) in Claude's own tree: before each line, the lines it hangs
    below through records that became no entry (attachments, system lines, a compaction's
    boundary), found by uuid with ``kept``. Claude resumes it at its last line."""
    lines = list(path)
    seen = {uuid for line in lines if (uuid := _uuid_of(line)) is not None}
    out: list[bytes] = []
    for line in lines:
        above: list[bytes] = []
        parent = _parent_of(line)
        while parent is not None and parent not in seen:
            found = kept(parent)
            if found is None:
                break
            seen.add(parent)
            above.append(found)
            parent = _parent_of(found)
        out.extend(reversed(above))
        out.append(line)
    return out


def _fields(line: bytes) -> dict[str, Any]:
    try:
        value = codec.decode(line)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def uuid_of(line: bytes) -> str | None:
    """The ``uuid`` of a transcript line, if it has one."""
    return _uuid_of(line)


def _uuid_of(line: bytes) -> str | None:
    uuid = _fields(line).get("uuid")
    return uuid if isinstance(uuid, str) else None


def _parent_of(line: bytes) -> str | None:
    parent = _fields(line).get("parentUuid")
    return parent if isinstance(parent, str) else None


def resume_command(agent_session: str, at: str | None = None) -> str:
    """The command that resumes ``agent_session``: at its leaf, or with ``at`` at that record
    (Claude's own ``--resume-session-at``: the model is sent root to ``at``, and the new prompt
    hangs below it in the same transcript)."""
    found = f"claude -r {agent_session}"
    return found if at is None else f"{found} --resume-session-at {at}"


_MESSAGES = ("user", "assistant")


def resumable_at(data: bytes) -> frozenset[str]:
    """The uuids of a transcript's messages that ``claude -r S --resume-session-at UUID``
    reaches: those on the chain Claude loads now (parentUuid from the leaf it picks up; a
    compaction's boundary ends it). Claude picks the leaf from the last ``last-prompt`` record
    (its ``leafUuid``, when that message has no message below it, or when ``explicit``), else
    the last message in the file; to be safe, only what is on the chains of both counts."""
    parents: dict[str, str | None] = {}
    kinds: dict[str, str] = {}
    has_child: set[str] = set()
    last_message: str | None = None
    last_prompt: dict[str, Any] | None = None
    for line in data.splitlines():
        value = _fields(line)
        kind = value.get("type")
        if kind == "last-prompt":
            last_prompt = value
            continue
        uuid = value.get("uuid")
        if not isinstance(uuid, str) or value.get("isSidechain") is True:
            continue
        parent = value.get("parentUuid")
        parents[uuid] = parent if isinstance(parent, str) else None
        kinds[uuid] = str(kind)
        if kind in _MESSAGES:
            last_message = uuid
            if isinstance(parent, str):
                has_child.add(parent)
    leaves = {last_message}
    chosen = None if last_prompt is None else last_prompt.get("leafUuid")
    if isinstance(chosen, str) and kinds.get(chosen) in _MESSAGES:
        if last_prompt is not None and last_prompt.get("explicit") is True:
            leaves = {chosen}
        elif chosen not in has_child:
            leaves.add(chosen)
    chains = []
    for leaf in leaves:
        chain: set[str] = set()
        at = leaf
        while at is not None and at not in chain and at in parents:
            chain.add(at)
            at = parents[at]
        chains.append(chain)
    found = set.intersection(*chains) if chains else set()
    return frozenset(uuid for uuid in found if kinds.get(uuid) in _MESSAGES)
