"""A restore that meets a full disk leaves no file half-written, says how far it got in one
sentence, names `convgit restore --undo`, and that undo works once space is freed.

The disk is real: a small tmpfs mounted for the test (this machine and CI run as root). Where
mounting is not allowed (a container without CAP_SYS_ADMIN), the restore runs under a file
size limit instead (RLIMIT_FSIZE, SIGXFSZ ignored, inherited by the git it starts): git's write
then fails with EFBIG rather than ENOSPC, which tests the same promise (no file is replaced by a
part of itself) without the words about a full disk.
"""

from __future__ import annotations

import resource
import shutil
import signal
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from convgit.git.restore.operation import SCRATCH
from tests.clirun import run
from tests.workspace.cli import convgit, one_sentence
from tests.workspace.gitrepo import UserStateGuard, init_repo

MIB = 1 << 20
BIG = 9 * MIB  # each of two files (under the size cap); git writes them beside in 16 MiB runs
LIMIT = 8 * MIB  # the file size limit where no file system can be mounted


@dataclass
class Disk:
    """Where the repository lives: a small file system of its own (``mounted``), or a folder
    of tmp_path whose restore runs under a file size limit (``preexec``)."""

    root: Path
    mounted: bool

    def fill(self, leave: int) -> Path:
        """A file beside the repository that leaves ``leave`` bytes free (when mounted)."""
        filler = self.root / "filler"
        if self.mounted:
            size = shutil.disk_usage(self.root).free - leave
            with filler.open("wb") as out:
                out.truncate(0)
                chunk = b"\0" * MIB
                for _ in range(size // MIB):
                    out.write(chunk)
        return filler

    def preexec(self) -> Callable[[], None] | None:
        if self.mounted:
            return None

        def limited() -> None:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, LIMIT))

        return limited


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[Disk]:
    root = tmp_path / "disk"
    root.mkdir()
    mount = ["mount", "-t", "tmpfs", "-o", "size=40m", "tmpfs", str(root)]
    mounted = subprocess.run(mount, capture_output=True, check=False).returncode == 0
    try:
        yield Disk(root, mounted)
    finally:
        if mounted:
            subprocess.run(["umount", "-l", str(root)], check=True)


def test_a_restore_on_a_full_disk_leaves_no_file_half_written_and_names_the_undo(
    disk: Disk,
) -> None:
    """Two 9 MiB files to bring back onto a disk with 14 MiB free: the first goes in, the
    second does not fit. The second file is still the user's, whole (git's own checkout left
    part of it, or nothing, in its place); the sentence says how far the restore got and names
    `convgit restore --undo`, which gives back every byte once the space is freed."""
    repo = init_repo(disk.root / "repo")
    guard = UserStateGuard()
    guard.watch(repo.path)
    convgit(repo.path, "init")
    new = {"big1.bin": b"1" * BIG, "big2.bin": b"2" * BIG, "note.txt": b"one\n"}
    old = {"big1.bin": b"small one\n", "big2.bin": b"small two\n", "note.txt": b"two\n"}
    for name, data in new.items():
        repo.write(name, data)
    task = convgit(repo.path, "user", "task", "--json").json()["id"]
    for name, data in old.items():
        repo.write(name, data)
    convgit(repo.path, "assistant", "made them small")
    before = repo.digest()

    filler = disk.fill(leave=14 * MIB)
    ran = run("restore", task, "--yes", cwd=repo.path, code=1, preexec_fn=disk.preexec())
    sentence = one_sentence(ran.stderr)
    assert sentence.startswith("convgit: The restore stopped after "), sentence
    assert "`convgit restore --undo` returns the files to the state saved before it" in sentence
    if disk.mounted:
        assert "the disk is full" in sentence
        assert "free some space" in ran.stderr
    for name in new:
        assert (repo.path / name).read_bytes() in (old[name], new[name]), f"{name} half-written"
    assert (repo.path / "big2.bin").read_bytes() == old["big2.bin"]
    assert not (repo.path / ".git" / SCRATCH).exists()
    assert convgit(repo.path, "status", "--json").json()["interrupted_restore"] is not None

    filler.unlink(missing_ok=True)
    convgit(repo.path, "restore", "--undo", "--yes")
    assert repo.digest() == before
    assert convgit(repo.path, "status", "--json").json()["interrupted_restore"] is None
    guard.verify()
