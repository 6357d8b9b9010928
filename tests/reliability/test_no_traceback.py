"""No traceback, ever: a read-only .git, a full disk, bad config values and -C to a missing folder
are each one sentence on stderr and a non-zero exit, and nothing recorded is lost.

A full disk is a small tmpfs mounted for the test (root may mount one; so may CI, which runs as
root); where mounting is refused, the child gets a file-size limit (RLIMIT_FSIZE) instead, so its
writes fail as they would on a full disk (EFBIG rather than ENOSPC). A read-only .git is a
read-only bind mount, or, for a user other than root, a .git without write permission."""

from __future__ import annotations

import contextlib
import os
import resource
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.clirun import Ran, run
from tests.workspace.cli import convgit, one_sentence
from tests.workspace.gitrepo import GitRepo, UserStateGuard, digest, init_repo


def _mounted(args: list[str], where: Path) -> bool:
    done = subprocess.run(["mount", *args, str(where)], capture_output=True, check=False)
    return done.returncode == 0


@contextlib.contextmanager
def small_disk(where: Path, size: str = "3m") -> Iterator[str]:
    """A folder on a file system of ``size``; yields how the disk is made full later."""
    where.mkdir(parents=True)
    if _mounted(["-t", "tmpfs", "-o", f"size={size}", "tmpfs"], where):
        try:
            yield "tmpfs"
        finally:
            subprocess.run(["umount", "-l", str(where)], check=False)
    else:
        yield "rlimit"


def fill(where: Path, how: str) -> None:
    """Fill the disk under ``where`` (on a tmpfs) to its last block."""
    if how != "tmpfs":
        return
    with open(where / "filler", "wb") as out, contextlib.suppress(OSError):
        while True:
            out.write(b"\0" * 65536)
            out.flush()


def run_limited(cwd: Path, how: str, *args: str) -> Ran:
    """convgit in ``cwd``; with ``rlimit``, no file may grow past its size now."""

    def limit() -> None:
        if how == "rlimit":
            resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))

    return run(*args, cwd=cwd, code=None, preexec_fn=limit)


def test_a_full_disk_is_one_sentence_and_loses_nothing(tmp_path: Path) -> None:
    with small_disk(tmp_path / "disk") as how:
        repo = init_repo(tmp_path / "disk" / "repo")
        guard = UserStateGuard()
        guard.watch(repo.path)
        convgit(repo.path, "init")
        convgit(repo.path, "user", "task")
        kept = convgit(repo.path, "log", "--json").json()["entries"]
        repo.write("big.txt", os.urandom(200_000).hex())
        fill(tmp_path / "disk", how)
        for args in (("assistant", "a reply"), ("user", "x" * 10_000), ("snapshot",)):
            done = run_limited(repo.path, how, *args)
            assert "Traceback" not in done.stderr, done.stderr
            if done.code == 0:  # recorded; only the snapshot failed, and says so
                assert done.stderr.startswith("convgit: warning: the files were not snapshot")
            else:
                one_sentence(done.stderr)
        (tmp_path / "disk" / "filler").unlink(missing_ok=True)
        after = convgit(repo.path, "log", "--json").json()["entries"]
        assert after[: len(kept)] == kept
        if convgit(repo.path, "fsck", code=None).code == 3:
            convgit(repo.path, "repair")
        assert convgit(repo.path, "fsck", "--json").json()["ok"]
        convgit(repo.path, "assistant", "after the disk was freed")
        guard.verify()  # before the disk goes away


@contextlib.contextmanager
def read_only(folder: Path) -> Iterator[str]:
    if os.geteuid() != 0:
        modes = {p: p.stat().st_mode for p in [folder, *folder.rglob("*")] if not p.is_symlink()}
        for path in modes:
            path.chmod(modes[path] & ~0o222)
        try:
            yield "chmod"
        finally:
            for path, mode in modes.items():
                path.chmod(mode)
        return
    assert _mounted(["--bind", str(folder)], folder), "root cannot bind-mount here"
    try:
        assert _mounted(["-o", "remount,ro,bind"], folder), "root cannot remount read-only"
        yield "read-only bind mount"
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def test_a_read_only_git_folder_is_one_sentence_and_changes_nothing(repo: GitRepo) -> None:
    convgit(repo.path, "init")
    task = convgit(repo.path, "user", "task", "--json").json()["id"]
    repo.write("src/app.py", "print('plan A')\n")
    convgit(repo.path, "assistant", "plan A")
    files = digest(repo.path)
    with read_only(repo.path / ".git"):
        for args in (
            ("user", "more"),
            ("assistant", "again"),
            ("snapshot",),
            ("restore", task, "--yes"),
            ("label", task, "start"),
        ):
            ran = convgit(repo.path, *args, code=None)
            assert ran.code != 0 or ran.stderr.startswith("convgit: warning:"), ran
            if ran.code != 0:
                one_sentence(ran.stderr)
        assert convgit(repo.path, "log", "--json").json()["entries"][0]["id"] == task
        assert digest(repo.path) == files
    convgit(repo.path, "fsck")


@pytest.mark.parametrize("value", ['"lots"', "0", "-5", "true", "[1]"])
def test_a_bad_size_cap_is_refused_before_anything_is_written(repo: GitRepo, value: str) -> None:
    convgit(repo.path, "init")
    convgit(repo.path, "user", "task")
    store = repo.path / ".git" / "convgit"
    (store / "config.toml").write_text(f"[snapshots]\nsize_cap_mib = {value}\n")
    sessions = {p: p.read_bytes() for p in (store / "sessions").iterdir()}
    for args in (("assistant", "a reply"), ("user", "more"), ("snapshot",), ("status",)):
        error = convgit(repo.path, *args, code=3).stderr
        assert "size_cap_mib" in one_sentence(error) and "positive number" in error
    assert {p: p.read_bytes() for p in (store / "sessions").iterdir()} == sessions


@pytest.mark.parametrize(
    ("table", "commands"),
    [
        ("snapshots", (("assistant", "a reply"), ("snapshot",), ("status",))),
        ("retention", (("gc", "--dry-run"),)),
        ("share", (("hooks", "install", "git"), ("push",))),
    ],
)
def test_a_config_table_that_is_no_table_is_refused_in_one_sentence(
    repo: GitRepo, table: str, commands: tuple[tuple[str, ...], ...]
) -> None:
    """``snapshots = 3`` where a ``[snapshots]`` table belongs: each command that reads it says
    so and names the file, never a traceback, and nothing is written."""
    convgit(repo.path, "init", "--name", "work")
    convgit(repo.path, "user", "task")
    store = repo.path / ".git" / "convgit"
    (store / "config.toml").write_text(f"{table} = 3\n")
    convgit(repo.path, "share", "work")
    sessions = {p: p.read_bytes() for p in (store / "sessions").iterdir()}
    for args in commands:
        error = convgit(repo.path, *args, code=3).stderr
        assert f"config.toml's [{table}] is not a table." in one_sentence(error)
    assert not (repo.path / ".git" / "hooks" / "prepare-commit-msg").exists()
    assert {p: p.read_bytes() for p in (store / "sessions").iterdir()} == sessions


def test_minus_c_to_a_missing_folder_is_a_usage_error(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    for args in (("init",), ("log",), ("user", "hello")):
        error = convgit(tmp_path, "-C", str(missing), *args, code=2).stderr
        assert one_sentence(error) == f"convgit: The folder {missing} given with -C does not exist."
    assert not missing.exists()
    (tmp_path / "a-file").write_text("x")
    error = convgit(tmp_path, "-C", "a-file", "log", code=2).stderr
    assert "is not a folder" in one_sentence(error)
    shutil.rmtree(tmp_path / "a-file", ignore_errors=True)


def test_a_search_in_a_read_only_store_finds_what_the_files_say(repo: GitRepo) -> None:
    """The search index is a cache convgit writes beside the sessions: where it may not write
    (a read-only git folder), the search builds it in memory, for itself, and finds the same."""
    convgit(repo.path, "init")
    made = convgit(repo.path, "user", "a needle in the haystack", "--json").json()["id"]
    with read_only(repo.path / ".git"):
        found = convgit(repo.path, "search", "needle", "--json").json()
        assert [r["entry"] for r in found["results"]] == [made]
        assert found["indexes"][0]["why"] == "read-only"
        assert not (repo.path / ".git" / "convgit" / "search.sqlite").exists()
    assert convgit(repo.path, "search", "needle", "--json").json()["indexes"][0]["why"] == "missing"
