"""A restore that is killed, interrupted or raced by another writer loses no byte.

* git writes a restore's files beside their places (in the git dir) and convgit moves each
  into place whole: a restore stopped while git writes has changed no file.
* No git a restore starts outlives it: SIGTERM, SIGINT and SIGHUP stop git and wait for it
  before convgit exits (with the shell's code for the signal and one sentence on the state it
  left); after a SIGKILL, the git still writing holds the restore's lock, so an undo started
  at once waits for it, clears what it wrote, and ends with the exact files from before.
* A file another writer changes or creates while a restore runs is left alone and listed
  (``left_alone``, "changed since the restore was planned"); a folder the target replaces by
  a file is never deleted with files the restore did not save, ignored ones included.
* A snapshot interrupted by Ctrl-C says so in one sentence and exits 130.

git writes slowly here on purpose: a smudge filter that sleeps a little per file (as a real
filter such as git-lfs may take its time), so a test can act while git is writing. Every test
runs the real CLI on a real repository under the user-state guard.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from unittest import mock

import orjson

from convgit import Session
from convgit.base import faults
from convgit.git.restore.operation import SCRATCH
from tests.clirun import start
from tests.polling import wait_until
from tests.workspace.cli import convgit, one_sentence
from tests.workspace.gitrepo import GitRepo

FILES = 300
V1, V2 = b"version one\n", b"version two\n"
# git reads the paths to write a few KiB ahead of the checks (a pipe, its own buffer): paths
# of 60 bytes keep the last files well beyond that
NAME = "files/a_folder_with_a_longer_name/f{:03}_with_a_descriptive_name.txt"


def _slow_filter(
    repo: GitRepo, marker: Path, *, clean_delay: float = 0.0, smudge_delay: float = 0.03
) -> None:
    """Every .txt file goes through a filter: its smudge (git writing a file) sleeps
    ``smudge_delay`` and its clean (git reading one) touches ``marker`` first, and sleeps
    ``clean_delay``."""
    repo.git("config", "filter.slow.smudge", f"sleep {smudge_delay}; cat")
    repo.git("config", "filter.slow.clean", f"touch '{marker}'; sleep {clean_delay}; cat")
    repo.write(".gitattributes", "*.txt filter=slow\n")


def _many(repo: GitRepo, data: bytes) -> None:
    for i in range(FILES):
        repo.write(NAME.format(i), data)


def _start(repo: GitRepo, *args: str, group: bool = False) -> subprocess.Popen[bytes]:
    """The real CLI; with ``group``, in a process group of its own, as a terminal starts it."""
    return start(*args, cwd=repo.path, group=group)


def _wait_until(condition: Callable[[], bool], what: str) -> None:
    wait_until(condition, what, 120, every=0.005)


def _recorded(repo: GitRepo, text: bytes) -> bool:
    """Whether a session of the repository's store holds a message of ``text``."""
    sessions = repo.path / ".git" / "convgit" / "sessions"
    return any(
        orjson.dumps(text.decode()) in path.read_bytes() for path in sessions.glob("*.jsonl")
    )


def _gits_of(repo: GitRepo) -> list[int]:
    """The git processes running on this repository's working tree (any parent)."""
    wanted = f"--work-tree={repo.path}".encode()
    found: list[int] = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            args = Path("/proc", name, "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if args and os.path.basename(args[0]) == b"git" and wanted in args:
            found.append(int(name))
    return found


def _prepared(
    repo: GitRepo, marker: Path, smudge_delay: float = 0.03
) -> tuple[str, dict[str, tuple[str, object]]]:
    """The task's snapshot holds version one of FILES files; the files now are version two.
    Returns the task's entry and the files now (what an undo must give back exactly)."""
    _slow_filter(repo, marker, smudge_delay=smudge_delay)
    _many(repo, V1)
    convgit(repo.path, "init")
    task = convgit(repo.path, "user", "task", "--json").json()["id"]
    _many(repo, V2)
    convgit(repo.path, "assistant", "version two", "--json")
    return task, repo.digest()


def _restored(repo: GitRepo, number: int) -> bool:
    try:  # git's own checkout removes a file before it writes it again
        return (repo.path / NAME.format(number)).read_bytes() == V1
    except FileNotFoundError:
        return False


def _written(repo: GitRepo, number: int) -> bool:
    """git has written file ``number`` of the restore: beside its place, or (git's own
    checkout) in place."""
    return (_scratch(repo) / NAME.format(number)).exists() or _restored(repo, number)


def _scratch(repo: GitRepo) -> Path:
    """Where git writes a restore's files before convgit moves them into place."""
    return repo.path / ".git" / SCRATCH


def _git_is_writing(repo: GitRepo) -> bool:
    return (_scratch(repo) / NAME.format(0)).exists()


def test_a_restore_killed_while_git_writes_keeps_the_undo_waiting(
    repo: GitRepo, tmp_path: Path
) -> None:
    """SIGKILL while git writes the files: the git goes on, holding the restore's lock;
    `restore --undo` at once waits for it, clears what it wrote beside, and finds every byte
    where it was (git never wrote in place)."""
    task, before = _prepared(repo, tmp_path / "cleaned")
    running = _start(repo, "restore", task, "--yes")
    _wait_until(lambda: _git_is_writing(repo), "git to write the first file")
    running.kill()
    running.communicate()
    assert _gits_of(repo), "the killed restore's git should still be writing"

    convgit(repo.path, "restore", "--undo", "--yes")
    assert not _gits_of(repo), "the undo ended before the killed restore's git"
    assert repo.digest() == before
    assert not _scratch(repo).exists()


def _interrupted(repo: GitRepo, tmp_path: Path, signum: int) -> None:
    """Stopped while git writes the files beside their places: git is stopped at once, what
    it wrote is cleared, and no file changed."""
    task, before = _prepared(repo, tmp_path / "cleaned")
    running = _start(repo, "restore", task, "--yes")
    _wait_until(lambda: _git_is_writing(repo), "git to write the first file")
    started = time.monotonic()
    running.send_signal(signum)
    _out, err = running.communicate()
    assert time.monotonic() - started < 3, "git's writing beside was waited for"
    assert not _gits_of(repo), "a git of the stopped restore is still running"
    assert running.returncode == 128 + signum
    name = signal.Signals(signum).name
    assert one_sentence(err.decode()) == f"convgit: Interrupted by {name}: no file was changed."
    assert repo.digest() == before
    _undo_settles(repo)
    assert not _scratch(repo).exists()


def _undo_settles(repo: GitRepo) -> None:
    """The stopped restore shows in ``status``; its undo finds nothing to change and settles
    it."""
    assert convgit(repo.path, "status", "--json").json()["interrupted_restore"] is not None
    undone = convgit(repo.path, "restore", "--undo", "--yes", "--json").json()
    assert undone["changes"] == [] and undone["interrupted"] == 1
    assert convgit(repo.path, "status", "--json").json()["interrupted_restore"] is None


def test_a_restore_stopped_by_sigterm_stops_git_first(repo: GitRepo, tmp_path: Path) -> None:
    _interrupted(repo, tmp_path, signal.SIGTERM)


def test_a_restore_stopped_by_sighup_stops_git_first(repo: GitRepo, tmp_path: Path) -> None:
    _interrupted(repo, tmp_path, signal.SIGHUP)


def test_ctrl_c_during_a_restore_says_what_it_left(repo: GitRepo, tmp_path: Path) -> None:
    _interrupted(repo, tmp_path, signal.SIGINT)


def test_ctrl_c_at_a_terminal_never_leaves_a_file_half_written(
    repo: GitRepo, tmp_path: Path
) -> None:
    """A terminal's Ctrl-C reaches the whole process group, git included: git dies half-way
    through a file, but that file is beside its place, in the git dir: no file of the user's
    is missing or half-written, and nothing of git's is left."""
    task, before = _prepared(repo, tmp_path / "cleaned", smudge_delay=0.1)
    running = _start(repo, "restore", task, "--yes", group=True)
    _wait_until(lambda: _git_is_writing(repo), "git to write the first file")
    os.killpg(running.pid, signal.SIGINT)
    _out, err = running.communicate()
    assert running.returncode == 130, err
    assert not _gits_of(repo), "a git of the stopped restore is still running"
    assert one_sentence(err.decode()) == "convgit: Interrupted by SIGINT: no file was changed."
    assert repo.digest() == before
    _undo_settles(repo)
    assert not _scratch(repo).exists()


def test_ctrl_c_while_files_move_into_place_says_how_far_it_got(
    repo: GitRepo, tmp_path: Path
) -> None:
    """Interrupted after git wrote the files beside and convgit moved 149 of 300 into place:
    each file is the old one or the new one, whole; the sentence names the saved state, and
    restoring it gives back every byte."""
    task, before = _prepared(repo, tmp_path / "cleaned", smudge_delay=0.0)
    ran = convgit(
        repo.path, "restore", task, "--yes", env={"CONVGIT_FAULT": "restore:place#150!INT"},
        code=130,
    )  # fmt: skip
    sentence = one_sentence(ran.stderr)
    assert sentence.startswith(f"convgit: Interrupted by SIGINT after at most 149 of {FILES} ")
    assert [(repo.path / NAME.format(i)).read_bytes() for i in range(FILES)] == (
        [V1] * 149 + [V2] * (FILES - 149)
    )
    assert not _scratch(repo).exists()
    saved = sentence.split("`convgit restore ")[1].split("`")[0]
    convgit(repo.path, "restore", saved, "--yes")
    assert repo.digest() == before


def test_ctrl_c_before_a_restore_changes_a_file_says_none_changed(
    repo: GitRepo, tmp_path: Path
) -> None:
    """Interrupted while it stages the files (before it saves them): nothing changed."""
    marker = tmp_path / "cleaned"
    task, _ = _prepared(repo, marker)
    repo.git("config", "filter.slow.clean", f"touch '{marker}'; sleep 0.05; cat")
    _many(repo, b"version three\n")
    before = repo.digest()
    marker.unlink(missing_ok=True)
    running = _start(repo, "restore", task, "--yes")
    _wait_until(marker.exists, "the restore to stage the files")
    running.send_signal(signal.SIGINT)
    _out, err = running.communicate()
    assert running.returncode == 130
    assert one_sentence(err.decode()) == "convgit: Interrupted by SIGINT: no file was changed."
    assert not _gits_of(repo)
    assert repo.digest() == before


def test_ctrl_c_during_a_snapshot_says_none_was_taken(repo: GitRepo, tmp_path: Path) -> None:
    marker = tmp_path / "cleaned"
    _slow_filter(repo, marker, clean_delay=0.05)
    _many(repo, V1)
    convgit(repo.path, "init")
    entry = convgit(repo.path, "user", "task", "--json").json()["id"]
    _many(repo, V2)
    before = repo.digest()
    marker.unlink(missing_ok=True)
    running = _start(repo, "snapshot", entry)
    _wait_until(marker.exists, "the snapshot to stage the files")
    running.send_signal(signal.SIGINT)
    _out, err = running.communicate()
    assert running.returncode == 130
    assert one_sentence(err.decode()) == (
        "convgit: Interrupted by SIGINT: no snapshot was recorded; no file was changed."
    )
    assert not _gits_of(repo)
    assert repo.digest() == before


def test_ctrl_c_while_a_reply_is_snapshotted_says_the_reply_was_recorded_without_it(
    repo: GitRepo, tmp_path: Path
) -> None:
    marker = tmp_path / "cleaned"
    _slow_filter(repo, marker, clean_delay=0.05)
    _many(repo, V1)
    convgit(repo.path, "init")
    convgit(repo.path, "user", "task")
    _many(repo, V2)
    before = repo.digest()
    marker.unlink(missing_ok=True)
    running = _start(repo, "assistant", "version two")
    # the snapshot's git starts before the reply is recorded (``convgit.workspace.early``)
    _wait_until(
        lambda: marker.exists() and _recorded(repo, b"version two"),
        "the reply to be recorded and its snapshot to stage the files",
    )
    running.send_signal(signal.SIGINT)
    _out, err = running.communicate()
    assert running.returncode == 130
    assert one_sentence(err.decode()) == (
        "convgit: Interrupted by SIGINT: the entry was recorded and its snapshot was not"
        " (`convgit snapshot` records the files now); no file was changed."
    )
    assert not _gits_of(repo)
    assert repo.digest() == before
    shown = convgit(repo.path, "show", "@", "--json").json()
    reply = shown["entry"]
    assert reply["role"] == "assistant" and shown["snapshot"] is None
    assert convgit(repo.path, "snapshot", "--json").json()["entry"] == reply["id"]


def test_ctrl_c_after_the_files_are_saved_and_before_the_restore_is_recorded_leaves_nothing(
    repo: GitRepo, tmp_path: Path
) -> None:
    """Interrupted between saving the files (the saved state's ref) and recording the restore:
    no file changed, and no saved state is left without its record (fsck stays clean)."""
    task, before = _prepared(repo, tmp_path / "cleaned")
    listed = convgit(repo.path, "restores", "--json").json()["saved_states"]
    running = convgit(
        repo.path, "restore", task, "--yes", env={"CONVGIT_FAULT": "restore:before-record!INT"},
        code=None,
    )  # fmt: skip
    assert running.code == 130
    assert one_sentence(running.stderr) == ("convgit: Interrupted by SIGINT: no file was changed.")
    assert repo.digest() == before
    assert convgit(repo.path, "fsck").code == 0
    assert convgit(repo.path, "restores", "--json").json()["saved_states"] == listed


def test_a_restore_whose_every_change_was_left_alone_tells_the_model_nothing(
    repo: GitRepo,
) -> None:
    """Another writer changes the one file a restore is to change, just before git writes it:
    no file changed, so no note tells the model the files were restored."""
    repo.write("a.txt", "one\n")
    session = Session.create(repo.path)
    task = session.append.user("task").id
    repo.write("a.txt", "two\n")
    reply = session.append.assistant("two").id
    real_point = faults.point

    def writer(name: str) -> None:
        if name == "restore:before-checkout":
            repo.write("a.txt", "the writer's own bytes\n")
        real_point(name)

    with mock.patch.object(faults, "point", writer):
        result = session.restoring.restore(task, paths=["a.txt"])
    assert (repo.path / "a.txt").read_text() == "the writer's own bytes\n"
    assert not result.changes and [s.path for s in result.changes.left_alone] == ["a.txt"]
    assert result.note is None
    assert session.conversation.leaf == reply


def test_files_written_while_a_restore_runs_are_never_lost(repo: GitRepo, tmp_path: Path) -> None:
    """While git writes the restored files, another writer changes a file the restore is still
    to write, creates one where the target has a file, and drops a file (and an ignored one)
    into a folder the target replaces by a file. Each is left alone and listed; nothing the
    writer wrote is lost, and what the restore did write is the target's."""
    marker = tmp_path / "cleaned"
    _slow_filter(repo, marker)
    repo.write(".gitignore", "*.log\n")
    repo.write("zz_out", "the target's file\n")
    repo.write("files/zz_new.txt", "the target's zz_new\n")
    _many(repo, V1)
    convgit(repo.path, "init")
    task = convgit(repo.path, "user", "task", "--json").json()["id"]
    _many(repo, V2)
    (repo.path / "files" / "zz_new.txt").unlink()
    (repo.path / "zz_out").unlink()
    repo.write("zz_out/old.txt", "the folder's first file\n")
    convgit(repo.path, "assistant", "version two; zz_out became a folder", "--json")

    running = _start(repo, "restore", task, "--yes", "--json")
    _wait_until(lambda: _git_is_writing(repo), "git to write the first file")
    written = {
        NAME.format(FILES - 1): b"the writer's own version\n",
        "files/zz_new.txt": b"a new file where the target has one\n",
        "zz_out/new.txt": b"a file the restore did not save\n",
        "zz_out/cache.log": b"an ignored file\n",
    }
    for path, data in written.items():
        repo.write(path, data)
    out, err = running.communicate()
    assert running.returncode == 0, err.decode()
    result = orjson.loads(out)

    for path, data in written.items():
        assert (repo.path / path).read_bytes() == data, path
    alone = {row["path"]: row["reason"] for row in result["left_alone"]}
    assert "changed since the restore was planned" in alone[NAME.format(FILES - 1)]
    assert "created since the restore was planned" in alone["files/zz_new.txt"]
    assert "a folder with files the saved state lacks" in alone["zz_out"]
    changed = {c["path"] for c in result["changes"]}
    assert not changed & set(alone)
    assert (repo.path / NAME.format(FILES - 2)).read_bytes() == V1


# A writer in another process that appends a line every few milliseconds, from the moment
# ``start`` exists until ``stop`` does, then prints how many it wrote. ``held``: through one
# handle opened before the restore began (a log a running program keeps open); ``reopened``:
# opening the file for each line (``>>`` in a shell loop).
APPENDER = r"""
import os, sys, time
path, start, stop, how = sys.argv[1:5]
held = open(path, "a") if how == "held" else None
while not os.path.exists(start):
    time.sleep(0.001)
count = 0
while not os.path.exists(stop):
    line = f"{how} line {count}\n"
    if held is not None:
        held.write(line)
        held.flush()
    else:
        with open(path, "a") as out:
            out.write(line)
    count += 1
    time.sleep(0.003)
print(count)
"""


def test_a_file_appended_to_while_a_restore_runs_loses_no_line(
    repo: GitRepo, tmp_path: Path
) -> None:
    """Two logs the restore is to take back, appended to by two other processes from the
    moment git has written 200 of the restore's 300 files (beside their places; git's own
    checkout wrote them in place) until after it ends: one through a handle it held open all
    along, one reopening the file for each line. Every line they wrote is in the file
    afterwards: a log written to after the plan is left alone, not replaced under its writer
    (git's own checkout, handed the paths well ahead of its writing, lost what was appended
    in between, or stopped with "unable to create file: File exists" when the writer made the
    file again between its removal and git's write). The undo, which replaces them, saves
    them first."""
    logs = {"held": "zz_log_held.txt", "reopened": "zz_log_reopened.txt"}
    for name in logs.values():
        repo.write(name, "the snapshot's first line\n")
    task, _ = _prepared(repo, tmp_path / "cleaned", smudge_delay=0.01)
    for name in logs.values():  # the restore is to take the logs back to the snapshot's
        repo.write(name, "the snapshot's first line\na line since\n")
    start, stop = tmp_path / "start", tmp_path / "stop"
    writers = {
        how: subprocess.Popen(
            [sys.executable, "-c", APPENDER, str(repo.path / name), str(start), str(stop), how],
            stdout=subprocess.PIPE,
        )
        for how, name in logs.items()
    }
    try:
        running = _start(repo, "restore", task, "--yes", "--json")
        _wait_until(lambda: _written(repo, 200), "git to write 200 of the 300 files")
        start.touch()
        _out, err = running.communicate()
        time.sleep(0.1)
    finally:
        start.touch()
        stop.touch()
        lines = {how: int(proc.communicate(timeout=60)[0]) for how, proc in writers.items()}
    assert running.returncode == 0, err.decode()
    assert all(lines.values()), lines
    for how, name in logs.items():
        text = (repo.path / name).read_text()
        lost = [n for n in range(lines[how]) if f"{how} line {n}\n" not in text]
        assert not lost, f"{name}: {len(lost)} of {lines[how]} lines lost"

    undone = convgit(repo.path, "restore", "--undo", "--yes", "--json").json()
    for how, name in logs.items():
        kept = repo.git("show", f"{undone['before']}:{name}") + (repo.path / name).read_text()
        assert all(f"{how} line {n}\n" in kept for n in range(lines[how])), name
