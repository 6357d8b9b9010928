"""The restore plan (convgit/git/restore/plan.py) on a folder and deltas made in the test: no
git repository, no process. Each rule of what a restore writes, deletes, leaves alone or refuses
is one case here, in milliseconds; tests/workspace/test_restore_rules.py has them end to end."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from convgit.base.errors import NotFoundError, RefusedError, RestoreBlockedError, UsageError
from convgit.git.plumbing.objects import BLOB, GITLINK, Delta
from convgit.git.plumbing.paths import folders_above
from convgit.git.restore.plan import LeftAlone, plan, relative_path, select

OLD = (BLOB, "1" * 40)
NEW = (BLOB, "2" * 40)
SUB_OLD = (GITLINK, "3" * 40)
SUB_NEW = (GITLINK, "4" * 40)


def added(path: str) -> Delta:
    return Delta(path, "A", None, NEW)


def modified(path: str) -> Delta:
    return Delta(path, "M", OLD, NEW)


def deleted(path: str, old: tuple[int, str] = OLD) -> Delta:
    return Delta(path, "D", old, None)


def nothing_ignored(paths: list[str]) -> set[str]:
    return set()


def write(root: Path, path: str, text: str = "x\n") -> None:
    (root / path).parent.mkdir(parents=True, exist_ok=True)
    (root / path).write_text(text)


def paths(deltas: list[Delta]) -> list[str]:
    return [d.path for d in deltas]


# -- what is written and deleted -----------------------------------------------------------------


def test_writes_and_deletions_of_the_view_are_kept_in_path_order(tmp_path: Path) -> None:
    write(tmp_path, "b.txt")
    write(tmp_path, "gone.txt")
    deltas = [modified("b.txt"), added("a/new.txt"), deleted("gone.txt")]
    keep, left = plan(tmp_path, deltas, nothing_ignored)
    assert paths(keep) == ["a/new.txt", "b.txt", "gone.txt"]
    assert left == []


def test_a_deletion_the_target_does_not_account_for_is_left_alone_with_its_reason(
    tmp_path: Path,
) -> None:
    """A file the target lacks only because its snapshot left it out (or ignores it) is never
    deleted: ``unaccounted`` gives the reason, and the plan says it."""
    write(tmp_path, "big.bin")
    write(tmp_path, "old.txt")
    keep, left = plan(
        tmp_path,
        [deleted("big.bin"), deleted("old.txt")],
        nothing_ignored,
        unaccounted=lambda found: {p: "over the size cap" for p in found if p.endswith(".bin")},
    )
    assert paths(keep) == ["old.txt"]
    assert left == [LeftAlone("big.bin", "over the size cap; left alone")]


def test_nothing_is_deleted_inside_a_nested_repository(tmp_path: Path) -> None:
    write(tmp_path, "vendor/lib/.git/HEAD", "ref: refs/heads/main\n")
    write(tmp_path, "vendor/lib/code.py")
    keep, left = plan(tmp_path, [deleted("vendor/lib/code.py")], nothing_ignored)
    assert keep == []
    assert left == [LeftAlone("vendor/lib/code.py", "inside a nested repository; left alone")]


def test_a_submodule_the_target_lacks_is_left_alone_while_it_holds_files(tmp_path: Path) -> None:
    write(tmp_path, "sub/file.c")
    keep, left = plan(tmp_path, [deleted("sub", SUB_OLD)], nothing_ignored)
    assert keep == []
    assert left == [LeftAlone("sub", "a submodule the snapshot lacks; left alone")]
    (tmp_path / "sub" / "file.c").unlink()  # an empty checkout: nothing of the user's to lose
    keep, left = plan(tmp_path, [deleted("sub", SUB_OLD)], nothing_ignored)
    assert paths(keep) == ["sub"] and left == []


def test_a_submodule_is_never_moved_to_another_commit(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    keep, left = plan(tmp_path, [Delta("sub", "M", SUB_OLD, SUB_NEW)], nothing_ignored)
    assert keep == []
    why = f"a submodule; convgit does not move it (its snapshot is at {SUB_NEW[1]})"
    assert left == [LeftAlone("sub", why)]


# -- files the private index never held ----------------------------------------------------------


def test_a_file_the_snapshots_never_held_is_not_overwritten(tmp_path: Path) -> None:
    """A file on disk where the target adds one, which the snapshots did not hold (the index
    has no entry for it): the user's, so left alone, and said so."""
    write(tmp_path, "notes.txt", "the user's own\n")
    keep, left = plan(tmp_path, [added("notes.txt")], nothing_ignored)
    assert keep == []
    why = "outside the snapshots (size cap); differs from the snapshot, left alone"
    assert left == [LeftAlone("notes.txt", why)]


def test_a_file_never_held_that_git_ignores_says_so(tmp_path: Path) -> None:
    write(tmp_path, "build/out.o")
    keep, left = plan(tmp_path, [added("build/out.o")], lambda found: set(found))
    assert keep == []
    assert left == [
        LeftAlone("build/out.o", "ignored by git; differs from the snapshot, left alone")
    ]


def test_a_file_never_held_that_already_matches_the_target_is_not_listed(tmp_path: Path) -> None:
    write(tmp_path, "same.txt")
    keep, left = plan(tmp_path, [added("same.txt")], nothing_ignored, on_disk=lambda d: True)
    assert keep == [] and left == []


def test_a_fifo_never_held_is_named_for_what_it_is(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    _, left = plan(tmp_path, [added("pipe")], nothing_ignored)
    why = "a FIFO, not a file snapshots hold; differs from the snapshot, left alone"
    assert left == [LeftAlone("pipe", why)]


def test_a_file_the_snapshots_held_is_overwritten_whatever_it_holds_now(tmp_path: Path) -> None:
    """A dirty file the index holds is the restore's to replace (the saved state keeps it)."""
    write(tmp_path, "app.py", "edited since\n")
    keep, left = plan(tmp_path, [modified("app.py")], nothing_ignored)
    assert paths(keep) == ["app.py"] and left == []


# -- what refuses the whole restore --------------------------------------------------------------


def test_a_write_below_a_symlink_refuses_the_restore(tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(RestoreBlockedError, match=r"below 'link', a symlink"):
        plan(tmp_path, [added("link/file.txt")], nothing_ignored)
    assert list((tmp_path / "elsewhere").iterdir()) == []


def test_a_write_below_a_file_that_stays_refuses_the_restore(tmp_path: Path) -> None:
    write(tmp_path, "docs")
    with pytest.raises(RestoreBlockedError, match="below 'docs', a file"):
        plan(tmp_path, [added("docs/guide.md")], nothing_ignored)


def test_a_write_below_a_file_the_restore_removes_goes_ahead(tmp_path: Path) -> None:
    write(tmp_path, "docs")
    keep, left = plan(tmp_path, [deleted("docs"), added("docs/guide.md")], nothing_ignored)
    assert paths(keep) == ["docs", "docs/guide.md"] and left == []


def test_a_file_in_place_of_a_folder_with_files_of_the_user_refuses_the_restore(
    tmp_path: Path,
) -> None:
    write(tmp_path, "data/mine.csv")
    with pytest.raises(RestoreBlockedError, match=r"'data/mine\.csv', which is not part"):
        plan(tmp_path, [added("data")], nothing_ignored)
    keep, _ = plan(tmp_path, [added("data"), deleted("data/mine.csv")], nothing_ignored)
    assert paths(keep) == ["data", "data/mine.csv"]  # every file in it removed: allowed


def test_a_write_into_a_nested_repository_is_left_alone_and_never_through_one_removed(
    tmp_path: Path,
) -> None:
    write(tmp_path, "lib/.git/HEAD", "ref: refs/heads/main\n")
    keep, left = plan(tmp_path, [added("lib/x.py")], nothing_ignored)
    assert keep == [] and left == [LeftAlone("lib/x.py", "inside a nested repository; left alone")]
    with pytest.raises(RestoreBlockedError, match="into the repository at 'lib'"):
        plan(tmp_path, [deleted("lib"), added("lib/x.py")], nothing_ignored)


# -- which paths a restore of some paths takes ----------------------------------------------------


def test_select_takes_the_paths_at_or_below_those_given() -> None:
    deltas = [added("src/a.py"), added("src/b/c.py"), added("srcs.txt"), added("top.txt")]
    chosen = select(deltas, ["src"], lambda path: True)
    assert paths(chosen) == ["src/a.py", "src/b/c.py"]
    assert select(deltas, ["."], lambda path: False) == deltas


def test_select_takes_the_file_that_stands_where_a_chosen_folder_goes() -> None:
    deltas = [deleted("docs"), added("docs/guide.md"), added("other.txt")]
    assert paths(select(deltas, ["docs/guide.md"], lambda path: True)) == ["docs", "docs/guide.md"]


def test_select_refuses_a_path_in_neither_tree() -> None:
    with pytest.raises(NotFoundError, match=r"no 'nope\.txt'"):
        select([added("a.txt")], ["nope.txt"], lambda path: path == "a.txt")


@pytest.mark.parametrize(
    ("given", "clean"),
    [(".", ""), ("./src/", "src"), ("src/./a.py", "src/a.py"), (f"src{os.sep}a.py", "src/a.py")],
)
def test_a_restore_path_is_read_as_a_clean_relative_path(given: str, clean: str) -> None:
    assert relative_path(given) == clean


@pytest.mark.parametrize(
    ("given", "error", "words"),
    [
        ("", UsageError, "names no file"),
        ("/etc/passwd", RefusedError, "outside the working tree"),
        ("../outside", RefusedError, "outside the working tree"),
        ("src/../../outside", RefusedError, "outside the working tree"),
        (".git/config", RefusedError, "points into .git"),
    ],
)
def test_a_restore_path_outside_the_tree_or_into_git_is_refused(
    given: str, error: type[Exception], words: str
) -> None:
    with pytest.raises(error) as refused:
        relative_path(given)
    assert words in str(refused.value)


def test_the_folders_above_a_path_nearest_last() -> None:
    assert folders_above("a/b/c.txt") == ["a", "a/b"]
    assert folders_above("top.txt") == []
