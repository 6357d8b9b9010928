"""Installing, removing and reporting convgit's hooks in an agent's settings files, for any
agent whose hooks are handlers in a settings file (its ``settings`` part,
``protocol.SettingsHooks``: ``SCOPES``, ``settings_file(scope, project)``, ``wanted()`` and
``is_ours(handler)``; see ``claude_code``). The merging itself is ``settings``'s."""

from __future__ import annotations

import dataclasses
import json
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from convgit.agents import settings
from convgit.base.errors import ConvgitError, UsageError


class SettingsHooks(Protocol):
    """An agent whose hooks are handlers merged into its settings file: its ``settings`` part
    (``convgit.agents.protocol``)."""

    @property
    def AGENT(self) -> str: ...

    @property
    def SCOPES(self) -> Mapping[str, str]: ...

    @property
    def ALL_EVENTS(self) -> Sequence[str]: ...

    @property
    def OWN_KEYS(self) -> frozenset[str]: ...  # keys the agent writes into the file itself

    def settings_file(self, scope: str, project: Path) -> Path: ...

    def wanted(
        self, program: str | None = None, tool_snapshots: bool = False
    ) -> dict[str, tuple[str | None, dict[str, Any]]]: ...

    def events(self, tool_snapshots: bool = False) -> dict[str, str | None]: ...

    def is_ours(self, found: Any) -> bool: ...


@dataclass(frozen=True)
class Change:
    """What an install or uninstall did to one settings file."""

    agent: str
    scope: str
    path: Path
    changed: bool
    events: list[str]  # the events convgit's handlers are on afterwards
    backup: Path | None  # the file's bytes before the change
    own: bool = False  # the file is convgit's own: a file of convgit's, or one the install made
    folders: tuple[Path, ...] = ()  # the empty folders the install made that the uninstall took

    def to_json(self) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "scope": self.scope,
            "path": str(self.path),
            "changed": self.changed,
            "events": self.events,
            "backup": None if self.backup is None else str(self.backup),
            "hooks": [],  # git's own hook files (`hooks install git`); an agent's are its settings
        }


@dataclass(frozen=True)
class ScopeState:
    """convgit's hooks in one settings file: ``installed`` (on the events this version
    installs), ``out of date`` (on other events: an older install), ``not installed``, or
    ``unreadable``; ``problem``: why it cannot be read, or why its command would not run."""

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


def _file(agent: SettingsHooks, scope: str, project: Path) -> Path:
    if scope not in agent.SCOPES:
        known = ", ".join(agent.SCOPES)
        raise UsageError(f"There is no scope '{scope}': use one of {known}.")
    path: Path = agent.settings_file(scope, project)
    return path


def install(
    agent: SettingsHooks, scope: str, project: Path, backups: Path, wanted: settings.Wanted
) -> Change:
    """Merge convgit's handlers (``wanted``, from the agent's ``wanted()``) into the settings
    file of ``scope``; nothing else changes. The handlers of another version, on other events,
    go. The file as it was before convgit's first handler went in is kept, for ``uninstall``;
    of a file the install makes, the folders it makes for it too."""
    found = settings.load(_file(agent, scope, project))
    merged = settings.merge(found.value, wanted, agent.is_ours)
    if not settings.installed(found.value, agent.is_ours) and merged != found.value:
        before = _before_install(agent, scope, found.path, backups)
        if found.raw is None:
            settings.write_atomically(before.with_suffix(".absent"), b"", 0o600)
            note_made_folders(found.path, _made_note(before))
            before.unlink(missing_ok=True)
        else:
            settings.write_atomically(before, found.raw, 0o600)
            before.with_suffix(".absent").unlink(missing_ok=True)
    change = _saved(agent, scope, found, merged, backups)
    made = _before_install(agent, scope, found.path, backups).with_suffix(".absent").exists()
    return dataclasses.replace(change, own=made)


def uninstall(agent: SettingsHooks, scope: str, project: Path, backups: Path) -> Change:
    """Take convgit's handlers out of the settings file of ``scope``, and what that emptied.
    When nothing else changed in it since the install, the file gets its bytes back (or is
    removed, when the install made it)."""
    found = settings.load(_file(agent, scope, project))
    if found.raw is None:
        return Change(agent.AGENT, scope, found.path, False, [], None)
    cleaned = settings.remove(found.value, agent.is_ours)
    before = _before_install(agent, scope, found.path, backups)
    if cleaned != found.value:
        exact = _as_before(before, cleaned, agent.OWN_KEYS)
        if exact is not None:
            return _put_back(agent, scope, found, before, exact, backups)
    return _saved(agent, scope, found, cleaned, backups)


def note_made_folders(path: Path, note: Path) -> None:
    """Note in ``note`` the folders above ``path`` that are missing, which writing it makes
    (a JSON list, the outermost first), for ``remove_made_folders``."""
    made = []
    for folder in path.parents:
        if folder.exists():
            break
        made.append(str(folder))
    settings.write_atomically(note, json.dumps(made[::-1]).encode(), 0o600)


def remove_made_folders(note: Path) -> tuple[Path, ...]:
    """Remove the folders ``note_made_folders`` noted, the innermost first, while each is
    empty: one with anything in it (the user's own files, or the agent's) stays, and so do
    the folders above it. The note goes; what was removed is returned."""
    try:
        made = json.loads(note.read_bytes())
    except (OSError, ValueError):
        made = []
    removed = []
    for folder in reversed(made if isinstance(made, list) else []):
        try:
            os.rmdir(folder)  # only when empty
        except (OSError, TypeError, ValueError):
            break
        removed.append(Path(folder))
    note.unlink(missing_ok=True)
    return tuple(removed)


def _made_note(before: Path) -> Path:
    """Where the install notes the folders it made for a settings file it made."""
    return before.with_suffix(".made.json")


def _before_install(agent: SettingsHooks, scope: str, path: Path, backups: Path) -> Path:
    import hashlib

    key = hashlib.sha1(str(path).encode()).hexdigest()[:12]
    return backups.parent / "settings-before-install" / f"{agent.AGENT}-{scope}-{key}.json"


def _as_before(before: Path, cleaned: dict[str, Any], own: frozenset[str]) -> bytes | None:
    """The bytes the file had before the install (b"" and a missing file: ``None`` for "none"
    is told by the ``.absent`` marker) when ``cleaned`` means what they meant; else None.
    ``own``: the keys the agent writes into the file itself (Qwen Code's ``$version``), which
    mean nothing of the user's."""
    if before.with_suffix(".absent").exists():
        return b"" if _meaning(cleaned, own) == {} else None
    try:
        kept = settings.load(before)
    except ConvgitError:
        return None
    if kept.raw is None or _meaning(kept.value, own) != _meaning(cleaned, own):
        return None
    return kept.raw


def _meaning(value: dict[str, Any], own: frozenset[str] = frozenset()) -> dict[str, Any]:
    """``value`` without the groups, events and ``hooks`` that hold no handler (they mean
    nothing to the agent), and without the agent's ``own`` keys."""
    value = {k: v for k, v in value.items() if k not in own}
    hooks = value.get("hooks")
    if not isinstance(hooks, dict):
        return value
    kept = {}
    for event, groups in hooks.items():
        full = [g for g in groups if isinstance(g, dict) and g.get("hooks")]
        if full:
            kept[event] = full
    rest = {k: v for k, v in value.items() if k != "hooks"}
    return {**rest, "hooks": kept} if kept else rest


def _put_back(
    agent: SettingsHooks,
    scope: str,
    found: settings.Settings,
    before: Path,
    exact: bytes,
    backups: Path,
) -> Change:
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    backup = backups / f"{stamp}-{agent.AGENT}-{scope}-{found.path.name}"
    assert found.raw is not None
    settings.write_atomically(backup, found.raw, 0o600)
    absent = before.with_suffix(".absent")
    folders: tuple[Path, ...] = ()
    if absent.exists():
        found.path.unlink()
        folders = remove_made_folders(_made_note(before))
        absent.unlink()
    else:
        settings.write_atomically(found.path, exact, found.mode)
        before.unlink()
    return Change(agent.AGENT, scope, found.path, True, [], backup, folders=folders)


def _saved(
    agent: SettingsHooks,
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


def status(agent: SettingsHooks, project: Path, events: dict[str, str | None]) -> list[ScopeState]:
    """convgit's hooks in every settings file of ``agent``, against the ``events`` (event ->
    matcher) this version installs; and whether their command would run here."""
    from convgit.agents import hook_command

    states = []
    for scope in agent.SCOPES:
        path = _file(agent, scope, project)
        try:
            found = settings.load(path)
        except ConvgitError as exc:
            states.append(ScopeState(scope, path, "unreadable", [], exc.message))
            continue
        ours = settings.installed(found.value, agent.is_ours)
        names = _in_order(agent, ours)
        if not ours:
            states.append(ScopeState(scope, path, "not installed", names))
            continue
        same = set(ours) == set(events) and all(
            [matcher for matcher, _ in ours[event]] == [events[event]] for event in events
        )
        problem = None
        for command in sorted({str(h.get("command")) for pairs in ours.values() for _, h in pairs}):
            problem = hook_command.problem(command, agent.AGENT, scope)
            if problem is not None:
                break
        states.append(
            ScopeState(scope, path, "installed" if same else "out of date", names, problem)
        )
    return states


def _in_order(agent: SettingsHooks, events: Any) -> list[str]:
    """Event names in the order the agent module lists them, others after."""
    order = list(agent.ALL_EVENTS)
    return sorted(events, key=lambda e: (order.index(e) if e in order else len(order), e))
