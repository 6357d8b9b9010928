"""``convgit gc``: retention with a visible budget. On a session of many turns over 60
simulated days (``gc_scenario``), gc lets go what the policy does not keep, and then: every
kept snapshot restores its exact files (git judges), every entry whose snapshot went says so in
one sentence, fsck passes and counts what gc let go apart from anything lost, the forked
session's shared snapshots are intact, the store shrank by what ``--dry-run`` said (within
5%), and the user's objects, refs, reflogs, index and stash are untouched."""

from __future__ import annotations

import subprocess
from datetime import datetime, timezone
from typing import Any

import pytest

from tests.workspace.cli import convgit, one_sentence
from tests.workspace.gc_scenario import (
    Scenario,
    missing,
    snapshot_trees,
    store_bytes,
    unreachable_blob,
    user_objects,
    user_view,
)
from tests.workspace.gitrepo import GitRepo, UserStateGuard, oracle_tree


def check_gc(repo: GitRepo, guard: UserStateGuard, turns: int, restore_all: bool) -> None:
    here = repo.path
    built = Scenario(repo, turns).build()
    before = snapshot_trees(repo)
    # the user stages a file whose bytes only a snapshot gc lets go holds, and writes a blob
    # nothing reaches: both are the user's, and stay
    second = built.older["c"][1]
    held_only_there = f"refs/convgit/{built.source}/{second}:data/c-{turns * 40 // 100 + 2}.bin"
    gone_bytes = subprocess.run(
        ["git", "cat-file", "blob", held_only_there], cwd=here, capture_output=True, check=True
    ).stdout
    repo.write("copy.bin", gone_bytes)
    repo.git("add", "copy.bin")
    (here / "copy.bin").unlink()  # staged only: the index alone reaches its blob
    loose = unreachable_blob(repo, "a draft the user may still want\n")
    guard.watch(here)
    theirs = user_objects(repo) | {loose}
    seen_by_user = user_view(repo)

    planned = convgit(here, "gc", "--dry-run", "--json").json()
    assert snapshot_trees(repo) == before, "a dry run changes nothing"
    size_before = store_bytes(repo)
    days = {datetime.now(timezone.utc).date().isoformat()}
    done = convgit(here, "gc", "--json").json()
    days.add(datetime.now(timezone.utc).date().isoformat())
    size_after = store_bytes(repo)

    def key(item: dict[str, Any]) -> tuple[str, str, str]:
        return (item["session"], item["entry"] or "", item["commit"])

    assert sorted(map(key, done["let_go"])) == sorted(map(key, planned["let_go"]))
    gone = {(i["session"], i["entry"]) for i in done["let_go"] if i["what"] == "snapshot"}
    assert gone, "the policy lets the older branches' middles go"
    # what the keep rules hold stays: the label, the fork's path, every branch end, the main line
    source_gone = {entry for sid, entry in gone if sid == built.source}
    assert built.labelled not in source_gone
    assert built.fork_point not in source_gone, "the fork keeps it, so its commit stays"
    assert not source_gone & set(built.main)
    assert built.older["b"][-1] not in source_gone and built.older["c"][-1] not in source_gone
    assert set(built.older["b"][2:-1]) - {built.labelled} <= source_gone

    # the store shrank by what the dry run said, within 5%
    freed = size_before - size_after
    assert freed > 0
    assert abs(freed - planned["bytes"]["freed"]) <= 0.05 * freed, (freed, planned["bytes"])

    # every kept snapshot: the same tree, all its objects there (git walks them), restorable
    after = snapshot_trees(repo)
    for sid, trees in before.items():
        for entry, tree in trees.items():
            if (sid, entry) in gone:
                assert entry not in after.get(sid, {})
            else:
                assert after[sid][entry] == tree, (sid, entry)
    repo.git("rev-list", "--objects", "--glob=refs/convgit/*")  # fails on any missing object
    repo.git("fsck", "--connectivity-only", "--no-dangling")
    sample = [(built.source, e) for e in (built.labelled, built.older["b"][-1], built.main[0])]
    sample += [(built.fork, entry) for entry in list(after[built.fork])[:3]]
    sample += [(built.source, built.main[len(built.main) // 3])]
    if restore_all:
        sample = [(sid, entry) for sid, trees in after.items() for entry in trees]
    for sid, entry in sample:
        convgit(here, "--session", sid, "restore", entry, "--yes", "--clean")
        assert oracle_tree(here) == before[sid][entry], (sid, entry)

    # every entry whose snapshot went says so, in one sentence
    for sid, entry in sorted(gone):
        shown = convgit(here, "--session", sid, "show", entry, "--json").json()
        assert shown["snapshot"] is None and shown["let_go"] in days
        refused = convgit(here, "--session", sid, "restore", entry, "--yes", code=1)
        one_sentence(refused.stderr)
        assert "was let go by gc on" in refused.stderr

    # fsck passes, names nothing lost, and counts what gc let go apart
    for sid in (built.source, built.fork):
        checked = convgit(here, "--session", sid, "fsck")
        assert "lost" not in (checked.stdout + checked.stderr).replace("not lost", "")
        assert convgit(here, "--session", sid, "fsck", "--json").json()["ok"]
    assert convgit(here, "fsck", "--json").json()["let_go"] == len(
        [i for i in done["let_go"] if i["session"] == built.source]
    )

    # the user's objects, refs, reflogs, index and stash: untouched
    assert not missing(repo, theirs)
    assert user_view(repo) == seen_by_user


def test_gc_on_a_sixty_day_session(make_repo: Any, user_state_guard: UserStateGuard) -> None:
    check_gc(make_repo(), user_state_guard, turns=50, restore_all=False)


@pytest.mark.slow
def test_gc_on_two_hundred_turns(make_repo: Any, user_state_guard: UserStateGuard) -> None:
    check_gc(make_repo(), user_state_guard, turns=200, restore_all=True)
