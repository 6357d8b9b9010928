"""The live-turn rows of scripts/bench.py for pi and Codex (issue 24): one print-mode turn with
one shell call, the real CLI against the scripted model server of the agent tests, in a
repository of 1,000 files with convgit's hooks installed (`convgit hooks install pi|codex`)
against the same turn in a repository without, alternating in one run. Goal: the hooks add at
most 0.3 s a turn. Needs tools/agents/node_modules (`npm ci --prefix tools/agents`); an agent
that is not there is left out with a note."""

from __future__ import annotations

import statistics
import sys
from pathlib import Path
from typing import Any

GOAL = 0.3  # seconds the hooks may add to a turn


def bench_live_turns(bench: Any, make_tree: Any, repo: Path) -> None:
    sys.path.insert(0, str(repo))
    from tests.agents.runners import MODULES, Codex, Pi
    from tests.agents.script import call, say
    from tests.agents.server import ModelServer

    agents: list[tuple[str, Any, str, Any]] = [
        ("pi", Pi, "@mariozechner/pi-coding-agent/dist/cli.js", "bash"),
        ("codex", Codex, "@openai/codex-*/vendor/*/bin/codex", "exec_command"),
    ]
    for name, runner, installed, shell in agents:
        if not sorted(MODULES.glob(installed)):
            bench.notes.append(f"{name} turn: not in tools/agents/node_modules; row skipped")
            continue
        _bench_agent(bench, make_tree, name, runner, shell, (ModelServer, call, say))


def _bench_agent(
    bench: Any, make_tree: Any, name: str, runner: Any, shell: str, rig: tuple[Any, Any, Any]
) -> None:
    model_server, call, say = rig
    hooked = make_tree(bench, bench.root / f"{name}-hooked", 1_000)
    plain = make_tree(bench, bench.root / f"{name}-plain", 1_000)
    extra = {"PYTHONPATH": bench.env["PYTHONPATH"]}  # the hook's convgit is this checkout's
    with model_server() as server:
        runs = {
            folder: runner(server, folder, bench.root / f"{folder.name}-home")
            for folder in (hooked, plain)
        }
        bench.convgit(hooked, "hooks", "install", name, env=runs[hooked].env(extra))
        counter = iter(range(1_000_000))

        def turn(folder: Path) -> float:
            n = next(counter)
            command = f"echo {n} > made-{n}.txt"
            arguments = {"cmd": command} if shell == "exec_command" else {"command": command}
            server.expect(call(shell, arguments), say("Done."))
            done = runs[folder].run(f"Make made-{n}.txt", env=extra)
            if done.output != "Done.":
                raise SystemExit(f"bench: {name} turn failed: {done.stderr[-500:]}")
            return float(done.seconds)

        a, b = bench.alternate(lambda: turn(hooked), lambda: turn(plain))
    log = (hooked / ".git" / "convgit" / "logs" / "hooks.log").read_text()
    if "problem" in log or log.count(" Stop ") < len(a):
        bench.notes.append(f"{name} turn: a hooked turn was not recorded")
    added = statistics.median(a) - statistics.median(b)
    verdict = "pass" if added <= GOAL else "miss"
    bench.add(
        f"`{name}` print-mode turn with one shell call, convgit's hooks installed",
        "1,000 files", a, b, "the same turn without hooks", None,
        f"adds {added * 1000:.0f} ms a turn; goal <= {GOAL * 1000:.0f} ms: {verdict}",
    )  # fmt: skip
