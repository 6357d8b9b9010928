"""convgit's MCP server used by real agent CLIs: `convgit hooks install AGENT --mcp` registers it
in the agent's own configuration, the agent (in print mode, against the scripted model server)
starts `convgit mcp` from it, calls its tools, and the model is sent what they answered: the turn
a search finds (with the files its snapshot changed) and a file as that turn's snapshot holds
it, though the working tree has moved on. `hooks uninstall AGENT --mcp` takes it out again."""

from __future__ import annotations

import json
from pathlib import Path

from tests.agents.hooked import convgit
from tests.agents.runners import Agent, ClaudeCode, Gemini, Pi
from tests.agents.script import call, say
from tests.agents.server import ModelServer
from tests.search.oracle import turn
from tests.workspace.gitrepo import GitRepo


def _history(project: GitRepo) -> str:
    """A session with a turn that changed calc.py; the working tree has changed it since."""
    here = project.path
    convgit(here, "init", "--name", "overflow work")
    turn(here, "calc.py overflows on big numbers", role="user")
    project.write("calc.py", "LIMIT = 2 ** 63\n")
    fixed = turn(here, "calc.py now checks the overflow")
    project.write("calc.py", "LIMIT = None  # edited by hand since\n")
    return fixed


def _results(server: ModelServer) -> list[str]:
    """The tool results the model was sent, in order (a JSON object's ``result`` unwrapped)."""
    found = []
    for request in server.requests:
        for item in request.results():
            try:
                value = json.loads(item.text)
            except ValueError:
                value = item.text
            text = value.get("result", item.text) if isinstance(value, dict) else str(value)
            if text not in found:
                found.append(text)
    return found


def _served(agent: Agent, server: ModelServer, project: GitRepo, tool: str, *args: str) -> None:
    fixed = _history(project)
    here = project.path
    name = agent.name
    installed = convgit(here, "hooks", "install", _cli_name(agent), "--mcp", "--json")
    path = Path(json.loads(installed)["path"])
    assert path.is_file()
    server.expect(
        call(tool.format("search"), {"words": ["overflow"], "role": "assistant"}),
        call(tool.format("file_at"), {"path": "calc.py", "entry": fixed}),
        say("found the turn"),
    )
    run = agent.run("which turn fixed the overflow?", *args)
    assert run.output == "found the turn", name
    searched, shown = _results(server)
    assert f"entry {fixed[:8]}" in searched and "its snapshot changed calc.py" in searched, name
    assert "calc.py now checks the overflow" in searched
    assert "\n\nLIMIT = 2 ** 63\n" in shown and "different now" in shown, name
    convgit(here, "hooks", "uninstall", _cli_name(agent), "--mcp")
    assert not path.exists(), "the file the install made goes"


def _cli_name(agent: Agent) -> str:
    return {"Claude Code": "claude-code", "Gemini CLI": "gemini", "pi": "pi"}[agent.name]


def test_claude_code_calls_convgits_tools_through_its_mcp_json(
    model_server: ModelServer, claude_code: ClaudeCode, project: GitRepo
) -> None:
    allowed = "mcp__convgit__search mcp__convgit__file_at"
    _served(claude_code, model_server, project, "mcp__convgit__{}", "--allowedTools", allowed)


def test_gemini_calls_convgits_tools_through_its_settings(
    model_server: ModelServer, gemini: Gemini, project: GitRepo
) -> None:
    _served(gemini, model_server, project, "mcp_convgit_{}")


def test_pi_calls_convgits_tools_through_convgits_extension(
    model_server: ModelServer, pi: Pi, project: GitRepo
) -> None:
    """pi has no MCP client: the install writes an extension of convgit's that is one."""
    _served(pi, model_server, project, "convgit_{}")
