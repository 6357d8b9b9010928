"""Shared fixtures. The user's git configuration never leaks into a test (as pygit2 and dulwich
do it): HOME points at an empty folder and every GIT_* variable is removed."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from tests.clirun import Cli
from tests.workspace.gitrepo import GitRepo, UserStateGuard, init_repo

settings.register_profile(
    "default", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "ci",
    max_examples=300,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("CONVGIT_HYPOTHESIS_PROFILE", "default"))

# A shell that starts a job in the background (`cmd &` without job control) sets SIGINT to
# ignored, and an ignored signal stays ignored in every program the tests start: the Ctrl-C tests
# would then see convgit ignore SIGINT. Python's own default (KeyboardInterrupt here, the
# default action in the programs started) is what a user at a terminal has.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

ROOT = Path(__file__).resolve().parent.parent
# a missing tool (agent CLIs, Chromium) is counted once in the summary, under its install line
pytest_plugins = ["tests.missing_tools", "pytester"]


@pytest.fixture(scope="session")
def samples() -> Path:
    """The real agents' transcripts in ../shared/samples/transcripts (beside the checkout in
    CI; never copied into the project)."""
    folder = ROOT.parent / "shared" / "samples" / "transcripts"
    if not folder.is_dir():
        from tests.missing_tools import no_samples  # a plugin: pytest imports it first

        no_samples()
    return folder


@pytest.fixture(autouse=True, scope="session")
def _clean_git_environment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    home = tmp_path_factory.mktemp("home")
    saved = dict(os.environ)
    recorder = os.environ.get("CONVGIT_TEST_RECORDER") == "on"
    for name in list(os.environ):
        kept = name == "CONVGIT_HYPOTHESIS_PROFILE"
        if name.startswith(("GIT_", "CONVGIT_", "WATCHMAN_")) and not kept:
            del os.environ[name]
    os.environ["HOME"] = str(home)
    os.environ["XDG_CONFIG_HOME"] = str(home / ".config")
    # no hook starts a recorder that stays (tests/test_recorder.py turns it on where it is the
    # subject): a test's repository would keep a process and a watchman watch after the test
    # (CONVGIT_TEST_RECORDER=on: every hook through a recorder, each leaving after 20 s idle)
    os.environ["CONVGIT_RECORDER"] = "on" if recorder else "off"
    if recorder:
        os.environ["CONVGIT_RECORDER_IDLE"] = "20"
    os.environ["GIT_CONFIG_NOSYSTEM"] = "1"
    os.environ["GIT_AUTHOR_NAME"] = "Test User"
    os.environ["GIT_AUTHOR_EMAIL"] = "test@example.invalid"
    os.environ["GIT_COMMITTER_NAME"] = "Test User"
    os.environ["GIT_COMMITTER_EMAIL"] = "test@example.invalid"
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
    yield
    os.environ.clear()
    os.environ.update(saved)


@pytest.fixture
def repo(tmp_path: Path) -> Iterator[GitRepo]:
    """A real repository (tmp_path/project) whose user state (HEAD, index, branches, tags,
    stash) is checked unchanged at the end (tests/workspace has its own, built by make_repo)."""
    made = init_repo(tmp_path / "project")
    guard = UserStateGuard()
    guard.watch(made.path)
    yield made
    guard.verify()


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    """The real command line (tests/clirun.py), run in ``tmp_path`` unless told ``cwd=``:
    ``cli("log")``, ``cli("user", "hi", code=1)``, ``cli.json("status")``, ``cli.at(folder)``."""
    return Cli(tmp_path)
