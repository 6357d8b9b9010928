"""Live integrations with coding agents: one module per agent, holding what is particular to it
(the events its hooks send, its settings file, where its transcripts live, how a session is
handed back to it). They take values and return values: ``convgit.agents.live`` binds them to a
session, ``convgit.agents.hook`` and ``convgit.cli`` to the outside world.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from convgit.base.errors import UsageError

# agent name -> the module of its live integration
AGENTS: dict[str, str] = {
    "claude-code": "convgit.agents.claude_code.live",
}


def integration(agent: str) -> ModuleType:
    """The module for ``agent``; a UsageError names the agents convgit runs beside."""
    module = AGENTS.get(agent)
    if module is None:
        known = ", ".join(sorted(AGENTS))
        raise UsageError(f"convgit does not run beside '{agent}': use one of {known}.")
    return importlib.import_module(module)
