"""The rig's own promises: an exhausted script fails the run clearly, a request for another host
is caught, side requests are answered and logged apart, the server is bounded, a run past its
timeout ends with everything it started, a missing install names its command, the installed
agents are the pinned ones, and a text input is a custom tool call over chat completions."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.agents import runners
from tests.agents.dialects import DIALECTS
from tests.agents.runners import Agent, ClaudeCode, Codex, Copilot, Pi, Qwen
from tests.agents.script import Reply, call, say
from tests.agents.server import ModelServer
from tests.polling import poll
from tests.workspace.gitrepo import GitRepo

AGENTS: dict[str, type[Agent]] = {"claude-code": ClaudeCode, "pi": Pi, "codex": Codex}
WRITES = {
    "claude-code": lambda root: call("Write", {"file_path": str(root / "a.txt"), "content": "a"}),
    "pi": lambda root: call("write", {"path": "a.txt", "content": "a"}),
    "codex": lambda root: call("exec_command", {"cmd": "echo a > a.txt"}),
}


@pytest.mark.parametrize("name", AGENTS)
def test_an_exhausted_script_fails_the_run_with_a_clear_message(
    name: str, project: GitRepo, agent_home: Path
) -> None:
    with ModelServer() as server:
        agent = AGENTS[name](server, project.path, agent_home)
        server.expect(WRITES[name](project.path))  # and no reply for the tool's result
        with pytest.raises(AssertionError, match="the script is exhausted") as failed:
            agent.run("Write a.txt")
        assert "last prompt: 'Write a.txt'" in str(failed.value)
        assert len(server.scripted) == 1 and server.problems  # Claude Code retries a few times
        assert all("the script is exhausted" in p for p in server.problems)
        with pytest.raises(AssertionError, match="the script is exhausted"):
            server.check()


def test_a_request_for_another_host_is_caught_as_an_escape(
    project: GitRepo, agent_home: Path
) -> None:
    fetch = (
        "import urllib.request as u; u.urlopen('https://api.anthropic.com/v1/models', timeout=5)"
    )
    command = f"{shlex.quote(sys.executable)} -c {shlex.quote(fetch)}"
    with ModelServer() as server:
        claude = ClaudeCode(server, project.path, agent_home)
        server.expect(call("Bash", {"command": command}), say("It failed."))
        claude.run("Fetch the model list")
        assert [r.path for r in server.escapes] == ["api.anthropic.com:443"]
        assert "403" in server.scripted[1].results()[0].text
        with pytest.raises(AssertionError, match="tried to reach another host"):
            server.check()


def post(url: str, body: object) -> tuple[int, str, bytes]:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST")
    return fetch(request)


def fetch(request: urllib.request.Request | str) -> tuple[int, str, bytes]:
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, answer.headers["Content-Type"], answer.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers["Content-Type"], error.read()


def test_requests_the_script_did_not_expect_are_answered_and_logged_apart(
    model_server: ModelServer,
) -> None:
    url = model_server.url
    ends = {"/v1/messages": b"message_stop", "/v1/chat/completions": b"[DONE]"}
    ends["/v1/responses"] = b"response.completed"
    for path, end in ends.items():
        status, ctype, body = post(url + path, {"model": "m", "stream": True, "input": "title?"})
        assert (
            (status, ctype) == (200, "text/event-stream") and end in body and b"side reply" in body
        )
        status, ctype, body = post(url + path, {"model": "m", "messages": []})
        assert status == 200 and b"side reply" in body and json.loads(body)
    assert post(url + "/v1/messages/count_tokens", {"messages": []})[:2] == (
        200,
        "application/json",
    )
    assert json.loads(fetch(url + "/v1/models")[2]) == {"object": "list", "data": []}
    assert fetch(url + "/v2/nowhere")[0] == 404
    upgrade = urllib.request.Request(url + "/v1/responses", headers={"Upgrade": "websocket"})
    assert fetch(upgrade)[0] == 426

    assert model_server.scripted == [] and model_server.problems == []
    notes = [r.note for r in model_server.side]
    assert notes == ["side request (no tools)"] * 6 + [
        "count_tokens",
        "model listing",
        "unknown endpoint",
        "websocket refused",
    ]


def test_the_server_answers_a_bounded_number_of_requests() -> None:
    with ModelServer(max_requests=2) as server:
        codes = [fetch(server.url + "/v1/models")[0] for _ in range(3)]
        assert codes == [200, 200, 429]
        assert server.problems == [f"more than 2 requests: {server.requests[2].describe()}"]


def test_scripted_replies_never_asked_for_fail_the_check() -> None:
    with ModelServer() as server:
        server.expect(say("never asked"))
        with pytest.raises(AssertionError, match="1 scripted replies were never asked for"):
            server.check()
    with pytest.raises(ValueError, match="needs text, calls or both"):
        Reply()


@pytest.mark.parametrize("name", AGENTS)
def test_a_missing_install_names_the_command_that_installs_it(
    name: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, model_server: ModelServer
) -> None:
    monkeypatch.setattr(runners, "MODULES", tmp_path / "node_modules")
    agent = AGENTS[name](model_server, tmp_path, tmp_path / "home")
    with pytest.raises(pytest.fail.Exception, match=r"run `npm ci --prefix tools/agents`"):
        agent.run("hello")


def test_the_installed_agents_are_the_pinned_versions(
    model_server: ModelServer, tmp_path: Path
) -> None:
    pinned = json.loads((runners.ROOT / "tools" / "agents" / "package.json").read_text())
    versions = pinned["dependencies"]
    home = tmp_path / "home"
    seen = {name: AGENTS[name](model_server, tmp_path, home).version() for name in AGENTS}
    assert seen["claude-code"] == f"{versions['@anthropic-ai/claude-code']} (Claude Code)"
    assert seen["pi"] == versions["@mariozechner/pi-coding-agent"]
    assert seen["codex"] == f"codex-cli {versions['@openai/codex']}"


def test_the_two_newer_agents_are_the_pinned_versions(
    model_server: ModelServer, tmp_path: Path, copilot_cache: Path
) -> None:
    pinned = json.loads((runners.ROOT / "tools" / "agents" / "package.json").read_text())
    versions = pinned["dependencies"]
    home = tmp_path / "home"
    copilot = Copilot(model_server, tmp_path, home, cache=copilot_cache).version()
    assert copilot.splitlines()[0] == f"GitHub Copilot CLI {versions['@github/copilot']}."
    assert Qwen(model_server, tmp_path, home).version() == versions["@qwen-code/qwen-code"]


def test_a_text_input_is_a_custom_tool_call_over_chat_completions(
    model_server: ModelServer,
) -> None:
    """Copilot CLI's ``apply_patch`` over chat completions: a call whose input is text streams
    as a custom tool call, and a request that carries one is read back with its text."""
    patch = "*** Begin Patch\n*** Add File: a.txt\n+a\n*** End Patch\n"
    model_server.expect(call("apply_patch", patch))
    body = {"model": "m", "stream": True, "tools": [{"type": "custom"}], "messages": []}
    request = urllib.request.Request(
        f"{model_server.url}/v1/chat/completions", data=json.dumps(body).encode(), method="POST"
    )
    with urllib.request.urlopen(request) as answer:
        chunks = [line[6:] for line in answer.read().decode().splitlines() if line[:6] == "data: "]
    (tool,) = [t for c in chunks[:-1] for ch in json.loads(c)["choices"]
               for t in ch["delta"].get("tool_calls", [])]  # fmt: skip
    assert (tool["type"], tool["custom"]) == ("custom", {"name": "apply_patch", "input": patch})
    sent = {"messages": [{"role": "assistant", "content": None, "tool_calls": [tool]}]}
    (item,) = DIALECTS["/v1/chat/completions"].items(sent)
    assert (item.kind, item.name, item.input, item.call_id) == (
        "call",
        "apply_patch",
        patch,
        tool["id"],
    )


def gone(marker: str) -> bool:
    """No process has ``marker`` in its command line (a killed orphan is reaped by init within
    moments)."""

    def listed() -> bool:
        listing = subprocess.run(["ps", "-A", "-o", "args="], capture_output=True, text=True)
        return marker not in listing.stdout

    return poll(listed, 2.5)


def test_a_run_past_its_timeout_ends_with_all_it_started_and_undid(
    project: GitRepo, agent_home: Path
) -> None:
    """Codex, whose tools run deepest (launcher, native binary, sandbox, shell) and whose sandbox
    leaves mount points behind when killed outright."""
    marker = "time.sleep(61)"
    sleeper = f"echo > started && {shlex.quote(sys.executable)} -c 'import time; {marker}'"
    with ModelServer() as server:
        codex = Codex(server, project.path, agent_home)
        server.expect(call("exec_command", {"cmd": sleeper}))
        with pytest.raises(AssertionError, match="did not finish within 4 s"):
            codex.run("Sleep", timeout=4)
    assert (project.path / "started").exists()
    assert gone(marker)
    assert not [p.name for p in project.path.iterdir() if p.name in (".codex", ".agents", ".aws")]
