"""``convgit demo --dir`` builds only in a folder of its own: a new or empty one. A used folder (a
repository with the user's work in it) is refused before a byte or a ref changes."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from tests.workspace.cli import convgit, one_sentence
from tests.workspace.gitrepo import GitRepo


def every_byte(root: Path) -> dict[str, bytes | str | None]:
    """Every file, link and folder under ``root``, git's own folder included."""
    seen: dict[str, bytes | str | None] = {}
    for top, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            path = Path(top, name)
            rel = path.relative_to(root).as_posix()
            if path.is_symlink():
                seen[rel] = os.readlink(path)
            elif path.is_dir():
                seen[rel] = None
            else:
                seen[rel] = path.read_bytes()
    return seen


def test_the_demo_refuses_a_used_repository_and_changes_nothing(
    repo: GitRepo, rewatch: Callable[[GitRepo], None]
) -> None:
    repo.write(".gitignore", ".env\n")
    repo.write(".env", "TOKEN=secret\n")  # ignored: a commit of everything would take it
    repo.commit_all("ignore .env")
    repo.git("switch", "-q", "feature")
    repo.write("README.md", "# an edit not committed yet\n")
    repo.write("calc.py", "mine = 1\n")  # a name the demo writes
    rewatch(repo)  # the guard checks the user's branch, index and stash after the test
    before = every_byte(repo.path)

    for where in (".", str(repo.path), "src"):
        ran = convgit(repo.path, "demo", "--dir", where, code=1)
        assert "new or empty folder" in one_sentence(ran.stderr)
        assert ran.stdout == ""
    assert every_byte(repo.path) == before


def test_the_demo_refuses_a_file(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine\n")
    ran = convgit(tmp_path, "demo", "--dir", "notes.txt", code=1)
    assert "notes.txt" in one_sentence(ran.stderr)
    assert (tmp_path / "notes.txt").read_text() == "mine\n"


def test_the_demo_builds_in_an_empty_folder_once(tmp_path: Path) -> None:
    folder = tmp_path / "empty"
    folder.mkdir()
    env = {name: "" for name in os.environ if name.startswith("CONVGIT_")}
    convgit(tmp_path, "demo", "--dir", str(folder), env=env, timeout=300)
    assert "plan B" in (folder / "calc.py").read_text()
    built = every_byte(folder)

    again = convgit(tmp_path, "demo", "--dir", str(folder), code=1, env=env)
    assert "new or empty folder" in one_sentence(again.stderr)
    assert every_byte(folder) == built
