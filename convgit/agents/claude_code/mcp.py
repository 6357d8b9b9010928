"""convgit's MCP server in Claude Code's configuration (``convgit.agents.mcp``): the project's
``.mcp.json``, Claude's own file of a project's servers (``{"mcpServers": {NAME: {"type":
"stdio", "command", "args", "env"}}}``). Claude asks once, in a session at a terminal, before it
starts a server a project's file names; print mode (``claude -p``) starts it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from convgit.agents.claude_code import NAME

AGENT = NAME
DEFAULT_SCOPE = "project"
SCOPES = {"project": ".mcp.json (this project; kept out of git when the install makes it)"}
PROJECT_SCOPES = frozenset({"project"})
TABLE = "mcpServers"


def config_file(scope: str, project: Path) -> Path:
    return project / ".mcp.json"


def entry(words: list[str], env: dict[str, str]) -> dict[str, Any]:
    made: dict[str, Any] = {"type": "stdio", "command": words[0], "args": words[1:]}
    if env:
        made["env"] = env
    return made
