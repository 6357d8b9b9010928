"""A path handed to an agent, as values: what the agent's writer is given (``Handoff``: the
messages of the path, ``Said``, each with the agent that wrote it and what produced it), what it
writes (``Native``), and what each agent's format keeps of a message (``Keeps``), from which
docs/handoff.md's table of what survives a handoff is made."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

CONVGIT = "convgit"  # the provider and model of a message no model produced (typed into convgit)


@dataclass(frozen=True)
class Usage:
    """The tokens a reply took, as its agent counted them (None: not counted)."""

    input: int | None = None
    output: int | None = None
    cache_read: int | None = None
    cache_write: int | None = None

    @property
    def total(self) -> int:
        return sum(n or 0 for n in (self.input, self.output, self.cache_read, self.cache_write))


@dataclass(frozen=True)
class Producer:
    """What produced a reply: the provider and model, and the tokens it took."""

    provider: str
    model: str
    usage: Usage | None = None


@dataclass
class Said:
    """One message of the path as the target agent is given it, in convgit's parts (``text``,
    ``thinking``, ``tool_call``, ``image``), its calls already in the target's tools (a call
    without a counterpart is text). ``entry``: the entry it comes from; ``agent``: the agent
    that wrote it (None: convgit, or a note of its own); ``call``: the call a tool result
    answers; ``producer``: what produced a reply; ``native``: the record its agent wrote, when
    that agent is the target (its own fields kept)."""

    entry: str
    role: str  # user, assistant, tool
    parts: list[dict[str, Any]]
    ts: str
    agent: str | None = None
    call: str | None = None
    error: bool = False
    producer: Producer | None = None
    native: dict[str, Any] | None = None
    tool: str = ""  # a tool result: the name of its call's tool, as the target calls it
    raw: bytes | None = None  # the exact text of ``native``, when the record is this entry's own
    seed: str = ""  # unique on the path: what a writer makes the ids it gives from

    def __post_init__(self) -> None:
        self.seed = self.seed or self.entry

    def text(self) -> str:
        return "\n".join(str(p["text"]) for p in self.parts if p.get("type") == "text")

    def calls(self) -> list[dict[str, Any]]:
        return [p for p in self.parts if p.get("type") == "tool_call"]


@dataclass
class Handoff:
    """The path from the root to ``ref`` of convgit session ``session`` as ``target`` is given
    it: its messages in order (every call followed by its result), the session's folder, the
    model in force at ``ref``, and the agent session id the writer writes under."""

    target: str
    session: str
    ref: str
    cwd: str
    said: list[Said]
    agent_session: str
    header: Mapping[str, Any] = field(default_factory=dict)
    kept: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    model: Producer | None = None
    created: str = ""  # the time of the path's first entry
    path: Sequence[Mapping[str, Any]] = field(
        default_factory=list
    )  # the path's records, root first

    @property
    def own(self) -> bool:
        """No entry of the path was written by an agent other than the target."""
        return all(message.agent in (None, self.target) for message in self.said) and all(
            record.get("agent") in (None, self.target) for record in self.path
        )


@dataclass(frozen=True)
class Native:
    """What a writer wrote: the bytes of the agent's own session (a file; OpenCode's: the
    document ``opencode import`` reads), the agent's session id in it, and for each record's
    exact text the entry of the path it stands for (``origins``)."""

    data: bytes
    session: str
    origins: Mapping[bytes, str]


@dataclass(frozen=True)
class Keeps:
    """What an agent's format keeps of a message from another agent (the writer's own say).
    ``thinking``: "all" (any agent's, as its own), "own" (only its own: another's is left out,
    the model's API would refuse it) or "none"; ``images``: images in prompts and results;
    ``usage``: a reply's tokens; ``ids``: a message of its own keeps its id; ``errors``: a
    tool result says whether the tool failed."""

    thinking: str
    images: bool
    usage: bool
    ids: bool
    errors: bool = True
