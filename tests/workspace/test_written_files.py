"""A command that writes a file the user names (``html -o``, ``export -o``) writes only a new
file unless asked (``--force``): an existing file or symlink stays as it is, a folder is refused
by name, a missing folder is never made, and no temporary file is ever left behind."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.workspace.cli import convgit, one_sentence
from tests.workspace.gitrepo import GitRepo

# every command that writes a file outside the store, with what precedes its `-o FILE`
WRITERS: dict[str, list[str]] = {
    "html": ["html"],
    "export": ["export", "--format", "pi"],
}


def listing(folder: Path) -> dict[str, bytes | str | None]:
    seen: dict[str, bytes | str | None] = {}
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder).as_posix()
        if rel == ".git" or rel.startswith(".git/"):
            continue
        if path.is_symlink():
            seen[rel] = "-> " + os.readlink(path)
        elif path.is_dir():
            seen[rel] = None
        else:
            seen[rel] = path.read_bytes()
    return seen


@pytest.fixture
def out(repo: GitRepo) -> Path:
    convgit(repo.path, "init")
    convgit(repo.path, "user", "write the page")
    folder = repo.path / "out"
    folder.mkdir()
    return folder


@pytest.mark.parametrize("writer", WRITERS.values(), ids=WRITERS.keys())
def test_a_new_file_is_written_and_nothing_else(out: Path, writer: list[str]) -> None:
    convgit(out, *writer, "-o", "new.txt")
    assert sorted(p.name for p in out.iterdir()) == ["new.txt"]
    assert out.joinpath("new.txt").stat().st_size > 0


@pytest.mark.parametrize("writer", WRITERS.values(), ids=WRITERS.keys())
def test_an_existing_file_or_symlink_is_kept_unless_forced(out: Path, writer: list[str]) -> None:
    out.joinpath("mine.txt").write_text("my notes\n")
    out.joinpath("link").symlink_to("mine.txt")
    out.joinpath("dangling").symlink_to("nowhere.txt")
    before = listing(out)
    for name in ("mine.txt", "link", "dangling"):
        ran = convgit(out, *writer, "-o", name, code=1)
        sentence = one_sentence(ran.stderr)
        assert name in sentence and "--force" in sentence
        assert listing(out) == before, "nothing replaced, no temporary file left"

    convgit(out, *writer, "-o", "link", "--force")  # the link itself is replaced
    assert not out.joinpath("link").is_symlink()
    assert out.joinpath("mine.txt").read_text() == "my notes\n", "never written through"
    convgit(out, *writer, "-o", "mine.txt", "--force")
    assert out.joinpath("mine.txt").read_text() != "my notes\n"
    assert sorted(p.name for p in out.iterdir()) == ["dangling", "link", "mine.txt"]


@pytest.mark.parametrize("writer", WRITERS.values(), ids=WRITERS.keys())
def test_a_folder_is_refused_by_name_and_left_as_it_is(out: Path, writer: list[str]) -> None:
    out.joinpath("pages").mkdir()
    before = listing(out)
    for force in ([], ["--force"]):
        ran = convgit(out, *writer, "-o", "pages", *force, code=1)
        assert "pages is a folder" in one_sentence(ran.stderr)
        assert listing(out) == before, "no temporary file left beside or in it"


@pytest.mark.parametrize("writer", WRITERS.values(), ids=WRITERS.keys())
def test_a_missing_folder_is_refused_never_made(out: Path, writer: list[str]) -> None:
    ran = convgit(out, *writer, "-o", "missing/deeper/file.txt", code=1)
    assert "missing/deeper does not exist" in one_sentence(ran.stderr)
    assert listing(out) == {}


def test_html_keeps_replacing_its_own_page_in_the_store(out: Path) -> None:
    first = convgit(out, "html", "--json").json()["path"]
    convgit(out, "user", "one more")
    again = convgit(out, "html", "--json").json()
    assert again["path"] == first and Path(first).stat().st_size == again["bytes"]
    assert [p.name for p in Path(first).parent.iterdir()] == [Path(first).name]


def test_worktree_takes_a_new_folder_in_one_that_exists(out: Path) -> None:
    out.joinpath("mine.txt").write_text("my notes\n")
    before = listing(out)
    ran = convgit(out, "worktree", "@", "mine.txt", code=1)
    assert "mine.txt exists and is not a folder" in one_sentence(ran.stderr)
    ran = convgit(out, "worktree", "@", str(out.parent.parent / "missing" / "side"), code=1)
    assert "missing does not exist" in one_sentence(ran.stderr)
    assert not (out.parent.parent / "missing").exists()
    assert listing(out) == before
