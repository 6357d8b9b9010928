"""convgit's MCP server in Gemini CLI's settings (``convgit.agents.mcp``): ``mcpServers`` of the
project's ``.gemini/settings.json`` (or the user's), ``{NAME: {"command", "args", "env"}}``, the
file its hooks are in too (the hooks' handlers and the server never touch each other)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from convgit.agents.gemini import NAME, live

AGENT = NAME
DEFAULT_SCOPE = "project"
SCOPES = {
    "project": ".gemini/settings.json (this project)",
    "user": "~/.gemini/settings.json (every project, only you)",
}
PROJECT_SCOPES = frozenset({"project"})
TABLE = "mcpServers"


def config_file(scope: str, project: Path) -> Path:
    return live.settings_file(scope, project)


def entry(words: list[str], env: dict[str, str]) -> dict[str, Any]:
    made: dict[str, Any] = {"command": words[0], "args": words[1:]}
    if env:
        made["env"] = env
    return made
