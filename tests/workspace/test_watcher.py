"""Snapshots found through a file watcher (issue 27): with ``[snapshots] fsmonitor`` on, the
private index asks the real watchman what changed (git's fsmonitor protocol), and every
snapshot is still git's own ``git add -A`` tree: after edits, new files, renames, a folder
replaced by a file and back, files written while a snapshot runs, and a watcher restarted
between turns. Without watchman on PATH, or with one that fails, the snapshot falls back to
stat'ing every file with the same tree, and ``status`` says so in one line."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from unittest import mock

import pytest

from convgit import Session
from convgit.base import faults
from convgit.git.index import format as index_file
from tests.missing_tools import missing
from tests.workspace.cli import convgit
from tests.workspace.gitrepo import GitRepo, oracle_tree


@pytest.fixture
def watchman() -> str:
    """The real watchman's client (scripts/test installs it)."""
    found = shutil.which("watchman")
    if found is None:
        missing("watchman", "apt-get install watchman")
    return found


def use_watcher(repo: GitRepo, setting: str = "watchman") -> None:
    convgit(repo.path, "init")
    config = repo.path / ".git" / "convgit" / "config.toml"
    config.write_text(f'[snapshots]\nfsmonitor = "{setting}"\n')


def turn(repo: GitRepo, text: str, env: dict[str, str] | None = None) -> str:
    """A reply through the CLI; the tree of its snapshot."""
    made = convgit(repo.path, "assistant", text, "--json", env=env).json()
    if made["snapshot"] is None:  # the files are the snapshot above's
        made = convgit(repo.path, "show", "@", "--json", env=env).json()
    return str(made["snapshot"]["tree"])


def private_indexes(repo: GitRepo) -> list[Path]:
    folder = repo.path / ".git" / "convgit" / "index"
    return [p for p in folder.iterdir() if "." not in p.name]


def tokens(repo: GitRepo) -> list[bytes]:
    """The fsmonitor tokens the private indexes keep (git's FSMN extension)."""
    found = []
    for path in private_indexes(repo):
        fsmn = index_file.extensions(path, 20).get(b"FSMN", b"")
        found.append(fsmn[4:].split(b"\0")[0] if fsmn else b"")
    return found


def watcher_of(repo: GitRepo, env: dict[str, str] | None = None) -> dict[str, str | None]:
    return dict(convgit(repo.path, "status", "--json", env=env).json()["watcher"])


def unwatch(watchman: str, repo: GitRepo) -> None:
    """Drop the watch (watchman would drop it once the folder is gone, too); never wait long."""
    with contextlib.suppress(subprocess.TimeoutExpired):
        subprocess.run([watchman, "watch-del", str(repo.path)], capture_output=True, timeout=10)


@pytest.fixture
def watched(repo: GitRepo, watchman: str) -> Iterator[GitRepo]:
    use_watcher(repo)
    yield repo
    unwatch(watchman, repo)


def test_every_snapshot_with_watchman_is_git_add_all(watched: GitRepo) -> None:
    repo = watched
    assert turn(repo, "first") == oracle_tree(repo.path)
    assert watcher_of(repo) == {"path": "watchman", "setting": "watchman", "note": None}
    assert all(token.startswith(b"convgit:c:") for token in tokens(repo)), tokens(repo)
    steps = [
        ("an edit", lambda: repo.write("src/app.py", "print('changed')\n")),
        ("a new file in a new folder", lambda: repo.write("lib/deep/new.py", "x = 1\n")),
        ("a rename", lambda: os.rename(repo.path / "lib/deep/new.py", repo.path / "moved.py")),
        ("a folder renamed", lambda: os.rename(repo.path / "src", repo.path / "source")),
        ("a folder replaced by a file", lambda: replace_folder_by_file(repo.path / "source")),
        ("a file replaced by a folder", lambda: replace_file_by_folder(repo.path / "moved.py")),
        ("an ignored file", lambda: write_ignored(repo)),
        ("a deletion", lambda: (repo.path / "README.md").unlink()),
        ("a name that is not ASCII", lambda: repo.write("dossier é/ü file.txt", "ü\n")),
        ("an executable bit", lambda: (repo.path / "source").chmod(0o755)),
        ("nothing", lambda: None),
    ]
    for what, step in steps:
        step()
        assert turn(repo, what) == oracle_tree(repo.path), what
    assert all(token.startswith(b"convgit:c:") for token in tokens(repo)), tokens(repo)


def replace_folder_by_file(path: Path) -> None:
    shutil.rmtree(path)
    path.write_text("now a file\n")


def replace_file_by_folder(path: Path) -> None:
    path.unlink()
    path.mkdir()
    (path / "inside.py").write_text("y = 2\n")


def write_ignored(repo: GitRepo) -> None:
    repo.write(".gitignore", "*.log\n")
    repo.write("run.log", "ignored\n")
    repo.write("moved.py/run.log", "ignored too\n")


@pytest.mark.parametrize("tracked", [True, False])
def test_a_file_written_while_a_snapshot_runs_is_in_the_next_one(
    watched: GitRepo, tracked: bool
) -> None:
    """A writer changes a file after git listed what changed and before the snapshot is
    written: this snapshot has the files as they were listed, and the next one (with no other
    change) has the writer's, although the watcher's token moved past the write."""
    repo = watched
    turn(repo, "first")
    session = Session.open(repo.path)
    written: list[str] = []
    real_point = faults.point
    path = repo.path / ("src/app.py" if tracked else "src/raced.py")

    def point(name: str) -> None:
        if name == "snapshot:surveyed" and not written:
            written.append(oracle_tree(repo.path))
            path.write_text("written while a snapshot ran\n")
        real_point(name)

    repo.write("README.md", "# changed before\n")
    with mock.patch.object(faults, "point", point):
        session.append.assistant("raced")
        raced = session.track.snapshot_of("@")
    assert written and raced is not None
    assert raced.tree_id == written[0]  # the files as git listed them
    assert turn(repo, "after") == oracle_tree(repo.path)
    assert oracle_tree(repo.path) != written[0]


def test_a_watcher_restarted_between_turns_misses_nothing(watched: GitRepo, watchman: str) -> None:
    repo = watched
    turn(repo, "first")
    before = tokens(repo)
    subprocess.run([watchman, "shutdown-server"], capture_output=True, check=True)
    repo.write("src/app.py", "print('while watchman was down')\n")
    repo.write("new.txt", "new\n")
    assert turn(repo, "after the restart") == oracle_tree(repo.path)
    assert tokens(repo) != before and all(t.startswith(b"convgit:c:") for t in tokens(repo))
    assert watcher_of(repo)["note"] is None
    repo.write("src/app.py", "print('and after')\n")
    assert turn(repo, "again") == oracle_tree(repo.path)


def path_without_watchman(tmp_path: Path) -> str:
    """A PATH with git and nothing else."""
    folder = tmp_path / "bin"
    folder.mkdir()
    git = shutil.which("git")
    assert git is not None
    (folder / "git").symlink_to(git)
    return str(folder)


def test_folders_watchman_ignores_make_it_fall_back(watched: GitRepo) -> None:
    """A .watchmanconfig whose ignore_dirs hides folders git sees: watchman would miss their
    changes, so it is not trusted, and status says why."""
    repo = watched
    repo.write(".watchmanconfig", '{"ignore_dirs": ["src"]}\n')
    assert turn(repo, "first") == oracle_tree(repo.path)
    repo.write("src/app.py", "print('in an ignored folder')\n")
    assert turn(repo, "changed") == oracle_tree(repo.path)
    said = watcher_of(repo)
    assert said["path"] == "stat" and said["note"] == (
        "watchman ignores folders (ignore_dirs in .watchmanconfig)"
    )


def test_without_watchman_on_path_snapshots_fall_back_with_a_note(
    watched: GitRepo, tmp_path: Path
) -> None:
    repo = watched
    bare = {"PATH": path_without_watchman(tmp_path)}
    turn(repo, "with watchman")
    repo.write("src/app.py", "print('no watchman')\n")
    repo.write("gone/new.py", "z = 3\n")
    assert turn(repo, "without", env=bare) == oracle_tree(repo.path)
    said = watcher_of(repo, env=bare)
    assert said == {"path": "stat", "setting": "watchman", "note": "watchman is not on PATH"}
    words = convgit(repo.path, "status", env=bare).stdout.splitlines()
    assert [w for w in words if w.startswith("watcher:")] == [
        "watcher: fell back to stat'ing every file: watchman is not on PATH"
    ]
    os.rename(repo.path / "gone", repo.path / "back")  # watchman is back: it missed nothing
    assert turn(repo, "with it again") == oracle_tree(repo.path)
    assert watcher_of(repo)["path"] == "watchman"


def test_a_failing_watchman_falls_back_with_the_same_tree(watched: GitRepo, tmp_path: Path) -> None:
    repo = watched
    turn(repo, "first")
    folder = Path(path_without_watchman(tmp_path))
    (folder / "watchman").write_text("#!/bin/sh\necho 'watchman: cannot start' >&2\nexit 1\n")
    (folder / "watchman").chmod(0o755)
    failing = {"PATH": f"{folder}:/bin", "WATCHMAN_SOCK": str(tmp_path / "no-socket")}
    repo.write("src/app.py", "print('failing watchman')\n")
    repo.write("more/file.txt", "more\n")
    assert turn(repo, "failing", env=failing) == oracle_tree(repo.path)
    said = watcher_of(repo, env=failing)
    assert (
        said["path"] == "stat"
        and said["note"] == "watchman get-sockname failed: watchman: cannot start"
    )
    repo.write("src/app.py", "print('working again')\n")
    assert turn(repo, "working") == oracle_tree(repo.path)
    assert watcher_of(repo) == {"path": "watchman", "setting": "watchman", "note": None}


def test_the_watcher_is_off_unless_turned_on(repo: GitRepo) -> None:
    convgit(repo.path, "init")
    repo.write("src/app.py", "print('default')\n")
    assert turn(repo, "default") == oracle_tree(repo.path)
    assert tokens(repo) == [b""]
    assert watcher_of(repo) == {"path": "stat", "setting": "off", "note": None}


def test_off_uses_no_watcher_and_status_says_so(repo: GitRepo) -> None:
    use_watcher(repo, "off")
    repo.write("src/app.py", "print('off')\n")
    assert turn(repo, "off") == oracle_tree(repo.path)
    assert tokens(repo) == [b""]
    assert watcher_of(repo) == {"path": "stat", "setting": "off", "note": None}
    words = convgit(repo.path, "status", "-v").stdout.splitlines()
    assert "watcher: off (a snapshot stats every file)" in words


def test_a_hook_of_the_users_own_is_asked(repo: GitRepo, tmp_path: Path) -> None:
    """A hook path: git asks it (here one that always says "everything may have changed")."""
    hook = tmp_path / "my-hook"
    asked = tmp_path / "asked"
    hook.write_text(f"#!/bin/sh\necho \"$1\" >> '{asked}'\nprintf 'mine\\0/'\n")
    hook.chmod(0o755)
    use_watcher(repo, str(hook))
    repo.write("src/app.py", "print('hook')\n")
    assert turn(repo, "hook") == oracle_tree(repo.path)
    assert asked.read_text().split() and set(asked.read_text().split()) == {"2"}
    assert watcher_of(repo) == {"path": "hook", "setting": str(hook), "note": None}
    assert tokens(repo) == [b"mine"]


def test_a_setting_that_is_not_a_string_is_one_sentence(repo: GitRepo) -> None:
    """The reply is recorded; its files are not, and one line says why (as for size_cap_mib)."""
    convgit(repo.path, "init")
    (repo.path / ".git" / "convgit" / "config.toml").write_text("[snapshots]\nfsmonitor = 3\n")
    ran = convgit(repo.path, "assistant", "x")
    assert ran.stderr.count("\n") == 1 and "config.toml sets fsmonitor to 3" in ran.stderr
    ran = convgit(repo.path, "status", code=3)
    assert ran.stderr.startswith("convgit: config.toml sets fsmonitor to 3;"), ran.stderr


def test_the_users_own_fsmonitor_is_never_run_nor_its_token_taken(
    repo: GitRepo, watchman: str, tmp_path: Path, rewatch: Callable[[GitRepo], None]
) -> None:
    """The user's git runs a watcher of its own (core.fsmonitor in their config): convgit's git
    commands never run it, and the token it left in the user's index (which a new private index
    is seeded from) is not taken for convgit's."""
    hook, calls = tmp_path / "users-hook", tmp_path / "calls"
    hook.write_text(f"#!/bin/sh\necho \"$1 $2\" >> '{calls}'\nprintf 'users-token\\0/'\n")
    hook.chmod(0o755)
    repo.git("config", "core.fsmonitor", str(hook))
    repo.git("status", "--porcelain")  # the user's git: their index keeps their token
    rewatch(repo)
    asked = calls.read_text()
    use_watcher(repo)  # its private index is seeded from the user's, token and all
    repo.write("src/app.py", "print('beside the user's watcher')\n")
    tree = turn(repo, "with the user's watcher configured")
    assert calls.read_text() == asked  # convgit never ran it
    assert tokens(repo) and all(t.startswith(b"convgit:c:") for t in tokens(repo))
    assert tree == oracle_tree(repo.path)
    unwatch(watchman, repo)
