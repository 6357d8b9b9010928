"""The live-turn rows of scripts/bench.py (issues 24 and 37), two per agent recorded live: one
print-mode turn with one shell call, the agent's real CLI against the scripted model server of
the agent tests, in repositories of 1,000 files, each way alternating in one run (A B C D ...):

* the turn with convgit's hooks installed (`convgit hooks install AGENT`) and the recorder on
  (``CONVGIT_RECORDER=on``: started by the warm-up turn, running before the timed ones), against
  the same turn in a repository without hooks. Goal: the hooks add at most 0.1 s a turn;
* the turn with the hooks and no recorder (``CONVGIT_RECORDER=off``: the fallback, each hook
  doing its event itself), against the hooks another convgit checkout installs (``--against
  PATH``: today's main; its recorder off too). Goal: no slower. Without ``--against``, the
  fallback is set against the turn without hooks instead, as a figure.

Each row's note gives the load average over its runs (the machine's cores are shared), and the
run checks each hooked turn in the hook log: recorded, and the way the row names (through the
recorder or not). Needs tools/agents/node_modules (`npm ci --prefix tools/agents`) or a folder
`AGENT_NODE_MODULES` names; an agent that is not there is left out with a note."""

from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

GOAL = 0.1  # seconds the hooks with the recorder may add to a turn
REPS = 10  # alternating runs of each way (unless `--reps` says)


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
    LiveAgent("opencode", "OpenCode", "bash", "command", "session.idle"),
)


def bench_live_turns(
    bench: Any,
    make_tree: Any,
    repo: Path,
    only: set[str] | None,
    against: Path | None = None,
    reps: int = REPS,
) -> None:
    """The rows of each agent in ``only`` (None: every one), ``reps`` turns each way."""
    sys.path.insert(0, str(repo))
    from tests.agents import runners

    for agent in AGENTS:
        if only is None or agent.name in only:
            _bench_agent(bench, make_tree, agent, getattr(runners, agent.runner), against, reps)


@dataclass
class _Way:
    """One way of running the turn: its repository, runner, environment, and its times."""

    folder: Path
    run: Any
    env: dict[str, str]
    through: bool | None  # its hooks through the recorder, or not; None: no hooks
    seconds: list[float]


def _bench_agent(
    bench: Any, make_tree: Any, agent: LiveAgent, runner: Any, against: Path | None, reps: int
) -> None:
    import pytest

    from tests.agents.script import call, say
    from tests.agents.server import ModelServer

    name = agent.name
    sockets = bench.root / f"{name}-run"  # XDG_RUNTIME_DIR: the recorder's folder of sockets
    sockets.mkdir(mode=0o700)
    here = bench.env["PYTHONPATH"]  # the hook's convgit is this checkout's
    on = {"PYTHONPATH": here, "CONVGIT_RECORDER": "on", "XDG_RUNTIME_DIR": str(sockets)}
    on["CONVGIT_RECORDER_IDLE"] = "3600"
    off = {"PYTHONPATH": here, "CONVGIT_RECORDER": "off"}
    plans: dict[str, tuple[dict[str, str], bool | None]] = {
        "plain": (off, None),
        "recorder": (on, True),
        "fallback": (off, False),
    }
    if against is not None:
        plans["main"] = ({"PYTHONPATH": str(against.resolve()), "CONVGIT_RECORDER": "off"}, False)
    with ModelServer() as server:
        ways: dict[str, _Way] = {}
        for key, (env, through) in plans.items():
            folder = make_tree(bench, bench.root / f"{name}-{key}", 1_000)
            run = runner(server, folder, bench.root / f"{name}-{key}-home")
            ways[key] = _Way(folder, run, env, through, [])
        try:
            ways["plain"].run.binary()
        except pytest.fail.Exception:  # the runner's way of naming the missing install
            bench.notes.append(f"{name} turn: not installed; rows skipped")
            return
        for way in ways.values():
            if way.through is not None:  # that checkout's convgit installs its own hooks
                convgit = [sys.executable, "-m", "convgit", "hooks", "install", name]
                bench.run(convgit, way.folder, env=way.run.env(way.env))
        counter = iter(range(1_000_000))

        def turn(way: _Way) -> float:
            n = next(counter)
            server.expect(call(agent.shell, {agent.argument: f"echo {n} > made-{n}.txt"}))
            server.expect(say("Done."))
            done = way.run.run(f"Make made-{n}.txt", env=way.env)
            if done.output != "Done.":
                raise SystemExit(f"bench: {name} turn failed: {done.stderr[-500:]}")
            return float(done.seconds)

        try:
            for way in ways.values():  # warm-up; the first hooked turn starts the recorder
                turn(way)
            _wait_recorder(bench, ways["recorder"])
            seen = {key: len(_log(way)) for key, way in ways.items()}
            loads = [os.getloadavg()[0]]
            for _ in range(reps):
                for way in ways.values():
                    way.seconds.append(turn(way))
                loads.append(os.getloadavg()[0])
        finally:
            stop = [sys.executable, "-m", "convgit", "recorder", "stop"]
            kept = ways["recorder"]
            env = kept.run.env(kept.env)
            subprocess.run(stop, cwd=kept.folder, env=env, check=False, capture_output=True)
            watch = ["watchman", "watch-del", str(kept.folder)]
            subprocess.run(watch, capture_output=True, check=False)
    hooks: dict[str, str] = {}
    for key, way in ways.items():
        if way.through is not None:
            timed = _log(way)[seen[key] :]
            _check(bench, name, key, agent.ends, timed, way.through, reps)
            hooks[key] = _hook_time(timed, agent.ends)
    load = f"load average {min(loads):.1f}-{max(loads):.1f}"
    base = ways["plain"]
    more = f"{load}; the hooks' own time {hooks['recorder']}"
    _add(bench, name, ways["recorder"], base, "the same turn without hooks", more, GOAL)
    if "main" in ways:
        assert against is not None
        base, baseline = ways["main"], f"the same turn, {against.name}'s hooks (no recorder)"
        main = f"{hooks['main']} for {against.name}"
        more = f"{load}; the hooks' own time {hooks['fallback']}, {main}"
        _add(bench, name, ways["fallback"], base, baseline, more, 0.0, limit=1.0, fallback=True)
    else:
        baseline = "the same turn without hooks"
        more = f"{load}; the hooks' own time {hooks['fallback']}"
        _add(bench, name, ways["fallback"], base, baseline, more, None, fallback=True)


def _add(
    bench: Any,
    name: str,
    ours: _Way,
    base: _Way,
    baseline: str,
    load: str,
    goal: float | None,
    limit: float | None = None,
    fallback: bool = False,
) -> None:
    added = statistics.median(ours.seconds) - statistics.median(base.seconds)
    # the ways ran one after the other in each round: the median of each round's difference
    paired = statistics.median(a - b for a, b in zip(ours.seconds, base.seconds, strict=True))
    how = "no recorder (the hooks' fallback)" if fallback else "the recorder on"
    said = f"adds {added * 1000:+.0f} ms a turn ({paired * 1000:+.0f} ms paired by round)"
    if goal is not None:
        verdict = "pass" if added <= goal else "miss"
        said += f"; goal <= {goal * 1000:+.0f} ms: {verdict}"
    bench.add(
        f"`{name}` print-mode turn with one shell call, convgit's hooks installed, {how}",
        "1,000 files", ours.seconds, base.seconds, baseline, limit, f"{said}; {load}",
    )  # fmt: skip


def _wait_recorder(bench: Any, way: _Way) -> None:
    """Until the recorder the warm-up turn started answers (it warms up first)."""
    status = [sys.executable, "-m", "convgit", "recorder", "status", "--json"]
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        said = bench.run(status, way.folder, env=way.run.env(way.env))
        if json.loads(said.stdout)["running"]:
            return
        time.sleep(0.2)
    raise SystemExit(f"bench: no recorder answered at {way.folder}")


_WHOLE = re.compile(r" \((\d+) ms since the hook started\): ")


def _hook_time(lines: list[str], ends: str) -> str:
    """The hooks' own time a turn, as their log lines say it (from each hook's start, or the
    plugin's hand-over, to its event recorded): the median over the turns, and the events a
    turn."""
    turns: list[tuple[int, int]] = []
    spent = events = 0
    for line in lines:
        found = _WHOLE.search(line)
        spent += int(found.group(1)) if found else 0
        events += 1
        if f" {ends} " in line:
            turns.append((spent, events))
            spent = events = 0
    if not turns:
        return "unknown"
    each = statistics.median(t for t, _ in turns)
    return f"{each:.0f} ms a turn ({statistics.median(e for _, e in turns):.0f} events)"


def _log(way: _Way) -> list[str]:
    path = way.folder / ".git" / "convgit" / "logs" / "hooks.log"
    text = path.read_text() if path.exists() else ""
    return [line for line in text.splitlines() if line[:1].isdigit()]


def _check(
    bench: Any, name: str, key: str, ends: str, lines: list[str], through: bool, reps: int
) -> None:
    """A note unless each timed turn was recorded, every event the way ``through`` says."""
    ended = sum(f" {ends} " in line for line in lines)

    def wrong(line: str) -> bool:
        return "problem" in line or (" through the recorder (" in line) != through

    if ended < reps or any(wrong(line) for line in lines):
        first = next((line for line in lines if wrong(line)), "")
        bench.notes.append(
            f"{name} turn ({key}): {ended} of {reps} turns recorded; {first[:200]}".rstrip("; ")
        )
