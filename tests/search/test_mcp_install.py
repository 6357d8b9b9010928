"""`convgit hooks install AGENT --mcp` registers convgit's MCP server in each agent's own
configuration, keeping everything else in it, and `hooks uninstall AGENT --mcp` takes out exactly
that: a file of the user's gets its bytes back, a file the install made goes (and its line in
.git/info/exclude with it). An agent with no MCP client is refused in one sentence."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests import clirun
from tests.workspace.gitrepo import GitRepo

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

THEIRS = {"theirs": {"command": "their-server", "args": ["--x"]}}


def _files(here: Path, home: Path) -> dict[str, tuple[Path, str, Any]]:
    """agent -> (its file, the servers' key, the user's own content of that file)."""
    return {
        "claude-code": (here / ".mcp.json", "mcpServers", {"mcpServers": dict(THEIRS)}),
        "gemini": (here / ".gemini" / "settings.json", "mcpServers",
                   {"general": {"vimMode": True}, "mcpServers": dict(THEIRS)}),
        "opencode": (here / "opencode.json", "mcp",
                     {"$schema": "https://opencode.ai/config.json", "mcp": dict(THEIRS)}),
        "codex": (home / "config.toml", "mcp_servers", None),
    }  # fmt: skip


def _server(path: Path, key: str) -> Any:
    data = path.read_bytes()
    value = tomllib.loads(data.decode()) if path.suffix == ".toml" else json.loads(data)
    return value.get(key, {}).get("convgit")


@pytest.mark.parametrize("agent", ["claude-code", "gemini", "opencode", "codex"])
def test_the_server_goes_in_and_comes_out_exactly(
    repo: GitRepo, tmp_path: Path, agent: str
) -> None:
    here = repo.path
    home = tmp_path / "codex-home"
    home.mkdir()
    env = {"CODEX_HOME": str(home)}
    path, key, theirs = _files(here, home)[agent]
    exclude = here / ".git" / "info" / "exclude"
    excluded = exclude.read_bytes()

    made = clirun.run("hooks", "install", agent, "--mcp", "--json", cwd=here, env=env).json()
    assert made["changed"] and made["events"] == ["mcp"] and Path(made["path"]) == path
    server = _server(path, key)
    words = server["command"] if agent == "opencode" else [server["command"], *server["args"]]
    assert words[-1] == "mcp" and any("convgit" in word for word in words)
    if agent != "codex":  # a project's file made by the install is kept out of git
        assert made["excluded"] and exclude.read_bytes() != excluded
    again = clirun.run("hooks", "install", agent, "--mcp", "--json", cwd=here, env=env).json()
    assert again["changed"] is False
    clirun.run("hooks", "uninstall", agent, "--mcp", cwd=here, env=env)
    assert not path.exists(), "the file the install made goes"
    assert exclude.read_bytes() == excluded

    if theirs is not None:  # the user's own file, with a server of their own
        path.parent.mkdir(parents=True, exist_ok=True)
        before = (json.dumps(theirs, indent=4) + "\n").encode()
    else:
        before = b'model = "o3"\n\n[mcp_servers.theirs]\ncommand = "their-server"\n'
    path.write_bytes(before)
    clirun.run("hooks", "install", agent, "--mcp", cwd=here, env=env)
    assert _server(path, key) is not None
    kept = tomllib.loads(path.read_text()) if theirs is None else json.loads(path.read_text())
    assert kept[key]["theirs"]["command"] == "their-server"
    clirun.run("hooks", "uninstall", agent, "--mcp", cwd=here, env=env)
    assert path.read_bytes() == before, "the user's file has its bytes back"
    gone = clirun.run("hooks", "uninstall", agent, "--mcp", "--json", cwd=here, env=env).json()
    assert gone["changed"] is False


def test_pi_gets_an_extension_of_convgits_that_is_its_mcp_client(repo: GitRepo) -> None:
    """pi has no MCP client: the install writes convgit's own extension, which is one; a file
    of that name that is not convgit's is refused, and uninstall leaves the project as it was."""
    here = repo.path
    exclude = here / ".git" / "info" / "exclude"
    excluded = exclude.read_bytes()
    made = clirun.run("hooks", "install", "pi", "--mcp", "--json", cwd=here).json()
    path = here / ".pi" / "extensions" / "convgit-mcp.ts"
    assert Path(made["path"]) == path and made["events"] == ["mcp"] and made["excluded"]
    text = path.read_text()
    assert text.startswith("// convgit-pi-mcp ") and '"tools/list"' in text
    assert json.loads(text.split("\n", 1)[0].split(" ", 2)[2])["command"][-1] == "mcp"
    clirun.run("hooks", "uninstall", "pi", "--mcp", cwd=here)
    assert not (here / ".pi").exists() and exclude.read_bytes() == excluded
    path.parent.mkdir(parents=True)
    path.write_text("// the user's own\n")
    refused = clirun.run("hooks", "install", "pi", "--mcp", cwd=here, code=1)
    assert "not convgit's" in refused.stderr and path.read_text() == "// the user's own\n"


def test_an_agent_convgit_does_not_know_is_refused_in_one_sentence(repo: GitRepo) -> None:
    refused = clirun.run("hooks", "install", "cursor", "--mcp", cwd=repo.path, code=2)
    assert "cursor" in refused.stderr and "claude-code" in refused.stderr and "pi" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
