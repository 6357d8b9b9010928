"""The per-turn file cap (issue 37, `[snapshots] max_files_per_turn`): a turn's snapshot that
would take more new or changed files than the cap is skipped before git hashes any, said in one
sentence (stderr for `convgit assistant`, the hook log for a hook), and recorded as skipped:
`status` says so, `restore` to that turn refuses in one sentence naming the nearest earlier
snapshot and changes nothing, no later event catches the turn up again, and the next turn under
the cap snapshots as ever. Run with the real CLI on real repositories, through the hook with
the recorder off and on (its patched snapshots count too)."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests import clirun
from tests.recorded import Claude, Recorded
from tests.workspace.gitrepo import GitRepo

CAP = 5


def capped(repo: GitRepo) -> None:
    store = repo.path / ".git" / "convgit"
    store.mkdir(parents=True, exist_ok=True)
    (store / "config.toml").write_text(f"[snapshots]\nmax_files_per_turn = {CAP}\n")


def many(repo: GitRepo, count: int = CAP + 1) -> None:
    for n in range(count):
        repo.write(f"gen/out-{n}.txt", f"generated {n}\n")


def sidecar_kinds(repo: GitRepo) -> list[str]:
    (sidecar,) = (repo.path / ".git" / "convgit" / "sessions").glob("*.files.jsonl")
    return [json.loads(line)["type"] for line in sidecar.read_text().splitlines()]


def refuses_restore(
    repo: GitRepo, run: Any, entry: str, earlier: str, env: dict[str, str | None] | None = None
) -> None:
    """``convgit restore ENTRY`` says the turn has no snapshot, names ``earlier``, exits 1 and
    changes no file and no record."""
    files, kinds = repo.digest(), sidecar_kinds(repo)
    done = clirun.run("restore", entry, cwd=repo.path, env=env, code=1)
    said = done.err.decode()
    sentence, hint = said.strip().splitlines()  # one sentence, and the hint under it
    assert f"There is no snapshot of entry {entry}'s turn: it was skipped" in sentence, said
    assert hint.strip() == f"hint: the nearest earlier snapshot is at {earlier}", said
    assert repo.digest() == files and sidecar_kinds(repo) == kinds


def test_a_turn_over_the_cap_is_skipped_said_and_the_next_under_it_snapshots(
    repo: GitRepo,
) -> None:
    capped(repo)
    run = clirun.run
    run("init", cwd=repo.path)
    run("user", "start", cwd=repo.path)
    repo.write("one.txt", "one\n")
    first = run("assistant", "made one", "--json", cwd=repo.path).json()
    assert first["snapshot"]["tree"] == repo.oracle()
    run("user", "make many", cwd=repo.path)
    many(repo)
    done = run("assistant", "made many", "--json", cwd=repo.path)
    skipped = done.json()
    assert skipped["snapshot"] == {"skipped": {"changed": CAP + 1, "cap": CAP}}
    said = done.err.decode().strip()
    assert said == (
        "convgit: warning: the files were not snapshotted: 6 files are new or changed, over"
        " [snapshots] max_files_per_turn (5); ignore them in .gitignore, or raise the cap in"
        " config.toml"
    )
    status = run("status", "--json", cwd=repo.path).json()
    assert status["snapshot_skipped"]["entry"] == skipped["id"]
    assert (status["snapshot_skipped"]["changed"], status["snapshot_skipped"]["cap"]) == (6, 5)
    words = run("status", cwd=repo.path).out.decode()
    assert "was skipped: 6 files are new or changed" in words, words
    refuses_restore(repo, run, skipped["id"], first["id"])
    # the remedy the sentence names: the files ignored, the next turn takes one file
    repo.write(".gitignore", "gen/\n")
    run("user", "ignore them", cwd=repo.path)
    after = run("assistant", "ignored", "--json", cwd=repo.path)
    assert after.err == b"" and after.json()["snapshot"]["tree"] == repo.oracle()
    assert run("status", "--json", cwd=repo.path).json()["snapshot_skipped"] is None
    assert sidecar_kinds(repo).count("snapshot_skipped") == 1


def test_status_says_later_turns_are_skipped_too_and_how_to_snapshot_again(
    repo: GitRepo,
) -> None:
    """The files over the cap count again at every later turn (they are new since the last
    snapshot), so the turns after a skipped one are skipped too: `status` says so and names the
    remedies, and the one it names by command (`convgit snapshot ENTRY`, never capped) lets the
    next small turn snapshot."""
    capped(repo)
    run = clirun.run
    run("init", cwd=repo.path)
    run("user", "start", cwd=repo.path)
    repo.write("one.txt", "one\n")
    run("assistant", "made one", cwd=repo.path)
    many(repo)
    run("assistant", "made many", cwd=repo.path)
    run("user", "a small change", cwd=repo.path)
    repo.write("one.txt", "two\n")
    again = run("assistant", "changed one file", "--json", cwd=repo.path).json()
    assert again["snapshot"] == {"skipped": {"changed": CAP + 2, "cap": CAP}}
    entry = again["id"][:8]
    words = run("status", cwd=repo.path).out.decode().splitlines()
    (warning,) = [w for w in words if w.startswith("warning: ")]
    assert warning == (
        f"warning: the snapshot of {entry} was skipped: 7 files are new or changed, over"
        " [snapshots] max_files_per_turn (5); that turn has no snapshot to restore, and later"
        " turns are skipped too while those files stay new or changed: ignore them in"
        " .gitignore or raise the cap in config.toml, or `convgit snapshot"
        f" {entry}` takes this one whatever the cap"
    ), words
    run("snapshot", entry, cwd=repo.path)
    run("user", "another small change", cwd=repo.path)
    repo.write("one.txt", "three\n")
    after = run("assistant", "changed it again", "--json", cwd=repo.path)
    assert after.err == b"" and after.json()["snapshot"]["tree"] == repo.oracle()
    assert run("status", "--json", cwd=repo.path).json()["snapshot_skipped"] is None


def test_an_explicit_snapshot_is_never_capped(repo: GitRepo) -> None:
    """`convgit snapshot ENTRY` is the user asking: it takes the files whatever the cap, and the
    turn it names then has its snapshot to restore."""
    capped(repo)
    run = clirun.run
    run("init", cwd=repo.path)
    run("user", "make many", cwd=repo.path)
    many(repo)
    skipped = run("assistant", "made many", "--json", cwd=repo.path).json()
    assert "skipped" in skipped["snapshot"]
    taken = run("snapshot", skipped["id"], "--json", cwd=repo.path).json()
    assert taken["tree"] == repo.oracle()
    assert run("status", "--json", cwd=repo.path).json()["snapshot_skipped"] is None
    run("restore", skipped["id"], "--yes", cwd=repo.path)


@pytest.fixture(params=["off", "on"], ids=["hook", "recorder"])
def hooked(request: pytest.FixtureRequest, repo: GitRepo, tmp_path: Path) -> Iterator[Recorded]:
    run = tmp_path / "run"
    run.mkdir(mode=0o700)
    made = Recorded(repo, run, CONVGIT_RECORDER=request.param)
    yield made
    made.end()
    subprocess.run(["watchman", "watch-del", str(repo.path)], capture_output=True, timeout=30)


def test_a_hooked_turn_over_the_cap_is_skipped_once_and_never_caught_up_again(
    hooked: Recorded, tmp_path: Path
) -> None:
    """Claude Code's hooks: the turn's end over the cap is one sentence in the hook log, the
    event succeeds, and the events after it (a lost Stop caught up included) record the skip
    once, never try it again, and snapshot the next turn under the cap."""
    repo = hooked.repo
    capped(repo)
    claude = Claude(tmp_path / "claude", repo.path)
    hooked.hook(claude.start())
    if hooked.env["CONVGIT_RECORDER"] == "on":
        hooked.wait_running()
    hooked.hook(claude.prompt())
    repo.write("one.txt", "one\n")
    hooked.hook(claude.reply())
    _, first = claude.ids()
    assert hooked.json("show", first)["snapshot"]["tree"] == repo.oracle()
    hooked.hook(claude.prompt())
    many(repo)
    hooked.hook(claude.reply())
    _, skipped = claude.ids()
    line = hooked.log()[-1]
    assert f"the snapshot of {skipped} was skipped: 6 files are new or changed" in line, line
    assert ": ok in " in line, line
    assert hooked.json("status")["snapshot_skipped"]["entry"] == skipped
    refuses_restore(repo, clirun.run, skipped, first, hooked.env)
    # the third turn ran no convgit (its hooks found none): the next event is behind and
    # catches it up, skipped once more, and no event after it tries either turn again
    not_run = repo.path / ".git" / "convgit" / "hooks-not-run"
    when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    stop = [claude.prompt(), claude.reply()]
    not_run.write_bytes(b"".join(b"claude-code " + when.encode() + b"\n" + e + b"\n" for e in stop))
    _, lost = claude.ids()
    hooked.hook(claude.start())
    line = hooked.log()[-1]
    assert f"caught up: the snapshot of {lost} was skipped" in line and ": ok in " in line, line
    for _ in range(2):
        hooked.hook(claude.start())
        assert "skipped" not in hooked.log()[-1] and ": ok in " in hooked.log()[-1]
    assert sidecar_kinds(repo).count("snapshot_skipped") == 2
    assert hooked.json("status")["hook_failures"] == []
    # ignored, the files no longer count: the next turn snapshots as ever
    repo.write(".gitignore", "gen/\n")
    hooked.hook(claude.prompt())
    repo.write("two.txt", "two\n")
    hooked.hook(claude.reply())
    _, last = claude.ids()
    assert hooked.json("show", last)["snapshot"]["tree"] == repo.oracle()
    assert hooked.json("status")["snapshot_skipped"] is None
    if hooked.env["CONVGIT_RECORDER"] == "on":
        assert all(" through the recorder (" in line for line in hooked.log()[1:]), hooked.log()
