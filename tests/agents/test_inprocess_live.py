"""pi's extension and OpenCode's plugin hand their events to the recorder themselves (issue 37):
with the recorder running, a turn of the real CLI reaches it with no process of convgit's
started for any event (every run of the hook's command goes through ``sh -c``, which the test
counts), each event is logged as recorded through the recorder, and the turn is recorded as the
hook records it; with the recorder killed (SIGKILL), the plugin runs the hook's command, which
does the event itself, and nothing is lost."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from convgit.agents.live import inprocess
from tests.agents.hooked import convgit, convgit_json, hook_log, reply_text
from tests.agents.runners import Agent, Run
from tests.agents.script import call, say
from tests.agents.server import ModelServer
from tests.recorded import Recorded, recording
from tests.workspace.gitrepo import GitRepo

pytestmark = pytest.mark.live  # the agent is a fixture the test asks for by name

# the shell the plugins run the hook's command with, first on the agent's PATH: it notes each
# run of convgit's hook, then is the shell
COUNTING_SH = """#!/bin/sh
case "$*" in *" hook pi"*|*" hook opencode"*) echo "$$ $*" >> {log} ;; esac
exec /bin/sh "$@"
"""


@pytest.fixture
def recorded(project: GitRepo, tmp_path: Path) -> Iterator[Recorded]:
    yield from recording(project, tmp_path)


@pytest.mark.parametrize("name", ["pi", "opencode"])
def test_the_plugin_hands_its_events_to_the_recorder_starting_no_process(
    name: str,
    request: pytest.FixtureRequest,
    model_server: ModelServer,
    project: GitRepo,
    recorded: Recorded,
    tmp_path: Path,
) -> None:
    agent: Agent = request.getfixturevalue(name)
    runs = tmp_path / "hook-runs"
    shell = tmp_path / "bin" / "sh"
    shell.parent.mkdir()
    shell.write_text(COUNTING_SH.format(log=runs))
    shell.chmod(0o755)
    env = {
        **{k: v for k, v in recorded.env.items() if v is not None},
        "PATH": f"{shell.parent}{os.pathsep}{agent.env()['PATH']}",
    }
    convgit(project.path, "hooks", "install", name)

    def hook_runs() -> int:
        return len(runs.read_text().splitlines()) if runs.exists() else 0

    def turn(n: int, resume: str | Path | None) -> tuple[list[str], int, str, Run]:
        """Turn ``n`` (a shell call, then a reply): its log lines, the hook's runs, its tree."""
        logged, ran = len(hook_log(project)) if n > 1 else 0, hook_runs()
        model_server.expect(
            call("bash", {"command": f"echo {n} > made-{n}.txt"}), say(f"Done {n}.")
        )
        done = agent.run(f"Make made-{n}.txt", resume=resume, env=env)
        assert done.output == f"Done {n}.", done.stderr
        return hook_log(project)[logged:], hook_runs() - ran, project.oracle(), done

    # the first turn: the hook does the first event itself and starts the recorder (which may
    # take the turn's later events once it runs)
    lines, ran, _, first = turn(1, None)
    assert ran >= 1 and " through the recorder (" not in lines[0], lines
    pid = recorded.wait_running()["pid"]
    resume = first.transcript if name == "pi" else first.session_id

    # with the recorder: every event through it, no process of convgit's started
    events = recorded.json("recorder", "status")["events"]
    lines, ran, at_two, _ = turn(2, resume)
    assert ran == 0, (lines, runs.read_text())
    assert lines and all(" through the recorder (" in line for line in lines), lines
    assert recorded.json("recorder", "status")["events"] == events + len(lines)

    # the recorder killed: the plugin runs the hook's command, which does the event itself (and
    # starts a recorder again, which may take the turn's later events); nothing is lost
    os.kill(pid, signal.SIGKILL)
    recorded.wait_gone(pid)
    lines, ran, at_three, _ = turn(3, resume)
    itself = [line for line in lines if " through the recorder (" not in line]
    assert ran == len(itself) >= 1 and itself[0] == lines[0], lines
    assert all("problem" not in line for line in hook_log(project))

    path = convgit_json(project.path, "log")["entries"]
    said = [reply_text(e) for e in path if e.get("role") in ("user", "assistant") and reply_text(e)]
    assert said == [
        "Make made-1.txt", "Done 1.", "Make made-2.txt", "Done 2.", "Make made-3.txt", "Done 3.",
    ]  # fmt: skip
    replies = [e for e in path if e.get("role") == "assistant" and reply_text(e)]
    trees = [convgit_json(project.path, "show", e["id"])["snapshot"]["tree"] for e in replies]
    assert trees[1:] == [at_two, at_three]


# the plugin's client in OpenCode's Bun, its event handed from the script's own thread: the
# recorder's answer, and the names of the process's threads after it (Bun names a worker's
# thread "Worker"; JSC's own threads are named too: HeapHelper, JITWorker)
IN_BUN = """
import { readdirSync, readFileSync } from "node:fs"
const event = { event: "chat.message", session_id: "ses_bun", cwd: process.cwd(), prompt_id: "m1" }
const out = CONVGIT_RECORDER.hand(process.cwd(), JSON.stringify(event))
await new Promise((done) => setTimeout(done, 300)) // a worker, had one started, has its thread
const name = (task) => readFileSync("/proc/self/task/" + task + "/comm", "utf8").trim()
process.stdout.write(JSON.stringify({ out, threads: readdirSync("/proc/self/task").map(name) }))
"""


def test_opencodes_plugin_hands_an_event_from_the_agents_own_thread(
    opencode: Agent, project: GitRepo, recorded: Recorded, tmp_path: Path
) -> None:
    """In Bun on Linux (OpenCode), the plugin's client speaks to the recorder from the agent's
    own thread (libc's socket calls through bun:ffi), blocking as the hook's process blocks it:
    no worker thread starts for the event (a Bun worker's start cost a turn more than the
    recorder's time for its events), and the event is recorded through the recorder."""
    recorded.hook(b'{"hook_event_name": "SessionStart", "session_id": "s"}')  # starts it
    recorded.wait_running()
    script = tmp_path / "in-bun.mjs"
    script.write_text(inprocess.fragment("opencode", None) + IN_BUN)
    env = {**os.environ, **{k: v for k, v in recorded.env.items() if v is not None}}
    done = subprocess.run(
        [*opencode.binary(), str(script)], cwd=project.path, env={**env, "BUN_BE_BUN": "1"},
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    said = json.loads(done.stdout)
    assert said["out"] is not None, done.stderr
    assert "Worker" not in said["threads"], said
    (line,) = [line for line in recorded.log() if " ses_bun" in line]
    assert " chat.message " in line and " through the recorder" in line, line  # its answer
