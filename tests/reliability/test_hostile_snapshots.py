"""A snapshot commit someone else crafted (pulled from a remote, written by another tool) and
recorded for an entry, restored through the real command line: refused with exit 1 and one clear
sentence, no traceback, before a single byte changes in the working tree, in .git or outside."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pygit2
import pytest

from convgit import Session
from tests.clirun import run
from tests.reliability.harness import one_sentence_error
from tests.workspace.gitrepo import GitRepo, digest


def raw_tree(odb: pygit2.Repository, entries: list[tuple[str, bytes, str]]) -> str:
    """A tree object exactly as given (mode, name, oid): no validation, no sorting."""
    body = b"".join(m.encode() + b" " + name + b"\0" + bytes.fromhex(o) for m, name, o in entries)
    return str(odb.odb.write(pygit2.enums.ObjectType.TREE, body))


def crafted_tree(odb: pygit2.Repository, case: str, outside: Path) -> str:
    blob = str(odb.create_blob(b"pwned\n"))
    inner = raw_tree(odb, [("100644", b"x", blob)])
    if case == "..":
        return raw_tree(odb, [("40000", b"..", inner)])
    if case == ".git":
        hooks = raw_tree(odb, [("100755", b"post-checkout", blob)])
        return raw_tree(odb, [("40000", b".git", raw_tree(odb, [("40000", b"hooks", hooks)]))])
    if case == "through a symlink in the snapshot":
        link = str(odb.create_blob(str(outside).encode()))
        return raw_tree(odb, [("120000", b"a", link), ("40000", b"a", inner)])
    assert case == "through a symlink on disk"  # `a` is an ignored link to outside; `a/x` here
    return raw_tree(odb, [("40000", b"a", inner)])


@pytest.mark.parametrize(
    "case",
    ["..", ".git", "through a symlink in the snapshot", "through a symlink on disk"],
)
def test_a_crafted_snapshot_is_refused_by_the_cli_before_anything_changes(
    repo: GitRepo, tmp_path: Path, case: str
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "kept.txt").write_text("not yours\n")
    if case == "through a symlink on disk":
        repo.write(".gitignore", "a\n")
        repo.symlink("a", str(outside))
    session = Session.create(repo.path)
    session.append.user("task")
    session.append.assistant("a real reply, really snapshotted")
    pulled = session.append.user("the files of a snapshot someone sent").id

    odb = pygit2.Repository(str(repo.path))
    tree = crafted_tree(odb, case, outside)
    evil = pygit2.Signature("evil", "evil@example.invalid")
    commit = str(odb.create_commit(None, evil, evil, "crafted\n", tree, []))
    repo.git("update-ref", f"refs/convgit/{session.id}/{pulled}", commit)
    record = {
        "type": "snapshot",
        "entry": pulled,
        "commit": commit,
        "tree": tree,
        "ts": datetime.now(timezone.utc).isoformat(),
        "files": 1,
        "skipped": [],
    }
    with session.track.file.path.open("a") as sidecar:
        sidecar.write(json.dumps(record) + "\n")

    def state() -> dict[str, object]:
        return {
            "worktree": digest(repo.path),
            "outside": digest(outside),
            "around": sorted(p.name for p in tmp_path.iterdir()),
            "hooks": digest(repo.path / ".git" / "hooks"),
            "session": session.conversation.file.path.read_bytes(),
            "sidecar": session.track.file.path.read_bytes(),
        }

    before = state()
    for extra in (["--dry-run"], ["--yes"]):
        proc = run(
            "-C", str(repo.path), "restore", pulled, *extra, cwd=repo.path, code=None, timeout=60
        )
        assert proc.code == 1, (extra, proc.stdout, proc.stderr)
        message = one_sentence_error(proc.stderr)
        assert "nothing was restored" in message, message
        assert state() == before, f"`restore {' '.join(extra)}` changed something"
    assert (
        Session.open(repo.path, session=session.id).track.sidecar.snapshots[pulled].commit == commit
    )
