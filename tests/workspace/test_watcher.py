"""Snapshots found through a file watcher (issues 27 and 37): in the recorder, a snapshot asks the
real watchman which paths changed since the last one and patches that one's tree
(``convgit.git.patching``); every snapshot is still git's own ``git add -A`` tree, and one that
watchman cannot vouch for (a restart, a recrawl, a changed ignore rule, the clock gone back)
stats every file instead and says why. Outside the recorder, and without watchman, a snapshot
stats every file. These run in this process, with the recorder's patcher serving the working
tree as it does in the recorder."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from unittest import mock

import pytest

from convgit.base import faults
from convgit.git import patching
from convgit.workspace import Workspace
from tests.missing_tools import missing
from tests.workspace.cli import convgit, one_sentence
from tests.workspace.gitrepo import GitRepo, oracle_tree


@pytest.fixture
def watchman() -> str:
    """The real watchman's client (scripts/test installs it)."""
    found = shutil.which("watchman")
    if found is None:
        missing("watchman", "apt-get install watchman")
    return found


def unwatch(watchman: str, root: Path) -> None:
    """Drop the watch (watchman would drop it once the folder is gone, too); never wait long."""
    with contextlib.suppress(subprocess.TimeoutExpired):
        subprocess.run([watchman, "watch-del", str(root)], capture_output=True, timeout=10)


@dataclasses.dataclass
class Patched:
    """A working tree whose snapshots this process takes as the recorder does."""

    repo: GitRepo
    ws: Workspace
    patcher: patching.Patcher
    index: Path

    def snap(self, what: str = "") -> tuple[str, str]:
        """(the snapshot's tree, how it was taken)."""
        taken = self.ws.snapshot(self.index, message=f"snapshot {what}", parent=None)
        return taken.tree_id, self.patcher.last[str(self.index)]


def patched_tree(repo: GitRepo, setting: str = "watchman") -> Iterator[Patched]:
    ws = Workspace.discover(repo.path)
    assert ws is not None
    store = repo.path / ".git" / "convgit"
    (store / "index").mkdir(parents=True, exist_ok=True)
    ws.keep_out(store)
    ws.track_changes(setting)
    patcher = patching.Patcher(store / "index" / "recorder-test")
    patching.serve(repo.path, patcher)
    try:
        yield Patched(repo, ws, patcher, store / "index" / "session-test")
    finally:
        patching.stop_serving(repo.path)
        patcher.close()


@pytest.fixture
def patched(repo: GitRepo, watchman: str) -> Iterator[Patched]:
    yield from patched_tree(repo)
    unwatch(watchman, repo.path)


def test_every_patched_snapshot_is_git_add_all(patched: Patched) -> None:
    repo = patched.repo
    tree, how = patched.snap("first")
    assert tree == oracle_tree(repo.path)
    assert how == "every file stat'ed: the recorder's first snapshot"
    steps: list[tuple[str, Callable[[], object]]] = [
        ("nothing", lambda: None),
        ("an edit", lambda: repo.write("src/app.py", "print('changed')\n")),
        ("a new file in a new folder", lambda: repo.write("lib/deep/new.py", "x = 1\n")),
        ("a rename", lambda: os.rename(repo.path / "lib/deep/new.py", repo.path / "moved.py")),
        ("a folder renamed", lambda: os.rename(repo.path / "src", repo.path / "source")),
        ("a folder replaced by a file", lambda: replace_folder_by_file(repo.path / "source")),
        ("a file replaced by a folder", lambda: replace_file_by_folder(repo.path / "moved.py")),
        ("ignored files", lambda: write_ignored(repo)),
        ("a deletion", lambda: (repo.path / "README.md").unlink()),
        ("a name that is not ASCII", lambda: repo.write("dossier é/ü file.txt", "ü\n")),
        ("an executable bit", lambda: (repo.path / "source").chmod(0o755)),
        ("a symlink", lambda: (repo.path / "link").symlink_to("source")),
        ("a link retargeted", lambda: retarget(repo.path / "link", "moved.py")),
        ("a folder replaced by a link", lambda: replace_by_link(repo.path / "moved.py")),
        ("an empty folder", lambda: (repo.path / "empty").mkdir()),
    ]
    for what, step in steps:
        step()
        tree, how = patched.snap(what)
        assert tree == oracle_tree(repo.path), what
        assert how.startswith("patched:"), (what, how)  # watchman's paths, not a full scan


def replace_folder_by_file(path: Path) -> None:
    shutil.rmtree(path)
    path.write_text("now a file\n")


def replace_file_by_folder(path: Path) -> None:
    path.unlink()
    path.mkdir()
    (path / "inside.py").write_text("y = 2\n")


def write_ignored(repo: GitRepo) -> None:
    repo.write("run.log", "ignored\n")
    repo.write("build/out.o", "ignored too\n")


def retarget(link: Path, target: str) -> None:
    link.unlink()
    link.symlink_to(target)


def replace_by_link(folder: Path) -> None:
    shutil.rmtree(folder)
    folder.symlink_to("source")


def test_what_watchman_cannot_vouch_for_stats_every_file(patched: Patched, watchman: str) -> None:
    """Each of these makes the next snapshot a full scan that says why; the one after it is
    patched again, and every one is git's tree."""
    repo = patched.repo
    patched.snap("first")
    exclude = repo.path / ".git" / "info" / "exclude"
    later = dataclasses.replace  # a base whose system clock is ahead of now: the clock went back

    def clock_back() -> None:
        for key, base in patched.patcher.bases.items():
            patched.patcher.bases[key] = later(base, at=base.at + 3600)

    steps: list[tuple[str, Callable[[], object], str]] = [
        ("a .gitignore", lambda: repo.write(".gitignore", "*.log\n*.tmp\n"), ".gitignore changed"),
        (
            "info/exclude",
            lambda: exclude.write_text("moved.py\n"),
            "git's config or ignore rules outside the tree changed",
        ),
        (
            "git's config",
            lambda: repo.git("config", "core.autocrlf", "input"),
            "git's config or ignore rules outside the tree changed",
        ),
        (
            "a recrawl",
            lambda: subprocess.run([watchman, "debug-recrawl", str(repo.path)], check=True),
            "watchman recrawled the tree",
        ),
        (
            "watchman restarted",
            lambda: subprocess.run([watchman, "shutdown-server"], capture_output=True, timeout=30),
            "watchman",
        ),
        ("the clock gone back", clock_back, "the system clock went back"),
    ]
    for what, step, why in steps:
        step()
        repo.write("src/app.py", f"print({what!r})\n")
        tree, how = patched.snap(what)
        assert tree == oracle_tree(repo.path), what
        assert how.startswith("every file stat'ed: ") and why in how, (what, how)
        repo.write("src/app.py", f"print('after {what}')\n")
        tree, how = patched.snap(f"after {what}")
        assert tree == oracle_tree(repo.path), what
        assert how.startswith("patched:"), (what, how)


def test_a_repository_inside_the_tree_is_left_out_and_its_changes_too(patched: Patched) -> None:
    """A nested repository (left out of every snapshot, unlike `git add -A`, which would take
    it as a gitlink): its appearing is a full scan that lists it; what changes inside it later
    is no change of the snapshot's, and a change beside it is patched."""
    repo = patched.repo
    patched.snap("first")
    nested = repo.path / "vendor" / "lib"
    repo.git("init", "-q", str(nested))
    (nested / "code.py").write_text("inside\n")
    before = patched.ws.snapshot(patched.index, message="nested", parent=None)
    assert [(s.path, s.reason) for s in before.skipped] == [("vendor/lib", "nested repository")]
    how = patched.patcher.last[str(patched.index)]
    assert "a repository inside the working tree changed" in how
    (nested / "code.py").write_text("changed inside\n")
    (nested / "more.py").write_text("more inside\n")
    repo.write("src/app.py", "print('beside it')\n")
    after = patched.ws.snapshot(patched.index, message="beside", parent=None)
    assert patched.patcher.last[str(patched.index)].startswith("patched:")
    assert [(s.path, s.reason) for s in after.skipped] == [("vendor/lib", "nested repository")]
    paths = set(repo.tree_paths(after.tree_id))
    assert paths == set(repo.tree_paths(before.tree_id)) and "src/app.py" in paths
    assert not any(path.startswith("vendor/") for path in paths)


def test_a_file_written_while_a_snapshot_runs_is_in_the_next_one(patched: Patched) -> None:
    """A writer changes files after watchman answered and before they are hashed: this
    snapshot has them as they were or as they are, and the next one has them as they are."""
    repo = patched.repo
    patched.snap("first")
    real_point = faults.point
    written = []

    def point(name: str) -> None:
        if name == "patch:asked" and not written:
            written.append(True)
            repo.write("src/app.py", "written while a snapshot ran\n")
            repo.write("raced.py", "new while a snapshot ran\n")
        real_point(name)

    repo.write("README.md", "# changed before\n")
    with mock.patch.object(faults, "point", point):
        patched.snap("raced")
    assert written
    tree, how = patched.snap("after")
    assert tree == oracle_tree(repo.path) and how.startswith("patched:")


def test_folders_watchman_ignores_make_every_snapshot_a_full_scan(patched: Patched) -> None:
    """A .watchmanconfig whose ignore_dirs hides folders git sees: watchman would miss their
    changes, so it is not asked, the snapshot says why, and the watch made to find it out is
    dropped again."""
    repo = patched.repo
    repo.write(".watchmanconfig", '{"ignore_dirs": ["src"]}\n')
    subprocess.run(["watchman", "watch-del", str(repo.path)], capture_output=True, timeout=30)
    tree, how = patched.snap("first")
    assert tree == oracle_tree(repo.path)
    repo.write("src/app.py", "print('in an ignored folder')\n")
    tree, how = patched.snap("changed")
    assert tree == oracle_tree(repo.path)
    assert how == ("every file stat'ed: watchman ignores folders (ignore_dirs in .watchmanconfig)")
    listed = subprocess.run(["watchman", "watch-list"], capture_output=True, timeout=30)
    assert os.path.realpath(repo.path) not in json.loads(listed.stdout)["roots"]


def test_files_git_does_not_take_as_they_are_are_hashed_by_git(patched: Patched) -> None:
    """With attributes (a line-ending conversion, here), a changed file is hashed by git's own
    add, never here: the tree is git's."""
    repo = patched.repo
    repo.write(".gitattributes", "*.txt text eol=lf\n")
    repo.write("notes.txt", "one\r\ntwo\r\n")
    patched.snap("first")
    repo.write("notes.txt", "three\r\nfour\r\n")
    tree, how = patched.snap("crlf")
    assert tree == oracle_tree(repo.path) and how.startswith("patched:")


def test_a_file_over_the_size_cap_is_left_out_by_a_full_scan(patched: Patched) -> None:
    repo = patched.repo
    patched.snap("first")
    repo.write("big.bin", b"\0" * (11 << 20))
    taken = patched.ws.snapshot(patched.index, message="big", parent=None)
    assert [s.path for s in taken.skipped] == ["big.bin"]
    assert patched.patcher.last[str(patched.index)].startswith("every file stat'ed")
    repo.write("src/app.py", "print('after')\n")
    again = patched.ws.snapshot(patched.index, message="after", parent=None)
    assert [s.path for s in again.skipped] == ["big.bin"]  # the patch keeps what was left out
    assert patched.patcher.last[str(patched.index)].startswith("patched:")


def path_without_watchman(tmp_path: Path) -> str:
    """A PATH with git and nothing else."""
    folder = tmp_path / "bin"
    folder.mkdir()
    git = shutil.which("git")
    assert git is not None
    (folder / "git").symlink_to(git)
    return str(folder)


def test_without_watchman_on_path_every_snapshot_stats_every_file(
    repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", path_without_watchman(tmp_path))
    for made in patched_tree(repo, "auto"):
        tree, how = made.snap("first")
        assert tree == oracle_tree(repo.path)
        assert how == "every file stat'ed: watchman is not on PATH"
    convgit(repo.path, "init")
    bare = {"PATH": os.environ["PATH"]}
    convgit(repo.path, "assistant", "a turn", env=bare)
    said = convgit(repo.path, "status", "--json", env=bare).json()
    assert said["watcher"] == {"path": "stat", "setting": "auto", "note": None}  # as it asked
    assert "watcher:" not in convgit(repo.path, "status", env=bare).stdout  # nothing wrong
    config = repo.path / ".git" / "convgit" / "config.toml"
    config.write_text('[snapshots]\nfsmonitor = "watchman"\n')  # asked for by name: it is named
    said = convgit(repo.path, "status", "--json", env=bare).json()
    assert said["watcher"]["note"] == "watchman is not on PATH"
    assert "watcher: fell back to stat'ing every file: watchman is not on PATH" in (
        convgit(repo.path, "status", env=bare).stdout
    )


def test_off_never_asks_watchman(repo: GitRepo) -> None:
    for made in patched_tree(repo, "off"):
        made.repo.write("src/app.py", "print('off')\n")
        tree, how = made.snap("off")
        assert tree == oracle_tree(repo.path) and how == "every file stat'ed: fsmonitor is off"
        assert made.patcher.watcher() == "none yet"


def test_the_status_names_the_setting_and_the_path(repo: GitRepo, watchman: str) -> None:
    convgit(repo.path, "init")
    convgit(repo.path, "assistant", "a turn")
    said = convgit(repo.path, "status", "--json").json()
    assert said["watcher"] == {"path": "watchman", "setting": "auto", "note": None}
    config = repo.path / ".git" / "convgit" / "config.toml"
    config.write_text('[snapshots]\nfsmonitor = "off"\n')
    words = convgit(repo.path, "status", "-v").stdout.splitlines()
    assert "watcher: off (a snapshot stats every file)" in words


def test_a_hook_of_the_users_own_is_asked(repo: GitRepo, tmp_path: Path) -> None:
    """A hook path: git asks it (here one that always says "everything may have changed")."""
    hook = tmp_path / "my-hook"
    asked = tmp_path / "asked"
    hook.write_text(f"#!/bin/sh\necho \"$1\" >> '{asked}'\nprintf 'mine\\0/'\n")
    hook.chmod(0o755)
    convgit(repo.path, "init")
    config = repo.path / ".git" / "convgit" / "config.toml"
    config.write_text(f'[snapshots]\nfsmonitor = "{hook}"\n')
    repo.write("src/app.py", "print('hook')\n")
    made = convgit(repo.path, "assistant", "hook", "--json").json()
    assert made["snapshot"]["tree"] == oracle_tree(repo.path)
    assert asked.read_text().split() and set(asked.read_text().split()) == {"2"}
    said = convgit(repo.path, "status", "--json").json()["watcher"]
    assert said == {"path": "hook", "setting": str(hook), "note": None}


def test_a_setting_that_is_not_a_string_is_one_sentence(repo: GitRepo) -> None:
    """Refused in one line before anything is written, as a bad size_cap_mib is (config.toml
    is checked whole by the first command that reads it)."""
    convgit(repo.path, "init")
    (repo.path / ".git" / "convgit" / "config.toml").write_text("[snapshots]\nfsmonitor = 3\n")
    said = "convgit: config.toml: [snapshots] fsmonitor must be"
    for args in (("assistant", "x"), ("status",)):
        error = one_sentence(convgit(repo.path, *args, code=3).stderr)
        assert error.startswith(said) and error.endswith(", got 3."), error
    assert convgit(repo.path, "log", "--json").json()["entries"] == []


def test_the_users_own_fsmonitor_is_never_run(
    repo: GitRepo, tmp_path: Path, rewatch: Callable[[GitRepo], None]
) -> None:
    """The user's git runs a watcher of its own (core.fsmonitor in their config): convgit's git
    commands never run it."""
    hook, calls = tmp_path / "users-hook", tmp_path / "calls"
    hook.write_text(f"#!/bin/sh\necho \"$1 $2\" >> '{calls}'\nprintf 'users-token\\0/'\n")
    hook.chmod(0o755)
    repo.git("config", "core.fsmonitor", str(hook))
    repo.git("status", "--porcelain")  # the user's git: their index keeps their token
    rewatch(repo)
    asked = calls.read_text()
    convgit(repo.path, "init")
    repo.write("src/app.py", "print('beside the user's watcher')\n")
    made = convgit(repo.path, "assistant", "with the user's watcher", "--json").json()
    assert calls.read_text() == asked  # convgit never ran it
    assert made["snapshot"]["tree"] == oracle_tree(repo.path)
