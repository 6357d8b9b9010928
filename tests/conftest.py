"""Shared fixtures. The user's git configuration and environment never leak into a test (as
pygit2 and dulwich do it): tests/gitenv.py scrubs them once, when the run starts."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from tests import gitenv, pictures
from tests.clirun import Cli
from tests.workspace.gitrepo import GitRepo, UserStateGuard, init_repo

# the helpers that assert for many tests show the values compared when an assertion fails, as a
# test module's own assertions do (pytest rewrites only test modules unless told; these are
# imported by test modules only, after this file)
pytest.register_assert_rewrite("tests.agents.hooked", "tests.agents.handoffs")

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
_SCRUBBED = pytest.StashKey[gitenv.Scrubbed]()
# a missing tool (agent CLIs, Chromium) is counted once in the summary, under its install line;
# a run that changed the checkout fails (tests/checkout.py); every test has its tier
# (tests/tiers.py)
pytest_plugins = ["tests.missing_tools", "tests.checkout", "tests.tiers", "pytester"]


@pytest.fixture(scope="session")
def samples() -> Path:
    """The real agents' transcripts in ../shared/samples/transcripts (beside the checkout in
    CI; never copied into the project)."""
    folder = ROOT.parent / "shared" / "samples" / "transcripts"
    if not folder.is_dir():
        from tests.missing_tools import no_samples  # a plugin: pytest imports it first

        no_samples()
    return folder


def pytest_addoption(parser: pytest.Parser) -> None:
    pictures.add_option(parser)


def pytest_configure(config: pytest.Config) -> None:
    """Scrub git's environment once, before any test module is imported (a module that reads
    ``os.environ`` at import sees the clean one): see tests/gitenv.py."""
    config.stash[_SCRUBBED] = gitenv.scrub()


def pytest_unconfigure(config: pytest.Config) -> None:
    if _SCRUBBED in config.stash:
        gitenv.restore(config.stash[_SCRUBBED])


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
