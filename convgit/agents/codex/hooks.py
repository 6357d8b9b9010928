"""convgit's handlers in Codex's ``$CODEX_HOME/hooks.json`` (Claude Code's shape: merged and
taken out by ``convgit.agents.hooks``), and the trust Codex wants before it runs them.

Codex skips, silently, a hook it has not marked trusted. A handler is trusted by a table of
``config.toml``: ``[hooks.state."<real path of hooks.json>:<event in snake_case>:<group
index>:<handler index>"]`` with ``trusted_hash = "sha256:<hex>"``, the SHA-256 of the compact,
key-sorted JSON ``{"event_name", "hooks": [{"async", "command", "timeout", "type"}],
"matcher"}`` (``matcher`` only when set; the recipe was checked against Codex's own
``hooks/list``). Installing writes one such table for each handler convgit added, and nothing
else: each table's header carries ``# convgit``, so that uninstalling takes out exactly those
(a file the install made goes; one nothing else changed in gets its bytes back). A table for
the same handler that is not convgit's (the user trusted it in Codex) is left as it is.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

from convgit.agents import hooks, settings
from convgit.agents.codex import live
from convgit.agents.hooks import Change, ScopeState
from convgit.base.errors import RefusedError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

MARK = "  # convgit"
_OURS = re.compile(r'\n?\[hooks\.state\."(?:[^"\\]|\\.)*"\]  # convgit\ntrusted_hash = "[^"\n]*"\n')


def config_file() -> Path:
    return live.codex_home() / "config.toml"


def _snake(event: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", event).lower()


def trusted_hash(event: str, matcher: Any, handler: dict[str, Any]) -> str:
    """The hash Codex keeps for a trusted handler."""
    shown: dict[str, Any] = {
        "async": handler.get("async", False),
        "command": handler.get("command"),
        "timeout": handler.get("timeout", 600),
        "type": handler.get("type", "command"),
    }
    value: dict[str, Any] = {"event_name": _snake(event), "hooks": [shown]}
    if isinstance(matcher, str):
        value["matcher"] = matcher
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def wanted_trust(path: Path, value: dict[str, Any]) -> dict[str, str]:
    """key -> hash for each of convgit's handlers in the hooks file at ``path`` (``value``)."""
    real = os.path.realpath(path)
    found = {}
    table = value.get("hooks")
    for event, groups in (table if isinstance(table, dict) else {}).items():
        for g, group in enumerate(groups if isinstance(groups, list) else []):
            if not isinstance(group, dict):
                continue
            for h, handler in enumerate(group.get("hooks") or []):
                if live.is_ours(handler):
                    key = f"{real}:{_snake(event)}:{g}:{h}"
                    found[key] = trusted_hash(event, group.get("matcher"), handler)
    return found


def _trusted(text: str) -> dict[str, str]:
    try:
        value = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        msg = f"{config_file()} is not valid TOML ({exc}); it was left as it is."
        raise RefusedError(msg) from None
    state = value.get("hooks", {}).get("state", {}) if isinstance(value.get("hooks"), dict) else {}
    return {
        str(k): str(v.get("trusted_hash"))
        for k, v in (state if isinstance(state, dict) else {}).items()
        if isinstance(v, dict)
    }


def _read_config() -> bytes | None:
    try:
        return config_file().read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise RefusedError(f"{config_file()} cannot be read ({exc.strerror}).") from None


def _before(backups: Path) -> Path:
    key = hashlib.sha1(str(config_file()).encode()).hexdigest()[:12]
    return backups.parent / "settings-before-install" / f"codex-config-{key}.toml"


def _trust(wanted: dict[str, str], backups: Path) -> None:
    """config.toml with convgit's trust tables for exactly ``wanted``."""
    raw = _read_config()
    text = "" if raw is None else raw.decode("utf-8")
    mine = _OURS.sub("", text)
    theirs = _trusted(mine)
    blocks = [
        f'\n[hooks.state.{json.dumps(key, ensure_ascii=False)}]{MARK}\ntrusted_hash = "{digest}"\n'
        for key, digest in wanted.items()
        if theirs.get(key) != digest
    ]
    stale = [key for key in wanted if key in theirs and theirs[key] != wanted[key]]
    if stale:
        raise RefusedError(
            f"{config_file()} trusts another handler at {stale[0]}; convgit's is not trusted.",
            "remove that table, then install again",
        )
    if mine and not mine.endswith("\n") and blocks:
        mine += "\n"
    result = mine + "".join(blocks)
    if result == text:
        return
    _trusted(result)  # still TOML
    before = _before(backups)
    if not before.exists() and not before.with_suffix(".absent").exists() and blocks:
        if raw is None:
            settings.write_atomically(before.with_suffix(".absent"), b"", 0o600)
        else:
            settings.write_atomically(before, raw, 0o600)
    if not result.strip() and before.with_suffix(".absent").exists():
        config_file().unlink(missing_ok=True)
        before.with_suffix(".absent").unlink()
        return
    kept = before.read_bytes() if before.exists() else None
    if kept is not None and not wanted and result.rstrip("\n") == kept.decode().rstrip("\n"):
        result = kept.decode()
        before.unlink()
    config_file().parent.mkdir(parents=True, exist_ok=True)
    mode = None if raw is None else config_file().stat().st_mode & 0o7777
    settings.write_atomically(config_file(), result.encode(), mode or 0o600)


def install(scope: str, project: Path, backups: Path, program: str | None, tools: bool) -> Change:
    change = hooks.install(live, scope, project, backups, live.wanted(program, tools))
    _trust(wanted_trust(change.path, settings.load(change.path).value), backups)
    return change


def uninstall(scope: str, project: Path, backups: Path) -> Change:
    change = hooks.uninstall(live, scope, project, backups)
    found = settings.load(change.path)
    _trust(wanted_trust(change.path, found.value), backups)
    return change


def status(project: Path, tools: bool) -> list[ScopeState]:
    states = []
    for state in hooks.status(live, project, live.events(tools)):
        if state.state in ("installed", "out of date") and state.problem is None:
            wanted = wanted_trust(state.path, settings.load(state.path).value)
            raw = _read_config()
            trusted = _trusted("" if raw is None else raw.decode("utf-8", "replace"))
            untrusted = [key for key, digest in wanted.items() if trusted.get(key) != digest]
            if untrusted:
                problem = (
                    f"Codex skips {len(untrusted)} of them: not trusted in {config_file()}"
                    " (`convgit hooks install codex` trusts them)"
                )
                state = ScopeState(state.scope, state.path, state.state, state.events, problem)
        states.append(state)
    return states
