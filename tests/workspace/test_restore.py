"""Restore brings the files to a snapshot exactly (judged by git), leaves ignored and skipped
files alone, can be undone to the exact prior bytes, and refuses hostile snapshots before it
changes anything."""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable
from pathlib import Path

import pygit2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from convgit.base.errors import NotFoundError, RefusedError
from convgit.workspace import Change, HostileSnapshotError, LeftAlone, RestoreBlockedError
from tests.workspace.gitrepo import GitRepo, apply_operation, digest, restore_files


def snapshot(repo: GitRepo, size_cap: int | None = None) -> str:
    extra = {} if size_cap is None else {"size_cap": size_cap}
    return repo.workspace.snapshot(repo.index, message="m\n", parent=None, **extra).commit


def restore(repo: GitRepo, target: str, **kwargs):
    """As `convgit restore` does it: the files saved (their commit returned), then restored."""
    return restore_files(repo.workspace, target, index=repo.index, **kwargs)


@pytest.fixture
def project(repo: GitRepo) -> GitRepo:
    """A working tree with a bit of everything: ignored files, exec bits, symlinks, folders."""
    repo.write(".gitignore", "*.log\n/build/\n")
    repo.write("run.sh", "#!/bin/sh\necho plan\n", executable=True)
    repo.write("docs/guide.md", "guide v1\n")
    repo.write("docs/deep/note.txt", "note\n")
    repo.write("shape", "a file that becomes a folder\n")
    repo.write("folder/inside.txt", "a folder that becomes a file\n")
    repo.symlink("current", "docs/guide.md")
    repo.write("app.log", "ignored log v1\n")
    repo.write("build/artifact.o", b"\x00ignored build output")
    return repo


def change_everything(repo: GitRepo) -> None:
    repo.write("src/app.py", "print('plan B')\n")  # edit
    (repo.path / "docs" / "guide.md").unlink()  # delete
    repo.write("untracked/new.txt", "new\n")  # new untracked file
    (repo.path / "run.sh").chmod(0o644)  # exec bit flip
    (repo.path / "current").unlink()
    repo.symlink("current", "src/app.py")  # symlink retarget
    (repo.path / "shape").unlink()
    repo.write("shape/now-a-folder.txt", "x\n")  # file -> folder
    (repo.path / "folder" / "inside.txt").unlink()
    (repo.path / "folder").rmdir()
    repo.write("folder", "now a file\n")  # folder -> file
    repo.write("docs/deep/note.txt", b"binary \x00\xff")
    repo.write("app.log", "ignored log v2\n")  # ignored files change too
    repo.write("build/artifact.o", b"\x00ignored build output v2")


def test_restore_yields_exactly_the_snapshot_tree(project: GitRepo):
    target = snapshot(project)
    change_everything(project)
    _safety, changes = restore(project, target)
    assert project.oracle() == project.workspace.tree_of(target)
    assert Change("shape", "added") in changes and Change("folder", "deleted") in changes
    assert Change("current", "modified") in changes
    assert not (project.path / "untracked").exists()  # emptied folders go, as with git
    assert (project.path / "run.sh").stat().st_mode & 0o100
    assert os.readlink(project.path / "current") == "docs/guide.md"
    # The private index now matches the files: the next snapshot is the target itself.
    again = project.workspace.snapshot(project.index, message="m\n", parent=target)
    assert again.reused


def test_restore_handles_unusual_names(repo: GitRepo):
    names = ["back\\slash.txt", "new\nline.txt", "ünï cödé/fïlé.txt", "-dash", "tab\there", " lead"]
    for name in names:
        repo.write(name, name)
    target = snapshot(repo)
    for name in names:
        (repo.path / name).unlink()
    _safety, changes = restore(repo, target)
    assert sorted(c.path for c in changes) == sorted(names)
    assert repo.oracle() == repo.workspace.tree_of(target)


def test_restore_leaves_ignored_files_byte_identical(project: GitRepo):
    target = snapshot(project)
    change_everything(project)
    ignored_before = {p: project.digest()[p] for p in ("app.log", "build/artifact.o")}
    restore(project, target)
    assert {p: project.digest()[p] for p in ignored_before} == ignored_before


def test_restoring_the_safety_snapshot_returns_the_exact_prior_bytes(project: GitRepo):
    target = snapshot(project)
    change_everything(project)
    before = project.digest()
    safety, _ = restore(project, target)
    assert project.digest() != before
    _, undo = restore(project, safety, exact_from=target)  # what --undo does
    assert project.digest() == before  # untracked files, exec bits and symlinks included
    assert Change("untracked/new.txt", "added") in undo


def test_restore_dry_run_changes_no_byte(project: GitRepo):
    target = snapshot(project)
    change_everything(project)
    snapshot(project)
    before = project.digest()
    index_before = (project.path / ".git" / "index").read_bytes()
    _, planned = restore(project, target, dry_run=True)
    assert project.digest() == before
    # the user's index (convgit's private one is a stat cache a plan may refresh)
    assert (project.path / ".git" / "index").read_bytes() == index_before
    _, done = restore(project, target)
    assert planned == done and planned


def test_restore_with_paths_changes_only_those_paths(project: GitRepo):
    target = snapshot(project)
    change_everything(project)
    before = project.digest()
    _safety, changes = restore(project, target, paths=["docs", "shape"])
    assert {c.path for c in changes} == {
        "docs/guide.md",
        "docs/deep/note.txt",
        "shape",
        "shape/now-a-folder.txt",
    }
    after = project.digest()
    assert after["docs/guide.md"] == ("file", (b"guide v1\n", False))
    assert after["shape"] == ("file", (b"a file that becomes a folder\n", False))
    untouched = {p: v for p, v in before.items() if not p.startswith(("docs", "shape"))}
    assert {p: after[p] for p in untouched} == untouched


def test_restore_of_one_file_below_a_file_that_must_become_a_folder(project: GitRepo):
    project.write("shape", "file\n")
    target_tree_has_folder = project.path / "shape"
    target_tree_has_folder.unlink()
    project.write("shape/inner.txt", "inner\n")
    target = snapshot(project)
    (project.path / "shape" / "inner.txt").unlink()
    (project.path / "shape").rmdir()
    project.write("shape", "file again\n")
    _safety, changes = restore(project, target, paths=["shape/inner.txt"])
    assert changes == [Change("shape", "deleted"), Change("shape/inner.txt", "added")]
    assert (project.path / "shape" / "inner.txt").read_text() == "inner\n"


def test_restore_of_an_unknown_path_says_so(project: GitRepo):
    target = snapshot(project)
    with pytest.raises(NotFoundError):
        restore(project, target, paths=["no/such/file"])
    for escape in ("../outside", "/etc/passwd", ".git/config"):
        with pytest.raises(RefusedError):
            restore(project, target, paths=[escape])


def test_restore_leaves_skipped_big_files_alone(repo: GitRepo):
    repo.write("data.bin", b"small")
    target = snapshot(repo, size_cap=100)
    repo.write("data.bin", b"b" * 500)  # now above the cap: not in the saved state
    repo.write("other.txt", "other\n")
    _safety, changes = restore(repo, target, size_cap=100)
    assert (repo.path / "data.bin").read_bytes() == b"b" * 500  # never lost
    assert changes == [Change("other.txt", "deleted")]
    assert [s.path for s in changes.left_alone] == ["data.bin"]
    assert "left alone" in changes.left_alone[0].reason


def test_restore_leaves_an_ignored_file_that_the_snapshot_tracked_alone(repo: GitRepo):
    repo.write("settings.local", "from the snapshot\n")
    target = snapshot(repo)
    repo.write(".gitignore", "settings.local\n")
    repo.write("settings.local", "the user's own\n")
    _safety, changes = restore(repo, target)
    assert (repo.path / "settings.local").read_text() == "the user's own\n"
    assert changes.left_alone == (
        LeftAlone("settings.local", "ignored by git; differs from the snapshot, left alone"),
    )


def test_restore_writes_nothing_inside_a_nested_repository(repo: GitRepo):
    repo.write("vendor/lib/a.txt", "from the snapshot\n")
    target = snapshot(repo)
    (repo.path / "vendor" / "lib" / "a.txt").unlink()
    nested = GitRepo(repo.path / "vendor" / "lib")
    nested.git("init", "-q")
    nested.write("own.txt", "the nested repository's own file\n")
    nested_before = nested.digest()
    _safety, changes = restore(repo, target)
    assert changes == []
    assert changes.left_alone == (
        LeftAlone("vendor/lib/a.txt", "inside a nested repository; left alone"),
    )
    assert nested.digest() == nested_before


def test_restore_replaces_a_symlink_by_a_folder_without_writing_through_it(
    repo: GitRepo, tmp_path: Path
):
    outside = tmp_path / "outside"
    outside.mkdir()
    repo.write("link/file.txt", "inside the tree\n")
    target = snapshot(repo)
    (repo.path / "link" / "file.txt").unlink()
    (repo.path / "link").rmdir()
    repo.symlink("link", str(outside))  # a tracked symlink to a folder outside
    restore(repo, target)
    assert not (repo.path / "link").is_symlink()
    assert (repo.path / "link" / "file.txt").read_text() == "inside the tree\n"
    assert list(outside.iterdir()) == []


def test_restore_never_looks_through_a_symlink_it_replaces(repo: GitRepo):
    repo.write("real/inner.txt", "the real folder's file\n")
    repo.write("alias/inner.txt", "the snapshot's file\n")
    target = snapshot(repo)
    for path in ("alias/inner.txt", "alias"):
        (repo.path / path).unlink() if path.endswith(".txt") else (repo.path / path).rmdir()
    repo.symlink("alias", "real")  # alias/inner.txt now resolves to real/inner.txt
    _safety, changes = restore(repo, target)
    assert changes == [Change("alias", "deleted"), Change("alias/inner.txt", "added")]
    assert not (repo.path / "alias").is_symlink()
    assert (repo.path / "alias" / "inner.txt").read_text() == "the snapshot's file\n"
    assert (repo.path / "real" / "inner.txt").read_text() == "the real folder's file\n"


def test_restore_refuses_to_write_below_an_ignored_symlink(repo: GitRepo, tmp_path: Path):
    outside = tmp_path / "outside"
    outside.mkdir()
    repo.write("cache/entry.txt", "snapshotted\n")
    target = snapshot(repo)
    (repo.path / "cache" / "entry.txt").unlink()
    (repo.path / "cache").rmdir()
    repo.write(".gitignore", "cache\n")
    repo.symlink("cache", str(outside))  # ignored, so not part of the view
    before = repo.digest()
    with pytest.raises(RestoreBlockedError, match="symlink"):
        restore(repo, target)
    assert repo.digest() == before
    assert list(outside.iterdir()) == []


def test_restore_refuses_to_replace_a_folder_holding_ignored_files(repo: GitRepo):
    repo.write("out", "a file in the snapshot\n")
    target = snapshot(repo)
    (repo.path / "out").unlink()
    repo.write(".gitignore", "*.o\n")
    repo.write("out/keep.o", "ignored but precious\n")
    before = repo.digest()
    with pytest.raises(RestoreBlockedError, match=r"out/keep\.o"):
        restore(repo, target)
    assert repo.digest() == before


# -- hostile snapshots, crafted with raw tree objects (libgit2's TreeBuilder would refuse) --


def raw_tree(odb_repo: pygit2.Repository, entries: list[tuple[str, bytes, str]]) -> str:
    """Write a tree object exactly as given: (mode, name, oid), no validation, no sorting."""
    body = b"".join(
        mode.encode() + b" " + name + b"\0" + bytes.fromhex(oid) for mode, name, oid in entries
    )
    return str(odb_repo.odb.write(pygit2.enums.ObjectType.TREE, body))


def hostile_trees(repo: pygit2.Repository, outside: Path) -> dict[str, str]:
    blob = str(repo.create_blob(b"pwned\n"))
    link_out = str(repo.create_blob(str(outside).encode()))
    inner = raw_tree(repo, [("100644", b"x", blob)])
    hooks = raw_tree(repo, [("100755", b"post-checkout", blob)])
    hooks_folder = raw_tree(repo, [("40000", b"hooks", hooks)])
    dot_git_file = raw_tree(repo, [("100644", b".git", blob)])
    return {
        "dotdot file": raw_tree(repo, [("100644", b"..", blob)]),
        "dotdot folder": raw_tree(repo, [("40000", b"..", inner)]),
        "dot folder": raw_tree(repo, [("40000", b".", inner)]),
        ".git folder": raw_tree(repo, [("40000", b".git", hooks_folder)]),
        ".GIT folder": raw_tree(repo, [("40000", b".GIT", inner)]),
        ".git. (NTFS)": raw_tree(repo, [("40000", b".git.", inner)]),
        "git~1 (NTFS)": raw_tree(repo, [("40000", b"git~1", inner)]),
        ".g\u200cit (HFS)": raw_tree(repo, [("40000", ".g\u200cit".encode(), inner)]),
        "nested .git": raw_tree(repo, [("40000", b"sub", dot_git_file)]),
        "slash in name": raw_tree(repo, [("100644", b"a/../../x", blob)]),
        "absolute name": raw_tree(repo, [("100644", str(outside / "x").encode(), blob)]),
        "symlink and folder": raw_tree(repo, [("120000", b"a", link_out), ("40000", b"a", inner)]),
        "file and folder": raw_tree(repo, [("100644", b"a", blob), ("40000", b"a", inner)]),
    }


@pytest.mark.parametrize(
    "case",
    [
        "dotdot file",
        "dotdot folder",
        "dot folder",
        ".git folder",
        ".GIT folder",
        ".git. (NTFS)",
        "git~1 (NTFS)",
        ".g\u200cit (HFS)",
        "nested .git",
        "slash in name",
        "absolute name",
        "symlink and folder",
        "file and folder",
    ],
)
def test_restore_refuses_hostile_snapshots_before_changing_anything(
    repo: GitRepo, tmp_path: Path, case: str
):
    outside = tmp_path / "outside"
    outside.mkdir()
    snapshot(repo)
    pygit_repo = pygit2.Repository(str(repo.path / ".git"))
    tree = hostile_trees(pygit_repo, outside)[case]
    signature = pygit2.Signature("evil", "evil@example.invalid")
    commit = str(pygit_repo.create_commit(None, signature, signature, "evil", tree, []))
    before, hooks_before = repo.digest(), sorted((repo.path / ".git" / "hooks").iterdir())
    index_before = repo.index.read_bytes()
    for dry_run in (True, False):
        with pytest.raises(RefusedError, match="nothing was restored"):
            restore(repo, commit, dry_run=dry_run)
    assert repo.digest() == before
    assert repo.index.read_bytes() == index_before
    assert sorted((repo.path / ".git" / "hooks").iterdir()) == hooks_before
    assert digest(outside) == {}
    assert not (tmp_path / "x").exists()


def test_a_hostile_path_in_an_unchanged_folder_is_still_refused_when_it_changes(repo: GitRepo):
    # Validation follows the changed subtrees; a folder that differs is always read in full.
    snapshot(repo)
    pygit_repo = pygit2.Repository(str(repo.path / ".git"))
    blob = str(pygit_repo.create_blob(b"x"))
    src = raw_tree(pygit_repo, [("100644", b"..", blob), ("100644", b"app.py", blob)])
    root = raw_tree(pygit_repo, [("40000", b"src", src)])
    with pytest.raises(HostileSnapshotError):
        restore(repo, root)


def test_changes_reports_added_modified_deleted_and_typechange(repo: GitRepo):
    repo.write("edit.txt", "v1\n")
    repo.write("gone.txt", "bye\n")
    repo.write("mode.sh", "#!/bin/sh\n")
    repo.write("kind", "a file\n")
    repo.write("tofolder", "file\n")
    a = snapshot(repo)
    repo.write("edit.txt", "v2\n")
    (repo.path / "gone.txt").unlink()
    repo.write("new/file.txt", "hi\n")
    (repo.path / "mode.sh").chmod(0o755)
    (repo.path / "kind").unlink()
    repo.symlink("kind", "edit.txt")
    (repo.path / "tofolder").unlink()
    repo.write("tofolder/inner.txt", "x\n")
    b = snapshot(repo)
    assert repo.workspace.changes(a, b) == [
        Change("edit.txt", "modified"),
        Change("gone.txt", "deleted"),
        Change("kind", "typechange"),
        Change("mode.sh", "modified"),
        Change("new/file.txt", "added"),
        Change("tofolder", "deleted"),
        Change("tofolder/inner.txt", "added"),
    ]
    assert repo.workspace.changes(a, a) == []
    tree_a, tree_b = repo.workspace.tree_of(a), repo.workspace.tree_of(b)
    assert repo.workspace.changes(tree_a, tree_b) == repo.workspace.changes(a, b)
    git_view = repo.git("diff", "--name-status", "--no-renames", a, b).split("\n")
    assert len([line for line in git_view if line]) == 7


TURN = st.lists(
    st.tuples(
        st.sampled_from(["write", "write-same-size", "delete", "chmod", "symlink", "dir"]),
        st.sampled_from(["a.txt", "b.txt", "dir/c.txt", "dir/sub/d.sh", "é e.txt", "x.log"]),
        st.binary(max_size=20),
    ),
    min_size=1,
    max_size=6,
)


EXAMPLES = itertools.count()


def files_only(entries: dict[str, tuple[str, object]]) -> dict[str, tuple[str, object]]:
    """Git keeps no empty folders, so restores are judged on files and links."""
    return {path: entry for path, entry in entries.items() if entry[0] != "dir"}


@settings(
    max_examples=settings.default.max_examples // 2,  # each example builds a fresh repository
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(turns=st.lists(TURN, min_size=1, max_size=6), picks=st.lists(st.integers(0), min_size=1))
def test_restore_then_undo_round_trips_any_history(
    make_repo: Callable[..., GitRepo], turns, picks: list[int]
):
    repo = make_repo(f"example-{next(EXAMPLES)}")  # a fresh repository: failures replay exactly
    (repo.path / ".gitignore").write_text("*.log\n")
    history = []
    for operations in turns:
        for kind, name, data in operations:
            apply_operation(repo.path, kind, name, data)
        history.append(snapshot(repo))
    for pick in picks[:3]:
        restore_and_undo(repo, history[pick % len(history)])


def restore_and_undo(repo: GitRepo, target: str) -> None:
    """Restore ``target`` (judged by git, ignored files kept), then undo to the exact bytes."""
    before = files_only(repo.digest())
    safety, _ = restore(repo, target)
    assert repo.oracle() == repo.workspace.tree_of(target)
    after = files_only(repo.digest())
    assert {p: v for p, v in after.items() if p.endswith(".log")} == {
        p: v for p, v in before.items() if p.endswith(".log")
    }
    if safety is not None:  # None: the files were the target already, nothing was saved
        restore(repo, safety, exact_from=target)
    assert files_only(repo.digest()) == before


def test_a_restored_gitignore_takes_effect_at_the_next_snapshot(repo: GitRepo):
    """Restoring only .gitignore leaves a tracked file on disk that the rules now ignore: the
    next snapshot drops it, as `git add -A` would, although the restore changed no other file."""
    repo.write(".gitignore", "*.out\n")
    with_rule = snapshot(repo)
    repo.write(".gitignore", "")
    repo.write("result.out", "kept on disk\n")
    snapshot(repo)
    assert "result.out" in repo.tree_paths(repo.workspace.tree_of(snapshot(repo)))
    restore(repo, with_rule, paths=[".gitignore"])
    assert (repo.path / "result.out").exists()
    tree_id = repo.workspace.tree_of(snapshot(repo))
    assert tree_id == repo.oracle()
    assert "result.out" not in repo.tree_paths(tree_id)
