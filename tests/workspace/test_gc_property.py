"""gc never takes an object of the user's (issue 34's property): a random history of the user's
(commits on branches, tags, the stash, notes, resets that leave only the reflog, a staged file,
refs a linked worktree keeps for itself) woven with a random convgit session (turns that write
files from the same small pool, so the user's objects and the snapshots' share blobs and trees,
and moves that leave branches for gc to let go), in a plain repository, a blobless partial clone
and a shallow clone, packed by the user's own git gc or not; then gc with ``keep_days = 0``.
Every object the user's refs, reflogs, indexes and worktrees reached before is still there
(``git cat-file -e``, never fetching), git's fsck finds nothing missing, and every snapshot gc
kept still has all its objects, whatever convgit let go."""

from __future__ import annotations

import itertools
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from convgit.base.errors import UnjudgeableRepositoryError
from convgit.session import Session
from convgit.store.location import locate
from convgit.upkeep import collecting
from tests.workspace.cli import convgit
from tests.workspace.gitrepo import GitRepo, git, init_repo

POOL = [f"content {n}\n" for n in range(4)]
FILES = ["a.txt", "dir/b.txt", "dir/sub/c.txt"]
EXAMPLES = itertools.count()

TURN = st.tuples(st.just("turn"), st.sampled_from(FILES), st.sampled_from(POOL))
USER = st.one_of(
    st.tuples(st.just("commit"), st.sampled_from(FILES), st.sampled_from(POOL)),
    st.tuples(st.just("branch from snapshot"), st.integers(0, 20), st.just("")),
    st.tuples(st.just("tag"), st.integers(0, 20), st.just("")),
    st.tuples(st.just("stash"), st.sampled_from(FILES), st.sampled_from(POOL)),
    st.tuples(st.just("note"), st.sampled_from(POOL), st.just("")),
    st.tuples(st.just("reset"), st.just(""), st.just("")),
    st.tuples(st.just("stage"), st.sampled_from(FILES), st.sampled_from(POOL)),
    st.tuples(st.just("worktree ref"), st.integers(0, 20), st.just("")),
    st.tuples(st.just("switch"), st.integers(0, 20), st.just("")),
)
STEPS = st.lists(st.one_of(TURN, TURN, USER), min_size=3, max_size=12)


def base(kind: str, where: Path) -> GitRepo:
    """A repository of ``kind``: plain, or a clone of one (blobless, shallow)."""
    if kind == "plain":
        return init_repo(where)
    upstream = init_repo(where.with_name(where.name + "-upstream"))
    for n in range(3):
        upstream.write(f"up/{n}.txt", POOL[n % len(POOL)] + f"upstream {n}\n")
        upstream.commit_all(f"upstream {n}")
    upstream.git("config", "uploadpack.allowFilter", "true")
    how = ["--filter=blob:none"] if kind == "blobless" else ["--depth", "1"]
    git(where.parent, "clone", "-q", *how, f"file://{upstream.path}", where.name)
    clone = GitRepo(where)
    clone.git("config", "user.name", "User")
    clone.git("config", "user.email", "user@example.com")
    return clone


def apply(repo: GitRepo, session: Session, step: tuple[str, object, str], made: list[str]) -> None:
    kind, what, data = step
    here = repo.path
    if kind == "turn":
        repo.write(str(what), data)
        entries = [
            {"type": "message", "role": "user", "content": f"write {what}"},
            {"type": "message", "role": "assistant", "content": "done"},
        ]
        made.append(session.append.entries(entries)[-1].id)
    elif kind == "commit":
        repo.write(str(what), data)
        repo.git("add", "-A")
        repo.git("commit", "-q", "--allow-empty", "-m", f"user commit {len(made)}")
    elif kind == "branch from snapshot" and made:
        entry = made[int(str(what)) % len(made)]
        found = repo.git("for-each-ref", "--format=%(objectname)", f"refs/convgit/*/{entry}")
        if found.split():
            tree = repo.git("rev-parse", f"{found.split()[0]}^{{tree}}").strip()
            commit = repo.git("commit-tree", "-m", "the user commits a turn's files", tree).strip()
            repo.git("branch", "-f", f"kept-{entry}", commit)
    elif kind == "tag":
        repo.git("tag", "-f", f"t{int(str(what)) % 3}")
    elif kind == "stash":
        repo.write(str(what), data + "stashed\n")
        repo.git("stash", "push", "-q", "--include-untracked", "-m", "the user's stash")
    elif kind == "note":
        repo.git("notes", "add", "-f", "-m", str(what), "HEAD")
    elif kind == "reset":
        if repo.git("rev-list", "--count", "HEAD").strip() != "1":
            repo.git("reset", "-q", "--hard", "HEAD~1")  # the commit left only in the reflog
    elif kind == "stage":
        repo.write(str(what), data + "staged only\n")
        repo.git("add", str(what))
        (here / str(what)).unlink()
    elif kind == "worktree ref" and made:  # a bisect in a linked worktree, over a turn's files
        linked = here.parent / f"{here.name}-linked"
        if not linked.exists():
            repo.git("worktree", "add", "-q", "--detach", str(linked))
        entry = made[int(str(what)) % len(made)]
        found = repo.git("for-each-ref", "--format=%(objectname)", f"refs/convgit/*/{entry}")
        if found.split():
            tree = repo.git("rev-parse", f"{found.split()[0]}^{{tree}}").strip()
            commit = git(linked, "commit-tree", "-m", "bisecting", tree).strip()
            git(linked, "update-ref", "refs/worktree/mine", commit)
    elif kind == "switch" and made:
        session.moves.switch(made[int(str(what)) % len(made)])


def reached_by_the_user(repo: GitRepo) -> set[str]:
    """What the user's refs, reflogs, indexes and linked worktrees reach, and this repository
    holds (a partial clone's promised objects are elsewhere)."""
    tips = []
    for folder in (repo.path.parent / f"{repo.path.name}-linked",):
        if folder.exists():
            tips += git(folder, "for-each-ref", "--format=%(objectname)", "refs/worktree").split()
    listed = subprocess.run(
        [
            "git", "rev-list", "--objects", "--exclude=refs/convgit/*", "--all", "--reflog",
            "--indexed-objects", "--missing=allow-promisor", "--stdin",
        ],
        cwd=repo.path, input="".join(f"{t}\n" for t in tips), capture_output=True, text=True,
        check=True,
    ).stdout  # fmt: skip
    return {line.split()[0] for line in listed.splitlines() if line}


def absent(repo: GitRepo, oids: set[str]) -> set[str]:
    """Those of ``oids`` git does not have, asked without fetching (rev-list never fetches)."""
    listed = subprocess.run(
        ["git", "rev-list", "--objects", "--no-walk", "--missing=print", "--stdin"],
        cwd=repo.path, input="".join(f"{o}\n" for o in sorted(oids)), capture_output=True,
        text=True, check=False,
    ).stdout  # fmt: skip
    return {line[1:] for line in listed.splitlines() if line.startswith("?")} & oids


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["plain", "blobless", "shallow"])
@settings(
    max_examples=12,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(steps=STEPS, packed=st.booleans(), broken=st.sampled_from([False, False, False, True]))
def test_gc_never_takes_an_object_the_users_history_reaches(
    tmp_path: Path, kind: str, steps: list[tuple[str, object, str]], packed: bool, broken: bool
) -> None:
    repo = base(kind, tmp_path / f"example-{next(EXAMPLES)}")
    convgit(repo.path, "init")
    session = Session.open(repo.path)
    made: list[str] = []
    for step in steps:
        apply(repo, session, step, made)
        session = Session.open(repo.path)
    (repo.path / ".git" / "convgit" / "config.toml").write_text("[retention]\nkeep_days = 0\n")
    if packed:
        repo.git("gc", "-q")
    theirs = reached_by_the_user(repo)
    if broken:  # a ref a crashed tool left, naming nothing: gc must refuse and delete nothing
        every = repo.git("cat-file", "--batch-all-objects", "--batch-check=%(objectname)")
        (repo.path / ".git" / "refs" / "heads" / "crashed").write_text("0" * 39 + "1\n")
        with pytest.raises(UnjudgeableRepositoryError):
            collecting.run(locate(repo.path), dry_run=False)
        assert repo.git("cat-file", "--batch-all-objects", "--batch-check=%(objectname)") == every
        (repo.path / ".git" / "refs" / "heads" / "crashed").unlink()
    collecting.run(locate(repo.path), dry_run=False)
    assert not absent(repo, theirs), "gc took an object of the user's"
    fsck = subprocess.run(
        ["git", "fsck", "--no-progress", "--connectivity-only", "--no-dangling"],
        cwd=repo.path, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert "missing" not in fsck.stdout + fsck.stderr, fsck.stdout + fsck.stderr
    repo.git("rev-list", "--objects", "--missing=allow-promisor", "--glob=refs/convgit/*")
