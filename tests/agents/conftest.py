"""Fixtures that run the agents' real CLIs against a scripted model server on 127.0.0.1.

`model_server` is started per test and checked when the test ends: a request the script did
not cover, a reply never asked for or an attempt to reach another host fails the test.
`project` is a real git repository (`init_repo`) the agents work in, guarded like the workspace
tests' repositories; `claude_code`, `pi`,
`codex`, `gemini`, `opencode`, `copilot` and `qwen` run there with one temporary HOME for the test.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.agents.runners import ClaudeCode, Codex, Copilot, Gemini, OpenCode, Pi, Qwen
from tests.agents.server import ModelServer
from tests.workspace.gitrepo import GitRepo, UserStateGuard, init_repo


@pytest.fixture
def model_server() -> Iterator[ModelServer]:
    with ModelServer() as server:
        yield server
        server.check()


@pytest.fixture
def project(tmp_path: Path) -> Iterator[GitRepo]:
    """A repository with a commit, a branch, a tag and a stash entry, whose git state (index,
    HEAD, refs, stash) must be byte-identical when the test ends."""
    repo = init_repo(tmp_path / "project")
    guard = UserStateGuard()
    guard.watch(repo.path)
    yield repo
    guard.verify()


@pytest.fixture
def agent_home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def claude_code(model_server: ModelServer, project: GitRepo, agent_home: Path) -> ClaudeCode:
    return ClaudeCode(model_server, project.path, agent_home)


@pytest.fixture
def pi(model_server: ModelServer, project: GitRepo, agent_home: Path) -> Pi:
    return Pi(model_server, project.path, agent_home)


@pytest.fixture
def codex(model_server: ModelServer, project: GitRepo, agent_home: Path) -> Codex:
    return Codex(model_server, project.path, agent_home)


@pytest.fixture
def gemini(model_server: ModelServer, project: GitRepo, agent_home: Path) -> Gemini:
    return Gemini(model_server, project.path, agent_home)


@pytest.fixture
def opencode(model_server: ModelServer, project: GitRepo, agent_home: Path) -> OpenCode:
    return OpenCode(model_server, project.path, agent_home)


@pytest.fixture(scope="session")
def copilot_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where GitHub Copilot CLI unpacks itself, once for the run (``XDG_CACHE_HOME``)."""
    return tmp_path_factory.mktemp("copilot-cache")


@pytest.fixture
def copilot(
    model_server: ModelServer, project: GitRepo, agent_home: Path, copilot_cache: Path
) -> Copilot:
    return Copilot(model_server, project.path, agent_home, cache=copilot_cache)


@pytest.fixture
def qwen(model_server: ModelServer, project: GitRepo, agent_home: Path) -> Qwen:
    return Qwen(model_server, project.path, agent_home)
