"""Change tracking for convgit's private index: git's own fsmonitor protocol, so a snapshot
after a small change stats only what a file watcher reports instead of every file.

The watcher is watchman, started the way its users start it (its client starts its service;
``watch-project`` on first use), asked by ``watchman_hook`` (git's hook protocol, version 2),
or a hook of the user's own. It is passed only to convgit's git commands on its private index
(``-c core.fsmonitor=<hook>``, beside ``core.untrackedCache=true``): the user's config and
their own index are never touched. The token lives in the private index (git's FSMN
extension), so each private index keeps its own.

Whatever goes wrong with the watcher, git stats every file, as it does without one: a missing
watchman is not asked at all, a failing one makes the hook fail (and git falls back in the same
command, with the same result); ``status`` says which path is in use, and why it fell back.

``[snapshots] fsmonitor`` in config.toml: ``"off"`` (the default), ``"auto"`` (watchman when
it is on PATH; "fell back" in ``status`` when it is not), ``"watchman"`` (the same), or the path
of a hook. Off by default: with git 2.39 a command that changes an index with a watcher writes
the whole index, not its split half, and each git command starts the hook, so at 100,000 files
a snapshot measured slower with watchman than without (README, Performance).
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from convgit.git.index import watchman_hook

MODES = ("auto", "watchman", "off")
WATCHMAN = "watchman"  # the path a snapshot takes: watchman, a hook of the user's, or stat
HOOK = "hook"
STAT = "stat"


@dataclass(frozen=True)
class Tracking:
    """How the private index finds what changed: ``setting`` (config.toml's), ``path`` (one of
    ``WATCHMAN``, ``HOOK``, ``STAT``), the git settings that say so, and ``note``: why it fell
    back to stat'ing every file ("" when it did not)."""

    setting: str
    path: str
    config: tuple[str, ...] = ()
    note: str = ""

    def last_note(self, index: Path) -> str:
        """The note for the private index at ``index``: this choice's own, else what the hook
        said when it last failed for that index."""
        if self.note or self.path != WATCHMAN:
            return self.note
        try:
            said = Path(f"{index}{watchman_hook.NOTE}").read_text().strip()
        except OSError:
            return ""
        return said


OFF = Tracking("off", STAT)


def choose(setting: str) -> Tracking:
    """The tracking ``setting`` asks for, as far as this machine can give it."""
    if setting == "off":
        return OFF
    if setting not in MODES:  # the path of a hook of the user's
        hook = os.path.expanduser(setting)
        if not os.path.isfile(hook) or not os.access(hook, os.X_OK):
            note = f"the fsmonitor hook {hook} is not an executable file"
            return Tracking(setting, STAT, note=note)
        return Tracking(setting, HOOK, _settings(shlex.quote(hook)))
    if shutil.which("watchman") is None:
        return Tracking(setting, STAT, note="watchman is not on PATH")
    command = shlex.join([sys.executable, "-I", "-S", watchman_hook.__file__])
    return Tracking(setting, WATCHMAN, _settings(command))


def _settings(command: str) -> tuple[str, ...]:
    return (f"core.fsmonitor={command}", "core.untrackedCache=true")


def forget(index: Path) -> None:
    """Remove what the hook keeps beside the private index at ``index``."""
    for suffix in (watchman_hook.NOTE, watchman_hook.SOCKNAME):
        Path(f"{index}{suffix}").unlink(missing_ok=True)
