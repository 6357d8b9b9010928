"""Imported sessions of the real agents (Claude Code, Codex, pi; their transcripts in
../shared/samples, read only through the ``samples`` fixture) with a workspace track built
through the CLI: snapshots attached to some of the imported replies, then a restore, as a user
of the page has them after importing a session and working on from it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from tests.page.conftest import convgit_json, run_convgit
from tests.workspace.gitrepo import git, init_repo

# (agent, the sample in its folder): sessions with tool calls, many replies and long ids
SAMPLES = {
    "claude-code": "cc-2.1.79_rewind-after-interrupt_agent-tool.jsonl",
    "codex": "codex-0.121.0_cli_multi-turn_web-search_turn-aborted.jsonl",
    "pi": "pi-v1_large-session_test-fixture.jsonl",
}
# the files the "turns" write; one path is long, as real projects have them
FILES = [
    "README.md",
    "src/app/handlers/conversation_tree_renderer.py",
    "tests/test_app.py",
    "docs/notes.md",
]


@dataclass(frozen=True)
class RealSession:
    agent: str
    folder: Path
    session: str
    page: Path
    entries: list[dict[str, Any]]  # `convgit tree --json`
    snapshotted: list[str]  # entries given a snapshot, in order
    changed: dict[str, int]  # the files each turn of ``snapshotted`` wrote
    labels: dict[str, str]  # label -> entry
    paths: dict[str, list[str]]  # every snapshot: the files it changed
    commits: dict[str, str]  # every snapshot: its commit


def build(samples: Path, agent: str, root: Path) -> RealSession:
    """Import the sample, give four replies on the active path a snapshot (each turn writes
    some files), restore the files to the second, write a user message, and write the page."""
    repo = init_repo(root / agent)
    source = samples / agent / SAMPLES[agent]
    session = convgit_json(repo.path, "import", agent, str(source))["imports"][0]["session"]
    path = [e["id"] for e in convgit_json(repo.path, "-s", session, "log")["entries"]]
    by_id = {e["id"]: e for e in convgit_json(repo.path, "-s", session, "tree")["entries"]}
    replies = [i for i in path if by_id[i].get("role") == "assistant"]
    assert len(replies) >= 4, (agent, len(replies))
    chosen = [replies[len(replies) * k // 4] for k in range(3)] + [replies[-1]]
    changed: dict[str, int] = {}
    for turn, entry in enumerate(chosen):
        written = FILES[: turn + 1] if turn < 3 else FILES[1:2]
        for name in written:
            repo.write(name, f"{name}: turn {turn}\n" * (turn + 2))
        run_convgit(repo.path, "-s", session, "snapshot", entry)
        changed[entry] = len(written)
    run_convgit(repo.path, "-s", session, "label", chosen[0], "start")
    run_convgit(repo.path, "-s", session, "restore", chosen[1], "--yes")
    # the user goes on after the restore: the leaf is neither a reply nor where the page opens
    run_convgit(repo.path, "-s", session, "user", "Back at the second snapshot's files: go on.")
    page = root / f"{agent}.html"
    run_convgit(repo.path, "-s", session, "html", "-o", str(page))
    entries = convgit_json(repo.path, "-s", session, "tree")["entries"]
    commits, paths = snapshot_changes(repo.path, session, entries)
    return RealSession(
        agent=agent,
        folder=repo.path,
        session=session,
        page=page,
        entries=entries,
        snapshotted=chosen,
        changed=changed,
        labels={"start": chosen[0]},
        paths=paths,
        commits=commits,
    )


def snapshot_changes(
    folder: Path, session: str, entries: list[dict[str, Any]]
) -> tuple[dict[str, str], dict[str, list[str]]]:
    """Every snapshot's commit (from the sidecar), and the files it changed since the
    previous snapshot on its path (`convgit diff`; a first snapshot: all its files, git's
    ls-tree)."""
    sidecar = folder / ".git" / "convgit" / "sessions" / f"{session}.files.jsonl"
    records = [orjson.loads(line) for line in sidecar.read_bytes().splitlines()]
    commits = {r["entry"]: r["commit"] for r in records if r["type"] == "snapshot"}
    parent = {e["id"]: e["parentId"] for e in entries}
    paths: dict[str, list[str]] = {}
    for entry in commits:
        before = parent[entry]
        while before is not None and before not in commits:
            before = parent[before]
        if before is None:
            listed = git(folder, "ls-tree", "-r", "--name-only", commits[entry]).splitlines()
        else:
            diff = convgit_json(folder, "-s", session, "diff", before, entry)["changes"]
            listed = [c["path"] for c in diff]
        paths[entry] = listed
    return commits, paths
