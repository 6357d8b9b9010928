"""An agent's JSON settings file with hooks in it (Claude Code's ``settings.json`` shape:
``{"hooks": {EVENT: [{"matcher": M, "hooks": [HANDLER, ...]}, ...]}}``): convgit's handlers
merged in and taken out, never clobbering anything else.

* Every other key, hook and field of every handler is kept: the file is read as plain JSON
  values and written back with them; only convgit's own handlers (``is_ours``) are added,
  replaced or removed.
* A file that is not one JSON object (a syntax error, comments, a repeated key, NaN, ``hooks``
  of another shape) is refused and left as it is. A file that is empty counts as ``{}``.
* Installing what is there already writes nothing. A write goes to a temporary file in the
  file's folder (through a symbolic link, to the file it names), keeps the file's mode and
  replaces it atomically.
* Uninstalling removes convgit's handlers, then the groups, events and ``hooks`` object the
  removal left empty, which gives the file the meaning it had before the install (empty ones
  mean nothing to the agent).
"""

from __future__ import annotations

import copy
import json
import os
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from convgit.base.errors import RefusedError

Handler = dict[str, Any]
IsOurs = Callable[[Any], bool]
# event -> (matcher or None for none, the handler convgit wants there)
Wanted = Mapping[str, tuple[str | None, Handler]]


@dataclass(frozen=True)
class Settings:
    """A settings file as read: its value, its exact bytes (None: there is no file) and mode."""

    path: Path
    value: dict[str, Any]
    raw: bytes | None
    mode: int | None


class _Refused(ValueError):
    pass


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found:
            raise _Refused(f"has the key {key!r} twice in one object")
        found[key] = value
    return found


def _constant(name: str) -> Any:
    raise _Refused(f"holds {name}, which is not JSON")


def load(path: Path) -> Settings:
    """Read and check ``path``; refuses (leaving it untouched) what convgit cannot merge into."""
    real = Path(os.path.realpath(path))
    try:
        raw = real.read_bytes()
        mode = real.stat().st_mode & 0o7777
    except FileNotFoundError:
        return Settings(real, {}, None, None)
    except OSError as exc:
        raise RefusedError(f"{path} cannot be read ({exc.strerror}).") from None
    if not raw.strip():
        return Settings(real, {}, raw, mode)
    try:
        # decoded first: a byte-order mark, which the agent's JSON reader refuses, is refused
        text = raw.decode("utf-8")
        value = json.loads(text, object_pairs_hook=_pairs, parse_constant=_constant)
    except _Refused as exc:
        raise _refusal(path, str(exc)) from None
    except ValueError as exc:  # JSONDecodeError, or bytes that are not UTF-8
        raise _refusal(path, f"is not valid JSON ({exc})") from None
    if not isinstance(value, dict):
        raise _refusal(path, "is not a JSON object")
    problem = _shape_error(value)
    if problem is not None:
        raise _refusal(path, problem)
    return Settings(real, value, raw, mode)


def _refusal(path: Path, problem: str) -> RefusedError:
    return RefusedError(
        f"{path} {problem}; convgit changes nothing in it.",
        "fix the file (the agent cannot read it either), then run the command again",
    )


def _shape_error(value: dict[str, Any]) -> str | None:
    hooks = value.get("hooks")
    if hooks is None and "hooks" not in value:
        return None
    if not isinstance(hooks, dict):
        return "has a 'hooks' that is not an object"
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            return f"has hooks.{event} that is not a list"
        for number, group in enumerate(groups, 1):
            if not isinstance(group, dict):
                return f"has hooks.{event} entry {number} that is not an object"
            if "hooks" in group and not isinstance(group["hooks"], list):
                return f"has hooks.{event} entry {number} whose 'hooks' is not a list"
    return None


def installed(value: dict[str, Any], is_ours: IsOurs) -> dict[str, list[tuple[Any, Handler]]]:
    """convgit's handlers in ``value``: event -> [(matcher, handler)]."""
    found: dict[str, list[tuple[Any, Handler]]] = {}
    for event, groups in (value.get("hooks") or {}).items():
        for group in groups:
            for handler in group.get("hooks") or []:
                if is_ours(handler):
                    found.setdefault(event, []).append((group.get("matcher"), handler))
    return found


def merge(value: dict[str, Any], wanted: Wanted, is_ours: IsOurs) -> dict[str, Any]:
    """``value`` with convgit's handlers exactly as ``wanted``: one per event, in a group of
    its own matcher; any other of convgit's (an older version's, a repeat) removed."""
    merged = copy.deepcopy(value)
    had_hooks = "hooks" in merged
    hooks = merged.setdefault("hooks", {})
    satisfied: set[str] = set()
    removed = False
    for event in list(hooks):
        want = wanted.get(event)
        groups = []
        for group in hooks[event]:
            handlers = group.get("hooks")
            if not isinstance(handlers, list) or not any(is_ours(h) for h in handlers):
                groups.append(group)
                continue
            kept = []
            for handler in handlers:
                if not is_ours(handler):
                    kept.append(handler)
                elif want is not None and event not in satisfied and _fits(group, handler, want):
                    kept.append(handler)
                    satisfied.add(event)
                else:
                    removed = True
            if kept:
                groups.append({**group, "hooks": kept})
        if groups or not hooks[event]:  # an empty list of the user's own stays
            hooks[event] = groups
        else:
            del hooks[event]
    for event, (matcher, handler) in wanted.items():
        if event not in satisfied:
            made: dict[str, Any] = {} if matcher is None else {"matcher": matcher}
            made["hooks"] = [dict(handler)]
            hooks.setdefault(event, []).append(made)
    if not hooks and (removed or not had_hooks):
        del merged["hooks"]
    return merged


def _fits(group: dict[str, Any], handler: Handler, want: tuple[str | None, Handler]) -> bool:
    matcher, wanted_handler = want
    return group.get("matcher") == matcher and handler == wanted_handler


def remove(value: dict[str, Any], is_ours: IsOurs) -> dict[str, Any]:
    """``value`` without convgit's handlers, and without what that left empty."""
    return merge(value, {}, is_ours) if "hooks" in value else copy.deepcopy(value)


def save(settings: Settings, value: dict[str, Any], backup: Path | None = None) -> bool:
    """Write ``value`` in place of ``settings`` atomically (False, and no write, when it is what
    the file holds already), after keeping the file's bytes as ``backup``. The JSON is indented
    by two spaces, as the agent writes it."""
    if settings.raw is not None and value == settings.value:
        return False
    if backup is not None and settings.raw is not None:
        write_atomically(backup, settings.raw, 0o600)
    try:
        text = json.dumps(value, indent=2, ensure_ascii=False) + "\n"
        data = text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate, read from a \\u escape: keep it escaped
        data = (json.dumps(value, indent=2) + "\n").encode("ascii")
    write_atomically(settings.path, data, settings.mode)
    return True


def write_atomically(path: Path, data: bytes, mode: int | None) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise RefusedError(f"{path} cannot be written ({exc.strerror}).") from None
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(tmp, mode if mode is not None else 0o666 & ~_umask())
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise RefusedError(f"{path} cannot be written ({exc.strerror}).") from None


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
