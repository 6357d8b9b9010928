"""Hooks that are a file of convgit's own in the agent's folder of extensions (pi's extension,
OpenCode's plugin), which the agent loads at start:

* the file is convgit's alone: its first line is a marker (a comment holding JSON: the events
  it passes on, the command it runs, whether per-tool snapshots are on). A file of that name
  without the marker is the user's: it is refused and left as it is; every other file of the
  folder is untouched;
* installing again replaces convgit's file when it differs (another convgit, other events);
* uninstalling removes the file and the folders the install made, when nothing else is in
  them (the install notes which it made, beside the backups), so the project is as it was;
* status reads the marker: installed, out of date, or a command that would start no convgit.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from convgit.agents import settings
from convgit.agents.hooks import Change, ScopeState, note_made_folders, remove_made_folders
from convgit.base.errors import RefusedError


@dataclass(frozen=True)
class OwnFile:
    agent: str  # the agent's name
    kind: str  # what the agent calls such a file: "extension", "plugin"
    marker: str  # the start of the file's first line
    scopes: Mapping[str, str]
    path: Callable[[str, Path], Path]  # (scope, project) -> the file
    events: Callable[[bool], list[str]]  # (tool_snapshots) -> the events passed on
    source: Callable[[str | None, bool], str]  # (program, tool_snapshots) -> the file's text

    def install(
        self, scope: str, project: Path, backups: Path, program: str | None, tools: bool
    ) -> Change:
        path = self.path(scope, project)
        found = _read(path)
        if found is not None and self.marked(found) is None:
            raise RefusedError(
                f"{path} is there and is not convgit's {self.kind}; it was left as it is.",
                "rename it, then install again",
            )
        wanted = self.source(program, tools)
        if found == wanted:
            return Change(self.agent, scope, path, False, self.events(tools), None, own=True)
        if found is None:
            note_made_folders(path, self._made_note(scope, path, backups))
        path.parent.mkdir(parents=True, exist_ok=True)
        settings.write_atomically(path, wanted.encode(), 0o644)
        return Change(self.agent, scope, path, True, self.events(tools), None, own=True)

    def uninstall(self, scope: str, project: Path, backups: Path) -> Change:
        path = self.path(scope, project)
        found = _read(path)
        if found is None or self.marked(found) is None:
            return Change(self.agent, scope, path, False, [], None)
        path.unlink()
        folders = remove_made_folders(self._made_note(scope, path, backups))
        return Change(self.agent, scope, path, True, [], None, folders=folders)

    def status(self, project: Path, tools: bool) -> list[ScopeState]:
        from convgit.agents import hook_command

        states = []
        for scope in self.scopes:
            path = self.path(scope, project)
            try:
                found = _read(path)
            except RefusedError as exc:
                states.append(ScopeState(scope, path, "unreadable", [], exc.message))
                continue
            marker = None if found is None else self.marked(found)
            if marker is None:
                problem = None if found is None else "a file of the user's has convgit's name"
                states.append(ScopeState(scope, path, "not installed", [], problem))
                continue
            named = marker.get("events")
            names = [str(e) for e in named] if isinstance(named, list) else []
            same = names == self.events(tools) and marker.get("tool_snapshots") is tools
            problem = hook_command.problem(str(marker.get("command")), self.agent, scope)
            state = "installed" if same else "out of date"
            states.append(ScopeState(scope, path, state, names, problem))
        return states

    def marked(self, text: str) -> dict[str, object] | None:
        """The marker of convgit's file, None when the text is not convgit's."""
        first = text.split("\n", 1)[0]
        if not first.startswith(self.marker):
            return None
        try:
            value = json.loads(first[len(self.marker) :])
        except ValueError:
            return None
        return value if isinstance(value, dict) else None

    def _made_note(self, scope: str, path: Path, backups: Path) -> Path:
        key = hashlib.sha1(str(path).encode()).hexdigest()[:12]
        return backups.parent / "settings-before-install" / f"{self.agent}-{scope}-{key}.made.json"


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise RefusedError(f"{path} cannot be read ({exc.strerror}).") from None
