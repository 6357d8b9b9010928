"""The Gemini CLI row of scripts/bench.py (issue 24): one `gemini -p` turn with one shell call,
the real Gemini CLI against the scripted model server of the agent tests, in a repository of
1,000 files with convgit's hooks installed (`hooks install gemini`) against the same without,
alternating in one run: what the hooks add to a turn. Needs Gemini CLI in tools/agents'
node_modules (`npm ci --prefix tools/agents`) or in a folder `AGENT_NODE_MODULES` names."""

from __future__ import annotations

import statistics
import sys
from pathlib import Path
from typing import Any


def bench_gemini_turn(bench: Any, repo: Path, make_tree: Any) -> None:
    sys.path.insert(0, str(repo))
    import pytest

    from tests.agents.runners import Gemini
    from tests.agents.script import call, say
    from tests.agents.server import ModelServer

    hooked = make_tree(bench, bench.root / "gemini-hooked", 1_000)
    plain = make_tree(bench, bench.root / "gemini-plain", 1_000)
    bench.convgit(hooked, "hooks", "install", "gemini")
    extra = {"PYTHONPATH": bench.env["PYTHONPATH"]}  # the hook's convgit is this checkout's
    with ModelServer() as server:
        agents = {
            folder: Gemini(server, folder, bench.root / f"{folder.name}-home")
            for folder in (hooked, plain)
        }
        try:
            agents[plain].binary()
        except pytest.fail.Exception:  # the runner's way of naming the missing install
            bench.notes.append("gemini turn: no Gemini CLI installed; row skipped")
            return
        counter = iter(range(1_000_000))

        def turn(folder: Path) -> float:
            n = next(counter)
            shell = {"command": f"echo {n} > made-{n}.txt"}
            server.expect(call("run_shell_command", shell), say("Done."))
            done = agents[folder].run(f"Make made-{n}.txt", env=extra)
            if done.output != "Done.":
                raise SystemExit(f"bench: gemini turn failed: {done.stderr[-500:]}")
            return done.seconds

        a, b = bench.alternate(lambda: turn(hooked), lambda: turn(plain))
    log = (hooked / ".git" / "convgit" / "logs" / "hooks.log").read_text()
    if "problem" in log or log.count(" AfterAgent ") < len(a):
        bench.notes.append("gemini turn: a hooked turn was not recorded")
    added = statistics.median(a) - statistics.median(b)
    verdict = "pass" if added <= 0.3 else "miss"
    bench.add(
        "`gemini -p` turn with one shell call, convgit's hooks installed", "1,000 files", a, b,
        "the same turn without hooks", None,
        f"adds {added * 1000:.0f} ms a turn; goal <= 300 ms: {verdict}",
    )  # fmt: skip
