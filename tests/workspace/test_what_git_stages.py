"""What git stages, convgit snapshots, and a user turn records hand edits. A folder replaced by a
symlink, names that are not UTF-8 and a clean filter that fails all go through the real CLI on a
real repository without a traceback, under the guard that the user's git state never changes."""

from __future__ import annotations

import os
from pathlib import Path

from tests.workspace.cli import convgit
from tests.workspace.gitrepo import GitRepo, digest, oracle_tree


def files_only(root: Path) -> dict[str, tuple[str, object]]:
    return {p: v for p, v in digest(root).items() if v[0] != "dir"}


def test_a_folder_replaced_by_a_symlink_is_snapshotted_and_restored(repo: GitRepo) -> None:
    """`mv src lib && ln -s lib src`: every command works, the snapshot is git's, and restore
    brings the folder back (undo brings the link back)."""
    convgit(repo.path, "init")
    task = convgit(repo.path, "user", "task", "--json").json()["id"]
    before = files_only(repo.path)
    (repo.path / "src").rename(repo.path / "lib")
    (repo.path / "src").symlink_to("lib")
    swapped = files_only(repo.path)
    reply = convgit(repo.path, "assistant", "moved src to lib", "--json").json()
    assert reply["snapshot"]["tree"] == oracle_tree(repo.path)
    assert convgit(repo.path, "status", "--json").json()["files"]["matches"] == reply["id"]
    assert {c["path"] for c in convgit(repo.path, "diff", task, "--json").json()["changes"]} == {
        "lib/app.py",
        "src",
        "src/app.py",
    }
    convgit(repo.path, "restore", task, "--yes")
    assert files_only(repo.path) == before and not (repo.path / "src").is_symlink()
    convgit(repo.path, "restore", "--undo", "--yes")
    assert files_only(repo.path) == swapped


def test_restore_never_writes_through_a_symlink_to_outside_the_repository(
    repo: GitRepo, tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "theirs.txt").write_text("not convgit's\n")
    convgit(repo.path, "init")
    task = convgit(repo.path, "user", "task", "--json").json()["id"]
    (repo.path / "src" / "app.py").unlink()
    (repo.path / "src").rmdir()
    (repo.path / "src").symlink_to(outside)
    reply = convgit(repo.path, "assistant", "src is a link now", "--json").json()
    assert reply["snapshot"]["tree"] == oracle_tree(repo.path)
    convgit(repo.path, "restore", task, "--yes")
    assert (repo.path / "src" / "app.py").read_text() == "print('hello')\n"
    assert not (repo.path / "src").is_symlink()
    assert sorted(p.name for p in outside.iterdir()) == ["theirs.txt"]
    assert (outside / "theirs.txt").read_text() == "not convgit's\n"


def test_names_that_are_not_utf8_are_restored_by_their_bytes_and_shown_escaped(
    repo: GitRepo,
) -> None:
    name = b"caf\xe9.txt"
    raw = os.fsencode(repo.path) + b"/" + name
    with open(raw, "wb") as out:
        out.write(b"latin-1 name\n")
    convgit(repo.path, "init")
    task = convgit(repo.path, "user", "task", "--json").json()["id"]
    os.unlink(raw)
    repo.write("other.txt", "x\n")
    convgit(repo.path, "assistant", "removed it")
    assert not os.path.exists(raw)

    planned = convgit(repo.path, "restore", task, "--dry-run", "--json").json()
    assert {"path": "caf\\xe9.txt", "status": "added"} in planned["changes"]
    result = convgit(repo.path, "restore", task, "--yes", "--json").json()
    with open(raw, "rb") as back:
        assert back.read() == b"latin-1 name\n"
    assert {"path": "caf\\xe9.txt", "status": "added"} in result["changes"]
    assert "caf\\xe9.txt" in result["note"]  # the note the next turn carries names it
    words = convgit(repo.path, "restore", "--undo", "--yes").stdout
    assert "D caf\\xe9.txt" in words and not os.path.exists(raw)
    convgit(repo.path, "restore", "--undo", "--yes")
    assert os.path.exists(raw)
    assert convgit(repo.path, "diff", task, "--json").json()["changes"] == []
    assert "caf\\xe9.txt" in convgit(repo.path, "status").stdout  # the reply removed it
    os.unlink(raw)
    assert {"path": "caf\\xe9.txt", "status": "deleted"} in convgit(
        repo.path, "diff", task, "--json"
    ).json()["changes"]
    assert "D caf\\xe9.txt" in convgit(repo.path, "diff", task).stdout


def test_a_failing_clean_filter_records_the_reply_warns_and_status_names_it(
    repo: GitRepo,
) -> None:
    """The message is recorded and the command exits 0 with a one-line warning (so a retry
    does not record it twice); status names the entry whose files were not recorded."""
    convgit(repo.path, "init")
    convgit(repo.path, "user", "task")
    repo.write(".gitattributes", "*.txt filter=broken\n")
    with (repo.path / ".git" / "config").open("a") as config:
        config.write('[filter "broken"]\n\tclean = false\n\trequired = true\n')
    repo.write("notes.txt", "filtered\n")
    ran = convgit(repo.path, "assistant", "--id", "reply-1", "a reply", "--json")
    value = ran.json()
    assert value["id"] == "reply-1" and set(value["snapshot"]) == {"error"}
    assert "clean filter 'broken' failed" in value["snapshot"]["error"]
    warning = ran.stderr.strip().splitlines()
    assert len(warning) == 1 and warning[0].startswith("convgit: warning: the files were not")
    again = convgit(repo.path, "assistant", "--id", "reply-1", "a reply", "--json").json()
    assert again["id"] == "reply-1"
    log = convgit(repo.path, "log", "--json").json()["entries"]
    assert [e["id"] for e in log].count("reply-1") == 1
    status = convgit(repo.path, "status", "--json").json()
    assert status["not_recorded"]["entry"] == "reply-1"
    assert "the files of entry reply-1 were not recorded" in convgit(repo.path, "status").stdout
    (repo.path / ".gitattributes").unlink()
    convgit(repo.path, "snapshot", "reply-1")
    assert convgit(repo.path, "status", "--json").json()["not_recorded"] is None


def test_a_user_message_records_hand_edits_since_the_last_snapshot(repo: GitRepo) -> None:
    """The user edits a file between turns: the next user message gets a snapshot of exactly
    that, so going back to before the agent's reply gives the hand edit back; a user message
    with no change since the last snapshot records none."""
    convgit(repo.path, "init")
    convgit(repo.path, "user", "task")
    repo.write("src/app.py", "print('agent')\n")
    reply = convgit(repo.path, "assistant", "done", "--json").json()
    same = convgit(repo.path, "user", "thanks", "--json").json()
    assert same["snapshot"] is None
    repo.write("src/app.py", "print('agent, then my hand edit')\n")
    repo.write("mine.txt", "mine\n")
    asked = convgit(repo.path, "user", "now this", "--json").json()
    assert asked["snapshot"]["tree"] == oracle_tree(repo.path)
    assert asked["snapshot"]["commit"] != reply["snapshot"]["commit"]
    hand = files_only(repo.path)
    repo.write("src/app.py", "print('the agent rewrote it')\n")
    (repo.path / "mine.txt").unlink()
    convgit(repo.path, "assistant", "rewrote")
    convgit(repo.path, "restore", asked["id"], "--yes")
    assert files_only(repo.path) == hand


def test_a_file_the_rules_now_ignore_is_not_called_skipped_whatever_its_size(
    repo: GitRepo,
) -> None:
    """A snapshotted file that the ignore rules come to cover is outside the view, like any
    ignored file: not listed as skipped for the size cap when it also grew past it."""
    convgit(repo.path, "init")
    convgit(repo.path, "user", "task")
    (repo.path / "logs").mkdir()
    (repo.path / "logs" / "run.txt").write_text("small\n")
    first = convgit(repo.path, "assistant", "logs kept", "--json").json()
    assert first["snapshot"]["skipped"] == []
    with open(repo.path / ".gitignore", "a") as rules:
        rules.write("logs/\n")
    (repo.path / "logs" / "run.txt").write_bytes(b"x" * (11 * 1024 * 1024))
    reply = convgit(repo.path, "assistant", "logs ignored and big", "--json").json()
    assert reply["snapshot"]["tree"] == oracle_tree(repo.path)
    assert reply["snapshot"]["skipped"] == []


def test_snapshotting_an_entry_again_lists_a_new_file_over_the_cap_though_its_tree_is_the_same(
    repo: GitRepo,
) -> None:
    """`convgit snapshot` on an entry whose files git sees are unchanged still records what it
    leaves out now: a file that appeared over the size cap is named (found by the two-track
    model), and the record keeps the same commit."""
    convgit(repo.path, "init")
    convgit(repo.path, "user", "task")
    first = convgit(repo.path, "snapshot", "--json").json()
    assert first["skipped"] == [] and first["tree"] == oracle_tree(repo.path)
    (repo.path / "big.bin").write_bytes(b"x" * (11 * 1024 * 1024))
    again = convgit(repo.path, "snapshot", "--json").json()
    assert (again["commit"], again["tree"]) == (first["commit"], first["tree"])
    assert [s["path"] for s in again["skipped"]] == ["big.bin"]
    kept = convgit(repo.path, "snapshot", "--json").json()  # nothing new: the record is read back
    assert kept == again
