"""Words that say one thing, each through the real CLI: gc's reason for a commit another session
keeps is not "shared" (which is what `push` sends), git's log of a saved state says saved state,
counts agree with their nouns, a reason in parentheses holds no parentheses, a hint never asks
to snapshot today's files for an entry whose past files gc let go, and a push with nothing new
says so in words."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.workspace.cli import convgit, one_sentence
from tests.workspace.gitrepo import GitRepo


def said_id(repo: GitRepo, *args: str) -> str:
    return str(convgit(repo.path, *args, "--json").json()["id"])


def keep_no_days(repo: GitRepo) -> None:
    (repo.path / ".git" / "convgit" / "config.toml").write_text("[retention]\nkeep_days = 0\n")


def test_gc_says_held_elsewhere_for_a_commit_another_session_keeps(repo: GitRepo) -> None:
    convgit(repo.path, "init", "--name", "first")
    task = said_id(repo, "user", "task")
    repo.write("f.txt", "1\n")
    one = said_id(repo, "assistant", "one")
    convgit(repo.path, "user", "more")
    repo.write("f.txt", "11\n")
    convgit(repo.path, "assistant", "more done")
    convgit(repo.path, "fork", one, "--new-session", "--name", "second")  # holds one's commit
    convgit(repo.path, "use", "first")
    convgit(repo.path, "fork", task, "another way")
    repo.write("f.txt", "2\n")
    convgit(repo.path, "assistant", "two")
    keep_no_days(repo)
    kept = convgit(repo.path, "gc", "--dry-run", "--json").json()["kept"]
    assert kept.get("held elsewhere") == 1 and "shared" not in kept
    assert "1 held elsewhere" in convgit(repo.path, "gc", "--dry-run").stdout


def test_git_log_calls_a_saved_state_a_saved_state(repo: GitRepo) -> None:
    convgit(repo.path, "init")
    task = said_id(repo, "user", "task")
    repo.write("f.txt", "1\n")
    convgit(repo.path, "assistant", "one")
    convgit(repo.path, "restore", task, "--yes")
    state = convgit(repo.path, "restores", "--json").json()["saved_states"][0]
    subject = repo.git("log", "-1", "--format=%s", state["commit"]).strip()
    assert subject.startswith("convgit saved state") and "safety" not in subject


def test_counts_agree_with_their_nouns(repo: GitRepo) -> None:
    convgit(repo.path, "init")
    appended = convgit(repo.path, "append", input='{"type":"message","role":"user","content":"x"}')
    assert appended.stdout.startswith("appended 1 entry;")


def test_a_redaction_found_only_in_snapshots_does_not_say_zero_matches(repo: GitRepo) -> None:
    convgit(repo.path, "init")
    convgit(repo.path, "user", "deploy")
    repo.write("app.env", "KEY=hunter2-very-secret\n")
    convgit(repo.path, "assistant", "done")
    first = convgit(repo.path, "redact", "hunter2", "--snapshots", "--dry-run").stdout
    head = first.splitlines()[0]
    assert "0 match" not in head and "1 file in 1 snapshot" in head


def test_a_file_named_as_a_session_file_is_not_a_file_file(repo: GitRepo) -> None:
    os.mkfifo(repo.path / "pipe.jsonl")
    refused = convgit(repo.path, "import", "pipe.jsonl", code=None)
    assert refused.code != 0
    assert "file file" not in one_sentence(refused.stderr)
    said = one_sentence(refused.stderr)
    assert "session file " in said and f"{repo.path / 'pipe.jsonl'} is not a regular file" in said


def test_a_left_alone_reason_holds_no_parentheses_of_its_own(repo: GitRepo) -> None:
    convgit(repo.path, "init")
    task = said_id(repo, "user", "task")
    repo.write("mine/notes.txt", "mine\n")
    planned = convgit(repo.path, "restore", task, "--dry-run").stdout
    line = next(x for x in planned.splitlines() if x.startswith("left alone: mine/notes.txt"))
    inside = line.split(" (", 1)[1]
    assert "(" not in inside and inside.endswith(")") and "`--clean` removes it" in inside


def test_an_entry_whose_files_gc_let_go_with_those_above_gets_no_snapshot_hint(
    repo: GitRepo,
) -> None:
    convgit(repo.path, "init")
    convgit(repo.path, "user", "task")
    repo.write("f.txt", "1\n")
    one = said_id(repo, "assistant", "one")
    convgit(repo.path, "user", "more")
    repo.write("f.txt", "11\n")
    convgit(repo.path, "assistant", "more done")
    new_root = '{"type":"message","role":"user","content":"a new start","parentId":null}'
    convgit(repo.path, "append", input=new_root)
    keep_no_days(repo)
    convgit(repo.path, "gc")
    refused = convgit(repo.path, "restore", one, "--yes", code=1)
    assert "let go by gc" in one_sentence(refused.stderr)
    assert "hint: convgit snapshot\n" not in refused.stderr  # it would record today's files
    assert "`convgit snapshots` lists what gc kept" in refused.stderr


def test_a_push_with_nothing_new_says_up_to_date(repo: GitRepo, tmp_path: Path) -> None:
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    repo.git("remote", "add", "origin", str(remote))
    sid = convgit(repo.path, "init", "--json").json()["id"]
    convgit(repo.path, "user", "hi")
    convgit(repo.path, "share", sid)
    convgit(repo.path, "push")
    again = convgit(repo.path, "push").stdout
    assert "up to date" in again and "bytes" not in again
    convgit(repo.path, "label", "@", "greeting")
    records = convgit(repo.path, "push").stdout
    assert "no new entry or snapshot" in records and "0 entries" not in records
