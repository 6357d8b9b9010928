"""A session forked with `--new-session` shares the snapshots of the path it copies: its refs
and records name the source's commits, git gains no object, and restoring one works as in the
source. The user's git state is guarded, as in every workspace test."""

from __future__ import annotations

from pathlib import Path

import orjson

from tests.clirun import Shell
from tests.workspace.gitrepo import GitRepo


def refs(repo: GitRepo, session: str) -> dict[str, str]:
    out = repo.git("for-each-ref", "--format=%(refname) %(objectname)", f"refs/convgit/{session}/")
    return {line.split()[0].rsplit("/", 1)[1]: line.split()[1] for line in out.splitlines()}


def objects(repo: GitRepo) -> set[str]:
    listed = repo.git("cat-file", "--batch-all-objects", "--batch-check=%(objectname)")
    return set(listed.split())


def test_the_shared_path_s_snapshots_are_shared_not_copied(repo: GitRepo, tmp_path: Path) -> None:
    sh = Shell(repo.path)
    source = sh.json("init")["id"]
    task = sh.json("user", "task")["id"]
    repo.write("calc.py", "def add(a, b):\n    return a + b\n")
    plan = sh.json("assistant", "plan B")["id"]
    repo.write("calc.py", "def add(a, b):\n    return b + a  # later\n")
    sh.run("user", "and then?")
    sh.run("assistant", "a later change")
    before = objects(repo)
    made = sh.json("fork", plan, "--new-session")
    fork = made["session"]
    assert objects(repo) == before, "sharing a snapshot writes no git object"
    assert refs(repo, fork) == {e: c for e, c in refs(repo, source).items() if e in (task, plan)}
    records = [
        orjson.loads(line)
        for line in (repo.path / ".git" / "convgit" / "sessions" / f"{fork}.files.jsonl")
        .read_bytes()
        .splitlines()
    ]
    shared = {r["entry"]: r["commit"] for r in records if r["type"] == "snapshot"}
    assert shared == refs(repo, fork)
    assert any(r == {"type": "sidecar", "enabled": True, "ts": r["ts"]} for r in records)
    status = sh.json("status")
    assert status["session"] == fork and status["leaf_snapshot"] == plan
    assert status["files"]["changed"] == ["calc.py"]
    sh.run("restore", plan, "--yes")
    assert (repo.path / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    repo.write("calc.py", "def add(a, b):\n    return a + b  # B's own\n")
    own = sh.json("assistant", "B's own change")["id"]
    assert refs(repo, fork)[own] not in refs(repo, source).values()
    assert set(refs(repo, source)) >= {task, plan} and own not in refs(repo, source)
