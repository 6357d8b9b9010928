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

Codex reads ``hooks.json`` whole or not at all: a file its reader refuses (``refusal``: a
top-level key other than ``description`` and ``hooks``, a handler without its ``command``...)
is skipped with every hook in it, told only as an error item of ``codex exec --json``. So an
install that would leave such a file refuses, naming what Codex refuses, and changes nothing;
what Codex accepts of the user's (``description``, events it does not know, keys of their own
in a group or a handler) is kept; and ``status`` names a file Codex would skip.
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


# What Codex 0.171 reads of hooks.json (its ``HooksFile``, ``codex-rs/config/src/hook_config.rs``:
# serde with unknown top-level fields denied; checked against the CLI's own refusals): the
# top-level keys, the events it knows (a list of groups each; others are ignored), the kinds
# of handler, and the fields of a command handler with their types.
TOP_LEVEL = ("description", "hooks")
KNOWN_EVENTS = frozenset(
    {"PreToolUse", "PermissionRequest", "PostToolUse", "PreCompact", "PostCompact",
     "SessionStart", "SessionEnd", "UserPromptSubmit", "SubagentStart", "SubagentStop", "Stop",
     "Interrupt", "PreModelRequest"}
)  # fmt: skip
HANDLER_TYPES = ("command", "prompt", "agent")


def refusal(value: dict[str, Any]) -> str | None:
    """Why Codex would refuse the hooks file ``value`` (and skip every hook in it), in words
    that follow the file's path ("has ..."); None when it reads it."""
    for key in value:
        if key not in TOP_LEVEL:
            return (
                f"has the top-level key {key!r}, which Codex does not accept (it reads only"
                " 'description' and 'hooks')"
            )
    if value.get("description") is not None and not isinstance(value["description"], str):
        return "has a 'description' that is not a string"
    table = value.get("hooks", {})
    if not isinstance(table, dict):
        return "has a 'hooks' that is not an object"
    for event, groups in table.items():
        if event not in KNOWN_EVENTS:
            continue  # Codex ignores an event it does not know
        if not isinstance(groups, list):
            return f"has hooks.{event} that is not a list"
        for g, group in enumerate(groups, 1):
            where = f"hooks.{event} entry {g}"
            if not isinstance(group, dict):
                return f"has {where} that is not an object"
            if group.get("matcher") is not None and not isinstance(group["matcher"], str):
                return f"has {where} whose matcher is not a string"
            handlers = group.get("hooks", [])
            if not isinstance(handlers, list):
                return f"has {where} whose 'hooks' is not a list"
            for h, handler in enumerate(handlers, 1):
                problem = _handler_refusal(handler)
                if problem is not None:
                    return f"has {where}, handler {h}, {problem}"
    return None


def _handler_refusal(handler: Any) -> str | None:
    if not isinstance(handler, dict):
        return "that is not an object"
    if handler.get("type") not in HANDLER_TYPES:
        return "whose 'type' is not one of " + ", ".join(repr(t) for t in HANDLER_TYPES)
    if handler["type"] != "command":
        return None
    if not isinstance(handler.get("command"), str):
        return "without a string 'command'"
    timeout = handler.get("timeout")
    if timeout is not None and (type(timeout) is not int or timeout < 0):
        return "whose 'timeout' is not a whole number of seconds"
    if "async" in handler and type(handler["async"]) is not bool:
        return "whose 'async' is not true or false"
    message = handler.get("statusMessage")
    if message is not None and not isinstance(message, str):
        return "whose 'statusMessage' is not a string"
    return None


def _refuse_unread(path: Path, value: dict[str, Any]) -> None:
    """Refuse, before anything is written, to leave a hooks file Codex would skip whole."""
    problem = refusal(value)
    if problem is not None:
        raise RefusedError(
            f"{path} {problem}: Codex skips every hook in it, convgit's too; convgit changed"
            " nothing in it.",
            "make it a file Codex reads (`codex exec --json` says why it does not), then"
            " install again",
        )


def install(scope: str, project: Path, backups: Path, program: str | None, tools: bool) -> Change:
    wanted = live.wanted(program, tools)
    found = settings.load(live.settings_file(scope, project))
    merged = settings.merge(found.value, wanted, live.is_ours)
    _refuse_unread(found.path, merged)
    change = hooks.install(live, scope, project, backups, wanted)
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
        unread = None if state.state == "unreadable" else refusal(settings.load(state.path).value)
        if unread is not None:
            problem = f"Codex skips every hook in it: the file {unread}"
            state = ScopeState(state.scope, state.path, state.state, state.events, problem)
        elif state.state in ("installed", "out of date") and state.problem is None:
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
