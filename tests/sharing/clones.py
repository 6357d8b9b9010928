"""Clones of one bare repository, as people who share sessions have them: on disk, or through
``git daemon`` on 127.0.0.1 (git's own transport over TCP)."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.workspace.cli import Ran, convgit
from tests.workspace.gitrepo import GitRepo, git, init_repo


class Clone:
    """One clone and the convgit commands run in it."""

    def __init__(self, repo: GitRepo) -> None:
        self.repo = repo
        self.path = repo.path

    def run(self, *args: str, code: int | None = 0, input: str | None = None) -> Ran:
        return convgit(self.path, *args, code=code, input=input)

    def json(self, *args: str, code: int | None = 0) -> Any:
        return self.run(*args, "--json", code=code).json()

    def write(self, rel: str, text: str) -> None:
        self.repo.write(rel, text)

    def session(self) -> str:
        current = [s for s in self.json("sessions")["sessions"] if s["current"]]
        return str(current[0]["id"])

    def entries(self, sid: str) -> dict[str, dict[str, Any]]:
        """Every entry of session ``sid`` by id, as written (labels apart)."""
        found = self.json("--session", sid, "tree")["entries"]
        return {e["id"]: {k: v for k, v in e.items() if k != "label"} for e in found}

    def labels(self, sid: str) -> dict[str, str]:
        found = self.json("--session", sid, "tree")["entries"]
        return {e["id"]: e["label"] for e in found if e.get("label")}

    def snapshots(self, sid: str) -> dict[str, str]:
        """entry -> snapshot commit of session ``sid``'s sidecar, read as the file says."""
        path = self.path / ".git" / "convgit" / "sessions" / f"{sid}.files.jsonl"
        import orjson

        found: dict[str, str] = {}
        for line in path.read_bytes().splitlines():
            record = orjson.loads(line)
            if record.get("type") == "snapshot":
                found[record["entry"]] = record["commit"]
        return found

    def session_file(self, sid: str) -> Path:
        return self.path / ".git" / "convgit" / "sessions" / f"{sid}.jsonl"

    def leaf(self, sid: str) -> str:
        return str(self.json("--session", sid, "status")["leaf"])


def bare(path: Path) -> Path:
    git(path.parent, "init", "-q", "--bare", path.name)
    return path


def first_clone(path: Path, url: str) -> Clone:
    """A repository with a commit, a branch, a tag and a stash, whose main is pushed to ``url``."""
    repo = init_repo(path)
    repo.git("remote", "add", "origin", url)
    repo.git("push", "-q", "origin", "main")
    return Clone(repo)


def another_clone(path: Path, url: str) -> Clone:
    git(path.parent, "clone", "-q", url, path.name)
    return Clone(GitRepo(path))


def convgit_refs(bare_repo: Path) -> list[str]:
    """The refs of convgit's a repository has."""
    return git(bare_repo, "for-each-ref", "--format=%(refname)", "refs/convgit/").split()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def daemon(base: Path) -> Iterator[str]:
    """``git daemon`` serving the repositories under ``base`` (pushes too) on a free port of
    127.0.0.1; yields the URL of ``base``."""
    port = free_port()
    proc = subprocess.Popen(
        [
            "git", "daemon", "--reuseaddr", "--export-all", "--enable=receive-pack",
            "--listen=127.0.0.1", f"--port={port}", f"--base-path={base}", str(base),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    url = f"git://127.0.0.1:{port}/"
    try:
        while True:  # ready when it answers (a start takes a moment; it is no timing promise)
            assert proc.poll() is None, "git daemon did not start"
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.05)
        yield url
    finally:
        proc.terminate()
        proc.wait(10)
