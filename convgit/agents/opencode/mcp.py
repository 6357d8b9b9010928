"""convgit's MCP server in OpenCode's configuration (``convgit.agents.mcp``): ``mcp`` of the
project's ``opencode.json`` (or the user's ``~/.config/opencode/opencode.json``), ``{NAME:
{"type": "local", "command": [...], "environment", "enabled": true}}``. A file with comments
(JSONC) is refused, unchanged: convgit would not keep them."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from convgit.agents.opencode import NAME

AGENT = NAME
DEFAULT_SCOPE = "project"
SCOPES = {
    "project": "opencode.json (this project)",
    "user": "~/.config/opencode/opencode.json (every project, only you)",
}
PROJECT_SCOPES = frozenset({"project"})
TABLE = "mcp"


def config_file(scope: str, project: Path) -> Path:
    if scope == "user":
        base = os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config")
        return Path(base) / "opencode" / "opencode.json"
    return project / "opencode.json"


def entry(words: list[str], env: dict[str, str]) -> dict[str, Any]:
    made: dict[str, Any] = {"type": "local", "command": words, "enabled": True}
    if env:
        made["environment"] = env
    return made
