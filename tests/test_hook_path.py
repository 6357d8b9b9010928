"""The hook's path is short (issue 23): an agent's event goes down from the hook entry through
the agent's adapter to the turn (``agents/live/turns.py``), entered once, and from there down
to the mirroring session, the session, the store and git, never back up. Counted on real events
of a real turn: the hook runs in a process of its own under a profiler that notes every call
from one convgit module into another."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from tests import clirun
from tests.test_hook import SESSION, event, line
from tests.workspace.gitrepo import GitRepo

TURNS = "convgit.agents.live.turns"
MIRRORING = "convgit.agents.live.mirroring"

# Runs ``convgit hook claude-code`` in this process, noting each call from a convgit module into
# another (on every thread: the end of a turn snapshots on one of its own), then prints them.
TRACED = """
import json, sys, threading
from collections import Counter
calls = Counter()
def note(frame, what, arg):
    if what != "call":
        return
    callee = frame.f_globals.get("__name__", "")
    caller = frame.f_back.f_globals.get("__name__", "") if frame.f_back else ""
    if callee != caller and callee.startswith("convgit.") and caller.startswith("convgit."):
        calls[caller + " -> " + callee] += 1
sys.setprofile(note)
threading.setprofile(note)
from convgit.agents import hook
hook.run(["claude-code"])
sys.setprofile(None)
sys.stderr.write(json.dumps(calls) + "\\n")
"""


def traced(cwd: Path, stdin: bytes) -> Counter[str]:
    """The calls between convgit's modules while the hook handles ``stdin``."""
    done = subprocess.run(
        [sys.executable, "-c", TRACED],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        env=clirun.environment(),
        timeout=60,
        check=True,
    )
    assert done.stdout == b""  # the hook's own promise, under the profiler too
    found: dict[str, int] = json.loads(done.stderr.decode().splitlines()[-1])
    return Counter(found)


def entries(calls: Counter[str], module: str) -> Counter[str]:
    """The calls into ``module`` from the other modules, by caller."""
    into: Counter[str] = Counter()
    for pair, count in calls.items():
        caller, callee = pair.split(" -> ")
        if callee == module:
            into[caller] += count
    return into


def test_a_turn_enters_the_turn_once_and_never_climbs_back(repo: GitRepo, tmp_path: Path) -> None:
    transcript = tmp_path / f"{SESSION}.jsonl"
    transcript.write_text("")
    clirun.run("hook", "claude-code", cwd=repo.path, input=event(
        "SessionStart", transcript, repo.path, source="startup"
    ))  # fmt: skip
    prompt = traced(repo.path, event("UserPromptSubmit", transcript, repo.path, prompt_id="p-1"))
    with transcript.open("a") as out:
        out.write(line("user", "u-1", None, "Write notes.txt", promptId="p-1"))
        out.write(line("assistant", "a-1", "u-1", [{"type": "text", "text": "Written."}]))
    repo.write("notes.txt", "by the agent\n")
    stop = traced(
        repo.path,
        event("Stop", transcript, repo.path, prompt_id="p-1", last_assistant_message="Written."),
    )
    shown: Any = clirun.run("show", "a-1", "--json", cwd=repo.path).json()
    assert shown["snapshot"]["tree"] == repo.oracle()  # the turn was recorded, as promised

    for calls in (prompt, stop):
        assert entries(calls, TURNS) == Counter({"convgit.agents.hook": 1})
        # below the turn, nothing calls up into it or into the mirroring session
        assert set(entries(calls, MIRRORING)) == {TURNS}
        state = entries(calls, "convgit.agents.live.state")
        assert set(state) <= {TURNS, MIRRORING}
