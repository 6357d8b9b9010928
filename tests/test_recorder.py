"""The recorder (issue 37): one process per working tree that takes its hooks' events, started
by the first hook that finds none; the hooks are thin clients that do the work themselves
whenever the recorder is absent, stale, of another version, another user's or dead. Run with
the real CLI, the real watchman and real repositories; tests/recorded.py drives the hooks."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import clirun
from tests.polling import wait_until
from tests.recorded import Claude, Recorded, alive, no_lock_is_left, recording
from tests.workspace.gitrepo import GitRepo


@pytest.fixture
def recorded(repo: GitRepo, tmp_path: Path) -> Iterator[Recorded]:
    yield from recording(repo, tmp_path)


def started(recorded: Recorded, claude: Claude) -> dict[str, object]:
    """The session's first event (the hook does it itself, and starts the recorder); the
    recorder's status once it answers."""
    recorded.hook(claude.start())
    return recorded.wait_running()


def test_hooks_through_the_recorder_record_each_turn_and_say_so(
    recorded: Recorded, tmp_path: Path
) -> None:
    repo, claude = recorded.repo, Claude(tmp_path / "claude", recorded.repo.path)
    running = started(recorded, claude)
    assert recorded.log()[-1].split(": ok in ")[1].split(":")[0].endswith("since the hook started)")
    assert "through the recorder" not in recorded.log()[-1]  # the first event: the hook's own
    for turn in range(3):
        repo.write("src/app.py", f"print('edited by the user {turn}')\n")
        at_prompt = repo.oracle()
        recorded.hook(claude.prompt())
        repo.write(f"made-{turn}.txt", f"made by the agent in turn {turn}\n")
        at_stop = repo.oracle()
        recorded.hook(claude.reply())
        prompt, reply = claude.ids()
        assert recorded.json("show", prompt)["snapshot"]["tree"] == at_prompt
        assert recorded.json("show", reply)["snapshot"]["tree"] == at_stop
    lines = recorded.log()[1:]
    assert len(lines) == 6 and all(" through the recorder (" in line for line in lines), lines
    status = recorded.json("status")
    assert status["recorder"]["running"] and status["recorder"]["pid"] == running["pid"]
    assert status["recorder"]["events"] == 6 and status["recorder"]["watcher"].startswith(
        "watchman "
    )
    assert "recorder:" not in recorded.cli("status").stdout  # said with -v
    words = recorded.cli("status", "-v").stdout.splitlines()
    assert f"recorder: pid {running['pid']}" in "\n".join(words)
    assert any(w.startswith("  last snapshot: patched: ") for w in words), words
    timing = recorded.json("hooks", "status")["timing"]  # each event's whole time, both ways
    assert timing["recorder"]["events"] == 6 and timing["hook"]["events"] == 1, timing
    assert all(isinstance(way["median_ms"], int) for way in timing.values()), timing
    said = recorded.cli("hooks", "status").stdout
    assert "ms through the recorder (median of 6)" in said and "ms without it (median of 1)" in said


def test_the_socket_is_the_users_alone(recorded: Recorded, tmp_path: Path) -> None:
    started(recorded, Claude(tmp_path / "claude", recorded.repo.path))
    folder = recorded.folder
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    (sock,) = folder.glob("*.sock")
    assert stat.S_ISSOCK(sock.lstat().st_mode) and stat.S_IMODE(sock.lstat().st_mode) == 0o600


def test_another_users_connection_is_refused(recorded: Recorded, tmp_path: Path) -> None:
    """Even with the folder and socket opened to everyone, the recorder answers another uid's
    connection with a refusal and takes nothing from it."""
    if os.getuid() != 0:
        pytest.skip("connecting as another user needs root")
    started(recorded, Claude(tmp_path / "claude", recorded.repo.path))
    (own,) = recorded.folder.glob("*.sock")
    own.chmod(0o777)
    shared = Path(tempfile.mkdtemp(prefix="convgit-shared-", dir="/tmp"))
    shared.chmod(0o755)
    sock = shared / "sock"
    os.link(own, sock)  # the same socket, where every user can reach it
    code = (
        "import os, socket, sys; os.setgid(65534); os.setuid(65534);"
        "s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]);"
        "sys.stdout.buffer.write(s.recv(1000))"
    )
    done = subprocess.run([sys.executable, "-c", code, str(sock)], capture_output=True, timeout=30)
    assert done.stdout == b"Frefused: another user's connection", done
    said = recorded.json("recorder", "status")
    assert said["running"], said["why"]  # it is still there: nothing was taken
    log = (recorded.repo.path / ".git" / "convgit" / "logs" / "recorder.log").read_text()
    assert "refused a connection of another user" in log
    shutil.rmtree(shared)
    own.chmod(0o600)


def test_a_stale_socket_is_replaced_and_the_hook_does_its_own_work_meanwhile(
    recorded: Recorded, tmp_path: Path
) -> None:
    repo, claude = recorded.repo, Claude(tmp_path / "claude", recorded.repo.path)
    first = started(recorded, claude)
    key = recorded.key()
    recorded.cli("recorder", "stop")
    recorded.wait_gone(int(str(first["pid"])))
    stale = recorded.folder / f"{key}.sock"  # a socket no process listens on
    left = socket.socket(socket.AF_UNIX)
    left.bind(str(stale))
    left.close()
    recorded.allow_start()
    repo.write("src/app.py", "print('while the socket was stale')\n")
    at_prompt = repo.oracle()
    recorded.hook(claude.prompt())
    assert " through the recorder" not in recorded.log()[-1]
    prompt, _ = claude.ids()
    again = recorded.wait_running()
    assert again["pid"] != first["pid"]
    recorded.hook(claude.reply())
    assert " through the recorder" in recorded.log()[-1]
    assert recorded.json("show", prompt)["snapshot"]["tree"] == at_prompt


def test_a_recorder_of_another_version_is_told_to_leave(recorded: Recorded, tmp_path: Path) -> None:
    """A recorder started by an older convgit (a copy of this one that says another version):
    the next event of this convgit's hook tells it to leave, does its own work, and the
    recorder started after it is this convgit's."""
    older = tmp_path / "older"
    shutil.copytree(Path(__file__).parent.parent / "convgit", older / "convgit")
    init = older / "convgit" / "__init__.py"
    init.write_text(init.read_text().replace('__version__ = "0.1.0"', '__version__ = "0.0.9"'))
    repo, claude = recorded.repo, Claude(tmp_path / "claude", recorded.repo.path)
    path = f"{older}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"
    recorded.hook(claude.start(), PYTHONPATH=path)
    old = recorded.wait_running()
    assert old["version"] == "0.0.9"
    recorded.allow_start()
    repo.write("src/app.py", "print('this version')\n")
    recorded.hook(claude.prompt())
    assert " through the recorder" not in recorded.log()[-1]
    recorded.wait_gone(int(str(old["pid"])))
    new = recorded.wait_running()
    assert any("left: convgit 0.1.0 at" in line for line in recorded.recorder_log())
    new = recorded.wait_running()
    assert new["version"] == "0.1.0" and new["pid"] != old["pid"]
    recorded.hook(claude.reply())
    assert " through the recorder" in recorded.log()[-1]


def test_the_store_deleted_under_a_running_recorder(recorded: Recorded, tmp_path: Path) -> None:
    """The store goes (`rm -rf .git/convgit`) while the recorder runs: the next event is not
    taken by it (it leaves); the hook records it itself, in a store made anew."""
    repo, claude = recorded.repo, Claude(tmp_path / "claude", recorded.repo.path)
    running = started(recorded, claude)
    recorded.hook(claude.prompt())
    shutil.rmtree(repo.path / ".git" / "convgit")
    repo.write("made.txt", "after the store went\n")
    at_stop = repo.oracle()
    recorded.hook(claude.reply())
    recorded.wait_gone(int(str(running["pid"])))
    assert " through the recorder" not in recorded.log()[-1]
    _, reply = claude.ids()
    assert recorded.json("show", reply)["snapshot"]["tree"] == at_stop
    assert any("left: its store" in line for line in recorded.recorder_log())


def test_two_agents_hooks_at_once(recorded: Recorded, tmp_path: Path) -> None:
    repo = recorded.repo
    one = Claude(tmp_path / "one", repo.path)
    two = Claude(tmp_path / "two", repo.path, session="7d1e2f3a-2222-4222-8333-944445555777")
    started(recorded, one)
    recorded.hook(two.start())
    repo.write("shared.txt", "both agents see this\n")
    at_prompts = repo.oracle()
    both = [threading.Thread(target=recorded.hook, args=(c.prompt(),)) for c in (one, two)]
    for thread in both:
        thread.start()
    for thread in both:
        thread.join()
    at_stops = repo.oracle()
    stops = [one.reply(), two.reply()]
    both = [threading.Thread(target=recorded.hook, args=(stop,)) for stop in stops]
    for thread in both:
        thread.start()
    for thread in both:
        thread.join()
    lines = recorded.log()
    assert sum(" through the recorder" in line for line in lines[-4:]) == 4, lines
    assert all("problem" not in line for line in lines)
    sessions = [s["id"] for s in recorded.json("sessions")["sessions"] if s["entries"]]
    assert len(sessions) == 2
    for claude in (one, two):
        prompt, reply = claude.ids()
        (sid,) = [s for s in sessions if recorded.cli("-s", s, "show", reply, code=None).code == 0]
        assert recorded.json("-s", sid, "show", reply)["snapshot"]["tree"] == at_stops
        assert recorded.json("-s", sid, "show", prompt)["snapshot"]["tree"] == at_prompts


def watched(root: Path) -> bool:
    """Whether watchman watches ``root`` now (asked again while a restarting watchman gives
    no answer yet)."""

    def roots() -> tuple[list[str]] | None:  # a tuple: an empty list is an answer too
        listed = subprocess.run(["watchman", "watch-list"], capture_output=True, timeout=30)
        try:
            return (list(json.loads(listed.stdout)["roots"]),)
        except (ValueError, KeyError):
            return None

    found = wait_until(roots, "watchman's list of watches")
    assert found is not None
    return os.path.realpath(root) in found[0]


def test_recorder_status_and_stop_and_leaving_when_idle(recorded: Recorded, tmp_path: Path) -> None:
    """`recorder status` and `stop`; a recorder stopped or idle leaves, and the watch it made
    goes with it: watchman no longer watches the tree."""
    claude = Claude(tmp_path / "claude", recorded.repo.path)
    assert recorded.json("recorder", "status") == {
        "running": False, "pid": None, "since": None, "version": None, "watcher": None,
        "events": None, "snapshots": {}, "latest_snapshot": None,
        "why": "none started yet (the next hook event starts one: CONVGIT_RECORDER=on)",
        "setting": {"on": True, "because": "CONVGIT_RECORDER=on"},
    }  # fmt: skip
    running = started(recorded, claude)
    words = recorded.cli("recorder", "status").stdout
    assert words.startswith(f"recorder: pid {running['pid']} since ")
    assert watched(recorded.repo.path)
    assert recorded.json("recorder", "stop") == {"stopped": True, "pid": running["pid"]}
    recorded.wait_gone(int(str(running["pid"])))
    said = recorded.json("recorder", "status")
    assert not said["running"] and said["why"].endswith(": stopped by `convgit recorder stop`")
    assert not watched(recorded.repo.path)
    assert (
        recorded.cli("recorder", "stop").stdout == "no recorder was running for this working tree\n"
    )

    recorded.env["CONVGIT_RECORDER_IDLE"] = "1"
    recorded.allow_start()
    recorded.hook(claude.prompt())
    idle = recorded.wait_running()
    recorded.wait_gone(int(str(idle["pid"])))
    assert recorded.json("recorder", "status")["why"].endswith(": no event for 1 s")
    assert not watched(recorded.repo.path)


def test_a_watch_the_user_had_stays_when_the_recorder_leaves(
    recorded: Recorded, tmp_path: Path
) -> None:
    """watchman watched the tree before the recorder came (the user's own watch): the recorder
    uses it, and leaves it as it found it."""
    subprocess.run(["watchman", "watch-project", str(recorded.repo.path)], check=True, timeout=60)
    running = started(recorded, Claude(tmp_path / "claude", recorded.repo.path))
    assert str(running["watcher"]).startswith("watchman ")
    recorded.cli("recorder", "stop")
    recorded.wait_gone(int(str(running["pid"])))
    assert watched(recorded.repo.path)


def test_the_watch_goes_when_watchman_restarted_while_the_recorder_idled(
    recorded: Recorded, tmp_path: Path
) -> None:
    """watchman restarted under a recorder that took no event since (its connection dead;
    watchman brings its watches back from its state): the recorder, leaving, drops its watch
    through a new connection instead of leaving it in watchman for good."""
    running = started(recorded, Claude(tmp_path / "claude", recorded.repo.path))
    assert watched(recorded.repo.path)
    subprocess.run(["watchman", "shutdown-server"], capture_output=True, timeout=30)
    time.sleep(2)  # the old one gone; the next client starts another
    assert watched(recorded.repo.path)  # the restarted watchman watches it again
    recorded.cli("recorder", "stop")
    recorded.wait_gone(int(str(running["pid"])))
    assert not watched(recorded.repo.path)


def test_a_recorder_killed_is_named_dead_and_replaced(recorded: Recorded, tmp_path: Path) -> None:
    """SIGKILL: `recorder status` names it dead, the next event starts another, and the watch
    the dead one made goes when the new one leaves (it was no watch of the user's)."""
    repo, claude = recorded.repo, Claude(tmp_path / "claude", recorded.repo.path)
    running = started(recorded, claude)
    pid = int(str(running["pid"]))
    os.kill(pid, 9)
    recorded.wait_gone(pid)
    said = recorded.json("recorder", "status")
    assert said["why"] == (
        f"it died: its process is gone (pid {pid}); the next hook event starts another"
    )
    recorded.allow_start()
    repo.write("src/app.py", "print('after the kill')\n")
    at_prompt = repo.oracle()
    recorded.hook(claude.prompt())
    prompt, _ = claude.ids()
    recorded.hook(claude.reply())
    assert recorded.json("show", prompt)["snapshot"]["tree"] == at_prompt
    again = int(str(recorded.wait_running()["pid"]))
    assert alive(again)
    # the watch the killed one made is the new one's to drop: stopped, it leaves none behind
    assert watched(repo.path)
    recorded.cli("recorder", "stop")
    recorded.wait_gone(again)
    assert not watched(repo.path)


def test_off_keeps_every_hook_to_itself(recorded: Recorded, tmp_path: Path) -> None:
    recorded.env["CONVGIT_RECORDER"] = "off"
    claude = Claude(tmp_path / "claude", recorded.repo.path)
    recorded.hook(claude.start())
    recorded.hook(claude.prompt())
    assert not list(recorded.folder.glob("*.sock")) if recorded.folder.is_dir() else True
    said = recorded.json("recorder", "status")
    assert said["why"] == "turned off (CONVGIT_RECORDER=off)"


def test_a_failure_is_told_on_stderr_through_the_recorder(
    recorded: Recorded, tmp_path: Path
) -> None:
    """GitHub Copilot CLI reads a hook's failures on stderr, with exit status 2 (its ``TELLS``):
    the thin client says what the recorder tells it there, with that status."""
    repo = recorded.repo
    started(recorded, Claude(tmp_path / "claude", repo.path))
    env = {**recorded.env, "COPILOT_HOME": str(tmp_path / "copilot")}

    def copilot(event: str, session: str) -> clirun.Ran:
        payload = json.dumps({"sessionId": session, "cwd": str(repo.path)}).encode()
        return clirun.run(
            "hook", "copilot", event, cwd=repo.path, input=payload, env=env, code=None,
            timeout=90,
        )  # fmt: skip

    failed = copilot("agentStop", "../a")
    assert failed.code == 0 and not failed.err, failed
    told = copilot("sessionStart", "c0b1a2b3-0000-4000-8000-000000000001")
    lines = recorded.log()
    assert all(" through the recorder" in line for line in lines[-2:]), lines
    assert told.code == 2 and b"no usable sessionId" in told.err and not told.out, told


def test_a_restore_by_the_cli_between_the_recorders_snapshots(
    recorded: Recorded, tmp_path: Path
) -> None:
    """`convgit restore` (a command: no recorder) brings the files of an earlier turn back
    while the recorder runs; the recorder's next snapshot, patched from what watchman saw the
    restore change, is git's tree of the files restored."""
    repo, claude = recorded.repo, Claude(tmp_path / "claude", recorded.repo.path)
    started(recorded, claude)
    repo.write("src/app.py", "print('turn one')\n")
    recorded.hook(claude.prompt())
    recorded.hook(claude.reply())
    _, first = claude.ids()
    at_first = recorded.json("show", first)["snapshot"]["tree"]
    repo.write("src/app.py", "print('turn two')\n")
    repo.write("new/made.txt", "made in turn two\n")
    recorded.hook(claude.prompt())
    recorded.hook(claude.reply())
    recorded.cli("restore", first, "--yes")
    assert repo.oracle() == at_first and not (repo.path / "new" / "made.txt").exists()
    recorded.hook(claude.prompt())
    recorded.hook(claude.reply())
    prompt, reply = claude.ids()
    assert all(" through the recorder" in line for line in recorded.log()[-2:]), recorded.log()
    assert recorded.json("show", prompt)["snapshot"]["tree"] == at_first
    assert recorded.json("show", reply)["snapshot"]["tree"] == at_first
    how = recorded.json("recorder", "status")["snapshots"]
    assert any(h.startswith("patched: ") for h in how.values()), how


def test_the_status_names_the_path_of_each_snapshot_the_recorder_took(
    recorded: Recorded, tmp_path: Path
) -> None:
    """The first prompt's snapshot is taken after the recorder's watch was dropped (watchman
    cannot vouch for what changed: every file stat'ed), in a private index no later turn uses;
    the turns after it are patched. `latest_snapshot` names each event's own snapshot (how it
    was taken, and a number that says one was taken), not the first index's stale word; and
    every snapshot is git's tree of the files, whichever path it took."""
    repo, claude = recorded.repo, Claude(tmp_path / "claude", recorded.repo.path)
    started(recorded, claude)
    assert recorded.json("recorder", "status")["latest_snapshot"] is None
    dropped = subprocess.run(["watchman", "watch-del", str(repo.path)], capture_output=True)
    assert dropped.returncode == 0, dropped.stderr
    hows, number = [], 0
    for turn in range(3):
        repo.write("src/app.py", f"print('turn {turn}')\n")
        repo.write(f"made-{turn}.txt", f"made in turn {turn}\n")
        at_prompt = repo.oracle()
        recorded.hook(claude.prompt())
        latest = recorded.json("recorder", "status")["latest_snapshot"]
        assert latest["number"] > number, latest  # the prompt took a snapshot
        number = latest["number"]
        hows.append(latest["how"])
        recorded.hook(claude.reply())
        prompt, _ = claude.ids()
        assert recorded.json("show", prompt)["snapshot"]["tree"] == at_prompt
    assert hows[0].startswith("every file stat'ed: watchman"), hows
    assert all(how.startswith("patched: 2 changed paths") for how in hows[1:]), hows
    status = recorded.json("recorder", "status")
    assert status["latest_snapshot"]["how"].startswith("patched: "), status
    kept = status["snapshots"]  # the first prompt's index keeps its own last word
    assert any(how.startswith("every file stat'ed: watchman") for how in kept.values()), kept
    said = recorded.cli("recorder", "status").stdout
    assert f"  latest snapshot (#{status['latest_snapshot']['number']}): patched: " in said, said


def test_a_recorder_that_does_not_answer_keeps_no_command_waiting(
    recorded: Recorded, tmp_path: Path
) -> None:
    """A recorder stopped (SIGSTOP: as one busy with a long event looks to a command): `status`
    and `recorder status` name it within seconds, as not answering."""
    running = started(recorded, Claude(tmp_path / "claude", recorded.repo.path))
    pid = int(str(running["pid"]))
    os.kill(pid, signal.SIGSTOP)
    try:
        began = time.monotonic()
        said = recorded.json("recorder", "status")
        assert time.monotonic() - began < 15, "the command waited for the recorder"
        assert said["why"] == f"it does not answer (pid {pid}): busy with an event, or stopped"
    finally:
        os.kill(pid, signal.SIGCONT)


@pytest.mark.parametrize(
    ("fault", "stop_idle"),
    [(None, True), ("patch:hashed#1!STOP", False)],
    ids=["stopped-idle", "stopped-mid-event"],
)
def test_a_stopped_recorder_costs_a_hook_under_a_second_and_loses_nothing(
    recorded: Recorded, tmp_path: Path, fault: str | None, stop_idle: bool
) -> None:
    """A recorder stopped (SIGSTOP) while it waits, or half-way through an event it took (its
    snapshot's files hashed, no tree yet): the hook's thin client waits under a second for it,
    ends it (a recorder stopped for good would hold its locks), and does the event itself; the
    snapshot is git's tree of the files, no lock is left, no problem logged."""
    repo, claude = recorded.repo, Claude(tmp_path / "claude", recorded.repo.path)
    if fault:
        recorded.env["CONVGIT_RECORDER_FAULT"] = fault
    pid = int(str(started(recorded, claude)["pid"]))
    if stop_idle:
        os.kill(pid, signal.SIGSTOP)
    hook_alone = time.monotonic()
    recorded.hook(claude.prompt(), CONVGIT_RECORDER="off")  # an event the hook does itself
    alone = time.monotonic() - hook_alone
    recorded.hook(claude.reply(), CONVGIT_RECORDER="off")
    if stop_idle:
        os.kill(pid, signal.SIGSTOP)
    repo.write("src/app.py", "print('while the recorder is stopped')\n")
    at_prompt = repo.oracle()
    began = time.monotonic()
    recorded.hook(claude.prompt())
    took = time.monotonic() - began
    try:
        assert took < alone + 2.0, (took, alone)  # it waited 25 s before
        recorded.wait_gone(pid, 5)
    finally:
        if alive(pid):
            os.kill(pid, signal.SIGKILL)
    recorded.hook(claude.reply())
    prompt, _ = claude.ids()
    assert recorded.json("show", prompt)["snapshot"]["tree"] == at_prompt
    lines = recorded.log()
    assert "through the recorder" not in lines[-2] and ": ok in " in lines[-2], lines
    assert all("problem" not in line for line in lines), lines
    no_lock_is_left(repo.path)


def test_nothing_accumulates_in_the_recorders_folder(recorded: Recorded, tmp_path: Path) -> None:
    """Recorders started and stopped, or killed, cycle after cycle, and what a killed recorder
    of another working tree (removed since) left: a recorder that leaves removes its socket,
    state and lock, and one that starts removes what killed ones left, so the folder of
    sockets is empty once the last one is gone."""
    claude = Claude(tmp_path / "claude", recorded.repo.path)
    folder = recorded.folder
    recorded.hook(claude.start())
    for cycle in range(6):
        pid = int(str(recorded.wait_running()["pid"]))
        if cycle == 3:  # a killed recorder of a working tree since removed
            gone = "00000000deadbeef"
            left = socket.socket(socket.AF_UNIX)
            left.bind(str(folder / f"{gone}.sock"))
            left.close()
            for suffix in (".lock", ".started", f".json.{pid}"):
                (folder / f"{gone}{suffix}").write_text("")
            (folder / f"{gone}.json").write_text(json.dumps({"pid": 1 << 22, "state": "running"}))
        if cycle % 2:
            os.kill(pid, signal.SIGKILL)
            recorded.wait_gone(pid)
        else:
            recorded.cli("recorder", "stop")
            recorded.wait_gone(pid)
            assert sorted(p.name for p in folder.iterdir()) == [], cycle
        recorded.allow_start()
        recorded.hook(claude.prompt())
    pid = int(str(recorded.wait_running()["pid"]))
    assert {p.name.partition(".")[0] for p in folder.iterdir()} == {recorded.key()}
    recorded.cli("recorder", "stop")
    recorded.wait_gone(pid)
    assert sorted(p.name for p in folder.iterdir()) == []
    said = recorded.json("recorder", "status")["why"]
    assert said.startswith("it left at ") and said.endswith(": stopped by `convgit recorder stop`")


def a_path(tmp_path: Path, watchman: bool) -> str:
    """A PATH of git alone, and watchman too when asked."""
    folder = tmp_path / ("bin-watchman" if watchman else "bin")
    folder.mkdir()
    for tool in ("git", "watchman") if watchman else ("git",):
        found = shutil.which(tool)
        assert found is not None, tool
        (folder / tool).symlink_to(found)
    return str(folder)


def test_without_watchman_the_recorder_is_off_by_default_and_true_turns_it_on(
    recorded: Recorded, tmp_path: Path
) -> None:
    """`[hooks] recorder = "auto"` (the default) where no watchman is on PATH: a hook does its
    own work and starts no recorder, and `recorder status` and `status -v` say why and how to
    turn it on; `true` turns it on even so, and a value that is none of them is refused."""
    recorded.env.update(CONVGIT_RECORDER=None, PATH=a_path(tmp_path, watchman=False))
    claude = Claude(tmp_path / "claude", recorded.repo.path)
    for event in (claude.start(), claude.prompt(), claude.reply()):
        recorded.hook(event)
    assert not recorded.folder.is_dir() or not list(recorded.folder.iterdir())
    said = recorded.json("recorder", "status")
    because = '[hooks] recorder = "auto", and no watchman is on PATH'
    assert said["setting"] == {"on": False, "because": because}
    assert said["why"] == (
        f"not turned on ({because}; [hooks] recorder = true in config.toml, or"
        " CONVGIT_RECORDER=on, turns it on)"
    )
    assert f"recorder: none: not turned on ({because};" in recorded.cli("status", "-v").stdout
    config = recorded.repo.path / ".git" / "convgit" / "config.toml"
    config.write_text("[hooks]\nrecorder = true\n")
    recorded.hook(claude.prompt())
    running = recorded.wait_running()
    assert running["setting"] == {"on": True, "because": "[hooks] recorder = true"}
    recorded.hook(claude.reply())
    assert " through the recorder" in recorded.log()[-1]
    how = recorded.json("recorder", "status")["snapshots"]  # no watchman: every file stat'ed
    assert list(how.values()) == ["every file stat'ed: watchman is not on PATH"], how
    recorded.cli("recorder", "stop")
    config.write_text('[hooks]\nrecorder = "yes"\n')
    recorded.hook(claude.prompt())
    assert recorded.log()[-1].endswith(
        'config.toml: [hooks] recorder must be true, false or "auto", got "yes".'
    ), recorded.log()[-1]


def test_with_watchman_the_recorder_is_on_by_default_and_false_turns_it_off(
    recorded: Recorded, tmp_path: Path
) -> None:
    """`[hooks] recorder = "auto"` (the default) where a watchman is on PATH: the first hook
    starts a recorder, the next events go through it and its snapshots are patched through
    watchman, and `recorder status` says why it is on; `false` keeps hooks to themselves."""
    recorded.env.update(CONVGIT_RECORDER=None, PATH=a_path(tmp_path, watchman=True))
    config = recorded.repo.path / ".git" / "convgit" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("[hooks]\nrecorder = false\n")
    claude = Claude(tmp_path / "claude", recorded.repo.path)
    recorded.hook(claude.start())
    assert not recorded.folder.is_dir() or not list(recorded.folder.iterdir())
    said = recorded.json("recorder", "status")
    assert said["setting"] == {"on": False, "because": "[hooks] recorder = false"}
    assert said["why"].startswith("not turned on ([hooks] recorder = false;"), said
    config.unlink()
    recorded.hook(claude.prompt())
    running = recorded.wait_running()
    because = '[hooks] recorder = "auto", and watchman is on PATH'
    assert running["setting"] == {"on": True, "because": because}
    assert running["watcher"].startswith("watchman "), running
    recorded.repo.write("made.txt", "made by the agent\n")
    recorded.hook(claude.reply())
    assert " through the recorder" in recorded.log()[-1]
    words = recorded.cli("recorder", "status").stdout
    assert f"  on: {because}" in words, words
    how = recorded.json("recorder", "status")["snapshots"]
    assert any(str(h).startswith("patched: ") for h in how.values()), how


def test_a_recorder_variable_of_another_value_is_said_and_starts_none(
    recorded: Recorded, tmp_path: Path
) -> None:
    """`CONVGIT_RECORDER` takes on or off: `false` (or any other word) is never read as the
    default "auto", which would start a recorder where watchman is on PATH: the hook records
    its event, starts none and says why in its log; `recorder status` says the sentence."""
    recorded.env.update(CONVGIT_RECORDER="false", PATH=a_path(tmp_path, watchman=True))
    claude = Claude(tmp_path / "claude", recorded.repo.path)
    recorded.hook(claude.start())
    recorded.hook(claude.prompt())
    recorded.repo.write("made.txt", "made by the agent\n")
    recorded.hook(claude.reply())
    assert not recorded.folder.is_dir() or not list(recorded.folder.iterdir())
    sentence = "CONVGIT_RECORDER must be on or off, got 'false'."
    log = recorded.log()
    assert any(f"no recorder started: {sentence}" in line for line in log), log
    said = recorded.json("recorder", "status")
    assert said["running"] is False and said["setting"] is None, said
    assert said["why"] == sentence, said


def test_a_recorder_variable_of_another_value_hands_no_event_to_a_running_recorder(
    recorded: Recorded, tmp_path: Path
) -> None:
    """A recorder runs, and the agent is started with `CONVGIT_RECORDER=false`: the thin
    client hands it nothing (before: every value but `off` was handed over, so `false` kept
    the recorder taking events); the hook records the event itself and logs the refusal."""
    repo, claude = recorded.repo, Claude(tmp_path / "claude", recorded.repo.path)
    started(recorded, claude)
    recorded.hook(claude.prompt())
    assert " through the recorder" in recorded.log()[-1], recorded.log()
    recorded.env["CONVGIT_RECORDER"] = "false"
    repo.write("made.txt", "made by the agent\n")
    at_stop = repo.oracle()
    recorded.hook(claude.reply())
    log = recorded.log()
    assert "through the recorder" not in log[-1], log
    assert any("CONVGIT_RECORDER must be on or off, got 'false'." in line for line in log), log
    assert recorded.json("show", claude.ids()[1])["snapshot"]["tree"] == at_stop


def test_the_installed_hook_hands_its_event_over_importing_nothing_of_convgits(
    recorded: Recorded, tmp_path: Path
) -> None:
    """The command `hooks install` writes, run as the agent runs it: while a recorder runs, the
    event reaches it with no module of convgit's package imported (the client is loaded from
    its file), and the recorder records it; without one, the same command does the event itself
    through convgit's hook (`convgit.agents.hook`), as `convgit hook` does."""
    from convgit.agents.claude_code import live

    repo, claude = recorded.repo, Claude(tmp_path / "claude", recorded.repo.path)
    started(recorded, claude)
    command = str(live.handler()["command"])
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update({k: v for k, v in recorded.env.items() if v is not None})
    env["PYTHONPROFILEIMPORTTIME"] = "1"

    def installed(event: bytes, **more: str) -> set[str]:
        ran = subprocess.run(
            ["sh", "-c", command], cwd=repo.path, input=event, env={**env, **more},
            capture_output=True, timeout=90, check=True,
        )  # fmt: skip
        lines = ran.stderr.decode().splitlines()
        return {line.rsplit("|", 1)[1].strip() for line in lines if line.startswith("import time:")}

    repo.write("src/app.py", "print('through the installed command')\n")
    at_prompt = repo.oracle()
    imported = installed(claude.prompt())
    assert " through the recorder" in recorded.log()[-1], recorded.log()
    assert "client" in imported and not [m for m in imported if m.startswith("convgit")], imported
    recorded.hook(claude.reply())
    assert recorded.json("show", claude.ids()[0])["snapshot"]["tree"] == at_prompt
    imported = installed(claude.prompt(), CONVGIT_RECORDER="off")
    assert "through the recorder" not in recorded.log()[-1] and "convgit.agents.hook" in imported


def test_a_file_the_agent_wrote_that_git_does_not_ignore_keeps_the_snapshots_patched(
    recorded: Recorded, tmp_path: Path
) -> None:
    """Claude Code's file tools list every file they write, to keep it in the snapshots even
    when git ignores it; a listed file git does not ignore is in `git add -A`'s tree already,
    so the recorder's next snapshots stay patched (before: every file stat'ed, "the session
    keeps files git ignores", for every session whose agent used Write or Edit once). One git
    ignores makes them full scans again, and is in the snapshot."""
    repo, claude = recorded.repo, Claude(tmp_path / "claude", recorded.repo.path)
    started(recorded, claude)

    def turn(written: str) -> dict[str, str]:
        """A turn whose agent writes ``written`` through its Write tool."""
        recorded.hook(claude.prompt())
        repo.write(written, f"written by the agent's Write in turn {claude.n}\n")
        tool = {"file_path": str(repo.path / written), "content": "..."}
        recorded.hook(claude.event("PostToolUse", tool_name="Write", tool_input=tool))
        at_stop = repo.oracle()
        recorded.hook(claude.reply())
        assert " through the recorder" in recorded.log()[-1], recorded.log()
        tree = recorded.json("show", claude.ids()[1])["snapshot"]["tree"]
        assert tree == at_stop or written.endswith(".env")  # git add -A's, or with the .env
        return dict(recorded.json("recorder", "status")["snapshots"])

    turn("notes.txt")
    how = turn("more-notes.txt")
    assert how and all(str(h).startswith("patched: ") for h in how.values()), how
    repo.write(".gitignore", "*.env\n")
    how = turn("local.env")
    assert any("the session keeps files git ignores" in str(h) for h in how.values()), how
    tree = recorded.json("show", claude.ids()[1])["snapshot"]["tree"]
    blob = repo.git("hash-object", "local.env").strip()
    assert repo.tree_paths(tree)["local.env"] == f"100644 {blob}"


def test_the_last_agents_hooks_uninstalled_ask_the_recorder_to_leave(
    recorded: Recorded, tmp_path: Path
) -> None:
    """`hooks uninstall` asks the working tree's recorder to leave once no agent's convgit
    hooks are left that run there (one line says so); while another agent's hooks, or the
    user's own hooks of any agent, are still installed, the recorder they use stays."""
    home = tmp_path / "home"  # the user's settings of every agent: the test's own
    home.mkdir()
    shutil.copy(Path.home() / ".gitconfig", home / ".gitconfig")
    recorded.env["HOME"] = str(home)
    for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "COPILOT_HOME", "QWEN_HOME"):
        recorded.env[name] = None
    for agent in ("claude-code", "gemini"):
        recorded.cli("hooks", "install", agent)
    recorded.cli("hooks", "install", "claude-code", "--scope", "user")
    running = started(recorded, Claude(tmp_path / "claude", recorded.repo.path))

    gemini = recorded.json("hooks", "uninstall", "gemini")  # claude-code's hooks still run here
    assert gemini["recorder"] is None
    assert gemini["folders"] == [str(recorded.repo.path / ".gemini")]  # the install made it
    assert recorded.json("recorder", "status")["pid"] == running["pid"]
    said = recorded.cli("hooks", "uninstall", "claude-code").stdout  # the user's still run here
    assert "recorder" not in said, said
    assert recorded.json("recorder", "status")["pid"] == running["pid"]
    said = recorded.cli("hooks", "uninstall", "claude-code", "--scope", "user").stdout
    assert said.splitlines()[-1] == (
        "no agent's convgit hooks are left for this working tree: its recorder"
        f" (pid {running['pid']}) was asked to leave"
    )
    recorded.wait_gone(int(str(running["pid"])))
    assert recorded.json("recorder", "status")["why"].endswith(
        ": stopped by `convgit hooks uninstall`"
    )
    again = recorded.cli("hooks", "uninstall", "claude-code").stdout  # none to ask
    assert "recorder" not in again, again


def test_a_relative_convgit_store_names_the_same_recorder_with_C(
    recorded: Recorded, tmp_path: Path
) -> None:
    """With a relative ``CONVGIT_STORE``, `convgit -C DIR recorder status|stop` run from another
    folder asks the recorder the hooks run in DIR use: the store is read from DIR in both (DIR
    given through a symbolic link too: from its real path, the hook's folder)."""
    recorded.env["CONVGIT_STORE"] = "kept/store"
    running = started(recorded, Claude(tmp_path / "claude", recorded.repo.path))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "link").symlink_to(recorded.repo.path)
    for relative in (os.path.relpath(recorded.repo.path, elsewhere), "link"):
        said = clirun.run(
            "-C", relative, "recorder", "status", "--json", cwd=elsewhere, env=recorded.env
        ).json()
        assert said["running"] and said["pid"] == running["pid"], (relative, said)
    stop = clirun.run("-C", "link", "recorder", "stop", "--json", cwd=elsewhere, env=recorded.env)
    assert stop.json() == {"stopped": True, "pid": running["pid"]}
    recorded.wait_gone(int(str(running["pid"])))
    assert (recorded.repo.path / "kept" / "store" / "logs" / "recorder.log").is_file()
