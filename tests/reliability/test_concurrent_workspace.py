"""Processes meeting on one working tree: two snapshotting at once (one session or two), and a
restore racing appends through the CLI and the API. Both finish, in some order; nothing is lost;
the private index stays sound; `git fsck` is clean; the user's git state never changes."""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import subprocess
import sys
from multiprocessing.synchronize import Event
from pathlib import Path
from typing import Any

import pygit2
import pytest

from convgit import Session
from convgit.schema import Message, Note
from tests.clirun import COMMAND, run
from tests.reliability.repos import git_fsck
from tests.workspace.gitrepo import GitRepo, oracle_tree

ROUNDS = 30
RESTORES = 8
API_APPENDS = 40  # every fifth is an assistant reply, snapshotted
CLI_APPENDS = 8

_spawn = multiprocessing.get_context("spawn")


def _snapshotter(start: Event, root: str, sid: str, name: str, out: str) -> None:
    """Write a file of our own, snapshot, again and again; report each commit we got."""
    session = Session.open(root, session=sid)
    start.wait()
    made = []
    for i in range(ROUNDS):
        folder = Path(root, name)
        folder.mkdir(exist_ok=True)
        (folder / f"{i}.txt").write_text(f"{name} round {i}\n")
        made.append(session.snapshots.snapshot("@").commit)
    Path(out).write_text(json.dumps(made))


def _run_together(*targets: tuple[Any, tuple[Any, ...]]) -> None:
    start = _spawn.Event()
    workers = [_spawn.Process(target=fn, args=(start, *args)) for fn, args in targets]
    for worker in workers:
        worker.start()
    start.set()
    for worker in workers:
        worker.join(120)
    assert [w.exitcode for w in workers] == [0] * len(workers)


def _index_is_sound(session: Session, root: Path) -> None:
    """The private index has a valid checksum and holds the tree of the session's last
    snapshot record (the last one written under the index lock)."""
    index = session.location.index_path(session.id)
    data = index.read_bytes()
    assert data[:4] == b"DIRC" and hashlib.sha1(data[:-20]).digest() == data[-20:]
    proc = subprocess.run(
        ["git", "write-tree"],
        cwd=root,
        env={**os.environ, "GIT_INDEX_FILE": str(index)},
        capture_output=True,
        text=True,
        check=True,
    )
    records = [json.loads(line) for line in session.track.file.path.read_bytes().splitlines()]
    assert proc.stdout.strip() == [r["tree"] for r in records if r["type"] == "snapshot"][-1]


@pytest.mark.parametrize("sessions", ["one session", "two sessions"])
def test_two_processes_snapshotting_at_once_both_succeed_and_corrupt_nothing(
    repo: GitRepo, tmp_path: Path, sessions: str
) -> None:
    first = Session.create(repo.path)
    first.append.user("task")
    second = first if sessions == "one session" else Session.create(repo.path)
    if second is not first:
        second.append.user("another task")
    outs = [tmp_path / "left.json", tmp_path / "right.json"]
    _run_together(
        (_snapshotter, (str(repo.path), first.id, "left", str(outs[0]))),
        (_snapshotter, (str(repo.path), second.id, "right", str(outs[1]))),
    )

    odb = pygit2.Repository(str(repo.path))
    made: dict[str, set[str]] = {first.id: set(), second.id: set()}
    for name, out, session in (("left", outs[0], first), ("right", outs[1], second)):
        commits = json.loads(out.read_text())
        assert len(commits) == ROUNDS
        for i, commit in enumerate(commits):  # each snapshot holds every file written before it
            tree = odb[commit].tree
            for j in range(i + 1):
                assert tree[f"{name}/{j}.txt"].data == f"{name} round {j}\n".encode()
        made[session.id] |= set(commits)
    for session in {first.id: first, second.id: second}.values():
        records = [json.loads(line) for line in session.track.file.path.read_bytes().splitlines()]
        recorded = [r["commit"] for r in records if r["type"] == "snapshot"]
        assert len(recorded) == 1 + ROUNDS * (2 if second is first else 1), "a record was lost"
        assert made[session.id] <= set(recorded)

    for session in {first.id: first, second.id: second}.values():
        _index_is_sound(session, repo.path)
        shot = Session.open(repo.path, session=session.id).snapshots.snapshot()
        assert shot.tree_id == oracle_tree(repo.path)
    git_fsck(repo.path)


def _api_appender(start: Event, root: str, sid: str, stop: str, out: str) -> None:
    """Append (every fifth an assistant reply, snapshotted) until told to stop, at least
    API_APPENDS times; report how many."""
    session = Session.open(root, session=sid)
    start.wait()
    i = 0
    while i < API_APPENDS or not Path(stop).exists():
        role = "assistant" if i % 5 == 4 else "user"
        session.append.entries(
            [{"type": "message", "role": role, "content": f"api {i}"}], follow=True
        )
        i += 1
    Path(out).write_text(str(i))


def _convgit(root: Path, *args: str) -> list[str]:
    return [*COMMAND, "-C", str(root), *args]


def test_a_restore_racing_appends_from_the_cli_and_the_api_loses_nothing(
    repo: GitRepo, tmp_path: Path
) -> None:
    session = Session.create(repo.path)
    task = session.append.user("task").id
    repo.write("src/app.py", "print('plan A')\n")
    repo.write("notes.txt", "plan A\n")
    plan_a = session.append.assistant("plan A").id
    session.moves.fork(task)
    repo.write("src/app.py", "print('plan B')\n")
    (repo.path / "notes.txt").unlink()
    repo.write("b/only.txt", "plan B\n")
    plan_b = session.append.assistant("plan B").id
    trees = {session.track.sidecar.snapshots[e].tree_id for e in (plan_a, plan_b)}
    targets = [plan_a if k % 2 == 0 else plan_b for k in range(RESTORES)]

    restorer = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import subprocess, sys\n"
            "for target in sys.argv[1:]:\n"
            f"    cmd = {_convgit(repo.path, 'restore')!r} + [target, '--yes', '--json']\n"
            "    subprocess.run(cmd, check=True)\n",
            *targets,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    users = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import subprocess, sys\n"
            f"for k in range({CLI_APPENDS}):\n"
            f"    cmd = {_convgit(repo.path, 'user', '--force')!r} + [f'cli {{k}}']\n"
            "    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)\n",
        ],
        stderr=subprocess.PIPE,
    )
    start, stop, count = _spawn.Event(), tmp_path / "stop", tmp_path / "count"
    api = _spawn.Process(
        target=_api_appender, args=(start, str(repo.path), session.id, str(stop), str(count))
    )
    api.start()
    start.set()
    restored, restore_errors = restorer.communicate(timeout=180)
    _, user_errors = users.communicate(timeout=180)
    stop.touch()
    api.join(180)
    assert restorer.returncode == 0, restore_errors
    assert users.returncode == 0, user_errors
    assert api.exitcode == 0

    results = [json.loads(line) for line in restored.splitlines()]
    assert [r["entry"] for r in results] == targets
    assert all(r["changes"] for r in results)
    final = Session.open(repo.path, session=session.id)
    texts = [e.content for e in final.conversation.all_entries() if isinstance(e, Message)]
    api_texts = [f"api {i}" for i in range(int(count.read_text()))]
    for text in api_texts + [f"cli {k}" for k in range(CLI_APPENDS)]:
        assert texts.count(text) == 1, f"{text!r} landed {texts.count(text)} times"
    # The race happened: restores wrote their notes while the API writer was appending.
    in_order = [e for e in final.conversation.all_entries() if isinstance(e, (Message, Note))]
    api_at = [
        i for i, e in enumerate(in_order) if isinstance(e, Message) and e.content in api_texts
    ]
    assert any(api_at[0] < i < api_at[-1] for i, e in enumerate(in_order) if isinstance(e, Note))
    # Restores with no move of the conversation between them are told in one note (none when
    # they brought the files back to what the model last saw): notes may be fewer than restores.
    notes = [e for e in final.conversation.all_entries() if isinstance(e, Note)]
    assert 1 <= len(notes) <= RESTORES
    sidecar = final.track.sidecar
    assert len(sidecar.restores) == RESTORES and sidecar.interrupted is None
    assert {r["before"] for r in sidecar.restores} <= sidecar.finished
    # Restores and snapshots never overlap: every snapshot saw plan A or plan B, never a mix.
    for entry, snap in sidecar.snapshots.items():
        if entry != task:
            assert snap.tree_id in trees, f"the snapshot of {entry} caught a half-done restore"
    safety = repo.git("for-each-ref", "--format=%(objectname)", f"refs/convgit/{session.id}/safety")
    assert len(safety.split()) == RESTORES
    assert {repo.workspace.tree_of(commit) for commit in safety.split()} <= trees
    assert oracle_tree(repo.path) == final.track.sidecar.snapshots[targets[-1]].tree_id
    # No restore is lost to the model: once the conversation moves on, none waits to be told.
    final.append.user("after the race")
    assert Session.open(repo.path, session=session.id).restore_notes.pending() == []
    fsck = run("-C", str(repo.path), "fsck", cwd=repo.path, code=None)
    assert fsck.code == 0, fsck.stdout + fsck.stderr
    git_fsck(repo.path)
