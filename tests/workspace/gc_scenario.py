"""A session of many turns over 60 simulated days, for ``convgit gc``: a main line, two older
branches (one with a label), restores (saved states), and a fork into a new session taken from
the middle of a branch the source lets go. Turns are appended in-process (the same code the
CLI runs, to keep the test's time on what it checks); labels, restores, the fork and switches
go through the real command line. Every turn's ``ts`` is set, spread over the 60 days."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from convgit.session import Session
from tests.workspace.cli import convgit
from tests.workspace.gitrepo import GitRepo

DAYS = 60


@dataclass
class Built:
    """What the scenario made: the two sessions, the entries of each part, the label."""

    source: str
    fork: str
    main: list[str] = field(default_factory=list)  # assistant entries of the main line
    older: dict[str, list[str]] = field(default_factory=dict)  # branch name -> its entries
    labelled: str = ""
    fork_point: str = ""


def _stamp(when: datetime) -> str:
    return when.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class Scenario:
    def __init__(self, repo: GitRepo, turns: int, seed: int = 26) -> None:
        self.repo = repo
        self.turns = turns
        self.random = random.Random(seed)
        self.start = datetime.now(timezone.utc) - timedelta(days=DAYS, hours=1)

    def when(self, turn: int) -> str:
        return _stamp(self.start + timedelta(days=DAYS) * (turn / self.turns))

    def turn(self, session: Session, turn: int, what: str, big: str | None = None) -> str:
        """One turn at simulated time ``turn``: the files change, a user message and a reply
        (snapshotted), both stamped with that day."""
        self.repo.write(f"work/{what}.txt", f"{what} at turn {turn}\n")
        if big is not None:  # incompressible, so letting it go frees what it took
            self.repo.write(f"data/{big}.bin", self.random.randbytes(24_000))
        ts = self.when(turn)
        made = session.append.entries(
            [
                {"type": "message", "role": "user", "content": f"{what} {turn}", "ts": ts},
                {"type": "message", "role": "assistant", "content": f"did {turn}", "ts": ts},
            ]
        )
        return made[-1].id

    def build(self) -> Built:
        here = self.repo.path
        source = convgit(here, "init", "--name", "sixty days", "--json").json()["id"]
        session = Session.open(here)
        n = self.turns
        branch_b, branch_c = n * 15 // 100, n * 40 // 100
        size_b, size_c = max(4, n // 10), max(3, n * 8 // 100)
        built = Built(source, "")
        # the main line: every turn that is no branch's
        taken = set(range(branch_b + 1, branch_b + 1 + size_b))
        taken |= set(range(branch_c + 1, branch_c + 1 + size_c))
        for turn in range(n):
            if turn not in taken:
                big = f"main-{turn % 3}" if turn % 4 == 0 else None
                built.main.append(self.turn(session, turn, "main", big))
        on_main = [t for t in range(n) if t not in taken]
        at = dict(zip(on_main, built.main, strict=True))
        tip = built.main[-1]
        # two older branches, each from the main line's files at its fork point
        for name, base, length in (("b", branch_b, size_b), ("c", branch_c, size_c)):
            first = base + 1
            convgit(here, "switch", at[base])
            convgit(here, "restore", at[base], "--yes")
            session = Session.open(here)
            built.older[name] = [
                self.turn(session, t, f"branch-{name}", name) for t in range(first, first + length)
            ]
        middle = built.older["b"]
        built.labelled = middle[len(middle) // 2]
        convgit(here, "label", built.labelled, "kept-by-label")
        built.fork_point = middle[1]
        # back to the main line, its files too
        convgit(here, "switch", tip)
        convgit(here, "restore", tip, "--yes")
        # a fork into a new session from the middle of branch b, which the source lets go
        made = convgit(here, "fork", built.fork_point, "--new-session", "--json").json()
        built.fork = made["session"]
        convgit(here, "restore", built.fork_point, "--yes")
        fork = Session.open(here)
        for turn in range(n, n + 3):
            self.turn(fork, turn, "fork")
        convgit(here, "use", source)
        convgit(here, "restore", tip, "--yes")
        return built


def snapshot_trees(repo: GitRepo) -> dict[str, dict[str, str]]:
    """session -> entry -> the tree of its snapshot ref, read by git."""
    listed = repo.git("for-each-ref", "--format=%(refname) %(objectname)", "refs/convgit/")
    found: dict[str, dict[str, str]] = {}
    for line in listed.splitlines():
        ref, commit = line.split()
        parts = ref.split("/")
        if len(parts) == 4:  # refs/convgit/<sid>/<entry>
            tree = repo.git("rev-parse", f"{commit}^{{tree}}").strip()
            found.setdefault(parts[2], {})[parts[3]] = tree
    return found


def store_bytes(repo: GitRepo) -> int:
    """git's object folder, as ``git count-objects -v`` counts it (loose and packed, KiB)."""
    counted = dict(
        line.split(": ", 1) for line in repo.git("count-objects", "-v").splitlines() if ": " in line
    )
    return (int(counted["size"]) + int(counted["size-pack"])) * 1024


def user_objects(repo: GitRepo) -> set[str]:
    """Every object the user's refs, reflogs (the stash's too) and index reach."""
    listed = repo.git(
        "rev-list", "--objects", "--exclude=refs/convgit/*", "--all", "--reflog",
        "--indexed-objects",
    )  # fmt: skip
    return {line.split()[0] for line in listed.splitlines() if line}


def missing(repo: GitRepo, oids: set[str]) -> set[str]:
    asked = "".join(f"{oid}\n" for oid in sorted(oids))
    import subprocess

    done = subprocess.run(
        ["git", "cat-file", "--batch-check"],
        cwd=repo.path,
        input=asked,
        capture_output=True,
        text=True,
        check=True,
    )
    return {line.split()[0] for line in done.stdout.splitlines() if line.endswith(" missing")}


def user_view(repo: GitRepo) -> dict[str, Any]:
    """The user's refs, reflogs and stash, as git prints them."""
    return {
        "refs": "".join(
            line + "\n"
            for line in repo.git("for-each-ref").splitlines()
            if "refs/convgit/" not in line
        ),
        "head log": repo.git("reflog", "show", "--format=%H %gs", "HEAD"),
        "stash": repo.git("stash", "list", "--format=%H %gs"),
        "index": (repo.path / ".git" / "index").read_bytes(),
    }


def unreachable_blob(repo: GitRepo, text: str) -> str:
    """A blob the user wrote and nothing reaches (``git hash-object -w``): git's own gc keeps
    it two weeks, and convgit's must never delete it."""
    path: Path = repo.path / ".git" / "user-blob.tmp"
    path.write_text(text)
    oid = repo.git("hash-object", "-w", str(path)).strip()
    path.unlink()
    return oid
