"""The agents convgit knows, one line each (``FOLDERS``), and what each can do, from the modules
its folder holds. ``import``, ``export``, ``resume``, ``hooks``, ``hook``, the help texts and live
recording all ask here; none keeps a list of its own.

An agent is a folder of ``convgit/agents/`` whose ``__init__.py`` says its ``NAME`` (what people
type and a session's header keeps) and ``TITLE`` (what people read), with these modules, each
present only where the agent has the part:

* ``reading``: ``IMPORTER`` (reads the agent's own session files into records, pure: bytes in,
  records out; see ``convgit.agents.reading``) and ``recognises(records, data)`` (whether a file
  shows this agent's marks and no other's). Every agent has it.
* ``resume``: ``hand_back(session, target)``, what the agent resumes to continue at ``target``.
* ``export``: ``export_file(header, path, kept)``, a path written as the agent's own file.
* ``live``: the agent's hook events, settings file and handler (``convgit hooks``, ``convgit
  hook``).
* ``mcp``: where convgit's MCP server is registered in the agent's own configuration
  (``convgit hooks install AGENT --mcp``, ``convgit.agents.mcp``).

Modules are imported only when a part is asked for, so naming an agent costs no import of its
reader.
"""

from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass
from functools import cache
from types import ModuleType

from convgit.base.errors import ConvgitError, UsageError

# One line per agent. The order is the order a file is recognised in (``recognise.agent_of``).
FOLDERS = ("codex", "pi", "qwen", "claude_code", "gemini", "opencode", "copilot")
DEFAULT = "claude-code"  # a session whose header names no agent was recorded beside Claude Code
PARTS = ("reading", "resume", "export", "live", "mcp")


@dataclass(frozen=True)
class Agent:
    name: str
    title: str
    package: str

    def has(self, part: str) -> bool:
        return _exists(f"{self.package}.{part}")

    def part(self, part: str) -> ModuleType:
        return importlib.import_module(f"{self.package}.{part}")


@cache
def _exists(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


@cache
def agents() -> tuple[Agent, ...]:
    """Every agent, in ``FOLDERS`` order."""
    found = []
    for folder in FOLDERS:
        package = f"{__package__}.{folder}"
        module = importlib.import_module(package)
        found.append(Agent(module.NAME, module.TITLE, package))
    return tuple(found)


def names(part: str = "reading") -> list[str]:
    """The names of the agents that have ``part``, sorted."""
    return sorted(agent.name for agent in agents() if agent.has(part))


def a(title: str) -> str:
    """``title`` after its article: "a Codex", "an OpenCode"."""
    return f"{'an' if title[:1].lower() in 'aeio' else 'a'} {title}"


def title(name: str) -> str | None:
    return next((agent.title for agent in agents() if agent.name == name), None)


def agent(
    name: str,
    part: str = "reading",
    *,
    unknown: str = "convgit knows no agent '{name}' here: use one of {known}.",
    error: type[ConvgitError] = UsageError,
) -> Agent:
    """The agent called ``name`` that has ``part``; otherwise ``error`` saying ``unknown``
    (``{name}`` and ``{known}``, the agents that have the part, filled in)."""
    for found in agents():
        if found.name == name and found.has(part):
            return found
    raise error(unknown.format(name=name, known=", ".join(names(part))))


def listing(part: str = "reading") -> str:
    """``a, b, c``: the agents that have ``part``, for help texts."""
    return ", ".join(names(part))


def integration(name: str) -> ModuleType:
    """The ``live`` module of the agent ``name`` (its hooks); a UsageError names the agents
    convgit runs beside."""
    unknown = "convgit does not run beside '{name}': use one of {known}."
    return agent(name, "live", unknown=unknown).part("live")
