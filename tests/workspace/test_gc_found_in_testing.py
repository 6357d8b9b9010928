"""Failures of ``convgit gc`` found by trying it as a new user would, each test failing on the
code before its fix.

1. A stash the user dropped is, in git, recoverable until git's own gc prunes it (two weeks by
   default, ``gc.pruneExpire``; ``git stash drop`` prints its id for that reason). When the
   dropped stash held a turn's files, a snapshot gc lets go shared its tree and blob, and gc
   deleted them: ``git stash apply <id>`` then failed. Reproduction:

       git init r && cd r && echo v0 > app.py && git add app.py && git commit -m init
       convgit init; convgit user p1; convgit assistant r1
       convgit user p2; echo edit > app.py; convgit assistant r2
       git stash; S=$(git rev-parse stash@{0}); git stash drop
       (two more turns changing app.py; git checkout app.py; convgit fork <r1>)
       printf '[retention]\\nkeep_days = 0\\n' >> .git/convgit/config.toml; convgit gc
       git stash apply $S   # fatal: ... is not a stash-like commit

2. ``convgit gc`` run in a linked worktree (``git worktree add``) was always refused: convgit's
   private index of the main worktree is a split index whose shared part lies in the main
   worktree's git folder, which git does not look in when run from the linked worktree
   (``git cannot read convgit's index ... sharedindex...: index file open failed``); the same
   from the main worktree for a session of a linked one.

3. A rebase or merge run with ``--autostash`` that stops keeps the user's uncommitted changes in
   a commit only ``.git/rebase-merge/autostash`` (``rebase-apply/autostash``,
   ``.git/MERGE_AUTOSTASH``) names. When those changes were a turn's files, gc deleted the
   autostash's tree and blob: finishing the rebase or merge could not bring the changes back.

4. After ``git worktree remove`` of a linked worktree that had a session, every ``convgit gc``
   of the repository was refused (``git cannot read convgit's index ... sharedindex...: index
   file open failed``) until the user deleted a file of convgit's by hand: git deleted the
   worktree's git dir, which held the shared part of that session's private index.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable

import pytest

from convgit.session import Session
from tests.workspace.cli import convgit, one_sentence
from tests.workspace.gitrepo import GitRepo, oracle_tree


def _dropped_stash(
    repo: GitRepo, rewatch: Callable[[GitRepo], None], *, packed: bool = False
) -> tuple[str, str]:
    """The user stashes the agent's edit of turn 2 and drops the stash; two more turns change
    the file and the conversation goes back to turn 1, so gc lets turn 2's snapshot go (with
    ``packed``, the user's ``git gc`` packed everything before the stash, which then freshens
    the pack). The dropped stash's commit and the entry of turn 2."""
    here = repo.path
    sid = convgit(here, "init", "--json").json()["id"]
    session = Session.open(here)
    first = session.append.assistant("first").id
    repo.write("src/app.py", "print('the agent's edit of turn 2')\n")
    held = session.append.assistant("edited app.py").id
    if packed:
        repo.git("gc", "-q")
    repo.git("stash", "-q")  # the user stashes the agent's edit...
    dropped = repo.git("rev-parse", "stash@{0}").strip()
    repo.git("stash", "drop", "-q")  # ...and drops it: git keeps it two weeks
    rewatch(repo)
    repo.write("src/app.py", "print('turn 3')\n")
    session.append.assistant("turn 3")
    repo.write("src/app.py", "print('the branch end')\n")
    session.append.assistant("the end")
    repo.git("checkout", "-q", "src/app.py")
    rewatch(repo)
    session.moves.switch(first)
    (here / ".git" / "convgit" / "config.toml").write_text("[retention]\nkeep_days = 0\n")
    snapshot = repo.git("rev-parse", f"refs/convgit/{sid}/{held}").strip()
    assert repo.git("rev-parse", f"{snapshot}^{{tree}}") == repo.git(
        "rev-parse", f"{dropped}^{{tree}}"
    ), "the dropped stash holds exactly the snapshot's files"
    return dropped, held


def test_gc_keeps_the_contents_of_a_dropped_stash(
    repo: GitRepo, rewatch: Callable[[GitRepo], None]
) -> None:
    here = repo.path
    dropped, held = _dropped_stash(repo, rewatch)
    planned = convgit(here, "gc", "--dry-run", "--json").json()
    assert held in {item["entry"] for item in planned["let_go"]}

    walked = repo.git("rev-list", "--objects", dropped).split()

    convgit(here, "gc")

    gone = [oid for oid in walked if len(oid) == 40 and not repo.has_object(oid)]
    assert not gone, f"gc deleted {len(gone)} object(s) of the dropped stash {dropped}"
    repo.git("stash", "apply", "-q", dropped)
    assert "the agent's edit of turn 2" in (here / "src" / "app.py").read_text()
    repo.git("checkout", "-q", "src/app.py")
    rewatch(repo)


@pytest.mark.parametrize("expire", ["never", "2.weeks.ago", "now"])
@pytest.mark.parametrize("packed", [False, True], ids=["loose", "freshened pack"])
def test_gc_keeps_a_dropped_stash_as_long_as_gits_own_gc_would(
    repo: GitRepo, rewatch: Callable[[GitRepo], None], expire: str, packed: bool
) -> None:
    """What the stash wrote again (its tree and the edited file's blob, loose or by freshening
    the pack the user's git gc made) stays while gc.pruneExpire keeps it, with its reason in
    the dry run and the run alike; with ``now`` it goes, as with ``git gc --prune=now``. The
    snapshot's own objects nothing wrote again go (the commit and the files of later turns)."""
    here = repo.path
    dropped, held = _dropped_stash(repo, rewatch, packed=packed)
    repo.git("config", "gc.pruneExpire", expire)
    rewatch(repo)
    stashed = {repo.git("rev-parse", f"{dropped}^{{tree}}").strip()}
    stashed |= {repo.git("rev-parse", f"{dropped}:src/app.py").strip()}
    stashed |= {repo.git("rev-parse", f"{dropped}:src").strip()}
    planned = convgit(here, "gc", "--dry-run", "--json").json()

    done = convgit(here, "gc", "--json").json()

    assert held in {item["entry"] for item in done["let_go"]}
    assert done["left"] == planned["left"], "the dry run says what the run leaves"
    kept = {oid for oid in stashed if repo.has_object(oid)}
    if expire == "now":
        assert not kept and not done["left"], "git's own gc would prune them now"
        return
    assert kept == stashed, "what the stash wrote again stays"
    [again] = [item for item in done["left"] if "wrote it again" in item["why"]]
    assert again["objects"] >= len(stashed)
    assert done["objects"] > 0 or packed, "the rest of the snapshot went"
    repo.git("stash", "apply", "-q", dropped)
    assert "the agent's edit of turn 2" in (here / "src" / "app.py").read_text()
    repo.git("checkout", "-q", "src/app.py")
    rewatch(repo)


def test_a_gc_prune_expire_git_cannot_read_gets_no_object_deleted(
    repo: GitRepo, rewatch: Callable[[GitRepo], None]
) -> None:
    _dropped_stash(repo, rewatch)
    repo.git("config", "gc.pruneExpire", "whenever")
    rewatch(repo)
    every = set(repo.git("cat-file", "--batch-all-objects", "--batch-check=%(objectname)").split())
    for args in (("gc", "--dry-run"), ("gc",)):
        refused = convgit(repo.path, *args, code=1)
        assert "gc.pruneExpire" in one_sentence(refused.stderr)
    after = repo.git("cat-file", "--batch-all-objects", "--batch-check=%(objectname)").split()
    assert set(after) == every


def test_gc_runs_from_a_linked_worktree(repo: GitRepo, rewatch: Callable[[GitRepo], None]) -> None:
    here = repo.path
    convgit(here, "init")
    session = Session.open(here)
    for turn in range(3):
        repo.write("src/app.py", f"print({turn})\n")
        session.append.assistant(f"turn {turn}")
    repo.git("checkout", "-q", "src/app.py")
    rewatch(repo)
    linked = here.parent / "linked"
    repo.git("worktree", "add", "-q", "--detach", str(linked))

    planned = convgit(linked, "gc", "--dry-run", code=None)

    assert planned.code == 0, planned.stderr


def _autostash_then_let_go(repo: GitRepo, rewatch: Callable[[GitRepo], None], how: str) -> str:
    """The agent's uncommitted edit of turn 2 goes into git's autostash of a rebase or merge
    that stops (``how``); two more turns change the file; the conversation goes back to turn 1,
    so gc lets turn 2's snapshot go. The autostash's commit."""
    here = repo.path
    repo.git("checkout", "-q", "-b", "topic")
    repo.write("README.md", "# topic\n")
    repo.commit_all("topic")
    repo.git("checkout", "-q", "main")
    repo.write("README.md", "# main\n")
    repo.commit_all("main")
    convgit(here, "init")
    session = Session.open(here)
    first = session.append.assistant("first").id
    repo.write("src/app.py", "print('the agent's uncommitted work')\n")
    session.append.assistant("edited app.py")
    if how == "rebase":
        env = {**os.environ, "GIT_SEQUENCE_EDITOR": "sed -i '1i break'"}
        subprocess.run(
            ["git", "rebase", "-q", "-i", "--autostash", "HEAD~1"],
            cwd=here, env=env, capture_output=True, check=True,
        )  # fmt: skip
        stash = (here / ".git" / "rebase-merge" / "autostash").read_text().strip()
    elif how == "rebase-apply":  # stops on README.md, which both branches changed
        repo.git("rebase", "-q", "--apply", "--autostash", "topic", check=False)
        stash = (here / ".git" / "rebase-apply" / "autostash").read_text().strip()
    else:
        repo.git("merge", "-q", "--autostash", "topic", check=False)  # stops on README.md
        stash = (here / ".git" / "MERGE_AUTOSTASH").read_text().strip()
    for turn in (3, 4):
        repo.write("src/app.py", f"print({turn})\n")
        session.append.assistant(f"turn {turn}")
    repo.git("checkout", "-q", "src/app.py")
    session.moves.switch(first)
    (here / ".git" / "convgit" / "config.toml").write_text("[retention]\nkeep_days = 0\n")
    rewatch(repo)
    return stash


@pytest.mark.parametrize("how", ["rebase", "rebase-apply", "merge"])
def test_gc_keeps_the_autostash_of_a_stopped_rebase_or_merge(
    repo: GitRepo, rewatch: Callable[[GitRepo], None], how: str
) -> None:
    """Reproduction: tests' scripts autostash.sh / merge_autostash.sh of the report: after gc,
    `git rebase --continue` (or the merge's commit) says "Applying autostash resulted in
    conflicts" and the stash it leaves is "not a stash-like commit" (its tree is gone)."""
    stash = _autostash_then_let_go(repo, rewatch, how)
    walked = repo.git("rev-list", "--objects", stash).split()

    convgit(repo.path, "gc")

    gone = [oid for oid in walked if len(oid) == 40 and not repo.has_object(oid)]
    assert not gone, f"gc deleted {len(gone)} object(s) of the {how}'s autostash {stash}"


def test_gc_runs_with_a_session_in_each_worktree_and_both_still_snapshot_and_restore(
    repo: GitRepo, rewatch: Callable[[GitRepo], None]
) -> None:
    """A session's private index in a linked worktree is split, its shared part in that
    worktree's git dir (``.git/worktrees/<name>/``): gc reads it there, from either worktree,
    deletes what the sessions let go, and each session's snapshots and restores work after."""
    here = repo.path
    linked = here.parent / "linked"
    repo.git("worktree", "add", "-q", "--detach", str(linked))
    turns: dict[str, list[str]] = {}
    for where in (here, linked):
        convgit(where, "init")
        for turn in range(3):
            (where / "src").mkdir(exist_ok=True)
            (where / "src" / "app.py").write_text(f"print({turn}, {where.name!r})\n")
            done = convgit(where, "assistant", f"turn {turn}", "--json").json()
            turns.setdefault(where.name, []).append(done["id"])
        convgit(where, "switch", turns[where.name][0])
    assert list((here / ".git" / "worktrees" / "linked").glob("sharedindex.*"))
    (here / ".git" / "convgit" / "config.toml").write_text("[retention]\nkeep_days = 0\n")
    rewatch(repo)

    for where in (linked, here):
        planned = convgit(where, "gc", "--dry-run", "--json", code=None)
        assert planned.code == 0, planned.stderr
    done = convgit(here, "gc", "--json").json()

    let_go = {item["entry"] for item in done["let_go"]}
    assert {turns[w.name][1] for w in (here, linked)} <= let_go, "each session's middle turn went"
    assert done["objects"] > 0
    for where in (here, linked):
        (where / "src" / "app.py").write_text("print('a turn after gc')\n")
        after = convgit(where, "assistant", "after gc", "--json").json()["id"]
        convgit(where, "restore", turns[where.name][0], "--yes")
        assert (where / "src" / "app.py").read_text() == f"print(0, {where.name!r})\n"
        convgit(where, "restore", after, "--yes")
        assert (where / "src" / "app.py").read_text() == "print('a turn after gc')\n"
    convgit(linked, "gc")


def test_a_snapshot_gc_re_parented_is_freed_whole_when_a_later_gc_lets_it_go(
    repo: GitRepo, rewatch: Callable[[GitRepo], None]
) -> None:
    """gc packs the commits it re-parents, so git's files no longer say when convgit wrote the
    snapshot; gc carries that time over (``gc-written.json``): a later gc letting the snapshot
    go takes its files, which nothing wrote again, rather than leaving them for two weeks."""
    here = repo.path
    convgit(here, "init")
    session = Session.open(here)
    replies = []
    for turn in range(6):
        repo.write("src/app.py", f"print({turn})\n")
        replies.append(session.append.assistant(f"turn {turn}").id)
    convgit(here, "label", replies[3], "for-now")
    repo.git("checkout", "-q", "src/app.py")
    session.moves.switch(replies[0])
    (here / ".git" / "convgit" / "config.toml").write_text("[retention]\nkeep_days = 0\n")
    rewatch(repo)
    assert convgit(here, "gc", "--json").json()["rebased"] >= 1
    convgit(here, "label", replies[3], "--clear")
    planned = convgit(here, "gc", "--dry-run", "--json").json()

    done = convgit(here, "gc", "--json").json()

    assert replies[3] in {item["entry"] for item in done["let_go"]}
    assert not done["left"] and not planned["left"], "nothing but convgit wrote its files"
    assert done["objects"] >= 3, "its commit, tree and file went"


def test_gc_runs_after_a_linked_worktree_with_a_session_is_removed(
    repo: GitRepo, rewatch: Callable[[GitRepo], None]
) -> None:
    """The private index of a removed worktree's session cannot be read (its shared part went
    with the worktree's git dir) and names nothing a snapshot will use: gc runs, keeps that
    session's snapshots, and the worktree added again at the same folder snapshots as git
    stages."""
    here = repo.path
    linked = here.parent / "linked"
    repo.git("worktree", "add", "-q", "--detach", str(linked))
    convgit(linked, "init")
    made = []
    for turn in range(3):
        (linked / "app.py").write_text(f"print({turn})\n")
        made.append(convgit(linked, "assistant", f"turn {turn}", "--json").json()["snapshot"])
    assert list((here / ".git" / "worktrees" / "linked").glob("sharedindex.*"))
    repo.git("worktree", "remove", "--force", str(linked))
    (here / ".git" / "convgit" / "config.toml").write_text("[retention]\nkeep_days = 0\n")
    rewatch(repo)

    done = convgit(here, "gc", "--json", code=None)
    assert done.code == 0, done.stderr
    assert done.json()["let_go"] == []  # the removed worktree's session: its active path, held
    for snapshot in made:
        assert repo.git("cat-file", "-t", snapshot["commit"]).strip() == "commit"

    repo.git("worktree", "add", "-q", "--detach", str(linked))
    (linked / "app.py").write_text("print('back')\n")
    again = convgit(linked, "assistant", "back again", "--json").json()["snapshot"]
    assert again["tree"] == oracle_tree(linked)
