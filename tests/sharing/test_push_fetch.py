"""Push and fetch of shared sessions over git's own transport, between two clones of one bare
repository: every entry, label and snapshot travels, both clones' turns merge by union, a
conflict is refused with nothing written, and nothing leaves by surprise."""

from __future__ import annotations

import re
from pathlib import Path

from tests.sharing.clones import Clone, another_clone, bare, convgit_refs, daemon, first_clone
from tests.workspace.cli import one_sentence
from tests.workspace.gitrepo import UserStateGuard, git


def start(clone: Clone) -> str:
    """A session of three turns over two files, a label and a branch; shared."""
    clone.run("init")
    clone.write("src/app.py", "print('one')\n")
    clone.run("user", "make it print one")
    clone.run("assistant", "done: it prints one")
    clone.run("label", "@", "first")
    clone.write("src/app.py", "print('two')\n")
    clone.write("notes.txt", "two\n")
    clone.run("user", "now two")
    clone.run("assistant", "done: two")
    clone.run("fork", "@~1", "or three?")
    clone.write("src/app.py", "print('three')\n")
    clone.run("assistant", "done: three")
    sid = clone.session()
    clone.run("share", sid)
    return sid


def test_push_then_fetch_brings_every_entry_label_and_snapshot(a: Clone, b: Clone) -> None:
    sid = start(a)
    pushed = a.json("push")
    assert pushed["pushed"] and pushed["sessions"][0]["entries"] == len(a.entries(sid))
    fetched = b.json("fetch")
    assert fetched["sessions"] == [
        {
            "session": sid, "new": True, "merged": False, "entries": len(a.entries(sid)),
            "snapshots": len(a.snapshots(sid)), "differ": 0, "trashed": False,
            "stale": False,
        }
    ]  # fmt: skip
    assert b.entries(sid) == a.entries(sid)
    assert b.labels(sid) == a.labels(sid) == {b.labels(sid).popitem()[0]: "first"}
    assert b.snapshots(sid) == a.snapshots(sid)
    b.run("--session", sid, "fsck")
    # restore in B gives A's files, entry by entry
    for entry, commit in a.snapshots(sid).items():
        b.run("--session", sid, "restore", entry, "--yes")
        a_files = git(a.path, "ls-tree", "-r", commit)
        assert git(b.path, "ls-tree", "-r", commit) == a_files
        for line in a_files.splitlines():
            path = line.split("\t", 1)[1]
            shown = git(a.path, "show", f"{commit}:{path}")
            assert (b.path / path).read_text() == shown


def objects(repo: Path, *revs: str) -> set[str]:
    """The ids of the objects ``git rev-list --objects REVS`` lists."""
    return {line.split()[0] for line in git(repo, "rev-list", "--objects", *revs).splitlines()}


def test_a_second_push_sends_only_the_new_turn(a: Clone, remote: Path) -> None:
    sid = start(a)
    first = a.json("push")["sessions"][0]
    before = objects(remote, "--all")
    old_snapshots = set(a.snapshots(sid).values())
    old_carrier = git(a.path, "rev-parse", f"refs/convgit/_shared/{sid}").strip()
    a.write("src/app.py", "print('four')\n")
    a.run("user", "four")
    a.run("assistant", "done: four")
    again = a.json("push")["sessions"][0]
    assert (again["entries"], again["snapshots"]) == (2, 2)  # the turn's two snapshots
    assert again["bytes"] < first["bytes"]
    new_snapshots = set(a.snapshots(sid).values()) - old_snapshots
    carrier = git(a.path, "rev-parse", f"refs/convgit/_shared/{sid}").strip()
    turn = objects(a.path, *new_snapshots, carrier, "--not", *old_snapshots, old_carrier)
    assert objects(remote, "--all") - before == turn - before
    assert a.json("push")["sessions"][0]["refs"] == 0  # nothing left to send


def test_both_clones_append_and_push_and_end_with_the_union(a: Clone, b: Clone) -> None:
    sid = start(a)
    a.run("push")
    b.run("fetch")
    a.run("user", "from a")
    a.run("assistant", "a's reply")
    b.run("--session", sid, "user", "from b")
    b.run("--session", sid, "assistant", "b's reply")
    a_leaf, b_leaf = a.leaf(sid), b.leaf(sid)
    a.run("push")
    moved = b.json("--session", sid, "push")
    assert moved["pushed"] and moved["tries"] == 2 and moved["merged"] == 2
    a.run("pull")
    union = a.entries(sid)
    assert union == b.entries(sid)
    texts = {e.get("content") for e in union.values()}
    assert {"from a", "a's reply", "from b", "b's reply"} <= texts
    assert (a.leaf(sid), b.leaf(sid)) == (a_leaf, b_leaf)  # each keeps its own active leaf
    a.run("--session", sid, "fsck")
    b.run("--session", sid, "fsck")


def test_the_same_id_with_other_content_is_refused_and_nothing_is_written(
    a: Clone, b: Clone, remote: Path
) -> None:
    sid = start(a)
    a.run("push")
    b.run("fetch")
    a.run("user", "alpha", "--id", "same-id")
    a.run("push")
    b.run("--session", sid, "user", "beta", "--id", "same-id")
    session_before = b.session_file(sid).read_bytes()
    sidecar_before = b.session_file(sid).with_suffix("").with_suffix(".files.jsonl")
    side = sidecar_before.read_bytes()
    remote_refs = git(remote, "for-each-ref")
    refused = b.run("--session", sid, "push", code=1)
    sentence = one_sentence(refused.stderr)
    assert "same-id" in sentence and '"alpha"' in sentence and '"beta"' in sentence
    assert b.session_file(sid).read_bytes() == session_before
    assert sidecar_before.read_bytes() == side
    assert git(remote, "for-each-ref") == remote_refs
    b.run("pull", code=1)
    assert b.session_file(sid).read_bytes() == session_before


def test_a_secret_in_an_entry_or_a_snapshotted_file_stops_the_push(a: Clone, remote: Path) -> None:
    sid = start(a)
    token = "ghp_" + "A1b2C3d4" * 5
    a.run("user", f"use the token {token}")
    refused = a.run("push", code=1)
    sentence = one_sentence(refused.stderr)
    assert "GitHub token" in sentence and "entry " in sentence and token not in sentence
    assert convgit_refs(remote) == []
    a.run("--session", sid, "redact", "--secrets", "--yes")
    a.write("config/.env", f"AWS_KEY=AKIA{'ABCDEFGH' * 2}\n")
    a.run("assistant", "wrote the config")
    refused = a.run("push", code=1)
    assert "file config/.env (AWS access key id)" in one_sentence(refused.stderr)
    assert convgit_refs(remote) == []
    a.run("push", "--allow-secrets")
    assert f"refs/convgit/_shared/{sid}" in convgit_refs(remote)


def test_dry_run_lists_and_sends_nothing(a: Clone, remote: Path) -> None:
    sid = start(a)
    listed = a.json("push", "--dry-run")
    (one,) = listed["sessions"]
    assert one["session"] == sid and one["entries"] == len(a.entries(sid))
    assert one["snapshots"] == len(a.snapshots(sid)) and one["bytes"] > 0
    assert listed["pushed"] is False and convgit_refs(remote) == []


def test_a_configured_remote_that_does_not_exist_stops_the_push(a: Clone, remote: Path) -> None:
    start(a)
    (a.path / ".git" / "convgit" / "config.toml").write_text('[share]\nremote = "upstream"\n')
    refused = a.run("push", code=1)
    sentence = one_sentence(refused.stderr)
    assert "'upstream'" in sentence and "[share] remote" in sentence
    assert convgit_refs(remote) == []  # origin exists: it was not used instead


def test_only_shared_sessions_are_pushed(a: Clone, remote: Path) -> None:
    start(a)
    a.run("init")  # a second session, not shared, made current
    a.run("user", "private")
    refused = a.run("push", code=1)
    assert "is not shared" in one_sentence(refused.stderr)
    a.run("push", "--all")
    shared = [r for r in convgit_refs(remote) if r.startswith("refs/convgit/_shared/")]
    assert len(shared) == 1


def test_git_push_alone_sends_nothing_of_convgits(
    a: Clone, remote: Path, user_state_guard: UserStateGuard
) -> None:
    sid = start(a)
    a.write("src/app.py", "print('committed')\n")
    a.repo.commit_all("a commit of the user's")
    user_state_guard.watch(a.path)
    git(a.path, "push", "-q", "origin", "main")
    assert convgit_refs(remote) == []
    for commit in a.snapshots(sid).values():
        assert git(remote, "cat-file", "-e", commit, check=False) == ""
        probe = git(remote, "rev-list", "--all")
        assert commit not in probe


def test_push_and_fetch_through_git_daemon(
    tmp_path: Path, user_state_guard: UserStateGuard
) -> None:
    served = tmp_path / "served"
    served.mkdir()
    bare(served / "shared.git")
    with daemon(served) as url:
        a = first_clone(tmp_path / "a", url + "shared.git")
        b = another_clone(tmp_path / "b", url + "shared.git")
        user_state_guard.watch(a.path)
        user_state_guard.watch(b.path)
        sid = start(a)
        assert a.json("push")["pushed"]
        assert b.json("fetch")["sessions"][0]["new"]
        assert b.entries(sid) == a.entries(sid) and b.snapshots(sid) == a.snapshots(sid)
        b.run("--session", sid, "user", "from b over the daemon")
        b.run("--session", sid, "push")
        assert a.json("pull")["sessions"][0]["entries"] == 1
        assert a.entries(sid) == b.entries(sid)
        entry, commit = next(iter(a.snapshots(sid).items()))
        b.run("--session", sid, "restore", entry, "--yes")
        assert (b.path / "src/app.py").read_text() == git(a.path, "show", f"{commit}:src/app.py")


def test_share_and_status_name_a_remote_that_mirrors(a: Clone, tmp_path: Path) -> None:
    mirror = bare(tmp_path / "mirror.git")
    git(a.path, "remote", "add", "--mirror=push", "backup", str(mirror))
    a.run("init")  # a session never shared
    a.run("user", "private")
    private = a.session()
    warning = "remote 'backup' is a mirror"
    assert warning in a.run("share", private).stdout
    assert a.json("unshare", private)["mirrors"] == ["backup"]
    assert warning in a.run("status").stdout
    assert a.json("status")["mirrors"] == ["backup"]
    # what it warns of: a plain `git push` there carries the session that is not shared
    git(a.path, "push", "-q", "backup")
    assert any(ref.startswith(f"refs/convgit/{private}/") for ref in convgit_refs(mirror))


def hinted_commands(stderr: str) -> list[list[str]]:
    """The convgit commands a refusal's hint names (in backquotes, or the hint whole), as
    argument lists without ``convgit``."""
    one_sentence(stderr)
    hint = stderr.partition("  hint: ")[2].strip()
    quoted = re.findall(r"`convgit ([^`]+)`", hint)
    whole = [hint.removeprefix("convgit ")] if hint.startswith("convgit ") else []
    return [found.split() for found in quoted or whole]


def test_push_of_a_current_session_trashed_then_emptied_hints_only_what_works(
    a: Clone, remote: Path
) -> None:
    """The current session moved to the trash, then the trash emptied: a push refuses, and
    each hint it gives is a command that succeeds when run (``convgit share`` of a session that
    is gone would fail)."""
    sid = start(a)
    a.run("sessions", "rm", sid, "--yes")
    trashed = a.run("push", code=1)
    [back] = hinted_commands(trashed.stderr)
    assert back == ["sessions", "restore", sid]
    a.run(*back)
    a.run("sessions", "rm", sid, "--yes")
    a.run("gc", "--trash", "--yes")
    gone = a.run("push", code=1)
    assert sid in gone.stderr and "not shared" not in gone.stderr
    for command in hinted_commands(gone.stderr):
        a.run(*command)
    assert convgit_refs(remote) == []
