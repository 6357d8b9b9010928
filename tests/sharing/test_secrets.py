"""Secrets and remotes: a refused push leaves no trace of what it refused, a redaction after a
push leaves no local copy and says what the remote still holds, and the scan finds what a
detector finds (a `.env` file that git does not ignore is a secret by its name)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.sharing.clones import Clone, convgit_refs
from tests.sharing.test_push_fetch import start
from tests.workspace.cli import one_sentence
from tests.workspace.gitrepo import git

TOKEN = "ghp_" + "Z9y8X7w6" * 5


def holding(repo: Path, text: str) -> int:
    """How many objects of ``repo`` hold ``text`` (every object, reachable or not, whole)."""
    dump = subprocess.run(
        ["git", "cat-file", "--batch-all-objects", "--batch"],
        cwd=repo,
        capture_output=True,
        check=True,
    ).stdout
    return dump.count(text.encode())


def test_a_refused_push_records_nothing_of_what_it_refused(a: Clone, remote: Path) -> None:
    sid = start(a)
    a.run("push")
    a.run("user", f"deploy with {TOKEN}")
    refs = git(a.path, "for-each-ref")
    refused = a.run("push", code=1)
    assert "GitHub token" in one_sentence(refused.stderr)
    assert git(a.path, "for-each-ref") == refs  # no ref moved, none made
    assert holding(a.path, TOKEN) == 0  # no object holds it
    # the hint's advice, then the next push: the remote never gets it
    a.run("redact", "--secrets", "--snapshots", "--yes")
    git(a.path, "-c", "gc.packRefs=false", "gc", "-q", "--prune=now")  # refs left as they are
    assert holding(a.path, TOKEN) == 0
    a.run("push")
    assert f"refs/convgit/_shared/{sid}" in convgit_refs(remote)
    assert holding(remote, TOKEN) == 0
