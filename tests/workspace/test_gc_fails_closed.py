"""``convgit gc`` fails closed: it deletes an object only when git proved, without a single error,
that nothing but convgit's own refs reaches it. In each repository below a commit of the user's
shares its files with a snapshot gc lets go (the user committed exactly what a turn left), so a
walk that stops early would take the user's tree and blob. Where git cannot judge (a broken
ref, a tree only a promisor remote has, an index naming a blob that is gone), gc and its dry run
refuse in one sentence, exit 1, and every object stays; once the repository is mended, gc runs
and the user's commit is whole. Where git can judge (a partial clone of blobs, a shallow clone,
a repository that borrows objects, refs a worktree keeps for itself), gc runs and keeps the
user's objects."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from convgit.session import Session
from tests.workspace.cli import convgit, one_sentence
from tests.workspace.gc_scenario import missing, user_objects
from tests.workspace.gitrepo import GitRepo, UserStateGuard, git

MISSING = "1234567890abcdef1234567890abcdef12345678"


def every_object(repo: GitRepo) -> set[str]:
    listed = repo.git("cat-file", "--batch-all-objects", "--batch-check=%(objectname)")
    return set(listed.split())


def let_go_snapshot(repo: GitRepo, shared: str, *, judged: bool = True) -> str:
    """A session whose middle turns gc lets go (keep_days = 0, on a branch the conversation
    left), the first of them holding ``shared.txt``; the user then commits exactly that
    snapshot's files on a branch ``side``. The snapshot's commit (with ``judged``, a dry run
    says gc lets it go)."""
    here = repo.path
    sid = convgit(here, "init", "--json").json()["id"]
    session = Session.open(here)  # the turns in-process: the same code the CLI runs
    first = session.append.assistant("first").id
    repo.write("shared.txt", shared)
    held = session.append.assistant("wrote shared.txt").id
    (here / "shared.txt").unlink()
    repo.write("other.txt", "later\n")
    session.append.assistant("removed it")
    repo.write("other.txt", "the branch end\n")
    session.append.assistant("the end")
    session.moves.switch(first)
    (here / ".git" / "convgit" / "config.toml").write_text("[retention]\nkeep_days = 0\n")
    snapshot = repo.git("rev-parse", f"refs/convgit/{sid}/{held}").strip()
    tree = repo.git("rev-parse", f"{snapshot}^{{tree}}").strip()
    head = repo.git("rev-parse", "HEAD").strip()
    mine = repo.git("commit-tree", "-p", head, "-m", "the user's side commit", tree).strip()
    repo.git("branch", "side", mine)
    if judged:
        planned = convgit(here, "gc", "--dry-run", "--json").json()
        assert held in {item["entry"] for item in planned["let_go"]}, "the snapshot is let go"
    return snapshot


def refused_and_whole(repo: GitRepo, said: str) -> None:
    """gc and its dry run refuse in one sentence with ``said`` in it, and no object went."""
    before = every_object(repo)
    for args in (("gc", "--dry-run"), ("gc", "--json")):
        refused = convgit(repo.path, *args, code=1)
        sentence = one_sentence(refused.stderr)
        assert "convgit gc deletes nothing" in sentence and said in sentence, sentence
        assert not refused.stdout
    assert every_object(repo) == before


def the_side_branch_is_whole(repo: GitRepo, shared: str) -> None:
    assert repo.git("show", "side:shared.txt") == shared
    repo.git("fsck", "--no-progress", "--no-dangling")


BROKEN: dict[str, Callable[[GitRepo], Callable[[], None]]] = {}


def breaks(name: str) -> Callable[..., Callable[[GitRepo], Callable[[], None]]]:
    def register(
        fn: Callable[[GitRepo], Callable[[], None]],
    ) -> Callable[[GitRepo], Callable[[], None]]:
        BROKEN[name] = fn
        return fn

    return register


@breaks("a ref naming a missing object")
def _missing_ref(repo: GitRepo) -> Callable[[], None]:
    ref = repo.path / ".git" / "refs" / "heads" / "old" / "broken"
    ref.parent.mkdir(parents=True)
    ref.write_text(MISSING + "\n")
    return ref.unlink


@breaks("a ref file that holds no id")
def _garbage_ref(repo: GitRepo) -> Callable[[], None]:
    ref = repo.path / ".git" / "refs" / "heads" / "crashed"
    ref.write_text("\0\0\0 half written\n")
    return ref.unlink


@breaks("a packed ref naming a missing object")
def _packed(repo: GitRepo) -> Callable[[], None]:
    packed = repo.path / ".git" / "packed-refs"
    before = packed.read_bytes() if packed.exists() else b""
    with open(packed, "ab") as file:
        file.write(f"{MISSING} refs/notes/lost\n".encode())

    def mend() -> None:
        packed.write_bytes(before)

    return mend


@breaks("an index naming a missing blob")
def _index(repo: GitRepo) -> Callable[[], None]:
    index = repo.path / ".git" / "index"
    before = index.read_bytes()
    repo.git("update-index", "--add", "--cacheinfo", f"100644,{MISSING},ghost.txt")
    return lambda: index.write_bytes(before)


@breaks("a worktree's own ref naming a missing object")
def _worktree_ref(repo: GitRepo) -> Callable[[], None]:
    other = repo.path.parent / "linked"
    repo.git("worktree", "add", "-q", "--detach", str(other))
    ref = repo.path / ".git" / "worktrees" / "linked" / "refs" / "bisect" / "bad"
    ref.parent.mkdir(parents=True)
    ref.write_text(MISSING + "\n")
    return ref.unlink


@breaks("a stopped rebase's autostash naming a missing object")
def _autostash(repo: GitRepo) -> Callable[[], None]:
    state = repo.path / ".git" / "worktrees" / "linked" / "rebase-merge"
    repo.git("worktree", "add", "-q", "--detach", str(repo.path.parent / "linked"))
    state.mkdir()
    (state / "autostash").write_text(MISSING + "\n")
    return lambda: shutil.rmtree(state)


@pytest.mark.parametrize("broken", sorted(BROKEN))
def test_a_repository_git_cannot_walk_gets_no_object_deleted(
    repo: GitRepo, rewatch: Callable[[GitRepo], None], broken: str
) -> None:
    shared = "the user's words, in a snapshot too\n"
    let_go_snapshot(repo, shared)
    mend = BROKEN[broken](repo)
    rewatch(repo)
    refused_and_whole(repo, "git could not walk everything your repository reaches")
    mend()
    rewatch(repo)
    done = convgit(repo.path, "gc", "--json").json()
    assert done["let_go"] and done["objects"] > 0, "once mended, gc does its work"
    the_side_branch_is_whole(repo, shared)


def test_a_broken_private_index_of_convgits_gets_no_object_deleted(
    repo: GitRepo, rewatch: Callable[[GitRepo], None]
) -> None:
    let_go_snapshot(repo, "shared\n")
    rewatch(repo)
    [index] = [p for p in (repo.path / ".git" / "convgit" / "index").iterdir() if "." not in p.name]
    index.write_bytes(b"DIRC not an index at all")
    before = every_object(repo)
    refused = convgit(repo.path, "gc", code=1)
    assert "convgit's index" in one_sentence(refused.stderr)
    assert every_object(repo) == before


def test_refs_another_worktree_keeps_for_itself_keep_their_objects(
    repo: GitRepo, rewatch: Callable[[GitRepo], None]
) -> None:
    """git's ``--all`` lists no ``refs/worktree/`` or ``refs/bisect/`` of another worktree: a
    bisect under way there names a commit nothing else reaches."""
    shared = "bisecting over this\n"
    snapshot = let_go_snapshot(repo, shared)
    mine = repo.git("rev-parse", "side").strip()
    other = repo.path.parent / "linked"
    repo.git("worktree", "add", "-q", "--detach", str(other))
    git(other, "update-ref", "refs/bisect/bad", mine)
    git(other, "update-ref", "refs/worktree/keep", mine)
    repo.git("branch", "-D", "side")
    repo.git("reflog", "expire", "--expire=now", "--all")
    rewatch(repo)
    blob = repo.git("rev-parse", f"{snapshot}:shared.txt").strip()
    convgit(repo.path, "gc")
    assert git(other, "show", "refs/bisect/bad:shared.txt") == shared
    assert repo.has_object(blob)


def _bare_with_history(tmp_path: Path) -> Path:
    """A bare repository that serves partial clones, with a few commits of nested folders."""
    source = tmp_path / "upstream"
    git(tmp_path, "init", "-q", "-b", "main", str(source))
    for n in range(3):
        (source / "deep" / "er").mkdir(parents=True, exist_ok=True)
        (source / "deep" / "er" / f"f{n}.txt").write_text(f"upstream {n}\n")
        (source / f"top{n}.txt").write_text(f"top {n}\n")
        git(source, "add", "-A")
        git(source, "-c", "user.name=U", "-c", "user.email=u@e", "commit", "-qm", f"up {n}")
    bare = tmp_path / "upstream.git"
    git(tmp_path, "clone", "-q", "--bare", str(source), str(bare))
    git(bare, "config", "uploadpack.allowFilter", "true")
    return bare


def _clone(tmp_path: Path, bare: Path, *how: str, name: str = "clone") -> GitRepo:
    git(tmp_path, "clone", "-q", *how, f"file://{bare}", name)
    clone = GitRepo(tmp_path / name)
    clone.git("config", "user.name", "User")
    clone.git("config", "user.email", "user@example.com")
    return clone


def test_an_offline_partial_clone_with_trees_on_its_remote_is_refused_by_name(
    tmp_path: Path, user_state_guard: UserStateGuard
) -> None:
    bare = _bare_with_history(tmp_path)
    clone = _clone(tmp_path, bare, "--filter=tree:0")
    user_state_guard.watch(clone.path)
    shared = "an unpushed local change\n"
    snapshot = let_go_snapshot(clone, shared, judged=False)
    blob = clone.git("rev-parse", f"{snapshot}:shared.txt").strip()
    away = bare.with_name("away.git")
    bare.rename(away)  # offline: the promisor remote cannot be reached
    user_state_guard.watch(clone.path)
    refused_and_whole(clone, "only on origin")
    hint = convgit(clone.path, "gc", code=1).stderr
    assert "git fetch --refetch --filter=blob:none origin" in hint
    away.rename(bare)
    clone.git("fetch", "-q", "--refetch", "--filter=blob:none", "origin")  # the hint
    user_state_guard.watch(clone.path)
    done = convgit(clone.path, "gc", "--json").json()
    assert done["objects"] > 0, "with its trees here, the clone is judged"
    bare.rename(away)
    assert clone.has_object(blob)
    the_side_branch_is_whole(clone, shared)


def test_a_partial_clone_without_file_contents_is_judged_offline_and_never_fetches(
    tmp_path: Path, user_state_guard: UserStateGuard
) -> None:
    bare = _bare_with_history(tmp_path)
    clone = _clone(tmp_path, bare, "--filter=blob:none")
    user_state_guard.watch(clone.path)
    shared = "a local change in a blobless clone\n"
    let_go_snapshot(clone, shared)
    theirs = user_objects_offline(clone)
    bare.rename(bare.with_name("away.git"))
    user_state_guard.watch(clone.path)
    done = convgit(clone.path, "gc", "--json").json()
    assert done["objects"] > 0
    assert not missing(clone, theirs)
    the_side_branch_is_whole(clone, shared)


def user_objects_offline(repo: GitRepo) -> set[str]:
    """What the user's refs reach and this repository holds (a partial clone's promised objects
    are not here, and asking for them would fetch)."""
    listed = repo.git(
        "rev-list", "--objects", "--exclude=refs/convgit/*", "--all", "--reflog",
        "--indexed-objects", "--missing=allow-promisor",
    )  # fmt: skip
    return {line.split()[0] for line in listed.splitlines() if line}


def test_a_shallow_clone_and_a_repository_that_borrows_objects_are_judged(
    tmp_path: Path, user_state_guard: UserStateGuard
) -> None:
    bare = _bare_with_history(tmp_path)
    for how in (("--depth", "1"), ("--shared",)):
        clone = _clone(tmp_path, bare, *how, name=how[0].strip("-"))
        user_state_guard.watch(clone.path)
        shared = f"kept in a clone made with {how[0]}\n"
        let_go_snapshot(clone, shared)
        theirs = user_objects(clone)
        lent = every_object(GitRepo(bare))
        done = convgit(clone.path, "gc", "--json").json()
        assert done["objects"] > 0
        assert not missing(clone, theirs)
        assert every_object(GitRepo(bare)) == lent, "the lender's objects are never touched"
        the_side_branch_is_whole(clone, shared)
        if how[0] == "--depth":
            clone.git("fetch", "-q", "--unshallow")
            clone.git("fsck", "--no-progress", "--no-dangling")
        user_state_guard.watch(clone.path)


def test_a_git_command_holding_the_index_lock_keeps_every_candidate(
    repo: GitRepo, rewatch: Callable[[GitRepo], None]
) -> None:
    """A git command between writing an object and the index that names it holds index.lock:
    gc deletes nothing then, says why, and frees it all at the next run."""
    let_go_snapshot(repo, "staged by a slow git add\n")
    rewatch(repo)
    lock = repo.path / ".git" / "index.lock"
    lock.write_bytes(b"")
    try:
        done = convgit(repo.path, "gc", "--json").json()
        said = convgit(repo.path, "gc", "--dry-run").stdout
    finally:
        lock.unlink()
    assert done["objects"] == 0 and done["let_go"]
    [left] = done["left"]
    assert "a git command held a lock" in left["why"] and str(lock) in left["why"]
    assert left["objects"] > 0
    assert f"{left['objects']} objects nothing reaches would stay" in said
    again = convgit(repo.path, "gc", "--json").json()
    assert again["objects"] == left["objects"] and not again["left"], "the next gc frees them"
    assert not again["let_go"]
