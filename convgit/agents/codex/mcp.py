"""convgit's MCP server in Codex's ``$CODEX_HOME/config.toml``: one table,
``[mcp_servers.convgit]`` with ``command``, ``args`` and ``env``, its header marked ``# convgit``
(as the trust tables of its hooks are, ``convgit.agents.codex.hooks``), so that uninstalling
takes out exactly those lines; the rest of the file keeps its bytes. A table of that name that
is not convgit's (the user wrote it) is refused, and nothing changes. The file is checked to
read as TOML after the change, else nothing is written."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from convgit.agents import mcp, settings
from convgit.agents.codex import NAME, live
from convgit.agents.hooks import Change
from convgit.base import codec
from convgit.base.errors import RefusedError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

AGENT = NAME
DEFAULT_SCOPE = "user"
SCOPES = {"user": "$CODEX_HOME/config.toml (~/.codex: every project, only you)"}
PROJECT_SCOPES: frozenset[str] = frozenset()  # its one file is the user's
HEADER = f"[mcp_servers.{mcp.NAME}]  # convgit\n"
_OURS = re.compile(r"\n?" + re.escape(HEADER) + r"(?:(?:command|args|env) = [^\n]*\n)*")


def config_file(scope: str, project: Path) -> Path:
    return live.codex_home() / "config.toml"


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise RefusedError(f"{path} cannot be read ({exc.strerror}).") from None


def _parsed(path: Path, data: bytes) -> dict[str, object]:
    try:
        parsed: dict[str, object] = tomllib.loads(data.decode("utf-8"))
        return parsed
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise RefusedError(
            f"{path} is not TOML Codex can read ({exc}); convgit changes nothing in it."
        ) from None


def install(scope: str, project: Path, backups: Path, program: str | None) -> Change:
    if scope not in SCOPES:
        raise RefusedError(f"There is no scope '{scope}' for Codex's --mcp: use user.")
    path = config_file(scope, project)
    raw = _read(path)
    text = (raw or b"").decode("utf-8", "replace")
    servers = _parsed(path, raw or b"").get("mcp_servers")
    ours = _OURS.search(text)
    if isinstance(servers, dict) and mcp.NAME in servers and ours is None:
        raise RefusedError(
            f"{path} has an MCP server named {mcp.NAME!r} that convgit did not write;"
            " convgit changes nothing in it.",
            "rename or remove that table, then run the command again",
        )
    words, env = mcp.command(program, None)
    block = HEADER + f"command = {json.dumps(words[0])}\nargs = {json.dumps(words[1:])}\n"
    if env:
        pairs = ", ".join(f"{k} = {json.dumps(v)}" for k, v in env.items())
        block += f"env = {{ {pairs} }}\n"
    if ours is not None:
        new = text[: ours.start()] + ("\n" if ours.group().startswith("\n") else "") + block
        new += text[ours.end() :]
    else:
        marker = mcp.marker(backups, AGENT, scope, path)
        settings.write_atomically(marker, codec.dumps({"file": raw is None}).encode(), 0o600)
        gap = "" if not text else "\n" if text.endswith("\n") else "\n\n"
        new = text + gap + block
    data = new.encode("utf-8")
    _parsed(path, data)  # what Codex will read
    if data == raw:
        return Change(AGENT, scope, path, False, mcp.REGISTERED, None)
    backup = mcp.backup_path(backups, AGENT, scope, path)
    if raw is not None:
        settings.write_atomically(backup, raw, 0o600)
    settings.write_atomically(path, data, path.stat().st_mode & 0o7777 if raw is not None else None)
    made = mcp.made(mcp.marker(backups, AGENT, scope, path)).get("file", False)
    return Change(AGENT, scope, path, True, mcp.REGISTERED, backup if raw else None, own=made)


def uninstall(scope: str, project: Path, backups: Path) -> Change:
    path = config_file(scope, project)
    raw = _read(path)
    ours = None if raw is None else _OURS.search(raw.decode("utf-8", "replace"))
    if raw is None or ours is None:
        return Change(AGENT, scope, path, False, [], None)
    text = raw.decode("utf-8", "replace")
    new = text[: ours.start()] + text[ours.end() :]
    marker = mcp.marker(backups, AGENT, scope, path)
    made = mcp.made(marker).get("file", False)
    backup = mcp.backup_path(backups, AGENT, scope, path)
    settings.write_atomically(backup, raw, 0o600)
    if made and not new.strip():
        path.unlink()
    else:
        _parsed(path, new.encode("utf-8"))
        settings.write_atomically(path, new.encode("utf-8"), path.stat().st_mode & 0o7777)
    marker.unlink(missing_ok=True)
    return Change(AGENT, scope, path, True, [], backup, own=made)
