"""How snapshots find what changed: ``[snapshots] fsmonitor`` in config.toml.

* ``"auto"`` (the default) or ``"watchman"``: the recorder (``convgit.agents.live.recorder``)
  asks watchman which paths changed since its last snapshot and patches that snapshot's tree
  (``convgit.git.patching``); whatever watchman cannot vouch for, and every snapshot taken
  outside the recorder (a command, a hook with no recorder), stats every file through the
  private index. With ``"auto"`` a missing watchman is no problem to name; with ``"watchman"``
  it is.
* ``"off"``: every snapshot stats every file.
* the path of a git fsmonitor hook of the user's own (protocol 1 or 2): passed to convgit's
  git commands on its private index (``-c core.fsmonitor=<hook>``, beside
  ``core.untrackedCache=true``); the user's config and their own index are never touched.

Issue 27 asked git's own fsmonitor protocol for watchman's answer: with git 2.39 each git
command then started the hook and wrote the whole index, so it measured slower than stat'ing
every file; the recorder asks watchman once, and writes no index (docs/technical/performance.md).
"""

from __future__ import annotations

import os
import shlex

from convgit.base.valueclass import valueclass

MODES = ("auto", "watchman", "off")
DEFAULT = "auto"
WATCHMAN = "watchman"  # the path a snapshot may take: watchman, a hook of the user's, or stat
HOOK = "hook"
STAT = "stat"


@valueclass(frozen=True)
class Tracking:
    """How the private index finds what changed: ``setting`` (config.toml's), ``path`` (one of
    ``WATCHMAN``: the recorder may patch snapshots from watchman's changes; ``HOOK``; ``STAT``),
    the git settings that say so, and ``note``: why it stats every file ("" when it does not,
    or when the setting asked for it)."""

    setting: str
    path: str
    config: tuple[str, ...] = ()
    note: str = ""


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
        return Tracking(setting, HOOK, (f"core.fsmonitor={shlex.quote(hook)}", _UNTRACKED))
    if not on_path("watchman") and not os.environ.get("WATCHMAN_SOCK"):
        # "auto" asked for watchman only where it is: its absence is nothing to name
        note = "watchman is not on PATH" if setting == WATCHMAN else ""
        return Tracking(setting, STAT, note=note)
    return Tracking(setting, WATCHMAN)


_UNTRACKED = "core.untrackedCache=true"


def on_path(name: str) -> bool:
    """Whether ``shutil.which(name)`` finds the program ``name`` (a bare name) on POSIX, as it
    looks: each folder of PATH (unset: the system's default path), a file there that may be
    run and is no folder. Without importing shutil (with bz2, lzma and fnmatch: about 2 ms of a
    start whose snapshot's git waits for it, ``convgit.workspace.early``)."""
    path = os.environ.get("PATH")
    if path is None:
        try:
            path = os.confstr("CS_PATH")
        except (AttributeError, ValueError):
            path = os.defpath
    if not path:
        return False
    for folder in dict.fromkeys(path.split(os.pathsep)):
        found = os.path.join(folder, name)
        if os.path.exists(found) and os.access(found, os.X_OK) and not os.path.isdir(found):
            return True
    return False
