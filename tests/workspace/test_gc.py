"""``convgit gc``: retention with a visible budget. On a session of many turns over 60
simulated days (``gc_scenario``), gc lets go what the policy does not keep, and then: every
kept snapshot restores its exact files (git judges), every entry whose snapshot went says so in
one sentence, fsck passes and counts what gc let go apart from anything lost, the forked
session's shared snapshots are intact, the store shrank by what ``--dry-run`` said (within
5%), and the user's objects, refs, reflogs, index and stash are untouched."""

from __future__ import annotations

import subprocess
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from tests.clirun import start
from tests.polling import poll
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
    held_only_there = f"refs/convgit/{built.source}/{second}:data/c.bin"
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

    tip = built.older["c"][-1]  # a branch end, whose parents go
    old_commit = convgit(here, "show", tip, "--json").json()["snapshot"]["commit"]
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

    # a kept snapshot gc gave a new commit (same files): the commit printed before still names it
    new_commit = convgit(here, "show", tip, "--json").json()["snapshot"]["commit"]
    assert new_commit != old_commit, "the branch end was re-parented"
    assert convgit(here, "diff", old_commit[:12], tip, "--json").json()["changes"] == []

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


def _turns(repo: GitRepo, what: str, count: int, *, days_ago: float, size: int = 0) -> list[str]:
    """``count`` turns through the real CLI, each changing a file (and with ``size``, writing an
    incompressible file of that many bytes over the last), stamped ``days_ago`` days back."""
    import random

    made = []
    ts = datetime.now(timezone.utc).timestamp() - days_ago * 86400
    stamp = datetime.fromtimestamp(ts, timezone.utc).isoformat(timespec="milliseconds")
    stamp = stamp.replace("+00:00", "Z")
    for n in range(count):
        repo.write(f"{what}.txt", f"{what} {n}\n")
        if size:
            repo.write(f"{what}.bin", random.Random(f"{what}{n}").randbytes(size))
        line = {"type": "message", "role": "assistant", "content": f"{what} {n}", "ts": stamp}
        ran = convgit(repo.path, "append", "--json", input=orjson_line(line))
        made.append(ran.json()["ids"][0])
    return made


def orjson_line(value: dict[str, Any]) -> bytes:
    import orjson

    return orjson.dumps(value) + b"\n"


def test_saved_states_past_saved_days_go_and_say_so(repo: GitRepo) -> None:
    here = repo.path
    convgit(here, "init")
    first = _turns(repo, "a", 3, days_ago=1)
    saved = []
    for target in (first[0], first[2], first[1]):
        restored = convgit(here, "restore", target, "--yes", "--json").json()
        saved.append(restored["saved"])
    convgit(here, "user", "and now?")  # the model is told: no restore's note is pending
    (here / ".git" / "convgit" / "config.toml").write_text(
        "[retention]\nkeep_days = 0\nsaved_days = 0\n"
    )
    done = convgit(here, "gc", "--json").json()
    went = {i["commit"][:12] for i in done["let_go"] if i["what"] == "saved"}
    newest = convgit(here, "restores", "--json").json()["saved_states"][0]["id"]
    assert newest == saved[-1], "the newest saved state, where --undo goes, stays"
    assert {s.removeprefix("saved:") for s in saved[:-1]} == went
    for state in saved[:-1]:
        refused = convgit(here, "restore", state, "--yes", code=1)
        one_sentence(refused.stderr)
        assert f"The saved state {state} was let go by gc on" in refused.stderr
        assert state not in convgit(here, "restores").stdout
    convgit(here, "restore", "--undo", "--yes")
    assert convgit(here, "fsck", "--json").json()["ok"]


def test_a_saved_state_kept_because_an_undo_goes_to_it_can_itself_be_restored(
    repo: GitRepo,
) -> None:
    """The undo's saved state went to another saved state, which gc keeps for it; that one's
    own restore went to a third, which its restore reads (the files its restore wrote): gc
    keeps the whole chain, so the kept state restores after gc (it failed with "There is no
    tree ..." when only the first link was kept)."""
    here = repo.path
    convgit(here, "init")
    first = _turns(repo, "a", 2, days_ago=1)
    went = convgit(here, "restore", first[0], "--yes", "--json").json()["saved"]
    back = convgit(here, "restore", went, "--yes", "--json").json()["saved"]
    convgit(here, "restore", "--undo", "--yes")
    convgit(here, "user", "and now?")  # the model is told: no restore's note is pending
    files = {p.name: p.read_bytes() for p in here.iterdir() if p.is_file()}
    (here / ".git" / "convgit" / "config.toml").write_text(
        "[retention]\nkeep_days = 0\nsaved_days = 0\n"
    )
    convgit(here, "gc")
    kept = {s["id"] for s in convgit(here, "restores", "--json").json()["saved_states"]}
    assert back in kept, "the state the undo went to stays"
    assert went in kept, "the state that one's restore went to stays"
    convgit(here, "restore", back, "--yes")  # its files are those here: nothing to change
    assert {p.name: p.read_bytes() for p in here.iterdir() if p.is_file()} == files
    convgit(here, "restore", went, "--yes")
    assert (here / "a.txt").read_bytes() != files["a.txt"]
    convgit(here, "restore", "--undo", "--yes")
    assert {p.name: p.read_bytes() for p in here.iterdir() if p.is_file()} == files
    assert convgit(here, "fsck", "--json").json()["ok"]


def test_fsck_tells_a_lost_snapshot_from_one_gc_let_go(
    repo: GitRepo, user_state_guard: UserStateGuard
) -> None:
    here = repo.path
    sid = convgit(here, "init", "--json").json()["id"]
    base = _turns(repo, "base", 2, days_ago=50)
    convgit(here, "switch", base[0])
    side = _turns(repo, "side", 4, days_ago=45)
    convgit(here, "switch", base[-1])
    done = convgit(here, "gc", "--json").json()
    assert {i["entry"] for i in done["let_go"]} == set(side[:-1])
    # a kept snapshot lost by hand: its ref deleted, then git's own gc
    repo.git("update-ref", "-d", f"refs/convgit/{sid}/{side[-1]}")
    repo.git("-c", "gc.reflogExpire=now", "gc", "-q", "--prune=now")
    user_state_guard.watch(here)  # git's gc packed the user's refs: the user's own doing
    checked = convgit(here, "fsck", code=3)
    said = checked.stdout + checked.stderr
    assert said.count("not in the repository any more") == 1, said
    assert "1 snapshot or saved-state commit(s) lost from git" in said
    assert convgit(here, "fsck", "--json", code=3).json()["let_go"] == len(side) - 1
    assert "let go by gc" in convgit(here, "show", side[0]).stdout


def test_a_budget_lets_the_oldest_go_first_and_says_when_the_kept_part_is_over(
    repo: GitRepo,
) -> None:
    here = repo.path
    convgit(here, "init")
    main = _turns(repo, "main", 2, days_ago=2, size=20_000)
    convgit(here, "switch", main[0])
    side = _turns(repo, "side", 6, days_ago=1, size=40_000)
    convgit(here, "switch", main[-1])
    config = here / ".git" / "convgit" / "config.toml"
    config.write_text("[retention]\nmax_mib = 0.2\n")
    planned = convgit(here, "gc", "--dry-run", "--json").json()
    went = [i["entry"] for i in planned["let_go"]]
    assert went and went == side[: len(went)], "oldest first, and only what no rule holds"
    assert len(went) < len(side) and planned["over_budget"] is None
    config.write_text("[retention]\nmax_mib = 0.001\n")
    tight = convgit(here, "gc")
    assert "over the budget of 0.001 MiB" in tight.stdout
    assert not set(main) & {i["entry"] for i in convgit(here, "gc", "--json").json()["let_go"]}
    shown = convgit(here, "status", "--json").json()["store"]
    assert shown["policy"]["max_mib"] == 0.001 and shown["last_gc"]


def test_gc_refuses_plainly(repo: GitRepo, tmp_path: Any) -> None:
    from convgit.base import locks

    here = repo.path
    convgit(here, "init")
    config = here / ".git" / "convgit" / "config.toml"
    config.write_text("[retention]\nkeep_days = 'forever'\n")
    one_sentence(convgit(here, "gc", code=3).stderr)
    config.write_text("[retention]\nkeep = 3\n")
    one_sentence(convgit(here, "gc", code=3).stderr)
    config.unlink()
    with locks.held(here / ".git" / "convgit" / "locks" / "gc.lock", 0):
        refused = convgit(here, "gc", code=1)
    assert "Another convgit gc is running" in refused.stderr
    plain = tmp_path / "plain"
    plain.mkdir()
    convgit(plain, "init")
    one_sentence(convgit(plain, "gc", code=1).stderr)


def test_auto_runs_gc_in_the_background_after_a_turn_only_when_asked(repo: GitRepo) -> None:

    here = repo.path
    store = here / ".git" / "convgit"
    convgit(here, "init")
    base = _turns(repo, "base", 2, days_ago=50)
    convgit(here, "switch", base[0])
    side = _turns(repo, "side", 3, days_ago=45)
    convgit(here, "switch", base[-1])
    assert (store / "gc-checked").exists() and not (store / "gc-last").exists(), "auto is off"
    (store / "gc-checked").unlink()
    (store / "config.toml").write_text("[retention]\nauto = true\n")
    _turns(repo, "now", 1, days_ago=0)  # a turn: gc starts in the background
    log = store / "logs" / "gc.log"
    poll(lambda: log.exists() and "let go" in log.read_text(), 60, every=0.2)
    assert (store / "logs" / "gc.log").read_text().count("\n") == 1
    assert "let go 2," in (store / "logs" / "gc.log").read_text()
    assert "let go by gc" in convgit(here, "show", side[0]).stdout


def test_turns_while_gc_runs_lose_nothing(repo: GitRepo) -> None:
    """gc holds the locks every turn takes: turns made while it runs wait for it (or it for
    them), and afterwards every snapshot the records name is whole, with its tree."""
    import threading

    from convgit.session import Session

    here = repo.path
    convgit(here, "init")
    base = _turns(repo, "base", 3, days_ago=50, size=10_000)
    convgit(here, "switch", base[0])
    _turns(repo, "side", 6, days_ago=45, size=10_000)
    convgit(here, "switch", base[-1])
    made: list[str] = []

    def turns() -> None:
        for n in range(6):
            repo.write("during.txt", f"during {n}\n")
            line = orjson_line({"type": "message", "role": "assistant", "content": f"d{n}"})
            ran = convgit(here, "append", "--json", input=line)
            made.append(ran.json()["ids"][0])

    writer = threading.Thread(target=turns)
    gc = start("gc", cwd=here, stdout=None, stderr=None)
    writer.start()
    writer.join(120)
    assert gc.wait(120) == 0
    assert len(made) == 6
    session = Session.open(here)
    for snap in session.track.sidecar.snapshots.values():
        assert repo.git("rev-parse", f"{snap.commit}^{{tree}}").strip() == snap.tree_id
        repo.git("rev-list", "--objects", snap.commit)
    assert convgit(here, "fsck", "--json").json()["ok"]
    convgit(here, "gc")  # and again, with nothing running beside it
    convgit(here, "restore", made[2], "--yes")
    assert (here / "during.txt").read_text() == "during 2\n"
    assert convgit(here, "fsck", "--json").json()["ok"]


def test_a_kept_saved_state_with_exact_bytes_keeps_its_id(repo: GitRepo) -> None:
    """A saved state whose files git's view does not hold byte for byte is a child commit of
    the state saved first: gc keeps both, so the id the restore printed still names it."""
    here = repo.path
    convgit(here, "init")
    repo.write(".gitattributes", "*.crlf text\n")
    repo.write("a.crlf", b"one\r\n")
    first = _turns(repo, "a", 1, days_ago=40)
    repo.write("a.crlf", b"two\r\n")
    _turns(repo, "b", 1, days_ago=40)
    saved = convgit(here, "restore", first[0], "--yes", "--json").json()["saved"]
    commit = convgit(here, "restores", "--json").json()["saved_states"][0]["commit"]
    assert repo.git("rev-list", "--count", commit).strip() == "2", "exact bytes: a child"
    (here / ".git" / "convgit" / "config.toml").write_text(
        "[retention]\nkeep_days = 0\nsaved_days = 0\n"
    )
    convgit(here, "gc")
    assert convgit(here, "restores", "--json").json()["saved_states"][0]["id"] == saved
    convgit(here, "restore", "--undo", "--yes")
    assert (here / "a.crlf").read_bytes() == b"two\r\n"


def test_resume_restore_refuses_an_entry_whose_files_gc_let_go(
    repo: GitRepo, tmp_path: Any
) -> None:
    """An entry's files were its snapshot (or the nearest above it then): when gc let that go,
    ``resume --restore`` says so rather than restore older files."""
    import shutil

    fixture = Path(__file__).resolve().parents[2] / "fixtures" / "claude-code" / "rewind.jsonl"
    transcript = tmp_path / "claude" / "projects" / "-work" / fixture.name
    transcript.parent.mkdir(parents=True)
    shutil.copy(fixture, transcript)
    here = repo.path
    convgit(here, "import", "claude-code", str(transcript))
    repo.write("notes.txt", "at p1\n")
    convgit(here, "snapshot", "p1")  # the files of p1, and of a1 below it (a2 is the leaf)
    repo.write("notes.txt", "at a2\n")
    convgit(here, "snapshot", "a2")
    # a budget of nothing lets go what is kept only while there is room: a1's branch end
    (here / ".git" / "convgit" / "config.toml").write_text(
        "[retention]\nkeep_days = 0\nmax_mib = 0\n"
    )
    convgit(here, "gc")
    refused = convgit(here, "resume", "a1", "--agent", "claude-code", "--restore", "--yes", code=1)
    one_sentence(refused.stderr)
    assert "were the snapshot of p1, which gc let go on" in refused.stderr
    assert (here / "notes.txt").read_text() == "at a2\n"


def test_redaction_after_gc_keeps_every_kept_snapshot(
    repo: GitRepo, user_state_guard: UserStateGuard
) -> None:
    """gc's map of old commits to new is rewritten with the commits redaction rewrites."""
    here = repo.path
    convgit(here, "init")
    repo.write("secret.txt", "token=hunter2\n")
    base = _turns(repo, "base", 2, days_ago=50)
    convgit(here, "switch", base[0])
    _turns(repo, "side", 3, days_ago=45)
    convgit(here, "switch", base[-1])
    convgit(here, "gc")
    side_end = convgit(here, "tree", "--json").json()["entries"][-1]["id"]
    convgit(here, "redact", "hunter2", "--snapshots", "--yes")
    repo.git("gc", "-q", "--prune=now")  # the commits before redaction are gone for good
    user_state_guard.watch(here)  # git's gc packed the user's refs: the user's own doing
    assert convgit(here, "fsck", "--json").json()["ok"]
    convgit(here, "restore", side_end, "--yes")
    assert (here / "secret.txt").read_text() == "token=[redacted]\n"


def test_a_gc_killed_midway_is_named_by_fsck_and_status_until_gc_finishes_it(
    repo: GitRepo,
) -> None:
    """A gc killed after it recorded what it lets go and before it moved the refs: fsck and
    status say so and name `convgit gc`, which finishes it; then neither speaks of it."""
    here = repo.path
    convgit(here, "init")
    base = _turns(repo, "base", 2, days_ago=50)
    convgit(here, "switch", base[0])
    _turns(repo, "side", 3, days_ago=45)
    convgit(here, "switch", base[-1])
    killed = convgit(here, "gc", env={"CONVGIT_FAULT": "gc:before-refs"}, code=None)
    assert killed.code == -9
    checked = convgit(here, "fsck", "--json").json()
    assert checked["interrupted_gc"] and checked["ok"]
    for words in (convgit(here, "fsck").stdout, convgit(here, "status").stdout):
        assert "was interrupted; nothing is lost, and `convgit gc` finishes it" in words
    assert convgit(here, "status", "--json").json()["store"]["interrupted_gc"]
    finished = convgit(here, "gc")
    assert "finished a gc that was interrupted" in finished.stdout
    assert convgit(here, "fsck", "--json").json()["interrupted_gc"] is None
    assert "interrupted" not in convgit(here, "status").stdout
