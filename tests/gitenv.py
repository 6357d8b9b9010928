"""Git's environment, scrubbed once for the whole run (tests/conftest.py calls ``scrub`` when
pytest starts, before any test module is imported), as dulwich's and pygit2's tests do: a
newcomer's shell that sets ``GIT_AUTHOR_NAME``, ``GIT_CONFIG_GLOBAL``, ``EMAIL`` or
``XDG_CONFIG_HOME`` changes nothing a test sees.

* every ``GIT_*``, ``CONVGIT_*`` and ``WATCHMAN_*`` variable is removed (but the hypothesis
  profile's; ``CONVGIT_RECORDER`` is then set off, or on for a run with
  ``CONVGIT_TEST_RECORDER=on``; ``CONVGIT_HELD_CHECK`` is set), and so are ``EMAIL`` and the
  XDG base folders: git, convgit and the agents find their configuration and data under HOME;
* HOME is an empty folder of the run's own, whose ``.gitconfig`` gives the identity a commit
  needs: a configuration, never the environment, so a repository's own ``user.name`` wins as it
  does for a user;
* git reads no system configuration (``GIT_CONFIG_NOSYSTEM``), and pygit2 looks for the global,
  XDG and system files in that HOME.

No test scrubs again: one that needs another environment builds it from ``os.environ``.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

NAME = "Test User"
EMAIL = "test@example.invalid"
IDENTITY = f"[user]\n\tname = {NAME}\n\temail = {EMAIL}\n"

SET = {"GIT_CONFIG_NOSYSTEM": "1"}  # the one git variable a test sees, set here
# convgit's own, set here: no hook starts a recorder (or, for a run with CONVGIT_TEST_RECORDER=on,
# every hook starts one that leaves after 20 s idle)
RECORDER = ("CONVGIT_RECORDER", "CONVGIT_RECORDER_IDLE")
# convgit's own self-checks, on for the whole run: a recorder compares each session it kept
# between events with the file read whole (``store.load.session_again``)
CHECKS = {"CONVGIT_HELD_CHECK": "1"}
KEPT = frozenset({"CONVGIT_HYPOTHESIS_PROFILE"})
REMOVED = frozenset(
    {"EMAIL", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"}
)


def scrubbed(name: str) -> bool:
    """Whether the variable ``name`` of the outer shell is removed for the run."""
    if name in KEPT:
        return False
    return name.startswith(("GIT_", "CONVGIT_", "WATCHMAN_")) or name in REMOVED


def give_identity(home: Path) -> None:
    """Write the tests' git identity into ``home``'s ``.gitconfig`` (a HOME of an agent's own
    gets it too), unless one is there."""
    home.mkdir(parents=True, exist_ok=True)
    config = home / ".gitconfig"
    if not config.exists():
        config.write_text(IDENTITY)


@dataclass(frozen=True)
class Scrubbed:
    """What ``restore`` needs: the environment before, and the HOME made for the run."""

    before: dict[str, str]
    home: Path


def scrub() -> Scrubbed:
    before = dict(os.environ)
    recorder = os.environ.get("CONVGIT_TEST_RECORDER") == "on"
    home = Path(tempfile.mkdtemp(prefix="convgit-tests-home-"))
    for name in list(os.environ):
        if scrubbed(name):
            del os.environ[name]
    os.environ["HOME"] = str(home)
    os.environ.update(SET)
    # no hook starts a recorder that stays (tests/test_recorder.py turns it on where it is the
    # subject): a test's repository would keep a process and a watchman watch after the test
    # (CONVGIT_TEST_RECORDER=on: every hook through a recorder, each leaving after 20 s idle)
    os.environ["CONVGIT_RECORDER"] = "on" if recorder else "off"
    if recorder:
        os.environ["CONVGIT_RECORDER_IDLE"] = "20"
    os.environ.update(CHECKS)  # a difference found is a failed event in the hook log
    give_identity(home)
    try:
        import pygit2

        for level in (
            pygit2.enums.ConfigLevel.GLOBAL,
            pygit2.enums.ConfigLevel.XDG,
            pygit2.enums.ConfigLevel.SYSTEM,
        ):
            pygit2.settings.search_path[level] = str(home)
    except ImportError:  # pragma: no cover - pygit2 is a runtime dependency
        pass
    return Scrubbed(before, home)


def restore(scrubbed: Scrubbed) -> None:
    os.environ.clear()
    os.environ.update(scrubbed.before)
    shutil.rmtree(scrubbed.home, ignore_errors=True)
