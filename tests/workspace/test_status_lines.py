"""`convgit status` says both tracks and nothing else unless something is wrong (as the README
shows it): the watcher, the store's size and its retention policy come with -v (and in --json
always), the store's size without -v only when it is over its budget."""

from __future__ import annotations

import random

from tests.workspace.cli import convgit
from tests.workspace.gitrepo import GitRepo


def started(repo: GitRepo) -> None:
    convgit(repo.path, "init")
    convgit(repo.path, "user", "task")
    repo.write("app.py", "print('a')\n")
    convgit(repo.path, "assistant", "done")


def test_status_says_both_tracks_and_nothing_more(repo: GitRepo) -> None:
    started(repo)
    lines = convgit(repo.path, "status").stdout.splitlines()
    assert [line.split()[0] for line in lines] == ["session", "context:", "files:"]
    both = convgit(repo.path, "status", "--json").json()
    assert both["watcher"]["setting"] == "auto" and both["store"]["bytes"] > 0  # --json: all


def test_status_v_adds_the_watcher_the_store_and_its_policy(repo: GitRepo) -> None:
    started(repo)
    lines = convgit(repo.path, "status", "-v").stdout.splitlines()
    assert lines[:3] == convgit(repo.path, "status").stdout.splitlines()
    assert lines[3].startswith("watcher: ")  # the default, "auto": watchman when it is there
    assert lines[4] == "recorder: none: turned off (CONVGIT_RECORDER=off)"  # the tests' setting
    assert lines[5].startswith("store:   ") and lines[6].startswith("         retention: keep")


def test_a_store_over_its_budget_is_said_without_v(repo: GitRepo) -> None:
    started(repo)
    (repo.path / ".git" / "convgit" / "config.toml").write_text("[retention]\nmax_mib = 0.001\n")
    lines = convgit(repo.path, "status").stdout.splitlines()
    assert lines[3].startswith("store:   ") and "over its budget of 0.001 MiB" in lines[3]


def test_over_its_budget_status_says_whether_gc_can_let_anything_go(repo: GitRepo) -> None:
    """Over its budget, status says that gc lets the oldest go only when gc's dry run would let
    something go; when the current rules keep everything, it says gc can let nothing go and
    which keys change that. The next turns are judged again (none is told from before)."""
    started(repo)
    (repo.path / ".git" / "convgit" / "config.toml").write_text("[retention]\nmax_mib = 0.001\n")
    assert convgit(repo.path, "gc", "--dry-run", "--json").json()["let_go"] == []
    [line] = [s for s in convgit(repo.path, "status").stdout.splitlines() if "store:" in s]
    assert "over its budget of 0.001 MiB" in line and "lets the oldest go" not in line
    assert "can let nothing go under the current rules" in line and "max_mib" in line
    assert convgit(repo.path, "status", "--json").json()["store"]["gc_lets_go"] == 0

    task = convgit(repo.path, "log", "--json").json()["entries"][0]["id"]
    repo.write("big.bin", random.Random(7).randbytes(40_000).hex())
    convgit(repo.path, "assistant", "with a big file")  # a branch end, kept while there is room
    convgit(repo.path, "switch", task)
    (repo.path / "big.bin").unlink()
    convgit(repo.path, "assistant", "without it")
    went = convgit(repo.path, "gc", "--dry-run", "--json").json()["let_go"]
    assert went
    [line] = [s for s in convgit(repo.path, "status").stdout.splitlines() if "store:" in s]
    assert "(`convgit gc` lets the oldest go)" in line and "let nothing go" not in line
    assert convgit(repo.path, "status", "--json").json()["store"]["gc_lets_go"] == len(went)
