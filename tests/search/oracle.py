"""What a search should find, from other witnesses than the index: the session as `convgit tree
--json` and `convgit show --json` print it, and git's own diff of the snapshots."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from tests.workspace.cli import convgit
from tests.workspace.gitrepo import git


def turn(here: Path, text: str, *, role: str = "assistant", ts: str | None = None) -> str:
    """Append one message as a harness (or a hook) does, with its snapshot; its id."""
    line: dict[str, Any] = {"type": "message", "role": role, "content": text}
    if ts is not None:
        line["ts"] = ts
    return str(convgit(here, "append", "--json", input=orjson.dumps(line) + b"\n").json()["ids"][0])


def changed_by_git(here: Path, sid: str) -> dict[str, set[str]]:
    """Entry -> the paths git's diff finds between the snapshot of the nearest entry above it
    that has one and its own (entries with a snapshot and one above it only)."""
    entries = convgit(here, "-s", sid, "tree", "--json").json()["entries"]
    parents = {e["id"]: e["parentId"] for e in entries}
    commits = {}
    for ident in parents:
        snap = convgit(here, "-s", sid, "show", ident, "--json").json()["snapshot"]
        if snap is not None:
            commits[ident] = snap["commit"]
    found = {}
    for ident, commit in commits.items():
        above = parents[ident]
        while above is not None and above not in commits:
            above = parents[above]
        if above is not None:
            names = git(here, "diff", "--name-only", "--no-renames", commits[above], commit)
            found[ident] = set(names.split())
    return found


def searched(here: Path, *args: str) -> set[str]:
    """The entries `convgit search ARGS --json` finds."""
    done = convgit(here, "search", *args, "-n", "1000", "--json").json()
    assert done["more"] is False
    return {r["entry"] for r in done["results"]}
