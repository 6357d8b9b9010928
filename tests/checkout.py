"""A test run leaves the checkout as it found it (a pytest plugin, tests/conftest.py loads it):
``git status`` of the run's root folder is read when the run starts and when it ends, and a run
that changed it fails, naming what changed. A test writes into its temporary folders, never
beside the code (the pictures of docs/ are written only on request: tests/pictures.py). Outside
a git checkout (an unpacked archive) there is nothing to compare."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

BEFORE = pytest.StashKey["str | None"]()


def status(root: Path) -> str | None:
    """What ``git status`` says of the checkout at ``root`` (untracked files too, ignored ones
    aside), or None when it is no git checkout."""
    done = subprocess.run(
        ["git", "status", "--porcelain=v1", "--untracked-files=all", "--", "."],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout if done.returncode == 0 else None


def changed(before: str, after: str) -> list[str]:
    """The lines of ``git status`` that differ: what the run changed."""
    was, now = set(before.splitlines()), set(after.splitlines())
    return sorted(now ^ was)


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    config.stash[BEFORE] = status(config.rootpath)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """A run that changed the checkout fails, naming what it changed."""
    before = session.config.stash.get(BEFORE, None)
    if before is None or session.config.option.collectonly:
        return
    if session.config.getoption("--pictures", default=False):  # asked to write docs/ (pictures.py)
        return
    after = status(session.config.rootpath)
    if after is None or not (lines := changed(before, after)):
        return
    listed = "\n".join(f"  {line}" for line in lines)
    message = f"the run changed the checkout (a test writes into tmp_path):\n{listed}"
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line(message, red=True)
    if session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
