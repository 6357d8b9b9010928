"""Installing, removing and reporting convgit's hooks in an agent's settings files, for any
agent module that names its ``SCOPES``, ``settings_file(scope, project)``, ``wanted()`` and
``is_ours(handler)`` (see ``claude_code``). The merging itself is ``settings``'s."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from convgit.agents import settings
from convgit.errors import ConvgitError, UsageError


@dataclass(frozen=True)
class Change:
    """What an install or uninstall did to one settings file."""

    agent: str
    scope: str
    path: Path
    changed: bool
    events: list[str]  # the events convgit's handlers are on afterwards
    backup: Path | None  # the file's bytes before the change

    def to_json(self) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "scope": self.scope,
            "path": str(self.path),
            "changed": self.changed,
            "events": self.events,
            "backup": None if self.backup is None else str(self.backup),
        }


@dataclass(frozen=True)
class ScopeState:
    """convgit's hooks in one settings file: ``installed`` (all, as this version writes them),
    ``out of date`` (some, or another version's), ``not installed``, or ``unreadable``."""

    scope: str
    path: Path
    state: str
    events: list[str]
    problem: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "scope": self.scope,
            "path": str(self.path),
            "state": self.state,
            "events": self.events,
            "problem": self.problem,
        }


def _file(agent: ModuleType, scope: str, project: Path) -> Path:
    if scope not in agent.SCOPES:
        known = ", ".join(agent.SCOPES)
        raise UsageError(f"There is no scope '{scope}': use one of {known}.")
    path: Path = agent.settings_file(scope, project)
    return path


def install(agent: ModuleType, scope: str, project: Path, backups: Path) -> Change:
    """Merge convgit's handlers into the settings file of ``scope``; nothing else changes."""
    found = settings.load(_file(agent, scope, project))
    merged = settings.merge(found.value, agent.wanted(), agent.is_ours)
    return _saved(agent, scope, found, merged, backups)


def uninstall(agent: ModuleType, scope: str, project: Path, backups: Path) -> Change:
    """Take convgit's handlers out of the settings file of ``scope``, and what that emptied."""
    found = settings.load(_file(agent, scope, project))
    if found.raw is None:
        return Change(agent.AGENT, scope, found.path, False, [], None)
    cleaned = settings.remove(found.value, agent.is_ours)
    return _saved(agent, scope, found, cleaned, backups)


def _saved(
    agent: ModuleType,
    scope: str,
    found: settings.Settings,
    value: dict[str, Any],
    backups: Path,
) -> Change:
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    backup = backups / f"{stamp}-{agent.AGENT}-{scope}-{found.path.name}"
    changed = settings.save(found, value, backup)
    kept = backup if changed and found.raw is not None else None
    events = _in_order(agent, settings.installed(value, agent.is_ours))
    return Change(agent.AGENT, scope, found.path, changed, events, kept)


def status(agent: ModuleType, project: Path) -> list[ScopeState]:
    """convgit's hooks in every settings file of ``agent``."""
    states = []
    wanted = agent.wanted()
    for scope in agent.SCOPES:
        path = _file(agent, scope, project)
        try:
            found = settings.load(path)
        except ConvgitError as exc:
            states.append(ScopeState(scope, path, "unreadable", [], exc.message))
            continue
        ours = settings.installed(found.value, agent.is_ours)
        events = _in_order(agent, ours)
        if not ours:
            state = "not installed"
        elif settings.merge(found.value, wanted, agent.is_ours) == found.value:
            state = "installed"
        else:
            state = "out of date"
        states.append(ScopeState(scope, path, state, events))
    return states


def _in_order(agent: ModuleType, events: Any) -> list[str]:
    """Event names in the order the agent module lists them, others after."""
    order = list(agent.EVENTS)
    return sorted(events, key=lambda e: (order.index(e) if e in order else len(order), e))
