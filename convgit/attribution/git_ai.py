"""The Git AI Standard v3.0.0 (git-ai-project/git-ai): a commit's attribution as an authorship
log, the git note under ``refs/notes/ai``; and a log read back, convgit's or another tool's.

A log is an attestation section (each file's path, then a line per author: two spaces, the
attestation key, the line ranges), a line ``---``, and a JSON object: ``schema_version``
``authorship/3.0.0``, ``base_commit_sha``, and the maps the keys are looked up in (``sessions``
for ``s_`` keys, ``humans`` for ``h_`` keys, ``prompts`` for the legacy bare ones).

The keys are derived as the standard says: a session ``s_`` + the first 14 hex digits of
SHA-256 of ``<tool>:<conversation id>`` (the agent, as Git AI names it, and the agent's own id
of its session, else convgit's), a human ``h_`` + 14 of SHA-256 of ``Name <email>``. A turn is
a checkpoint: its trace id ``t_`` + 14 hex digits is derived from the session and the entry
rather than drawn at random, so the same turn keeps its key through every rewrite. Lines no
snapshot recorded are left out (the standard's "untracked"); a hand edit is the committer's.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from convgit.attribution import AI, HUMAN, Author, Lines, grouped
from convgit.base import codec

SCHEMA_VERSION = "authorship/3.0.0"
DIVIDER = "---"
# convgit's agent names that Git AI spells otherwise (its agent_id tools: claude, codex, ...)
TOOLS = {"claude-code": "claude"}
CONVGIT_SESSION = "convgit_session"  # the custom attribute naming convgit's session
LINES_MAX = 1_000_000  # lines read from one log at most: a note is untrusted input


@dataclass
class Log:
    """An authorship log: each file's lines by attestation key, and the maps of the metadata
    (kept whole, as the standard wants records preserved through rewrites)."""

    base: str
    files: Lines[str] = field(default_factory=dict)
    sessions: dict[str, Any] = field(default_factory=dict)
    humans: dict[str, Any] = field(default_factory=dict)
    prompts: dict[str, Any] = field(default_factory=dict)

    def record(self, key: str) -> dict[str, Any] | None:
        """The metadata record ``key`` routes to (by its prefix), or None."""
        if key.startswith("s_"):
            found = self.sessions.get(key.split("::", 1)[0])
        elif key.startswith("h_"):
            found = self.humans.get(key)
        else:
            found = self.prompts.get(key)
        return found if isinstance(found, dict) else None


def _hex(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:14]


def session_key(tool: str, conversation: str) -> str:
    return "s_" + _hex(f"{tool}:{conversation}")


def trace_key(session: str, entry: str) -> str:
    return "t_" + _hex(f"convgit:{session}:{entry}")


def human_key(identity: str) -> str:
    return "h_" + _hex(identity)


def tool_of(agent: str | None) -> str:
    return TOOLS.get(agent, agent) if agent else "convgit"


def of_authors(commit: str, lines: Lines[Author], committer: str | None) -> Log:
    """The log of ``commit``'s ``lines`` as convgit recorded them; a hand edit is
    ``committer``'s (``Name <email>``), lines no snapshot recorded are left out."""
    log = Log(commit)
    models: dict[str, dict[str, int]] = {}
    for path, numbered in lines.items():
        for number, author in numbered.items():
            key = _key(log, author, committer)
            if key is None:
                continue
            log.files.setdefault(path, {})[number] = key
            if key.startswith("s_") and author.model:
                tally = models.setdefault(key.split("::", 1)[0], {})
                tally[author.model] = tally.get(author.model, 0) + 1
    for skey, tally in models.items():  # a session's model: the one most of its lines had
        log.sessions[skey]["agent_id"]["model"] = max(tally, key=lambda m: (tally[m], m))
    return log


def _key(log: Log, author: Author, committer: str | None) -> str | None:
    if author.kind == HUMAN and committer:
        key = human_key(committer)
        log.humans[key] = {"author": committer}
        return key
    if author.kind != AI or author.session is None or author.entry is None:
        return None
    tool = tool_of(author.agent)
    conversation = author.agent_session or author.session
    skey = session_key(tool, conversation)
    log.sessions.setdefault(
        skey,
        {
            "agent_id": {"tool": tool, "id": conversation, "model": "unknown"},
            "custom_attributes": {CONVGIT_SESSION: author.session},
        },
    )
    return f"{skey}::{trace_key(author.session, author.entry)}"


def text(log: Log) -> bytes:
    """The log as the note's text."""
    out: list[str] = []
    for path in sorted(log.files):
        if '"' in path or "\n" in path or not log.files[path]:
            continue  # the standard has no way to write such a path
        out.append(f'"{path}"' if " " in path or "\t" in path else path)
        for key, ranges in sorted(grouped(log.files[path]), key=lambda kr: kr[1][0]):
            out.append(f"  {key} " + ",".join(_span(a, b) for a, b in ranges))
    metadata = {
        "schema_version": SCHEMA_VERSION,
        "base_commit_sha": log.base,
        "prompts": log.prompts,
        "humans": log.humans,
        "sessions": log.sessions,
    }
    return ("\n".join([*out, DIVIDER, codec.dumps(metadata, pretty=True)]) + "\n").encode()


def _span(a: int, b: int) -> str:
    return str(a) if a == b else f"{a}-{b}"


def parse(data: bytes) -> Log | None:
    """The log in ``data``, or None when it is not a version 3 authorship log. What does not
    fit the standard is passed over: a note is anyone's text."""
    body = data.decode("utf-8", "replace")
    lines = body.split("\n")
    if DIVIDER not in lines:
        return None
    at = lines.index(DIVIDER)
    try:
        metadata = codec.decode("\n".join(lines[at + 1 :]))
    except ValueError:
        return None
    if not isinstance(metadata, dict) or not str(metadata.get("schema_version", "")).startswith(
        "authorship/3."
    ):
        return None
    maps = [metadata.get(k) for k in ("sessions", "humans", "prompts")]
    sessions, humans, prompts = (m if isinstance(m, dict) else {} for m in maps)
    log = Log(str(metadata.get("base_commit_sha", "")), {}, sessions, humans, prompts)
    path: str | None = None
    budget = LINES_MAX
    for line in lines[:at]:
        if line.startswith("  ") and path is not None:
            key, _, ranges = line[2:].partition(" ")
            for number in _numbers(ranges, budget):
                log.files.setdefault(path, {})[number] = key
                budget -= 1
        elif line and not line.startswith(" "):
            quoted = len(line) > 1 and line[0] == line[-1] == '"'
            path = line[1:-1] if quoted else line
    return log


def _numbers(ranges: str, budget: int) -> list[int]:
    out: list[int] = []
    for part in ranges.strip().split(","):
        a, _, b = part.partition("-")
        if not a.isdigit() or (b and not b.isdigit()):
            continue
        start, end = int(a), int(b or a)
        if 1 <= start <= end:
            out.extend(range(start, min(end, start + budget - len(out) - 1) + 1))
        if len(out) >= budget:
            break
    return out


def with_lines(logs: list[Log], commit: str, files: Lines[str]) -> Log:
    """A log of ``commit`` with these ``files``, keeping every record of ``logs`` (the
    standard keeps prompt records through rewrites, for the audit trail)."""
    made = Log(commit, {p: lines for p, lines in files.items() if lines})
    for log in logs:
        for mine, theirs in (
            (made.sessions, log.sessions),
            (made.humans, log.humans),
            (made.prompts, log.prompts),
        ):
            for key, value in theirs.items():
                mine.setdefault(key, value)
    return made
