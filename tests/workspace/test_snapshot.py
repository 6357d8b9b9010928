"""Snapshots record the working tree exactly as `git add -A` into an empty index would (git is
the oracle), minus what is skipped and listed, and never touch the user's git state."""

from __future__ import annotations

import itertools
import multiprocessing
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path

import pygit2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from convgit.base.errors import NotFoundError, RefusedError
from convgit.git.index.format import entries as _index_entries
from convgit.store import location as store_location
from convgit.workspace import AUTHOR_EMAIL, AUTHOR_NAME, LeftAlone, Workspace
from tests.workspace.gitrepo import GitRepo, UserStateGuard, apply_operation, git, restore_files


def snap(repo: GitRepo, parent: str | None = None, **kwargs: int) -> str:
    """Snapshot with the repo's kept private index; return the tree."""
    shot = repo.workspace.snapshot(repo.index, message="test\n", parent=parent, **kwargs)
    return shot.tree_id


def test_snapshot_matches_git_add_all_for_edits_deletions_and_untracked_files(repo: GitRepo):
    assert snap(repo) == repo.oracle()
    repo.write("src/app.py", "print('changed')\n")  # edit of a tracked file
    (repo.path / "README.md").unlink()  # deletion
    repo.write("notes/todo.txt", "untracked\n")  # untracked file in an untracked folder
    repo.write("src/new.py", "x = 1\n")
    tree = snap(repo)
    assert tree == repo.oracle()
    assert set(repo.tree_paths(tree)) == {"notes/todo.txt", "src/app.py", "src/new.py"}


def test_snapshot_records_the_working_tree_not_what_the_user_staged(
    repo: GitRepo, rewatch: Callable[[GitRepo], None]
):
    repo.write("src/app.py", "staged\n")
    repo.git("add", "src/app.py")
    repo.write("src/app.py", "working tree\n")
    repo.git("rm", "-q", "--cached", "README.md")  # removed from the index, still on disk
    repo.write("intent.txt", "added with -N\n")
    repo.git("add", "-N", "intent.txt")
    rewatch(repo)
    tree = snap(repo)
    assert tree == repo.oracle()
    assert "README.md" in repo.tree_paths(tree)


def test_snapshot_honours_gitignore_info_exclude_and_excludes_file(
    repo: GitRepo, tmp_path: Path, rewatch: Callable[[GitRepo], None]
):
    repo.write(".gitignore", "*.log\nbuild/\n!keep.log\n")
    repo.write("sub/.gitignore", "local-only.txt\n")
    (repo.path / ".git" / "info").mkdir(exist_ok=True)
    (repo.path / ".git" / "info" / "exclude").write_text("*.tmp\n")
    excludes = tmp_path / "global-excludes"
    excludes.write_text("*.secret\n")
    repo.git("config", "core.excludesFile", str(excludes))
    rewatch(repo)
    for name in ("a.log", "keep.log", "build/out.o", "sub/local-only.txt", "sub/kept.txt"):
        repo.write(name, name)
    for name in ("x.tmp", "api.secret", "deep/er/y.tmp"):
        repo.write(name, name)
    tree = snap(repo)
    assert tree == repo.oracle()
    paths = set(repo.tree_paths(tree))
    assert {"keep.log", "sub/kept.txt", ".gitignore"} <= paths
    assert not paths & {"a.log", "build/out.o", "sub/local-only.txt", "x.tmp", "api.secret"}


def test_snapshot_leaves_out_ignored_files_even_when_the_user_tracks_them(
    repo: GitRepo, rewatch: Callable[[GitRepo], None]
):
    repo.write("config.local", "committed, then ignored\n")
    repo.write("logs/old.txt", "committed\n")
    repo.commit_all("track them")
    repo.write(".gitignore", "config.local\nlogs/\n")
    rewatch(repo)
    tree = snap(repo)
    assert tree == repo.oracle()  # an empty index never takes an ignored file
    assert not {"config.local", "logs/old.txt"} & set(repo.tree_paths(tree))


def test_snapshot_follows_ignore_rules_that_change_during_a_session(
    repo: GitRepo, tmp_path: Path, rewatch: Callable[[GitRepo], None]
):
    repo.write("a.txt", "a\n")
    repo.write("b.dat", "b\n")
    repo.write("c.tmp", "c\n")
    repo.write("d.secret", "d\n")
    assert snap(repo) == repo.oracle()
    repo.write(".gitignore", "*.dat\n")  # a .gitignore appears
    assert snap(repo) == repo.oracle()
    (repo.path / ".git" / "info").mkdir(exist_ok=True)
    (repo.path / ".git" / "info" / "exclude").write_text("*.tmp\n")  # outside the worktree
    assert snap(repo) == repo.oracle()
    excludes = tmp_path / "excludes"
    excludes.write_text("*.secret\n")
    repo.git("config", "core.excludesFile", str(excludes))
    rewatch(repo)
    tree = snap(repo)
    assert tree == repo.oracle()
    assert set(repo.tree_paths(tree)) >= {"a.txt", ".gitignore"}
    assert not {"b.dat", "c.tmp", "d.secret"} & set(repo.tree_paths(tree))
    (repo.path / ".gitignore").unlink()  # the rule goes: the file comes back
    assert "b.dat" in repo.tree_paths(snap(repo))
    assert snap(repo) == repo.oracle()


def test_snapshot_keeps_exec_bit_and_symlinks(repo: GitRepo):
    repo.write("run.sh", "#!/bin/sh\n", executable=True)
    repo.symlink("latest", "src/app.py")
    repo.symlink("dangling", "does/not/exist")
    repo.symlink("srcdir", "src")  # a symlink to a folder is a link, not a folder
    tree = snap(repo)
    assert tree == repo.oracle()
    entries = repo.tree_paths(tree)
    assert entries["run.sh"].startswith("100755")
    assert entries["latest"].startswith("120000")
    assert entries["srcdir"].startswith("120000")
    (repo.path / "run.sh").chmod(0o644)  # only the mode changes
    assert snap(repo) == repo.oracle()
    assert repo.tree_paths(snap(repo))["run.sh"].startswith("100644")


def test_snapshot_handles_unicode_and_space_containing_names(repo: GitRepo):
    for name in (
        "naïve café.txt",
        "日本語/ファイル.md",
        "with space/a b.txt",
        'quote"and\ttab.txt',
        "new\nline.txt",
        "-dash-first.txt",
        ":colon.txt",
    ):
        repo.write(name, name)
    repo.symlink("ünï link", "naïve café.txt")
    tree = snap(repo)
    assert tree == repo.oracle()
    assert "日本語/ファイル.md" in repo.tree_paths(tree)
    (repo.path / "with space" / "a b.txt").unlink()
    repo.write("naïve café.txt", "edited")
    assert snap(repo) == repo.oracle()


def test_snapshot_works_in_an_empty_repository(make_repo: Callable[..., GitRepo]):
    repo = make_repo(commit=False)
    empty = snap(repo)
    assert empty == repo.oracle() == "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
    repo.write("first.txt", "hello\n")
    shot = repo.workspace.snapshot(repo.index, message="m\n", parent=None)
    assert shot.tree_id == repo.oracle()
    assert shot.files == 1
    assert repo.git("rev-list", "--parents", "-n1", shot.commit).split() == [shot.commit]
    assert repo.git("rev-parse", "--verify", "-q", "HEAD", check=False) == ""


def test_snapshot_works_in_a_linked_worktree(
    repo: GitRepo, tmp_path: Path, user_state_guard: UserStateGuard
):
    repo.git("worktree", "add", "-q", str(tmp_path / "linked"), "-b", "linked-branch")
    linked = GitRepo(tmp_path / "linked")
    user_state_guard.watch(repo.path)
    user_state_guard.watch(linked.path)
    workspace = linked.workspace
    assert workspace.root == linked.path.resolve()
    assert workspace.common_dir == (repo.path / ".git").resolve()
    assert workspace.git_dir != workspace.common_dir
    linked.write("only-here.txt", "linked\n")
    (linked.path / "README.md").unlink()
    main_before = repo.digest()
    tree = snap(linked)
    assert tree == linked.oracle()
    assert repo.digest() == main_before
    assert tree != snap(repo)  # the main worktree has its own files and its own index


def test_snapshot_works_with_a_detached_head(repo: GitRepo, rewatch: Callable[[GitRepo], None]):
    repo.git("checkout", "-q", "--detach", "HEAD")
    rewatch(repo)
    repo.write("detached.txt", "x\n")
    assert snap(repo) == repo.oracle()
    assert repo.git("rev-parse", "--abbrev-ref", "HEAD").strip() == "HEAD"


def test_snapshot_sees_a_file_changed_twice_within_one_second(repo: GitRepo):
    target = repo.path / "racy.txt"
    for _attempt in range(5):
        time.sleep(1 - time.time() % 1 + 0.01)  # start just after a second begins
        start = int(time.time())
        target.write_text("first\n")
        first = snap(repo)
        before = target.stat()
        target.write_text("again\n")  # same size, same second
        os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))  # even the same mtime
        second = snap(repo)
        if int(time.time()) == start:
            break
    assert first != second
    assert second == repo.oracle()
    assert snap(repo) == repo.oracle()


def test_snapshot_ignores_skip_worktree_and_assume_unchanged_bits_of_the_user_index(
    repo: GitRepo, rewatch: Callable[[GitRepo], None]
):
    repo.write("hidden.txt", "committed\n")
    repo.write("trusted.txt", "committed\n")
    repo.commit_all("more")
    repo.git("update-index", "--skip-worktree", "hidden.txt")
    repo.git("update-index", "--assume-unchanged", "trusted.txt")
    rewatch(repo)
    repo.write("hidden.txt", "changed on disk\n")
    repo.write("trusted.txt", "changed too\n")
    assert "hidden.txt" not in repo.git("status", "--porcelain")  # git itself is blind here
    assert snap(repo) == repo.oracle()


@pytest.mark.parametrize("form", ["version 2", "version 3", "version 4", "split index"])
def test_snapshot_seeds_from_any_form_of_the_user_index(
    repo: GitRepo, rewatch: Callable[[GitRepo], None], form: str
):
    for i in range(30):
        repo.write(f"pkg/module_{i:02}/file with a long shared prefix {i}.py", f"{i}\n")
    repo.write("pkg/big.bin", b"x" * 2000)
    repo.write("pkg/hidden.txt", "committed\n")
    repo.commit_all("many files")
    repo.git("update-index", "--skip-worktree", "pkg/hidden.txt")  # forces version 3
    if form == "split index":
        repo.git("update-index", "--split-index")
    else:
        repo.git("update-index", "--index-version", form.split()[1])
    rewatch(repo)
    repo.write("pkg/hidden.txt", "changed\n")
    repo.write("pkg/module_07/file with a long shared prefix 7.py", "edited\n")
    _tree, skipped = repo.workspace.scan(repo.index, size_cap=1000)
    assert [s.path for s in skipped] == ["pkg/big.bin"]
    (repo.path / "pkg" / "big.bin").unlink()
    assert snap(repo, size_cap=1000) == repo.oracle()


@pytest.mark.parametrize("version", ["2", "3", "4"])
def test_index_reader_agrees_with_git_ls_files(
    repo: GitRepo, rewatch: Callable[[GitRepo], None], version: str
):
    for i in range(20):
        repo.write(f"dir {i % 3}/naïve file {i}.txt", "x" * i, executable=i % 5 == 0)
    repo.symlink("link", "dir 0")
    repo.commit_all("files")
    repo.git("update-index", "--skip-worktree", "dir 1/naïve file 1.txt")
    repo.git("update-index", "--assume-unchanged", "dir 2/naïve file 2.txt")
    repo.git("update-index", "--index-version", version)
    rewatch(repo)
    data = (repo.path / ".git" / "index").read_bytes()
    entries = list(_index_entries(data, 20))
    staged = repo.git("ls-files", "-s", "-z").split("\0")[:-1]
    assert [(p.decode(), f"{m:o} {o.hex()} 0") for p, m, _s, o, _f in entries] == [
        (line.split("\t")[1], line.split("\t")[0]) for line in staged
    ]
    skip_worktree = {p.decode() for p, _m, _s, _o, f in entries if f & 0x40000000}
    assume_unchanged = {p.decode() for p, _m, _s, _o, f in entries if f & 0x8000}
    assert skip_worktree == {"dir 1/naïve file 1.txt"}
    assert assume_unchanged == {"dir 2/naïve file 2.txt"}
    sizes = {p.decode(): s for p, _m, s, _o, _f in entries}
    notable = {p.decode() for p, *_ in _index_entries(data, 20, above=15)}
    assert (
        notable == {p for p, size in sizes.items() if size > 15} | skip_worktree | assume_unchanged
    )
    assert sizes["dir 2/naïve file 5.txt"] == 5 and sizes["link"] == len("dir 0")
    repo.git("update-index", "--split-index")
    rewatch(repo)
    with pytest.raises(ValueError, match="link"):
        list(_index_entries((repo.path / ".git" / "index").read_bytes(), 20))


def test_snapshot_skips_and_lists_files_above_the_size_cap(
    repo: GitRepo, rewatch: Callable[[GitRepo], None]
):
    repo.write("assets/tracked-big.bin", b"t" * 3000)
    repo.commit_all("a big committed file")
    rewatch(repo)
    repo.write("assets/new-big.bin", b"n" * 5000)
    repo.write("assets/small.bin", b"s" * 100)
    shot = repo.workspace.snapshot(repo.index, message="m\n", parent=None, size_cap=1000)
    assert set(shot.skipped) == {
        LeftAlone("assets/new-big.bin", "larger than the size cap (0.0 MiB > 0.0 MiB)"),
        LeftAlone("assets/tracked-big.bin", "larger than the size cap (0.0 MiB > 0.0 MiB)"),
    }
    paths = repo.tree_paths(shot.tree_id)
    assert "assets/small.bin" in paths and "assets/new-big.bin" not in paths
    assert "assets/tracked-big.bin" not in paths
    # A small file that grows past the cap leaves the tree; shrinking brings it back.
    repo.write("assets/small.bin", b"s" * 2000)
    tree, skipped = repo.workspace.scan(repo.index, size_cap=1000)
    assert "assets/small.bin" not in repo.tree_paths(tree)
    assert "assets/small.bin" in {s.path for s in skipped}
    repo.write("assets/small.bin", b"s" * 10)
    tree, _ = repo.workspace.scan(repo.index, size_cap=1000)
    assert "assets/small.bin" in repo.tree_paths(tree)
    # Raising the cap takes the big files in: the tree is then exactly git's.
    assert repo.workspace.scan(repo.index, size_cap=10_000) == (repo.oracle(), ())


def test_snapshot_reason_names_both_sizes(repo: GitRepo):
    repo.write("video.mp4", b"v" * (3 * 1024 * 1024 + 200_000))
    _tree, skipped = repo.workspace.scan(repo.index, size_cap=2 * 1024 * 1024)
    assert skipped == (LeftAlone("video.mp4", "larger than the size cap (3.2 MiB > 2.0 MiB)"),)


def test_snapshot_skips_and_lists_nested_repositories(repo: GitRepo):
    nested = GitRepo(repo.path / "vendor" / "lib")
    nested.path.mkdir(parents=True)
    nested.git("init", "-q")
    nested.write("lib.c", "int x;\n")
    nested.commit_all("nested")
    empty_nested = GitRepo(repo.path / "scratch")
    empty_nested.path.mkdir()
    empty_nested.git("init", "-q")  # git add -A itself fails on this one
    repo.write("vendor/README", "vendored\n")
    tree, skipped = repo.workspace.scan(repo.index)
    assert skipped == (
        LeftAlone("scratch", "nested repository"),
        LeftAlone("vendor/lib", "nested repository"),
    )
    paths = repo.tree_paths(tree)
    assert "vendor/README" in paths
    assert not any(p.startswith(("vendor/lib", "scratch")) for p in paths)


NOBODY = 65534


def _scan_as_nobody(root: str, home: str, results: Connection) -> None:
    """In a forked child: as root, become nobody (group, then user: no way back); then scan."""
    try:
        if os.geteuid() == 0:
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
        os.environ.update(HOME=home, XDG_CONFIG_HOME=f"{home}/.config")
        for level in (pygit2.enums.ConfigLevel.GLOBAL, pygit2.enums.ConfigLevel.XDG):
            pygit2.settings.search_path[level] = home
        workspace = Workspace.discover(Path(root))
        assert workspace is not None
        tree, skipped = workspace.scan(Path(root, ".git", "convgit", "index", "test"))
        results.send((os.getuid(), os.getgid(), tree, skipped))
    except BaseException as exc:
        results.send(repr(exc))
        raise


def test_snapshot_skips_and_lists_unreadable_files_and_folders():
    # Root reads anything, so as root the scan runs in a child that drops to nobody, who owns
    # the repository (as a user owns theirs) but may not read mode-000 entries; if it cannot
    # drop, the test fails. The child is forked, not exec'ed: Python may live under /root
    # (0700). Not tmp_path: pytest's temp folders are 0700, which nobody could not even enter.
    as_root = os.geteuid() == 0
    user = NOBODY if as_root else os.getuid()
    folder = Path(tempfile.mkdtemp(prefix="convgit-nobody-"))
    try:
        folder.chmod(0o777)
        (folder / "home").mkdir()
        root = folder / "repo"
        root.mkdir()
        git(root, "init", "-q", "-b", "main")
        repo = GitRepo(root)
        repo.write("README.md", "# demo\n")
        repo.commit_all("first")
        secret = repo.write("secret.txt", "no access\n")
        locked = repo.write("locked/inside.txt", "x\n").parent
        repo.write("fine.txt", "fine\n")
        for top, dirs, files in os.walk(folder) if as_root else ():
            for name in [top, *(os.path.join(top, n) for n in dirs + files)]:
                os.lchown(name, NOBODY, NOBODY)
        secret.chmod(0)
        locked.chmod(0)

        receive, send = multiprocessing.get_context("fork").Pipe(duplex=False)
        child = multiprocessing.get_context("fork").Process(
            target=_scan_as_nobody, args=(str(root), str(folder / "home"), send)
        )
        child.start()
        child.join(60)
        assert child.exitcode == 0, receive.recv() if receive.poll() else child.exitcode
        uid, gid, tree, skipped = receive.recv()
        assert uid == user != 0 and (gid == NOBODY or not as_root), "the scan ran as root"

        assert skipped == (LeftAlone("locked", "unreadable"), LeftAlone("secret.txt", "unreadable"))
        owner_is_nobody = {  # git refuses, as root, a repository another user owns
            **os.environ,
            "GIT_CONFIG_COUNT": "1",
            "GIT_CONFIG_KEY_0": "safe.directory",
            "GIT_CONFIG_VALUE_0": str(root),
        }
        listed = git(root, "ls-tree", "-r", "--name-only", tree, env=owner_is_nobody).split()
        assert listed == ["README.md", "fine.txt"]
    finally:
        for path in (folder / "repo" / "locked", folder / "repo" / "secret.txt"):
            if path.exists():
                path.chmod(0o755)
        shutil.rmtree(folder)


def test_snapshot_drops_a_folder_that_becomes_a_nested_repository(repo: GitRepo):
    repo.write("vendor/lib/a.txt", "ours for a while\n")
    repo.write("vendor/keep.txt", "still ours\n")
    assert "vendor/lib/a.txt" in repo.tree_paths(snap(repo))
    nested = GitRepo(repo.path / "vendor" / "lib")
    nested.git("init", "-q")
    nested.write("b.txt", "the nested repository's file\n")
    tree, skipped = repo.workspace.scan(repo.index)
    assert skipped == (LeftAlone("vendor/lib", "nested repository"),)
    assert set(repo.tree_paths(tree)) == {"README.md", "src/app.py", "vendor/keep.txt"}


def test_snapshot_keeps_a_registered_submodule_as_its_gitlink(
    repo: GitRepo, make_repo: Callable[..., GitRepo], rewatch: Callable[[GitRepo], None]
):
    library = make_repo("library")
    repo.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(library.path), "lib")
    repo.git("commit", "-q", "--no-verify", "-m", "add submodule")
    rewatch(repo)
    sub = GitRepo(repo.path / "lib")
    tree = snap(repo)
    assert tree == repo.oracle()
    head = sub.git("rev-parse", "HEAD").strip()
    assert repo.tree_paths(tree)["lib"] == f"160000 {head}"
    sub.write("more.txt", "x\n")
    assert snap(repo) == tree  # dirty submodule content is not part of the gitlink
    new_head = sub.commit_all("moved")
    moved = repo.workspace.snapshot(repo.index, message="m\n", parent=None)
    assert repo.tree_paths(moved.tree_id)["lib"] == f"160000 {new_head}"
    assert moved.tree_id == repo.oracle()
    # Restoring the older snapshot leaves the submodule's checkout to the user, and says so.
    _, restored = restore_files(repo.workspace, tree, index=repo.index)
    assert restored == []
    assert restored.left_alone == (
        LeftAlone("lib", f"a submodule; convgit does not move it (its snapshot is at {head})"),
    )
    assert sub.git("rev-parse", "HEAD").strip() == new_head


def test_equal_tree_reuses_the_parent_commit(repo: GitRepo):
    workspace = repo.workspace
    first = workspace.snapshot(repo.index, message="one\n", parent=None)
    again = workspace.snapshot(repo.index, message="two\n", parent=first.commit)
    assert again.reused and again.commit == first.commit and again.tree_id == first.tree_id
    assert not first.reused
    repo.write("src/app.py", "changed\n")
    second = workspace.snapshot(repo.index, message="three\n", parent=first.commit)
    assert not second.reused
    assert repo.git("rev-parse", f"{second.commit}^").strip() == first.commit


def test_snapshot_commit_has_parent_chain_fixed_author_and_the_given_message(repo: GitRepo):
    workspace = repo.workspace
    message = "convgit snapshot\n\nConvgit-Session: s1\nConvgit-Entry: e1\n"
    first = workspace.snapshot(repo.index, message=message, parent=None)
    repo.write("file.txt", "x\n")
    second = workspace.snapshot(repo.index, message="no trailers at all", parent=first.commit)
    assert repo.git("log", "--format=%H", second.commit).split() == [second.commit, first.commit]
    assert repo.git("cat-file", "commit", first.commit).split("\n\n", 1)[1] == message
    assert repo.git("cat-file", "commit", second.commit).endswith("\n\nno trailers at all")
    author = repo.git("log", "-1", "--format=%an <%ae>|%cn <%ce>|%at", second.commit).strip()
    names, timestamp = author.rsplit("|", 1)
    assert names == f"{AUTHOR_NAME} <{AUTHOR_EMAIL}>|{AUTHOR_NAME} <{AUTHOR_EMAIL}>"
    assert abs(int(timestamp) - time.time()) < 120
    assert second.files == int(repo.git("ls-tree", "-r", second.tree_id).count("\n"))


def test_snapshot_needs_no_user_identity(
    repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    # the run's identity is its HOME's .gitconfig (tests/gitenv.py): a HOME with none, as a
    # user who never configured git has (EMAIL empty: git would guess one from it)
    nobody = tmp_path / "nobody"
    nobody.mkdir()
    monkeypatch.setenv("HOME", str(nobody))
    monkeypatch.setenv("EMAIL", "")
    levels = (pygit2.enums.ConfigLevel.GLOBAL, pygit2.enums.ConfigLevel.XDG)
    searched = [pygit2.settings.search_path[level] for level in levels]
    for level in levels:
        pygit2.settings.search_path[level] = str(nobody)
    try:
        assert "user.name" not in repo.git("config", "--list", check=False)
        repo.write("x.txt", "x\n")
        shot = repo.workspace.snapshot(repo.index, message="m\n", parent=None)
        assert shot.tree_id == repo.oracle()
    finally:
        for level, path in zip(levels, searched, strict=True):
            pygit2.settings.search_path[level] = path


HOOKS = (
    "pre-commit",
    "post-commit",
    "commit-msg",
    "prepare-commit-msg",
    "post-index-change",
    "reference-transaction",
    "post-checkout",
    "pre-auto-gc",
    "post-rewrite",
)


def test_snapshot_restore_and_refs_run_no_hooks(repo: GitRepo, tmp_path: Path):
    fired = tmp_path / "fired"
    fired.mkdir()
    hooks = repo.path / ".git" / "hooks"
    for hook in HOOKS:
        (hooks / hook).write_text(f"#!/bin/sh\ntouch '{fired}/{hook}'\nexit 1\n")
        (hooks / hook).chmod(0o755)
    workspace = repo.workspace
    first = workspace.snapshot(repo.index, message="m\n", parent=None)
    repo.write("src/app.py", "changed\n")
    second = workspace.snapshot(repo.index, message="m\n", parent=first.commit)
    workspace.set_ref("refs/convgit/s/e1", second.commit)
    restore_files(workspace, first.commit, index=repo.index)
    workspace.delete_ref("refs/convgit/s/e1")
    workspace.add_worktree(first.commit, tmp_path / "side")
    workspace.remove_worktree(tmp_path / "side")
    assert sorted(p.name for p in fired.iterdir()) == []


def test_snapshot_ignores_commit_gpgsign(repo: GitRepo, rewatch: Callable[[GitRepo], None]):
    repo.git("config", "commit.gpgSign", "true")
    repo.git("config", "gpg.program", "false")  # signing would fail loudly
    rewatch(repo)
    repo.write("x.txt", "x\n")
    shot = repo.workspace.snapshot(repo.index, message="m\n", parent=None)
    assert "gpgsig" not in repo.git("cat-file", "commit", shot.commit)


def test_snapshot_creates_no_ref_and_touches_no_working_tree_file(repo: GitRepo):
    repo.write("x.txt", "x\n")
    before_refs = repo.git("for-each-ref")
    before = repo.digest()
    repo.workspace.snapshot(repo.index, message="m\n", parent=None)
    assert repo.git("for-each-ref") == before_refs
    assert repo.digest() == before


def test_snapshot_ignores_the_callers_git_environment(
    repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    workspace, index = repo.workspace, repo.index
    monkeypatch.setenv("GIT_INDEX_FILE", str(tmp_path / "someone-elses-index"))
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "nowhere"))
    monkeypatch.setenv("GIT_WORK_TREE", str(tmp_path))
    repo.write("x.txt", "x\n")
    tree_id = workspace.snapshot(index, message="m\n", parent=None).tree_id
    monkeypatch.delenv("GIT_INDEX_FILE")
    monkeypatch.delenv("GIT_DIR")
    monkeypatch.delenv("GIT_WORK_TREE")
    assert tree_id == repo.oracle()
    assert not (tmp_path / "someone-elses-index").exists()


def test_scan_returns_the_snapshot_tree_without_a_commit(repo: GitRepo):
    repo.write("x.txt", "x\n")
    commits_before = repo.git("count-objects", "-v")
    tree_id, skipped = repo.workspace.scan(repo.index)
    assert (tree_id, skipped) == (repo.oracle(), ())
    assert commits_before != repo.git("count-objects", "-v")  # blobs and trees are written
    assert repo.workspace.snapshot(repo.index, message="m\n", parent=None).tree_id == tree_id


def test_a_torn_private_index_is_rebuilt(repo: GitRepo):
    repo.write("x.txt", "x\n")
    snap(repo)
    repo.index.write_bytes(repo.index.read_bytes()[:50])
    repo.write("y.txt", "y\n")
    assert snap(repo) == repo.oracle()


def test_an_index_damaged_in_place_is_caught_although_its_size_is_unchanged(repo: GitRepo):
    """The checksum is skipped only while the index is the file convgit last saw whole: an
    entry pointing at the wrong blob (git trusts the stat data) must not reach a snapshot."""
    repo.write("x.txt", "x\n")
    repo.write("z.txt", "z\n")
    for name in ("x.txt", "z.txt"):  # older than the index: git trusts their stat data
        os.utime(repo.path / name, (time.time() - 60, time.time() - 60))
    snap(repo)
    x, z = (bytes.fromhex(repo.git("hash-object", name).strip()) for name in ("x.txt", "z.txt"))
    # the private index is split: the entry is in it or in the shared index it builds on
    (holder,) = [
        path
        for path in [repo.index, *(repo.path / ".git").glob("sharedindex.*")]
        if x in path.read_bytes()
    ]
    data = holder.read_bytes()
    assert data.count(x) == 1
    holder.write_bytes(data.replace(x, z))
    repo.write("y.txt", "y\n")
    assert snap(repo) == repo.oracle()


def test_parent_must_exist(repo: GitRepo):
    with pytest.raises(NotFoundError):
        repo.workspace.snapshot(repo.index, message="m\n", parent="0" * 40)


def test_snapshots_survive_gc_once_their_ref_is_set(repo: GitRepo):
    workspace = repo.workspace
    repo.write("kept.txt", "kept\n")
    kept = workspace.snapshot(repo.index, message="kept\n", parent=None)
    workspace.set_ref("refs/convgit/session/entry1", kept.commit)
    repo.write("dropped.txt", "dropped\n")
    dropped = workspace.snapshot(repo.index, message="dropped\n", parent=None)
    repo.git("-c", "gc.packRefs=false", "gc", "-q", "--prune=now")
    assert repo.git("cat-file", "-t", kept.commit).strip() == "commit"
    assert repo.git("rev-parse", "refs/convgit/session/entry1").strip() == kept.commit
    assert repo.tree_paths(kept.tree_id)["kept.txt"]
    assert not repo.has_object(dropped.commit)  # gc does prune what no ref keeps
    workspace.delete_ref("refs/convgit/session/entry1")
    workspace.delete_ref("refs/convgit/session/entry1")  # deleting twice is fine
    assert repo.git("for-each-ref", "refs/convgit") == ""


def test_set_ref_refuses_refs_outside_refs_convgit(repo: GitRepo):
    shot = repo.workspace.snapshot(repo.index, message="m\n", parent=None)
    for ref in ("refs/heads/main", "HEAD", "refs/tags/v1", "refs/convgit/../heads/x"):
        with pytest.raises(RefusedError):
            repo.workspace.set_ref(ref, shot.commit)


def test_maintain_packs_loose_objects(repo: GitRepo):
    """It packs convgit's own objects (a snapshot is kept by its ref) and none of the user's."""
    workspace = repo.workspace
    assert workspace.maintain() is False  # few loose objects: nothing to do
    users = loose_objects(repo)  # the user's commit, still loose
    for i in range(40):
        repo.write(f"many/{i}.txt", f"{i}\n")
    shot = workspace.snapshot(repo.index, message="m\n", parent=None)
    workspace.set_ref("refs/convgit/session/entry1", shot.commit)
    loose_before = int(repo.git("count-objects").split()[0])
    assert workspace.maintain(threshold=0) is True
    assert int(repo.git("count-objects").split()[0]) < loose_before
    assert repo.git("fsck", "--no-dangling", "--no-progress").strip() == ""
    assert users <= loose_objects(repo), "the user's loose objects were packed"
    assert shot.commit not in loose_objects(repo) and repo.has_object(shot.commit)


def loose_objects(repo: GitRepo) -> set[str]:
    objects = repo.path / ".git" / "objects"
    return {
        fan.name + name.name
        for fan in objects.iterdir()
        if len(fan.name) == 2
        for name in fan.iterdir()
    }


EXAMPLES = itertools.count()

# Operations a turn of an agent might perform on files, applied in random order.
NAMES = st.sampled_from(["a.txt", "b.txt", "dir/c.txt", "dir/sub/d.sh", "é e.txt", "x.log"])
OPERATIONS = st.lists(
    st.tuples(
        st.sampled_from(
            ["write", "write-same-size", "delete", "chmod", "symlink", "dir", "ignore"]
        ),
        NAMES,
        st.binary(max_size=20),
    ),
    min_size=1,
    max_size=8,
)


@settings(
    max_examples=settings.default.max_examples // 2,  # each example builds a fresh repository
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(turns=st.lists(OPERATIONS, min_size=1, max_size=6))
def test_repeated_snapshots_with_the_kept_index_match_git(make_repo: Callable[..., GitRepo], turns):
    repo = make_repo(f"example-{next(EXAMPLES)}")  # a fresh repository: failures replay exactly
    (repo.path / ".gitignore").write_text("*.log\n")
    parent = None
    for operations in turns:
        for kind, name, data in operations:
            apply_operation(repo.path, kind, name, data)
        shot = repo.workspace.snapshot(repo.index, message="turn\n", parent=parent)
        assert shot.tree_id == repo.oracle()
        unchanged = parent is not None and repo.workspace.tree_of(parent) == shot.tree_id
        assert shot.reused == unchanged
        parent = shot.commit


def test_discover_finds_the_worktree_from_a_subfolder(repo: GitRepo):
    found = Workspace.discover(repo.path / "src")
    assert found is not None
    assert found.root == repo.path.resolve()
    assert found.git_dir == found.common_dir == (repo.path / ".git").resolve()


def test_discover_returns_none_outside_a_repository_and_in_a_bare_one(tmp_path: Path):
    (tmp_path / "plain").mkdir()
    assert Workspace.discover(tmp_path / "plain") is None
    git(tmp_path, "init", "-q", "--bare", "bare.git")
    assert Workspace.discover(tmp_path / "bare.git") is None
    assert Workspace.discover(tmp_path / "missing" / "folder") is None


def test_discover_honours_git_dir_and_git_work_tree(
    repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.setenv("GIT_DIR", str(repo.path / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(repo.path))
    found = Workspace.discover(elsewhere)
    assert found is not None and found.root == repo.path.resolve()


def test_the_store_and_the_workspace_are_found_in_the_same_repository(
    repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """Wherever convgit starts (a subfolder, a linked worktree, GIT_DIR/GIT_WORK_TREE from
    elsewhere), the files it snapshots are in the repository whose common dir holds its store,
    as git itself says."""
    linked = tmp_path / "linked"
    repo.git("worktree", "add", "-q", "--detach", str(linked))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for start, env in (
        (repo.path / "src", {}),
        (linked, {}),
        (elsewhere, {"GIT_DIR": str(repo.path / ".git"), "GIT_WORK_TREE": str(repo.path)}),
    ):
        with monkeypatch.context() as patched:
            for name, value in env.items():
                patched.setenv(name, value)
            found = Workspace.discover(start)
            location = store_location.locate(start)
        assert found is not None and location.git is not None
        asked = ("rev-parse", "--path-format=absolute", "--show-toplevel", "--git-common-dir")
        top, common = git(start if not env else repo.path, *asked).split()
        assert found.root == Path(top).resolve()
        assert found.common_dir.resolve() == location.git.common_dir.resolve()
        assert found.common_dir.resolve() == Path(common).resolve()
        assert location.root == location.git.common_dir / "convgit"


def test_discover_refuses_a_repository_at_the_home_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    home = tmp_path / "home"
    home.mkdir()
    git(home, "init", "-q")
    (home / "project").mkdir()
    monkeypatch.setenv("HOME", str(home))
    with pytest.raises(RefusedError, match="home folder"):
        Workspace.discover(home / "project")


def test_tree_of_and_unknown_ids(repo: GitRepo):
    shot = repo.workspace.snapshot(repo.index, message="m\n", parent=None)
    assert repo.workspace.tree_of(shot.commit) == shot.tree_id
    assert repo.workspace.tree_of(shot.tree_id) == shot.tree_id
    with pytest.raises(NotFoundError):
        repo.workspace.tree_of("f" * 40)
