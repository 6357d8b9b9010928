"""Kill ``python -m convgit`` with SIGKILL at a named point (``CONVGIT_FAULT``) in a copy of a
real repository, then check what the crash promise says about what it left behind.

The killed commands run as real processes, several at once (each in its own copy); the checks
that follow each kill run the same CLI in this process, which is what makes 200 kills cheap.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from typer.testing import Result

from tests.clirun import invoke, start
from tests.workspace.gitrepo import UserStateGuard, digest, git, oracle_tree

Files = dict[str, tuple[str, object]]
KILLED = -signal.SIGKILL
WORKERS = max(2, min(4, os.cpu_count() or 2))


def convgit(repo: Path, sid: str | None, *args: str, stdin: bytes | None = None) -> Result:
    """``convgit -C REPO --session SID ARGS`` in this process; a traceback fails the test."""
    base = ["-C", str(repo), *(["--session", sid] if sid else [])]
    result: Result = invoke(*base, *args, input=stdin)
    return result


def ok(repo: Path, sid: str | None, *args: str, stdin: bytes | None = None) -> Any:
    """Run a ``--json`` command that must succeed; return its parsed output."""
    result = convgit(repo, sid, *args, stdin=stdin)
    assert result.exit_code == 0, f"convgit {' '.join(args)} exited {result.exit_code}: {result}"
    return orjson.loads(result.stdout) if "--json" in args else None


def spawn(
    repo: Path, sid: str, args: Sequence[str], fault: str | None, *, group: bool = False
) -> subprocess.Popen[bytes]:
    """The real CLI as its own process, with ``CONVGIT_FAULT`` set when ``fault`` is given;
    with ``group``, in a process group of its own, so its git children can be killed with it."""
    return start(
        "-C", str(repo), "--session", sid, *args, cwd=repo, env={"CONVGIT_FAULT": fault},
        group=group, stdin=subprocess.PIPE,
    )  # fmt: skip


@dataclass
class Project:
    """A repository with a session in it, as it is before the command that will be killed."""

    path: Path
    sid: str
    entries: dict[str, dict[str, Any]]  # every entry of the tree, by id (labels left out)
    files: Files  # digest of the working tree

    @classmethod
    def read(cls, path: Path, sid: str) -> Project:
        return cls(path, sid, entries_of(path, sid), digest(path))

    def copy(self, to: Path) -> Path:
        shutil.copytree(self.path, to, symlinks=True)
        return to


def entries_of(repo: Path, sid: str) -> dict[str, dict[str, Any]]:
    found = ok(repo, sid, "tree", "--json")["entries"]
    return {e["id"]: {k: v for k, v in e.items() if k != "label"} for e in found}


@dataclass
class Crash:
    """One command killed at ``fault`` in ``repo``, a copy of ``before``."""

    fault: str
    repo: Path
    before: Project
    returncode: int
    stderr: bytes
    guard: UserStateGuard  # the user's HEAD, index, branches, tags and stash, before the kill
    session_tail: bytes = b""  # the session file's bytes after its last newline, after the kill
    sidecar_tail: bytes = b""

    @property
    def sid(self) -> str:
        return self.before.sid

    def run(self, *args: str) -> Any:
        return ok(self.repo, self.sid, *args)

    def session_path(self, suffix: str = "") -> Path:
        common = self.repo / ".git" / "convgit" / "sessions"
        return common / f"{self.sid}{suffix}.jsonl"


Prepare = Callable[[Path], None]


def kill_each(
    before: Project,
    where: Path,
    args: Sequence[str],
    faults: Sequence[str],
    *,
    stdin: bytes | None = None,
    prepare: Prepare | None = None,
    delays: Sequence[float] | None = None,
) -> Iterator[Crash]:
    """Run ``convgit ARGS`` once per fault, each in a fresh copy of ``before`` (changed by
    ``prepare`` first), several processes at once; yield each crash in the order of ``faults``.
    With ``delays``, the fault is a label and the process and its git children are killed after
    that many seconds (if still running), as ``kill -9`` of a job: the randomized variant."""
    where.mkdir(parents=True, exist_ok=True)

    def one(number: int, fault: str) -> Crash:
        repo = before.copy(where / f"{number:03d}")
        if prepare is not None:
            prepare(repo)
        guard = UserStateGuard()
        guard.watch(repo)
        proc = spawn(repo, before.sid, args, None if delays else fault, group=bool(delays))
        if delays:
            time.sleep(delays[number])
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
        _, err = proc.communicate(stdin, timeout=300)
        crash = Crash(fault, repo, before, proc.returncode, err, guard)
        crash.session_tail = _tail(crash.session_path())
        crash.sidecar_tail = _tail(crash.session_path(".files"))
        return crash

    with ThreadPoolExecutor(WORKERS) as pool:
        futures: list[Future[Crash]] = [pool.submit(one, n, f) for n, f in enumerate(faults)]
        for future in futures:
            crash = future.result()
            yield crash
            shutil.rmtree(crash.repo)  # a large sweep would otherwise fill the disk


def _tail(path: Path) -> bytes:
    data = path.read_bytes() if path.exists() else b""
    return data[data.rfind(b"\n") + 1 :]


# -- what every crash must leave behind ----------------------------------------------------------


def assert_killed_at_the_point(crash: Crash) -> None:
    """The process died by SIGKILL: the point was reached, this was a real kill."""
    assert crash.returncode == KILLED, (
        f"{crash.fault}: the command was not killed at the point (exit {crash.returncode}): "
        f"{crash.stderr.decode(errors='replace')}"
    )


def assert_session_survives(crash: Crash, *, sidecar: bool = False) -> dict[str, Any]:
    """The session loads, fsck passes (or names only what repair handles), no entry that existed
    before the command is lost or changed, the next append works, and fsck is clean after it.
    With ``sidecar``, the next snapshot works too, before the final fsck. Returns the entries
    as they were right after the crash."""
    repo, sid = crash.repo, crash.sid
    for command in (("log", "--json"), ("fsck", "--json")):
        result = convgit(repo, sid, *command)
        if result.exit_code == 3:  # allowed only if repair handles it
            ok(repo, sid, "repair", "--json")
            result = convgit(repo, sid, *command)
        assert result.exit_code == 0, f"{crash.fault}: {' '.join(command)}: {result.output}"
    survived = entries_of(repo, sid)
    _assert_nothing_lost(crash, survived)

    if sidecar:
        _assert_next_snapshot_works(crash)
    made = ok(repo, sid, "user", "after crash", "--json")
    check = ok(repo, sid, "fsck", "--json")
    assert check["ok"] and check["problems"] == [], f"{crash.fault}: {check}"
    _assert_nothing_lost(crash, entries_of(repo, sid))
    assert ok(repo, sid, "show", "@", "--json")["entry"]["id"] == made["id"], (
        "the append is not the leaf"
    )
    assert crash.session_path().read_bytes().endswith(b"\n")
    _assert_tail_quarantined(crash, crash.session_tail, crash.session_path(".quarantine"))
    return survived


def _assert_next_snapshot_works(crash: Crash) -> None:
    """The next snapshot works, records git's own ``git add -A`` tree (the private index was not
    left corrupt), and leaves a sidecar of whole lines; a torn record went to the quarantine."""
    snap = crash.run("snapshot", "--json")
    assert snap["tree"] == oracle_tree(crash.repo), f"{crash.fault}: wrong snapshot tree"
    git(crash.repo, "fsck", "--full", "--strict", "--no-progress")  # no corrupt object
    sidecar = crash.session_path(".files").read_bytes()
    assert sidecar.endswith(b"\n")
    for line in sidecar.splitlines():
        orjson.loads(line)
    _assert_tail_quarantined(crash, crash.sidecar_tail, crash.session_path(".files.quarantine"))


def _assert_nothing_lost(crash: Crash, now: dict[str, dict[str, Any]]) -> None:
    lost = [i for i, e in crash.before.entries.items() if now.get(i) != e]
    assert not lost, f"{crash.fault}: entries lost or changed after the crash: {lost}"


def _assert_tail_quarantined(crash: Crash, tail: bytes, quarantine: Path) -> None:
    if not tail:
        return
    kept = quarantine.read_bytes() if quarantine.exists() else b""
    texts = [orjson.loads(line).get("text", "").encode() for line in kept.splitlines()]
    assert tail in texts, f"{crash.fault}: the torn line was not kept in {quarantine.name}"
