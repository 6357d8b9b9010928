"""Imports know what they read: `convgit import AGENT FILE` refuses a file another agent wrote
in one sentence (nothing imported), and `convgit import FILE` recognises the agent from the
content and says which. The project's own fixtures through the real CLI; the real samples
through the `samples` fixture, read where they are."""

from __future__ import annotations

from pathlib import Path

import pytest

from convgit.agents import registry
from convgit.agents.recognise import agent_of
from tests.agents.reading.agentfiles import Store

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures"
# one file of each agent's, with what makes it that agent's
OWN = {
    "claude-code": FIXTURES / "claude-code" / "rewind.jsonl",
    "codex": FIXTURES / "codex" / "reasoning-summary.jsonl",
    "copilot": FIXTURES / "copilot" / "failed-tool.jsonl",
    "gemini": FIXTURES / "gemini" / "thoughts-and-tool-calls.json",
    "opencode": FIXTURES / "opencode" / "write-then-bash.json",
    "pi": FIXTURES / "pi" / "v3-compaction.jsonl",
    "qwen": FIXTURES / "qwen" / "failed-tool.jsonl",
}
MORE = {  # the other shapes an agent's file takes
    "claude-code": FIXTURES / "claude-code" / "queued-prompt.jsonl",  # a queue-operation first
    "gemini": FIXTURES / "gemini" / "jsonl-updates-and-rewind.jsonl",  # chat as JSON lines
    "pi": FIXTURES / "pi" / "v1-branched-from.jsonl",  # a v1 header
}

TITLES = {agent.name: agent.title for agent in registry.agents()}


@pytest.mark.parametrize(
    ("named", "actual"),
    [(n, a) for n in sorted(OWN) for a in sorted(OWN) if n != a],
)
def test_a_file_of_another_agent_is_refused_in_one_sentence(
    tmp_path: Path, named: str, actual: str
) -> None:
    store = Store(tmp_path / "work")
    done = store.run("import", named, str(OWN[actual]), code=1)
    words = done.stderr.decode()
    first = words.splitlines()[0]
    assert first == (
        f"convgit: {OWN[actual].name} is {registry.a(TITLES[actual])} session file, not"
        f" {registry.a(TITLES[named])} one; nothing was imported."
    )
    assert f"convgit import {actual} " in words
    assert store.json("sessions")["sessions"] == []  # no junk session


@pytest.mark.parametrize("file", [*OWN.items(), *MORE.items()], ids=lambda f: f"{f[0]}-{f[1].name}")
def test_import_without_an_agent_recognises_it_and_says_which(
    tmp_path: Path, file: tuple[str, Path]
) -> None:
    agent, path = file
    store = Store(tmp_path / "work")
    words = store.run("import", str(path)).stdout.decode()
    assert words.splitlines()[0] == (
        f"{path} is {registry.a(TITLES[agent])} session file (recognised from its content)"
    )
    (session,) = store.json("sessions")["sessions"]
    assert session["agent"] == agent
    again = store.json("import", str(path))["imports"][0]  # the same session, nothing new
    assert again["agent"] == agent and again["new"] == 0


def test_a_file_of_no_agent_is_refused_without_an_agent_and_with_one(tmp_path: Path) -> None:
    store = Store(tmp_path / "work")
    hostile = FIXTURES / "claude-code" / "not-a-transcript.jsonl"
    words = store.run("import", str(hostile), code=1).stderr.decode()
    assert "does not look like a session file of an agent convgit reads" in words
    assert "convgit import AGENT FILE" in words
    assert "Give the pi file" in store.run("import", "pi", code=2).stderr.decode()
    assert store.json("sessions")["sessions"] == []


def test_every_fixture_and_real_sample_is_recognised_as_its_agents(samples: Path) -> None:
    folders = {
        "claude-code": "claude-code",
        "codex": "codex",
        "copilot": "copilot",
        "gemini": "gemini",
        "opencode": "opencode",
        "pi": "pi",
        "qwen": "qwen",
    }
    real = {"claude-code": "claude-code", "codex": "codex", "gemini-cli": "gemini", "pi": "pi"}
    seen: dict[str, int] = {}
    for root, names in ((FIXTURES, folders), (samples, real)):
        for folder, agent in names.items():
            for path in sorted((root / folder).rglob("*")):
                if not path.is_file() or path.suffix not in (".json", ".jsonl"):
                    continue
                if path.name.startswith("bad-") or path.name == "not-a-transcript.jsonl":
                    continue
                assert agent_of(path.read_bytes()) == agent, path
                seen[agent] = seen.get(agent, 0) + 1
    assert sorted(seen) == sorted(TITLES) and min(seen.values()) >= 4
