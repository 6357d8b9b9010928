"""gc keeps a shared session's snapshots until a remote has them (the keep rule "not pushed"),
where the same snapshots of a session that is not shared are let go."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.sharing.clones import Clone
from tests.workspace.gitrepo import git


def old_branch(clone: Clone) -> list[str]:
    """A session whose first branch (three snapshotted replies) was left for another: the
    first two replies' snapshots are on no active path, no label, and not a branch end."""
    sid = clone.json("init")["id"]
    replies = []
    for turn in range(3):
        clone.write("work.txt", f"turn {turn}\n")
        clone.run("user", f"turn {turn}")
        replies.append(clone.json("assistant", f"reply {turn}")["id"])
    first = clone.json("tree")["entries"][0]["id"]
    clone.run("fork", first)
    clone.write("work.txt", "another way\n")
    clone.run("assistant", "another way")
    assert sid
    return replies[:2]


def gc_dry(clone: Clone) -> Any:
    return clone.json("gc", "--dry-run")


def test_gc_keeps_a_shared_sessions_snapshots_until_the_remote_has_them(
    a: Clone, remote: Path
) -> None:
    (a.path / ".git" / "convgit").mkdir(exist_ok=True)
    (a.path / ".git" / "convgit" / "config.toml").write_text("[retention]\nkeep_days = 0\n")
    private = old_branch(a)
    private_sid = a.session()
    shared = old_branch(a)
    sid = a.session()
    a.run("share", sid)
    looked = gc_dry(a)
    gone = {(item["session"], item["entry"]) for item in looked["let_go"]}
    # the same shape, not shared: let go; shared: held
    assert {(private_sid, e) for e in private} & gone
    assert not [s for s, _ in gone if s == sid]
    assert looked["kept"]["not pushed"] >= len(gone)  # branch ends too: held, not soft
    a.run("gc")
    kept = {e: c for e, c in a.snapshots(sid).items() if e in shared}
    assert set(kept) == set(shared)
    for commit in kept.values():
        git(a.path, "cat-file", "-e", commit)
    a.run("push")
    for commit in kept.values():
        git(remote, "cat-file", "-e", commit)  # the remote has them now
    after = gc_dry(a)
    assert "not pushed" not in after["kept"]
