"""Repositories as people really have them: garbage-collected, with line-ending conversion, without
trusted file modes, sparse, shallow, found through GIT_DIR/GIT_WORK_TREE, and full of hooks.
In each, a snapshot is git's own `git add -A` tree, a restore brings that tree back (judged by
git), an undo returns the exact prior bytes, and the user's git state never changes."""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from convgit import Session
from tests import clirun
from tests.clirun import invoke
from tests.reliability.repos import git_fsck
from tests.workspace.gitrepo import GitRepo, UserStateGuard, digest, git


def files_only(root: Path) -> dict[str, tuple[str, object]]:
    """Files and links with their bytes, exec bit or target (git keeps no empty folders)."""
    return {p: v for p, v in digest(root).items() if v[0] != "dir"}


def round_trip(
    repo: GitRepo,
    change: Callable[[GitRepo], None],
    seen: Callable[[Path], dict[str, tuple[str, object]]] = files_only,
) -> dict[str, Any]:
    """A task, reply A, ``change``, reply B; then restore A (the tree is git's) and undo (what
    ``seen`` shows, by default the bytes, exec bits and links, is B's exactly)."""
    session = Session.create(repo.path)
    session.append.user("task")
    a = session.append.assistant("A").id
    assert session.track.sidecar.snapshots[a].tree_id == repo.oracle()
    change(repo)
    b = session.append.assistant("B").id
    tree_b = session.track.sidecar.snapshots[b].tree_id
    assert tree_b == repo.oracle()
    assert tree_b != session.track.sidecar.snapshots[a].tree_id, (
        "the change did not reach the snapshot"
    )
    before = seen(repo.path)
    assert session.restoring.restore(a).changes
    assert repo.oracle() == session.track.sidecar.snapshots[a].tree_id
    restored_a = seen(repo.path)
    session.restoring.restore(undo=True)
    assert seen(repo.path) == before, "undo did not return the exact prior bytes"
    assert repo.oracle() == tree_b
    after = session.append.assistant("after the undo").id
    assert session.track.sidecar.snapshots[after].tree_id == tree_b, "the private index went astray"
    session.restoring.restore(undo=True)  # undoing the undo: the files as restore A left them
    assert seen(repo.path) == restored_a, "undoing the undo did not return the exact bytes"
    session.restoring.restore(undo=True)
    assert seen(repo.path) == before
    return {"session": session, "a": a, "b": b}


# -- gc --


def test_snapshots_and_safety_snapshots_survive_gc_prune_now_aggressive(
    repo: GitRepo, user_state: UserStateGuard
) -> None:
    session = Session.create(repo.path)
    task = session.append.user("task").id
    repo.write("plan.txt", "plan A\n")
    plan_a = session.append.assistant("A").id
    session.moves.fork(task)
    repo.write("plan.txt", "plan B\n")
    repo.write("run.sh", "#!/bin/sh\n", executable=True)
    plan_b = session.append.assistant("B").id
    before_restore = files_only(repo.path)
    session.restoring.restore(plan_a)  # its saved state is reachable only through refs/convgit
    snapshots = dict(session.track.sidecar.snapshots)

    repo.git("gc", "-q", "--prune=now", "--aggressive")
    user_state.watch(repo.path)  # gc packs the user's refs: that is the user's own doing

    for snap in snapshots.values():
        assert repo.has_object(snap.commit) and repo.has_object(snap.tree_id)
    log = repo.git("log", "--format=%H", f"refs/convgit/{session.id}/{plan_b}").split()
    assert log == [snapshots[plan_b].commit, snapshots[task].commit]
    session = Session.open(repo.path, session=session.id)
    session.restoring.restore(undo=True)
    assert files_only(repo.path) == before_restore
    for entry in (task, plan_a, plan_b):
        session.restoring.restore(entry)
        assert repo.oracle() == snapshots[entry].tree_id
    git_fsck(repo.path)


# -- configuration and index oddities --


@pytest.mark.parametrize("endings", ["crlf", "lf"])
def test_autocrlf_true_restore_and_undo(repo: GitRepo, endings: str) -> None:
    repo.git("config", "core.autocrlf", "true")
    eol = b"\r\n" if endings == "crlf" else b"\n"
    repo.write("text.txt", b"one" + eol + b"two" + eol)
    repo.write("windows.txt", b"always\r\ncrlf\r\n")
    repo.write("binary.bin", b"\x00\r\n\x00")

    def change(repo: GitRepo) -> None:
        repo.write("text.txt", b"one" + eol + b"two" + eol + b"three" + eol)
        repo.write("windows.txt", b"always\r\ncrlf\r\nagain\r\n")
        repo.write("binary.bin", b"\x00\r\n\x01")

    round_trip(repo, change)


def file_bytes(root: Path) -> dict[str, tuple[str, object]]:
    """Files with their bytes only: what core.fileMode=false tells git to care about."""
    return {p: (v[0], v[1][0] if v[0] == "file" else v[1]) for p, v in files_only(root).items()}


def test_filemode_false_undo_returns_the_exact_bytes(repo: GitRepo) -> None:
    repo.git("config", "core.fileMode", "false")
    repo.write("run.sh", "#!/bin/sh\necho A\n", executable=True)
    repo.write("plain.txt", "A\n")

    def change(repo: GitRepo) -> None:
        repo.write("run.sh", "#!/bin/sh\necho B\n", executable=True)
        repo.write("plain.txt", "B\n")
        repo.write("new.sh", "#!/bin/sh\n", executable=True)

    round_trip(repo, change, seen=file_bytes)


def test_filemode_false_undo_keeps_exec_bits(repo: GitRepo) -> None:
    """git records new files as 100644 here (as `git add -A` does); the undo still gives
    back the exec bits the disk had."""
    repo.git("config", "core.fileMode", "false")
    repo.write("run.sh", "#!/bin/sh\necho A\n", executable=True)

    def change(repo: GitRepo) -> None:
        repo.write("run.sh", "#!/bin/sh\necho B\n", executable=True)
        repo.write("new.sh", "#!/bin/sh\necho new\n", executable=True)

    round_trip(repo, change)


@pytest.mark.parametrize("attributes", ["*.txt eol=crlf\n", "*.txt text\n*.dat -text\n"])
def test_eol_attributes_restore_and_undo(repo: GitRepo, attributes: str) -> None:
    """Line endings set by .gitattributes rather than config: undo still returns the bytes."""
    repo.write(".gitattributes", attributes)
    repo.write("notes.txt", b"lf only\nhere\n")
    repo.write("mixed.txt", b"crlf\r\nthen lf\n")
    repo.write("data.dat", b"raw\r\nbytes\n")

    def change(repo: GitRepo) -> None:
        repo.write("notes.txt", b"lf only\nhere\nand more\n")
        repo.write("mixed.txt", b"crlf\r\nthen lf\nmore\r\n")
        repo.write("data.dat", b"other\r\nbytes\n")

    round_trip(repo, change)


def test_sparse_checkout(repo: GitRepo, user_state: UserStateGuard) -> None:
    repo.write("docs/guide.md", "outside the cone\n")
    repo.commit_all("docs")
    repo.git("sparse-checkout", "set", "src")
    user_state.watch(repo.path)
    assert not (repo.path / "docs").exists()

    def change(repo: GitRepo) -> None:
        repo.write("src/app.py", "print('B')\n")
        repo.write("src/new.py", "new\n")

    round_trip(repo, change)
    assert not (repo.path / "docs").exists(), "a restore checked out a path the user left out"


def test_skip_worktree_entries(repo: GitRepo, user_state: UserStateGuard) -> None:
    repo.git("update-index", "--skip-worktree", "README.md")
    user_state.watch(repo.path)

    def change(repo: GitRepo) -> None:
        repo.write("README.md", "# edited behind git's back\n")  # git status cannot see it

    round_trip(repo, change)


def test_shallow_clone(
    make_repo: Callable[..., GitRepo], tmp_path: Path, user_state: UserStateGuard
) -> None:
    source = make_repo("source")
    for n in range(3):
        source.write("history.txt", f"commit {n}\n")
        source.commit_all(f"commit {n}")
    user_state.watch(source.path)
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{source.path}", "shallow")
    clone = GitRepo(tmp_path / "shallow")
    assert clone.git("rev-parse", "--is-shallow-repository").strip() == "true"
    user_state.watch(clone.path)

    def change(repo: GitRepo) -> None:
        repo.write("history.txt", "a reply's edit\n")
        repo.write("more/new.txt", "new\n")

    round_trip(clone, change)
    git_fsck(clone.path)


# -- found through the environment, run from elsewhere --


def test_git_dir_and_git_work_tree_in_the_environment(
    make_repo: Callable[..., GitRepo], tmp_path: Path
) -> None:
    repo = make_repo("repo")
    elsewhere = make_repo("elsewhere")  # another repository: convgit must not use it
    elsewhere_before = files_only(elsewhere.path)
    env = {**os.environ, "GIT_DIR": str(repo.path / ".git"), "GIT_WORK_TREE": str(repo.path)}

    def convgit(*args: str) -> str:
        return clirun.run(*args, cwd=elsewhere.path / "src", env=env).stdout

    convgit("init")
    convgit("user", "task")
    first = convgit("assistant", "A", "--json")
    repo.write("src/app.py", "print('B')\n")
    repo.write("b.txt", "B\n")
    convgit("assistant", "B")
    convgit("snapshot")
    before = files_only(repo.path)
    entry_a = json.loads(first)["id"]
    convgit("restore", entry_a, "--yes")
    session = Session.open(repo.path)
    assert repo.oracle() == session.track.sidecar.snapshots[entry_a].tree_id
    convgit("restore", "--undo", "--yes")
    assert files_only(repo.path) == before
    assert (repo.path / ".git" / "convgit" / "sessions").is_dir()
    assert not (elsewhere.path / ".git" / "convgit").exists()
    assert files_only(elsewhere.path) == elsewhere_before


# -- hooks --

HOOKS = [
    "applypatch-msg", "pre-applypatch", "post-applypatch", "pre-commit", "pre-merge-commit",
    "prepare-commit-msg", "commit-msg", "post-commit", "pre-rebase", "post-checkout",
    "post-merge", "pre-push", "pre-receive", "update", "proc-receive", "post-receive",
    "post-update", "reference-transaction", "push-to-checkout", "pre-auto-gc", "post-rewrite",
    "sendemail-validate", "fsmonitor-watchman", "post-index-change", "p4-changelist",
    "p4-prepare-changelist", "p4-post-changelist", "p4-pre-submit",
]  # fmt: skip


def install_hooks(folder: Path, markers: Path) -> None:
    """Every hook git knows, each leaving a marker file named after itself when it runs."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in [*HOOKS, "fsmonitor"]:
        hook = folder / name
        hook.write_text(f'#!/bin/sh\nmkdir -p "{markers}"\ntouch "{markers}/{name}"\nexit 0\n')
        hook.chmod(0o755)


@pytest.mark.parametrize("where", [".git/hooks", "core.hooksPath"])
def test_convgit_never_runs_the_users_hooks(repo: GitRepo, tmp_path: Path, where: str) -> None:
    markers = tmp_path / "markers"
    hooks = repo.path / ".git" / "hooks" if where == ".git/hooks" else tmp_path / "my-hooks"
    install_hooks(hooks, markers)
    if where == "core.hooksPath":
        repo.git("config", "core.hooksPath", str(hooks))
    repo.git("config", "core.fsmonitor", str(hooks / "fsmonitor"))

    def convgit(*args: str) -> str:
        result = invoke("-C", str(repo.path), *args)
        assert result.exit_code == 0, (args, result.output)
        fired = sorted(p.name for p in markers.iterdir()) if markers.exists() else []
        assert fired == [], f"`convgit {' '.join(args)}` ran the user's hooks: {fired}"
        return result.stdout

    convgit("init")
    convgit("user", "task")
    repo.write("plan.txt", "A\n")
    first = json.loads(convgit("assistant", "A", "--json"))["id"]
    repo.write("plan.txt", "B\n")
    convgit("assistant", "B")
    convgit("snapshot")
    convgit("status")
    convgit("diff", first)
    convgit("restore", first, "--yes")
    convgit("restore", "--undo", "--yes")
    convgit("worktree", first, str(tmp_path / "side"))
    convgit("worktree", "--remove", str(tmp_path / "side"))

    # The hooks are live: the same repository, used by git itself, runs them.
    copy = tmp_path / "copy"
    shutil.copytree(repo.path, copy, symlinks=True)
    if where == ".git/hooks":
        git(copy, "config", "core.fsmonitor", str(copy / ".git" / "hooks" / "fsmonitor"))
    git(copy, "status")
    git(copy, "commit", "-q", "--allow-empty", "-m", "user commit")
    assert {"fsmonitor", "pre-commit", "post-commit"} <= {p.name for p in markers.iterdir()}


# -- split indexes: the user's and convgit's own --


def shared_indexes(repo: GitRepo) -> set[str]:
    return {path.name for path in (repo.path / ".git").glob("sharedindex.*")}


def test_the_user_uses_a_split_index_and_convgit_never_deletes_it(
    repo: GitRepo, user_state: UserStateGuard
) -> None:
    """The user's shared index may be old but in use: git's expiry must not run for convgit.
    convgit's own shared indexes are deleted once its index moves on (here: every write makes
    a new one), so they never pile up in .git."""
    repo.git("config", "core.splitIndex", "true")
    repo.git("update-index", "--split-index")
    (theirs,) = shared_indexes(repo)
    month_ago = time.time() - 30 * 24 * 3600
    os.utime(repo.path / ".git" / theirs, (month_ago, month_ago))
    repo.git("config", "splitIndex.maxPercentChange", "0")  # every write splits afresh
    user_state.watch(repo.path)

    def change(repo: GitRepo) -> None:
        repo.write("src/app.py", "print('B')\n")
        repo.write("new/file.txt", "new\n")

    info = round_trip(repo, change)
    session = info["session"]
    os.utime(repo.path / ".git" / theirs, (month_ago, month_ago))  # seeding read it: age it
    for n in range(5):
        repo.write(f"more/{n}.txt", f"{n}\n")
        session.append.assistant(f"turn {n}")
    assert theirs in shared_indexes(repo), "convgit deleted the user's shared index"
    assert len(shared_indexes(repo) - {theirs}) <= 1, "convgit left its old shared indexes"
    repo.git("--no-optional-locks", "status", "--porcelain")  # the user's split index reads
    assert session.track.sidecar.snapshots[session.conversation.tree.leaf].tree_id == repo.oracle()
    assert session.track.sidecar.snapshots[session.conversation.tree.leaf].files == len(
        repo.git("ls-files", "-z", "--cached", "--others", "--exclude-standard").split("\0")[:-1]
    )
