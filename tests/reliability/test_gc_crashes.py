"""``convgit gc`` killed at every named point (``CONVGIT_FAULT``), in a copy of a session of
many turns over 60 simulated days: every snapshot the policy keeps still restores its exact
files (git judges), fsck passes, and the next ``gc`` finishes the job, leaving the store as
small as a gc that was never killed. Once with convgit's objects loose, once with everything
packed by the user's own ``git repack -a -d`` (then gc rewrites that pack)."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from tests.reliability.crash_rig import (
    Crash,
    Project,
    assert_killed_at_the_point,
    kill_each,
    ok,
)
from tests.workspace.gc_scenario import Scenario, snapshot_trees, store_bytes
from tests.workspace.gitrepo import GitRepo, oracle_tree

LOOSE = [
    "gc:before-records",
    "gc:between-sessions",
    "gc:before-refs",
    "gc:before-prune",
    "gc:dropping",
    "gc:dropped-loose",
    "gc:dropped-loose#7",
]
PACKED = ["gc:repacked", "gc:pack-file-gone", "gc:pack-file-gone#2"]


def _repack(repo: Path) -> None:
    """The user's own repack, an hour ago (gc leaves a pack git freshened since it began)."""
    subprocess.run(["git", "repack", "-a", "-d", "-q"], cwd=repo, check=True)
    hour_ago = time.time() - 3600
    for path in (repo / ".git" / "objects" / "pack").iterdir():
        os.utime(path, (hour_ago, hour_ago))


def _built(repo: GitRepo) -> tuple[Any, dict[str, dict[str, str]]]:
    built = Scenario(repo, 24).build()
    return built, snapshot_trees(repo)


def _check(crash: Crash, kept: dict[str, dict[str, str]], gone: set[tuple[str, str]],
           clean_size: int, sample: list[tuple[str, str]]) -> None:  # fmt: skip
    assert_killed_at_the_point(crash)
    repo = crash.repo
    for sid, trees in kept.items():
        assert ok(repo, sid, "fsck", "--json")["ok"], crash.fault
        for entry, tree in trees.items():
            snap = ok(repo, sid, "show", entry, "--json")["snapshot"]
            assert snap is not None, (crash.fault, sid, entry)
            git = GitRepo(repo)
            assert git.git("rev-parse", f"{snap['commit']}^{{tree}}").strip() == tree
            git.git("rev-list", "--objects", snap["commit"])  # fails on a missing object
    for sid, entry in sample:
        ok(repo, sid, "restore", entry, "--yes", "--clean")
        assert oracle_tree(repo) == kept[sid][entry], (crash.fault, sid, entry)
    # the next gc finishes what the killed one began
    ok(repo, None, "gc", "--json")
    after = snapshot_trees(GitRepo(repo))
    for sid, trees in kept.items():
        assert after[sid] == trees, crash.fault
    assert not {(s, e) for s, t in after.items() for e in t} & gone, crash.fault
    GitRepo(repo).git("fsck", "--connectivity-only", "--no-dangling")
    assert store_bytes(GitRepo(repo)) <= clean_size * 1.05 + 16 * 1024, crash.fault
    crash.guard.verify()


@pytest.mark.parametrize("packed", [False, True], ids=["loose", "packed"])
def test_a_killed_gc_keeps_every_kept_snapshot_and_the_next_finishes(
    make_repo: Any, tmp_path: Path, packed: bool
) -> None:
    repo: GitRepo = make_repo()
    built, trees = _built(repo)
    if packed:
        _repack(repo.path)
    before = Project.read(repo.path, built.source)
    clean = tmp_path / "clean"
    shutil.copytree(repo.path, clean, symlinks=True)
    plan = ok(clean, None, "gc", "--json")
    clean_size = store_bytes(GitRepo(clean))
    gone = {(i["session"], i["entry"]) for i in plan["let_go"] if i["what"] == "snapshot"}
    assert gone
    kept = {
        sid: {e: t for e, t in entries.items() if (sid, e) not in gone}
        for sid, entries in trees.items()
    }
    sample = [(built.source, built.labelled), (built.source, built.main[-1])]
    sample += [(built.fork, built.fork_point)]
    faults = PACKED if packed else LOOSE
    for crash in kill_each(before, tmp_path / "crashes", ["gc"], faults):
        _check(crash, kept, gone, clean_size, sample)
