"""The agents convgit knows: every folder of ``convgit/agents/`` that holds an ``agent.py``,
whose ``AGENT`` declares the agent and its parts (``convgit.agents.protocol``). ``import``,
``export``, ``resume``, ``hooks``, ``hook``, the help texts and live recording all ask here; none
keeps a list of its own.

Adding an agent is adding its folder: the registry finds it, in ``Declaration.order`` (the order
a file's agent is recognised in), and asks its declaration for each part. A part is imported
only when asked for, so naming an agent costs no import of its reader.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
from functools import cache
from typing import TYPE_CHECKING

from convgit.agents.protocol import Declaration
from convgit.base.errors import ConvgitError, UsageError

if TYPE_CHECKING:
    from convgit.agents.protocol import Live, Reading
    from convgit.agents.reading import Importer

DEFAULT = "claude-code"  # a session whose header names no agent was recorded beside Claude Code
DECLARATION = "agent"  # the module of an agent's folder that declares it (its ``AGENT``)


@cache
def agents() -> tuple[Declaration, ...]:
    """Every agent, in the order a file's agent is recognised in."""
    import convgit.agents as package

    found = []
    for module in pkgutil.iter_modules(package.__path__):
        if not module.ispkg:
            continue
        folder = f"{package.__name__}.{module.name}"
        if importlib.util.find_spec(f"{folder}.{DECLARATION}") is None:
            continue  # a folder of shared machinery (``live``), not an agent
        declared = importlib.import_module(f"{folder}.{DECLARATION}").AGENT
        if not isinstance(declared, Declaration):
            raise TypeError(f"{folder}.{DECLARATION}.AGENT is not a Declaration")
        found.append(declared)
    return tuple(sorted(found, key=lambda agent: (agent.order, agent.name)))


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
) -> Declaration:
    """The agent called ``name`` that has ``part``; otherwise ``error`` saying ``unknown``
    (``{name}`` and ``{known}``, the agents that have the part, filled in)."""
    for found in agents():
        if found.name == name and found.has(part):
            return found
    raise error(unknown.format(name=name, known=", ".join(names(part))))


def listing(part: str = "reading") -> str:
    """``a, b, c``: the agents that have ``part``, for help texts."""
    return ", ".join(names(part))


def reading(name: str) -> Reading:
    """The ``reading`` part of the agent ``name``; a UsageError names the known agents."""
    return agent(name).reading()


def importer(name: str) -> Importer:
    """The importer for ``name``; a UsageError names the known agents."""
    unknown = "There is no importer for '{name}': use one of {known}."
    return agent(name, unknown=unknown).reading().IMPORTER


def integration(name: str) -> Live:
    """The ``live`` part of the agent ``name`` (its hooks); a UsageError names the agents
    convgit runs beside."""
    unknown = "convgit does not run beside '{name}': use one of {known}."
    live = agent(name, "live", unknown=unknown).live
    assert live is not None
    return live()
