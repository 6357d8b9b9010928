"""`convgit run`: one command on several branches' files at once, each in a temporary worktree,
through the real CLI on a real repository. Every test here runs under the guard that the user's
index, HEAD, branches, tags and stash never change, and ends by proving that nothing is left:
no worktree in `git worktree list`, nothing for `git worktree prune`, nothing in the temporary
folder, and no process the commands started still running."""

from __future__ import annotations

import os
import resource
import shlex
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import suppress
from pathlib import Path
from typing import Any

import orjson
import pytest

from convgit import Session
from tests import clirun
from tests.clirun import Ran
from tests.polling import poll, wait_until
from tests.workspace.gitrepo import GitRepo, oracle_tree

START = "def add(a, b):\n    return a - b  # bug\n"
PLAN_A = (
    "def add(a, b):\n    total = a\n    for _ in range(b):\n        total += 1\n    return total\n"
)
PLAN_B = "def add(a, b):\n    return a + b\n"
TEST = (
    "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
    "    assert add(2, -3) == -1\n"
)
# the project's test, without pytest's start-up cost, for the tests that are about the run itself
QUICK_TEST = [sys.executable, "-c", "import sys, calc; sys.exit(calc.add(2, -3) != -1)"]


class Plans:
    """A session with two branches whose snapshots differ: plan A fails the test, plan B passes."""

    def __init__(self, repo: GitRepo, tmp: Path) -> None:
        self.repo, self.tmp = repo, tmp
        repo.write("calc.py", START)
        repo.write("test_calc.py", TEST)
        repo.write("pytest.ini", "[pytest]\n")
        self.session = Session.create(repo.path)
        self.task = self.session.append.user("test_add fails: fix add()").id
        self.session.moves.label(self.task, "task")
        repo.write("calc.py", PLAN_A)
        self.a = self.session.append.assistant("Plan A: count up in a loop.").id
        self.session.moves.label(self.a, "planA")
        self.summary = self.session.moves.fork(
            self.task, summary="Plan A fails for negative numbers."
        )
        repo.write("calc.py", PLAN_B)
        self.b = self.session.append.assistant("Plan B: return a + b.").id
        self.session.moves.label(self.b, "planB")
        self.worktrees = repo.git("worktree", "list", "--porcelain")

    def convgit(self, *args: str, **kwargs: Any) -> Ran:
        return clirun.run(
            "-C", str(self.repo.path), *args, cwd=self.repo.path, env=self.env, code=None,
            **kwargs,
        )  # fmt: skip

    @property
    def env(self) -> dict[str, str]:
        return {**os.environ, "TMPDIR": str(self.tmp)}

    def runs(self, *args: str) -> list[dict[str, Any]]:
        """The rows of ``run --json``; its exit code is 1 exactly when a command failed."""
        done = self.convgit("run", "--json", *args)
        found = orjson.loads(done.stdout)
        assert list(found) == ["command", "runs", "failed"], found
        rows: list[dict[str, Any]] = found["runs"]
        failed = [r for r in rows if r["timed_out"] or r["exit_code"] != 0]
        assert found["failed"] == len(failed)
        assert done.code == (1 if failed else 0), done.stderr
        return rows

    def refused(self, *args: str, code: int = 1, **kwargs: Any) -> str:
        """Run, expect ``code`` and one sentence on stderr, and return it."""
        done = self.convgit(*args, **kwargs)
        assert done.code == code, (done.stdout, done.stderr)
        assert "Traceback" not in done.stderr
        first = done.stderr.splitlines()[0]
        assert first.startswith("convgit: ") and first.endswith("."), done.stderr
        return done.stderr

    def assert_nothing_left(self) -> None:
        repo = self.repo
        assert repo.git("worktree", "list", "--porcelain") == self.worktrees
        assert repo.git("worktree", "prune", "--dry-run", "--verbose") == ""
        admin = Path(repo.git("rev-parse", "--path-format=absolute", "--git-common-dir").strip())
        assert not list((admin / "worktrees").glob("*"))
        assert not list(self.tmp.iterdir()), list(self.tmp.iterdir())


@pytest.fixture
def plans(repo: GitRepo, tmp_path: Path) -> Plans:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    return Plans(repo, tmp)


@pytest.fixture
def pids(tmp_path: Path) -> Iterator[Path]:
    """A file the commands write their process ids to; whatever is still running at the end
    (a failed test) is killed, so no test leaves a process behind."""
    path = tmp_path / "pids"
    yield path
    for pid in path.read_text().split() if path.exists() else []:
        with suppress(ProcessLookupError):
            os.kill(int(pid), signal.SIGKILL)


def alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie waiting for its parent to reap it has stopped)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    except OSError:  # no /proc: ask the kernel
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return state != "Z"


def wait_for_lines(path: Path, count: int, seconds: float = 60) -> list[int]:
    def lines() -> list[int]:
        written = path.read_text().split() if path.exists() else []
        return [int(pid) for pid in written] if len(written) >= count else []

    return wait_until(lines, f"{path} to get {count} lines", seconds)


def test_run_shows_each_branchs_result_in_order_and_leaves_the_users_files_alone(
    plans: Plans,
) -> None:
    repo = plans.repo
    repo.write("calc.py", "work in progress\n")  # the files the user is working on
    repo.write("scratch.txt", "untracked\n")
    before = repo.digest()
    done = plans.convgit("run", "planA", "planB", "--", sys.executable, "-m", "pytest", "-q")
    assert done.code == 1, done.stderr
    assert done.stderr == "convgit: 1 of 2 commands failed (planA: exit 1).\n"
    rows = [line.split() for line in done.stdout.splitlines() if not line.startswith(" ")]
    assert [row[:4] for row in rows] == [
        ["planA", plans.a, "exit", "1"],
        ["planB", plans.b, "exit", "0"],
    ]
    blocks = done.stdout.split("\nplanB")
    assert "1 failed" in blocks[0] and "1 passed" in blocks[1]
    logs = [Path(line.split("log: ")[1]) for line in done.stdout.splitlines() if "log: " in line]
    assert len(logs) == 2
    assert "FAILED test_calc.py::test_add" in logs[0].read_text()
    assert "1 passed" in logs[1].read_text()
    assert logs[0].parent.parent == repo.path / ".git" / "convgit" / "runs"
    assert repo.digest() == before
    plans.assert_nothing_left()


def test_run_json_lists_every_ref_in_the_order_given(plans: Plans) -> None:
    rows = plans.runs("planB", plans.a[:6], "--", *QUICK_TEST)
    snapshots = plans.session.track.sidecar.snapshots
    keys = ["ref", "entry", "commit", "exit_code", "seconds", "timed_out", "output"]
    assert [list(row) for row in rows] == [keys, keys]
    assert [(r["ref"], r["entry"], r["exit_code"], r["timed_out"]) for r in rows] == [
        ("planB", plans.b, 0, False),
        (plans.a[:6], plans.a, 1, False),
    ]
    assert [r["commit"] for r in rows] == [snapshots[plans.b].commit, snapshots[plans.a].commit]
    assert all(isinstance(r["seconds"], float) and r["seconds"] > 0 for r in rows)
    assert all(Path(r["output"]).is_file() for r in rows)
    plans.assert_nothing_left()


def test_run_exits_1_when_a_command_failed_after_running_every_ref(plans: Plans) -> None:
    """Keep-going: a failure never stops the other REFs (one at a time, plan A first, plan B
    still runs); the exit code says whether every command succeeded."""
    done = plans.convgit("run", "--jobs", "1", "planA", "planB", "--", *QUICK_TEST)
    assert done.code == 1
    assert done.stderr == "convgit: 1 of 2 commands failed (planA: exit 1).\n"
    assert [line.split()[:4] for line in done.stdout.splitlines() if line[:1] != " "] == [
        ["planA", plans.a, "exit", "1"],
        ["planB", plans.b, "exit", "0"],
    ]
    done = plans.convgit("run", "planB", "--", *QUICK_TEST)
    assert done.code == 0 and done.stderr == "", done.stderr
    plans.assert_nothing_left()


def test_dot_runs_the_files_of_the_working_tree_beside_a_snapshot(plans: Plans) -> None:
    repo = plans.repo
    repo.write("calc.py", "def add(a, b):\n    return b + a  # not snapshotted yet\n")
    before = repo.digest()
    command = [*QUICK_TEST[:2], "open('written-by-the-run.txt', 'w').write('x'); " + QUICK_TEST[2]]
    for chosen in ([".", "planA"], ["--worktree", "planA"]):
        rows = plans.runs(*chosen, "--", *command)
        assert [(r["ref"], r["entry"], r["exit_code"]) for r in rows] == [
            (".", None, 0),
            ("planA", plans.a, 1),
        ]
        # the files as they are now, as git would stage them
        files_now = repo.git("rev-parse", f"{rows[0]['commit']}^{{tree}}").strip()
        assert files_now == oracle_tree(repo.path)
    assert repo.digest() == before  # what the command wrote stayed in its worktree
    plans.assert_nothing_left()


def test_note_records_each_result_at_the_end_of_its_branch_and_the_active_leaf_stays(
    plans: Plans,
) -> None:
    s = plans.session
    s.moves.switch(plans.a)
    a_end = s.append.user("Still failing for negative numbers.").id  # plan A's branch goes on
    elsewhere = s.moves.fork(
        plans.task, summary="Try something else."
    )  # the active leaf: a 3rd branch
    done = plans.convgit("run", "--note", "planA", "planB", "--", *QUICK_TEST)
    assert done.code == 1, done.stderr  # plan A's command failed
    s = Session.open(plans.repo.path)
    assert s.conversation.leaf == elsewhere
    notes = {
        r["parentId"]: r
        for r in s.conversation.tree.entries.values()
        if r["type"] == "note" and r["source"] == "run"
    }
    assert set(notes) == {a_end, plans.b}
    assert "exited with code 1" in notes[a_end]["text"]
    assert "exited with code 0" in notes[plans.b]["text"]
    assert notes[a_end]["id"] in done.stdout  # the report names the notes
    # the model on each branch sees its own result, and the active branch sees neither
    context_a = s.conversation.context(notes[a_end]["id"]).messages
    assert context_a[-1]["content"].startswith("Note from convgit: `")
    assert not any("run by convgit" in str(m["content"]) for m in s.conversation.context().messages)
    plans.assert_nothing_left()


def test_note_below_the_active_leaf_moves_it_down_its_own_branch_only(plans: Plans) -> None:
    s = plans.session
    s.moves.switch(plans.b)
    done = plans.convgit("run", "--note", "planB", "planA", "--", *QUICK_TEST)
    assert done.code == 1, done.stderr  # plan A's command failed
    s = Session.open(plans.repo.path)
    note = s.conversation.tree.entries[s.conversation.leaf]
    assert (note["type"], note["parentId"]) == ("note", plans.b)
    assert "exited with code 0" in note["text"]
    on_a = [
        c
        for c in s.conversation.tree.children[plans.a]
        if s.conversation.tree.entries[c]["type"] == "note"
    ]
    assert len(on_a) == 1 and "exited with code 1" in s.conversation.tree.entries[on_a[0]]["text"]


def test_note_never_lands_between_a_tool_call_and_its_result(plans: Plans) -> None:
    s = plans.session
    s.moves.switch(plans.a)
    call = {"type": "tool_call", "id": "call-1", "name": "bash", "input": {"cmd": "pytest"}}
    s.append.assistant([{"type": "text", "text": "running the tests"}, call])
    s.moves.switch(plans.b)
    session_bytes = s.conversation.file.path.read_bytes()
    words = plans.refused("run", "--note", "planA", "planB", "--", *QUICK_TEST)
    assert "tool call call-1" in words
    assert s.conversation.file.path.read_bytes() == session_bytes
    assert not (plans.repo.path / ".git" / "convgit" / "runs").exists()  # nothing was run
    plans.assert_nothing_left()


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_interrupting_a_run_stops_its_commands_and_removes_its_worktrees(
    plans: Plans, pids: Path, signum: signal.Signals
) -> None:
    script = f"echo $$ >> {shlex.quote(str(pids))}; sleep 300 & echo $! >> {pids}; wait"
    command = ["-C", str(plans.repo.path), "run"]
    run = clirun.start(
        *command, "planA", "planB", "--", "sh", "-c", script, cwd=plans.repo.path,
        env=plans.env, text=True, group=True,
    )  # fmt: skip
    started = wait_for_lines(pids, 4)
    os.killpg(run.pid, signum)  # as a terminal's Ctrl-C does: to the whole process group
    _, err = run.communicate(timeout=60)
    assert run.returncode == 128 + signum
    assert err.startswith(f"convgit: The run was interrupted by {signum.name}")
    assert "Traceback" not in err and len(err.splitlines()) == 1
    assert not [pid for pid in started if alive(pid)]
    plans.assert_nothing_left()


def test_the_worktrees_and_commands_of_a_run_killed_outright_go_with_the_next_run(
    plans: Plans, pids: Path
) -> None:
    """SIGKILL: no clean-up can run, and its commands (each with a child in its group) run on
    in their worktrees. The next run stops them before it removes those worktrees."""
    script = f"echo $$ >> {shlex.quote(str(pids))}; sleep 300 & echo $! >> {pids}; wait"
    command = ["-C", str(plans.repo.path), "run"]
    killed = clirun.start(
        *command, "planA", "planB", "--", "sh", "-c", script, cwd=plans.repo.path,
        env=plans.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    started = wait_for_lines(pids, 4)
    killed.kill()
    killed.wait()
    assert all(alive(pid) for pid in started)
    left = plans.repo.git("worktree", "list", "--porcelain")
    assert left.count("worktree ") == plans.worktrees.count("worktree ") + 2
    rows = plans.runs("planB", "--", "true")
    assert [r["exit_code"] for r in rows] == [0]
    assert not [pid for pid in started if alive(pid)], "the killed run's commands run on"
    plans.assert_nothing_left()


def _slow_checkouts(plans: Plans) -> None:
    """Checking a snapshot out takes a few seconds: every file goes through a filter
    that sleeps (as git-lfs may take its time), named by the repository's config."""
    attributes = plans.tmp.parent / "attributes"
    attributes.write_text("* filter=slow\n")
    plans.repo.git("config", "core.attributesFile", str(attributes))
    plans.repo.git("config", "filter.slow.smudge", "sleep 0.5; cat")
    plans.repo.git("config", "filter.slow.clean", "cat")


def _gits_checking_out(base: Path) -> list[int]:
    """The git processes still checking a worktree out under ``base``."""
    found = []
    for name in os.listdir("/proc"):
        with suppress(OSError):
            if name.isdigit() and str(base).encode() in Path(f"/proc/{name}/cmdline").read_bytes():
                found.append(int(name))
    return found


@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_a_run_killed_while_it_checks_out_leaves_nothing_that_breaks_the_next_run(
    plans: Plans, signum: signal.Signals
) -> None:
    """Killed (SIGKILL) or stopped (SIGTERM, to convgit alone) while git checks its worktrees
    out: the next run, started at once, checks the same snapshots out and runs. A git killed
    convgit left behind went on writing into git's admin folder of its worktree, holding its
    index lock, and the next checkout failed ("Could not write new index file")."""
    _slow_checkouts(plans)
    run = clirun.start(
        "-C", str(plans.repo.path), "run", "planA", "planB", "--", "true",
        cwd=plans.repo.path, env=plans.env,
    )  # fmt: skip
    began = poll(
        lambda: list(plans.tmp.glob("convgit-run-*/*/calc.py")) or run.poll() is not None, 60, 0.01
    )
    assert began and list(plans.tmp.glob("convgit-run-*/*/calc.py")), "no checkout began"
    base = next(plans.tmp.glob("convgit-run-*"))
    run.send_signal(signum)
    _, err = run.communicate(timeout=60)
    assert run.returncode == (-signum if signum == signal.SIGKILL else 128 + signum), err
    if signum == signal.SIGTERM:
        assert err.decode().startswith("convgit: The run was interrupted by SIGTERM")
        assert not _gits_checking_out(base)

    rows = plans.runs("planA", "planB", "--", *QUICK_TEST)
    assert [r["exit_code"] for r in rows] == [1, 0]
    assert not _gits_checking_out(base), "a git of the killed run is still checking out"
    plans.assert_nothing_left()


def test_a_timeout_stops_the_whole_group_while_the_other_runs_finish(
    plans: Plans, pids: Path
) -> None:
    # plan A's files make the command hang, ignoring SIGTERM, with a child that ignores it too
    stuck = f"trap '' TERM; echo $$ >> {pids}; sleep 300 & echo $! >> {pids}; wait; wait"
    script = f"if grep -q 'a + b' calc.py; then echo quick; else {stuck}; fi"
    rows = plans.runs("planA", "planB", "--timeout", "1.5", "--", "sh", "-c", script)
    assert [(r["exit_code"], r["timed_out"]) for r in rows] == [(None, True), (0, False)]
    assert 1.5 <= rows[0]["seconds"] < 60
    assert not [pid for pid in wait_for_lines(pids, 2) if alive(pid)]
    assert Path(rows[1]["output"]).read_text() == "quick\n"
    plans.assert_nothing_left()


@pytest.mark.parametrize(
    ("options", "command", "words", "code"),
    [
        ([], ["no-such-command-here"], "There is no command 'no-such-command-here' on PATH", 1),
        ([], ["./missing.sh"], "There is no missing.sh in the snapshot of", 1),
        (["--link", "no-such-folder"], ["true"], "There is no no-such-folder in the working", 1),
        (["--link", "calc.py"], ["true"], "calc.py is in the snapshot of", 1),
        (["--link", "../outside"], ["true"], "is outside the working tree", 1),
        (["--jobs", "0"], ["true"], "--jobs must be at least 1", 2),
        (["--timeout", "soon"], ["true"], "--timeout takes a number", 2),
    ],
    ids=[
        "no-command",
        "not-in-snapshot",
        "no-link",
        "tracked-link",
        "outside-link",
        "jobs",
        "time",
    ],
)
def test_what_cannot_run_is_refused_in_one_sentence_before_anything_is_made(
    plans: Plans, options: list[str], command: list[str], words: str, code: int
) -> None:
    before = plans.repo.digest()
    stderr = plans.refused("run", "planA", "planB", *options, "--", *command, code=code)
    assert words in stderr
    assert not (plans.repo.path / ".git" / "convgit" / "runs").exists()
    assert plans.repo.digest() == before
    plans.assert_nothing_left()


def test_a_ref_without_a_snapshot_or_a_command_is_refused(plans: Plans) -> None:
    words = plans.refused("run", "planA", plans.summary, "--", "true")
    assert f"Entry {plans.summary} has no snapshot." in words
    assert "Give the command to run after --." in plans.refused("run", "planA", code=2)
    plans.assert_nothing_left()


def test_a_checkout_that_fails_half_way_leaves_nothing_behind(plans: Plans) -> None:
    """A write that fails in the middle of a checkout (here a file-size limit, as a full disk
    would): the run stops, and the half-made worktree goes with the finished one."""
    s, repo = plans.session, plans.repo
    s.moves.switch(plans.task)
    repo.write("data.bin", os.urandom(3 * 1024 * 1024))
    big = s.append.assistant("Plan C: with a data file.").id
    (repo.path / "data.bin").unlink()
    before = repo.digest()

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (1024 * 1024, 1024 * 1024))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    words = plans.refused("run", "planB", big, "--", "true", preexec_fn=limited)
    assert f"Could not check out the snapshot of {big} in a temporary worktree" in words
    assert repo.digest() == before
    plans.assert_nothing_left()


def test_link_makes_an_ignored_folder_available_and_leaves_it_intact(plans: Plans) -> None:
    repo = plans.repo
    repo.write(".gitignore", "tools/\n")
    repo.write("tools/check.sh", '#!/bin/sh\necho "tool ran beside $(cat calc.py | wc -l)"\n')
    (repo.path / "tools" / "check.sh").chmod(0o755)
    before = repo.digest()
    rows = plans.runs("planA", "planB", "--link", "tools", "--", "tools/check.sh")
    assert [r["exit_code"] for r in rows] == [0, 0]
    outputs = [Path(r["output"]).read_text() for r in rows]
    assert outputs == ["tool ran beside 5\n", "tool ran beside 2\n"]
    assert repo.digest() == before  # the link went, what it pointed at stayed
    plans.assert_nothing_left()
