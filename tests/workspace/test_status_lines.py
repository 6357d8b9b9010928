"""`convgit status` says both tracks and nothing else unless something is wrong (as the README
shows it): the watcher, the store's size and its retention policy come with -v (and in --json
always), the store's size without -v only when it is over its budget."""

from __future__ import annotations

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
