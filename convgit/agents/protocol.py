"""The agent contract: what an agent's folder provides, as typed Protocols that mypy checks
against each part module, and the ``Declaration`` that names an agent and its parts.

An agent is a folder of ``convgit/agents/`` holding ``agent.py``, whose ``AGENT`` is a
``Declaration``: the agent's ``name`` (what people type and a session's header keeps) and
``title`` (what people read), where it stands when a file's agent is recognised (``order``),
and one loader per part it has. A part is a module; each loader imports it when first asked
(naming an agent costs no import of its reader) and returns it typed as the part's Protocol, so
a part module that lacks a function, or has one of another shape, fails ``mypy --strict``.

The parts (the capabilities of llm's plugin hooks and Entire's optional agent interfaces): a
part an agent lacks is declared ``None``, and a part's optional members are declared in the
module (``is_prompt = None``), never probed for:

* ``reading`` (every agent): ``IMPORTER`` (``convgit.agents.reading``: the agent's own session
  file, bytes in, records out) and ``recognises(records, data)``.
* ``resume``: ``hand_back(session, target)``, the agent's own file holding the path (byte for
  byte where the session was imported from the agent), and ``line_uuids`` where the agent's
  files copy another's records under their ids.
* ``writing``: the agent's own session written from any path of any session (``write``, from a
  ``handoff.Handoff``), its tools (``TOOLS``: which of them write, edit, run, read and search,
  and their arguments) and what its format keeps (``KEEPS``); where ``convgit resume`` puts it
  and the command that continues it (``place``).
* ``live``: the agent's hook events read into ``live.events.Event`` and how the agent shows a
  hook's words; ``transcript`` for an agent that keeps no session file of its own.
* ``settings``: hooks that are handlers merged into the agent's settings file
  (``convgit.agents.hooks``); ``hooks``: hooks installed the agent's own way (an extension, a
  plugin, Codex's trust entries).
* ``mcp``: convgit's MCP server registered in the agent's own configuration.

The registry (``convgit.agents.registry``) finds the folders, orders them and asks here; no
command keeps a list of agents of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from convgit.agents.handoff import Handoff, Keeps, Native, Producer
    from convgit.agents.hooks import Change, ScopeState
    from convgit.agents.hooks import SettingsHooks as SettingsHooks
    from convgit.agents.live.events import Event
    from convgit.agents.reading import Importer
    from convgit.agents.tools import ToolMap
    from convgit.session import Session
    from convgit.store.location import StoreLocation

# an agent's file -> the ids of its records and their parents, in file order
LineUuids = Callable[[bytes], list[tuple[str, str | None]]]


@dataclass(frozen=True)
class Written:
    """What the agent resumes: ``data`` written to ``path`` (None: nothing to write, the agent
    reaches the path in its own file at ``path``), with ``command``. ``copies``: the entries
    the agent's importer makes of ``data`` (by id) and the entry of the path each stands for,
    so that what the agent adds below them hangs below the path; ``skip``: the keys of the
    records it keeps of ``data`` (the session has them already)."""

    session: str
    path: Path
    data: bytes | None
    command: str
    at: str | None = None
    keep_newest: bool = False  # the newest file in path's folder stays the newest
    copies: Mapping[str, str] | None = None
    skip: Sequence[str] = ()


class Reading(Protocol):
    """Reading the agent's own session files (pure: bytes in, records out)."""

    @property
    def IMPORTER(self) -> Importer: ...

    def recognises(self, records: list[dict[str, Any]], data: bytes) -> bool: ...


class Resuming(Protocol):
    """Handing a path of a session the agent recorded back to it."""

    def hand_back(self, session: Session, target: str) -> Written: ...

    @property
    def line_uuids(self) -> LineUuids | None: ...


class Writing(Protocol):
    """Writing the agent's own session from any path (``convgit.agents.writing``)."""

    @property
    def TOOLS(self) -> ToolMap: ...  # its file write, edit, shell, read and search tools

    @property
    def KEEPS(self) -> Keeps: ...  # what its format keeps of another agent's messages

    @property
    def WRITES(self) -> str: ...  # what ``convgit export`` says it wrote

    def new_session(self) -> str: ...  # a new session id of the agent's

    def write(self, handoff: Handoff) -> Native: ...

    def produced(self, value: dict[str, Any]) -> Producer | None: ...  # from a record of its own

    def place(self, session: Session, native: Native) -> tuple[Path, str]: ...


class Live(Protocol):
    """The agent's hook events, as ``convgit hook AGENT`` reads them."""

    @property
    def AGENT(self) -> str: ...

    @property
    def SPEAKS(self) -> frozenset[str]: ...  # the events whose hook may tell the user

    @property
    def OPENS(self) -> frozenset[str]: ...  # the events that open a turn

    @property
    def TELLS(self) -> str: ...  # "stdout" (a systemMessage) or "stderr" (exit status 2)

    @property
    def SCOPES(self) -> Mapping[str, str]: ...  # where its hooks can go, and what each is

    @property
    def DEFAULT_SCOPE(self) -> str: ...

    @property
    def COMMITTED_SCOPES(self) -> frozenset[str]: ...  # scopes whose file is committed

    def event(self, payload: Any, name: str | None = None) -> Event: ...

    def carries_prompt(self, native_text: str, prompt_id: str) -> bool: ...

    @property
    def is_prompt(self) -> Callable[[dict[str, Any]], bool] | None: ...

    @property
    def transcript(self) -> Callable[[StoreLocation, Event], Path | None] | None: ...


class OwnHooks(Protocol):
    """Hooks installed the agent's own way."""

    def install(
        self, scope: str, project: Path, backups: Path, program: str | None, tools: bool
    ) -> Change: ...

    def uninstall(self, scope: str, project: Path, backups: Path) -> Change: ...

    def status(self, project: Path, tools: bool) -> list[ScopeState]: ...


class McpServer(Protocol):
    """convgit's MCP server registered in the agent's own configuration (``convgit hooks
    install AGENT --mcp``): the servers' table of its JSON configuration
    (``convgit.agents.mcp.InTable``), or the agent's own way (Codex's TOML, pi's extension)."""

    @property
    def AGENT(self) -> str: ...

    @property
    def SCOPES(self) -> Mapping[str, str]: ...

    @property
    def DEFAULT_SCOPE(self) -> str: ...

    @property
    def PROJECT_SCOPES(self) -> frozenset[str]: ...  # scopes whose file is in the project

    def install(self, scope: str, project: Path, backups: Path, program: str | None) -> Change: ...

    def uninstall(self, scope: str, project: Path, backups: Path) -> Change: ...


PARTS = ("reading", "resume", "writing", "live", "settings", "hooks", "mcp")


@dataclass(frozen=True)
class Declaration:
    """One agent: its names, where it is asked when a file's agent is recognised (``order``:
    lower first; an agent whose files another's could pass for is asked before it), and a
    loader per part (None: the agent has no such part)."""

    name: str
    title: str
    reading: Callable[[], Reading]
    order: int = 100
    resume: Callable[[], Resuming] | None = None
    writing: Callable[[], Writing] | None = None
    live: Callable[[], Live] | None = None
    settings: Callable[[], SettingsHooks] | None = None
    hooks: Callable[[], OwnHooks] | None = None
    mcp: Callable[[], McpServer] | None = None

    def has(self, part: str) -> bool:
        """Whether the agent declares ``part`` (one of ``PARTS``)."""
        if part not in PARTS:
            raise ValueError(f"no agent part is called {part!r}")
        return part == "reading" or self._loader(part) is not None

    def _loader(self, part: str) -> Callable[[], object] | None:
        loaders: dict[str, Callable[[], object] | None] = {
            "reading": self.reading,
            "resume": self.resume,
            "writing": self.writing,
            "live": self.live,
            "settings": self.settings,
            "hooks": self.hooks,
            "mcp": self.mcp,
        }
        return loaders[part]
