"""convgit's MCP server (``convgit mcp``) registered in an agent's own configuration, and taken out
again (``convgit hooks install AGENT --mcp``, ``hooks uninstall AGENT --mcp``), for each agent
whose folder has an ``mcp`` part: ``SCOPES``, ``DEFAULT_SCOPE``, ``config_file(scope,
project)``, ``TABLE`` (the key of the servers' table) and ``entry(command, env)`` (the server
as that agent writes one), or its own ``install`` and ``uninstall`` (Codex's TOML).

The server is the one key ``convgit`` in that table; nothing else of the file changes. Before
the first install, whether the file and the table were there is noted beside the settings'
backups, so that uninstalling removes exactly what the install added: the key, the table when
the install made it, the file when the install made it and nothing else is in it; a file
nothing else changed in since gets its bytes back. Every write keeps the file's bytes before it
as a backup. The server runs read-only tools (docs/mcp.md)."""

from __future__ import annotations

import copy
import hashlib
import shlex
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from convgit.agents import settings
from convgit.agents.hooks import Change
from convgit.base import codec
from convgit.base.errors import ConvgitError, RefusedError, UsageError


class Table(Protocol):
    """An agent whose configuration is a JSON file with a table of MCP servers: its ``mcp``
    module, which ``InTable`` makes the agent's ``McpServer`` part (``protocol``)."""

    @property
    def AGENT(self) -> str: ...

    @property
    def SCOPES(self) -> Mapping[str, str]: ...

    @property
    def DEFAULT_SCOPE(self) -> str: ...

    @property
    def PROJECT_SCOPES(self) -> frozenset[str]: ...

    @property
    def TABLE(self) -> str: ...  # the key of the servers' table

    def config_file(self, scope: str, project: Path) -> Path: ...

    def entry(self, words: list[str], env: dict[str, str]) -> dict[str, Any]: ...


NAME = "convgit"  # the server's name: its tools are mcp__convgit__search... in Claude Code
REGISTERED = ["mcp"]  # what ``Change.events`` says once the server is in the file
_PACKAGE = Path(__file__).resolve().parent.parent


def command(program: str | None, project: Path | None) -> tuple[list[str], dict[str, str]]:
    """The server's command line as words (no shell), and the environment it needs: ``program``
    (``--command``), else this convgit: this Python, with this convgit's folder first on its
    path, so that a clone run from its folder is found (said in the command itself: Gemini CLI
    refuses a server's ``PYTHONPATH``); ``-C project`` for a project's configuration (the agent
    may start it elsewhere)."""
    if program is not None:
        words = shlex.split(program)
        if not words:
            raise UsageError("--command is empty: give the convgit the server should run.")
    else:
        boot = (
            f"import sys; sys.path.insert(0, {str(_PACKAGE.parent)!r});"
            " from convgit.__main__ import main; main()"
        )
        words = [sys.executable, "-c", boot]
    where = ["-C", str(project)] if project is not None else []
    return [*words, *where, "mcp"], {}


def _file(agent: Table, scope: str, project: Path) -> Path:
    if scope not in agent.SCOPES:
        known = ", ".join(agent.SCOPES)
        raise UsageError(f"There is no scope '{scope}' for --mcp: use one of {known}.")
    path: Path = agent.config_file(scope, project)
    return path


def marker(backups: Path, agent: str, scope: str, path: Path) -> Path:
    key = hashlib.sha1(str(path).encode()).hexdigest()[:12]
    return backups.parent / "settings-before-install" / f"{agent}-mcp-{scope}-{key}.json"


def install(agent: Table, scope: str, project: Path, backups: Path, program: str | None) -> Change:
    """Put convgit's server in the servers' table of the agent's file of ``scope``."""
    path = _file(agent, scope, project)
    found = settings.load(path)
    value = copy.deepcopy(found.value)
    table = value.get(agent.TABLE)
    if table is not None and not isinstance(table, dict):
        raise RefusedError(
            f"{path} has a {agent.TABLE!r} that is not an object; convgit changes nothing in it."
        )
    words, env = command(program, project if agent.PROJECT_SCOPES & {scope} else None)
    entry = agent.entry(words, env)
    noted = marker(backups, agent.AGENT, scope, found.path)
    if table is None or NAME not in table:
        before = {"file": found.raw is None, "table": table is None}
        settings.write_atomically(noted, codec.dumps(before).encode(), 0o600)
        if found.raw is not None:  # its bytes, given back when nothing else changed since
            settings.write_atomically(noted.with_suffix(".before"), found.raw, 0o600)
    value.setdefault(agent.TABLE, {})[NAME] = entry
    kept = backup_path(backups, agent.AGENT, scope, found.path)
    changed = settings.save(found, value, kept)
    backup = kept if changed and found.raw is not None else None
    own = made(noted).get("file", False)
    return Change(agent.AGENT, scope, found.path, changed, REGISTERED, backup, own=own)


def uninstall(agent: Table, scope: str, project: Path, backups: Path) -> Change:
    """Take convgit's server out of the agent's file of ``scope``, and what the install made."""
    path = _file(agent, scope, project)
    found = settings.load(path)
    table = found.value.get(agent.TABLE)
    if found.raw is None or not isinstance(table, dict) or NAME not in table:
        return Change(agent.AGENT, scope, found.path, False, [], None)
    noted = marker(backups, agent.AGENT, scope, found.path)
    created = made(noted)
    value = copy.deepcopy(found.value)
    del value[agent.TABLE][NAME]
    if created.get("table") and not value[agent.TABLE]:
        del value[agent.TABLE]
    backup = backup_path(backups, agent.AGENT, scope, found.path)
    kept = _bytes_before(noted.with_suffix(".before"), value)
    if created.get("file") and not value:
        settings.write_atomically(backup, found.raw, 0o600)
        found.path.unlink()
    elif kept is not None:
        settings.write_atomically(backup, found.raw, 0o600)
        settings.write_atomically(found.path, kept, found.mode)
    else:
        settings.save(found, value, backup)
    noted.unlink(missing_ok=True)
    noted.with_suffix(".before").unlink(missing_ok=True)
    return Change(agent.AGENT, scope, found.path, True, [], backup, own=bool(created.get("file")))


def registered(agent: Table, scope: str, project: Path) -> bool:
    """Whether convgit's server is in the agent's file of ``scope``."""
    try:
        found = settings.load(_file(agent, scope, project))
    except ConvgitError:
        return False
    table = found.value.get(agent.TABLE)
    return isinstance(table, dict) and NAME in table


@dataclass(frozen=True)
class InTable:
    """The MCP part of an agent whose server goes into its JSON configuration's table."""

    table: Table

    @property
    def AGENT(self) -> str:
        return self.table.AGENT

    @property
    def SCOPES(self) -> Mapping[str, str]:
        return self.table.SCOPES

    @property
    def DEFAULT_SCOPE(self) -> str:
        return self.table.DEFAULT_SCOPE

    @property
    def PROJECT_SCOPES(self) -> frozenset[str]:
        return self.table.PROJECT_SCOPES

    def install(self, scope: str, project: Path, backups: Path, program: str | None) -> Change:
        return install(self.table, scope, project, backups, program)

    def uninstall(self, scope: str, project: Path, backups: Path) -> Change:
        return uninstall(self.table, scope, project, backups)


def _bytes_before(path: Path, value: dict[str, Any]) -> bytes | None:
    """The file's bytes before the install, when they mean ``value`` (nothing else changed)."""
    try:
        before = settings.load(path)
    except ConvgitError:
        return None
    return before.raw if before.raw is not None and before.value == value else None


def made(marker: Path) -> dict[str, bool]:
    try:
        value = codec.decode(marker.read_bytes())
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def backup_path(backups: Path, agent: str, scope: str, path: Path) -> Path:
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    return backups / f"{stamp}-{agent}-mcp-{scope}-{path.name}"
