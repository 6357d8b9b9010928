"""The live-turn rows of scripts/bench.py (issue 24), one per agent recorded live: one
print-mode turn with one shell call, the agent's real CLI against the scripted model server of
the agent tests, in a repository of 1,000 files with convgit's hooks installed (`convgit hooks
install AGENT`) against the same turn in a repository without, alternating in one run. Goal:
the hooks add at most 0.3 s a turn. Needs tools/agents/node_modules (`npm ci --prefix
tools/agents`) or a folder `AGENT_NODE_MODULES` names; an agent that is not there is left out
with a note."""

from __future__ import annotations

import statistics
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

GOAL = 0.3  # seconds the hooks may add to a turn


@dataclass(frozen=True)
class LiveAgent:
    name: str  # as `convgit hooks install` names it
    runner: str  # its runner in tests/agents/runners.py
    shell: str  # its shell tool, and the argument that takes the command
    argument: str
    ends: str  # the event the hook log names at a turn's end


AGENTS = (
    LiveAgent("claude-code", "ClaudeCode", "Bash", "command", "Stop"),
    LiveAgent("gemini", "Gemini", "run_shell_command", "command", "AfterAgent"),
    LiveAgent("pi", "Pi", "bash", "command", "Stop"),
    LiveAgent("codex", "Codex", "exec_command", "cmd", "Stop"),
)


def bench_live_turns(bench: Any, make_tree: Any, repo: Path, only: set[str] | None) -> None:
    """The row of each agent in ``only`` (None: every one)."""
    sys.path.insert(0, str(repo))
    from tests.agents import runners

    for agent in AGENTS:
        if only is None or agent.name in only:
            _bench_agent(bench, make_tree, agent, getattr(runners, agent.runner))


def _bench_agent(bench: Any, make_tree: Any, agent: LiveAgent, runner: Any) -> None:
    import pytest

    from tests.agents.script import call, say
    from tests.agents.server import ModelServer

    name = agent.name
    hooked = make_tree(bench, bench.root / f"{name}-hooked", 1_000)
    plain = make_tree(bench, bench.root / f"{name}-plain", 1_000)
    extra = {"PYTHONPATH": bench.env["PYTHONPATH"]}  # the hook's convgit is this checkout's
    with ModelServer() as server:
        runs = {
            folder: runner(server, folder, bench.root / f"{folder.name}-home")
            for folder in (hooked, plain)
        }
        try:
            runs[plain].binary()
        except pytest.fail.Exception:  # the runner's way of naming the missing install
            bench.notes.append(f"{name} turn: not installed; row skipped")
            return
        bench.convgit(hooked, "hooks", "install", name, env=runs[hooked].env(extra))
        counter = iter(range(1_000_000))

        def turn(folder: Path) -> float:
            n = next(counter)
            server.expect(call(agent.shell, {agent.argument: f"echo {n} > made-{n}.txt"}))
            server.expect(say("Done."))
            done = runs[folder].run(f"Make made-{n}.txt", env=extra)
            if done.output != "Done.":
                raise SystemExit(f"bench: {name} turn failed: {done.stderr[-500:]}")
            return float(done.seconds)

        a, b = bench.alternate(lambda: turn(hooked), lambda: turn(plain))
    log = (hooked / ".git" / "convgit" / "logs" / "hooks.log").read_text()
    if "problem" in log or log.count(f" {agent.ends} ") < len(a):
        bench.notes.append(f"{name} turn: a hooked turn was not recorded")
    added = statistics.median(a) - statistics.median(b)
    verdict = "pass" if added <= GOAL else "miss"
    bench.add(
        f"`{name}` print-mode turn with one shell call, convgit's hooks installed",
        "1,000 files", a, b, "the same turn without hooks", None,
        f"adds {added * 1000:.0f} ms a turn; goal <= {GOAL * 1000:.0f} ms: {verdict}",
    )  # fmt: skip
