"""Both tracks together, through the Session API and the CLI, on real repositories. Every test
here runs under the guard that the user's index, HEAD, branches, tags and stash never change."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from convgit import NoWorkspaceError, Session
from tests.clirun import invoke, run
from tests.workspace.gitrepo import GitRepo, digest, git, oracle_tree


def cli(repo: GitRepo, *args: str, code: int = 0) -> Any:
    result = invoke("-C", str(repo.path), *args)
    assert result.exit_code == code, (args, result.output, result.exception)
    assert "Traceback" not in result.output
    return result


def cli_json(repo: GitRepo, *args: str) -> Any:
    return orjson.loads(cli(repo, *args, "--json").stdout)


@pytest.fixture
def story(repo: GitRepo) -> dict[str, Any]:
    """A task, plan A (edits app.py, adds notes.txt), then back to the task and plan B."""
    s = Session.create(repo.path)
    task = s.append.user("make it greet the world").id  # snapshotted: the first message
    repo.write("src/app.py", "print('hello, world')  # plan A\n")
    repo.write("notes.txt", "plan A notes\n")
    plan_a = s.append.assistant("plan A").id
    s.moves.fork(task)
    repo.write("src/app.py", "print('hi world')  # plan B\n")
    (repo.path / "notes.txt").unlink()
    plan_b = s.append.assistant("plan B").id
    return {"session": s, "task": task, "a": plan_a, "b": plan_b, "repo": repo}


def test_every_assistant_reply_is_snapshotted_as_git_would_stage_it(story: dict[str, Any]) -> None:
    s, repo = story["session"], story["repo"]
    snap_b = s.track.sidecar.snapshots[story["b"]]
    assert snap_b.tree_id == oracle_tree(repo.path)
    log = git(repo.path, "log", "--format=%H %an <%ae>", f"refs/convgit/{s.id}/{story['b']}")
    commits = [line.split()[0] for line in log.splitlines()]
    task_commit = s.track.sidecar.snapshots[story["task"]].commit
    # the files' history along the branch: plan B's snapshot sits on the task's, not plan A's
    assert commits == [snap_b.commit, task_commit]
    assert "convgit <convgit@localhost>" in log
    message = git(repo.path, "log", "-1", "--format=%B", snap_b.commit)
    assert f"Convgit-Session: {s.id}" in message and f"Convgit-Entry: {story['b']}" in message


def test_an_unchanged_tree_reuses_the_parent_snapshot(story: dict[str, Any]) -> None:
    s = story["session"]
    s.append.user("anything else?")
    again = s.append.assistant("no changes this turn").id
    assert s.track.sidecar.snapshots[again].commit == s.track.sidecar.snapshots[story["b"]].commit


@pytest.mark.parametrize("move", ["switch", "fork", "edit", "retry", "label"])
def test_moving_in_the_conversation_never_touches_files(story: dict[str, Any], move: str) -> None:
    s, repo = story["session"], story["repo"]
    (repo.path / "ignored.log").write_text("ignored\n")
    (repo.path / ".gitignore").write_text("*.log\n")
    before = digest(repo.path)
    if move == "switch":
        s.moves.switch(story["a"])
    elif move == "fork":
        s.moves.fork(story["a"], "more", summary="B is fine")
    elif move == "edit":
        s.moves.edit(story["task"], "make it greet everyone")
    elif move == "retry":
        s.moves.retry(story["b"])
    else:
        s.moves.label(story["a"], "planA")
    assert digest(repo.path) == before


def test_cli_moves_say_the_files_did_not_change(story: dict[str, Any]) -> None:
    repo = story["repo"]
    before = digest(repo.path)
    out = cli(repo, "switch", story["a"]).stdout
    assert "files: not changed; 2 files differ from the snapshot of" in out
    assert f"`convgit restore {story['a']}` brings them back" in out
    assert digest(repo.path) == before


def test_status_shows_both_tracks_and_divergence(story: dict[str, Any]) -> None:
    s, repo = story["session"], story["repo"]
    s.moves.switch(story["a"])
    st = cli_json(repo, "status")
    assert st["leaf"] == story["a"] and st["leaf_snapshot"] == story["a"]
    assert st["files"]["matches"] == story["b"]
    assert sorted(st["files"]["changed"]) == ["notes.txt", "src/app.py"]
    assert st["diverged"] is True
    words = cli(repo, "status").stdout
    assert f"files:   at the snapshot of {story['b']}, on another branch" in words
    assert f"`convgit restore {story['a']}` would change 2 files" in words
    s.moves.switch(story["b"])
    st = cli_json(repo, "status")
    assert st["files"] == {"matches": story["b"], "changed": []} and st["diverged"] is False


def test_restore_brings_files_back_and_undo_returns_exact_bytes(story: dict[str, Any]) -> None:
    s, repo = story["session"], story["repo"]
    repo.write("scratch/untracked.txt", "not yet committed anywhere\n")
    os.chmod(repo.path / "src/app.py", 0o755)
    before = digest(repo.path)
    leaf = s.conversation.leaf
    result = s.restoring.restore(
        story["a"], clean=True
    )  # the untracked file no snapshot held goes too
    assert oracle_tree(repo.path) == s.track.sidecar.snapshots[story["a"]].tree_id
    assert (repo.path / "notes.txt").read_text() == "plan A notes\n"
    assert not (repo.path / "scratch/untracked.txt").exists()
    # the leaf stays on its branch; the model is told when the conversation moves on
    assert (
        s.conversation.leaf == leaf and result.before is not None and story["a"] in str(result.note)
    )
    s.restoring.restore(undo=True)
    assert digest(repo.path) == before


def test_restore_dry_run_and_paths(story: dict[str, Any]) -> None:
    repo = story["repo"]
    before = digest(repo.path)
    planned = cli_json(repo, "restore", story["a"], "--dry-run")
    assert {(c["path"], c["status"]) for c in planned["changes"]} == {
        ("notes.txt", "added"),
        ("src/app.py", "modified"),
    }
    assert digest(repo.path) == before
    cli(repo, "restore", story["a"], "--path", "notes.txt", "--yes")
    assert (repo.path / "notes.txt").exists()
    assert "plan B" in (repo.path / "src/app.py").read_text()


def test_restore_of_an_entry_without_snapshot_says_so(story: dict[str, Any]) -> None:
    repo = story["repo"]
    s = story["session"]
    q = s.append.user("no snapshot here").id
    err = cli(repo, "restore", q, code=1).stderr
    assert f"Entry {q} has no snapshot." in err


def test_show_and_diff_json(story: dict[str, Any]) -> None:
    repo, s = story["repo"], story["session"]
    shown = cli_json(repo, "show", story["a"])
    assert shown["snapshot"]["commit"] == s.track.sidecar.snapshots[story["a"]].commit
    assert shown["snapshot"]["skipped"] == []
    changes = cli_json(repo, "diff", story["a"], story["b"])["changes"]
    assert changes == [
        {"path": "notes.txt", "status": "deleted"},
        {"path": "src/app.py", "status": "modified"},
    ]
    repo.write("new.txt", "x\n")
    assert {"path": "new.txt", "status": "added"} in cli_json(repo, "diff", story["b"])["changes"]


def test_worktree_checks_a_snapshot_out_side_by_side(story: dict[str, Any], tmp_path: Path) -> None:
    repo = story["repo"]
    before = digest(repo.path)
    side = tmp_path / "plan-a"
    cli(repo, "worktree", story["a"], str(side))
    assert (side / "notes.txt").read_text() == "plan A notes\n"
    assert digest(repo.path) == before
    listed = cli_json(repo, "worktree", "--list")
    assert str(side) in {row["path"] for row in listed["worktrees"]}
    cli(repo, "worktree", "--remove", str(side))
    assert not side.exists()


def test_snapshots_survive_gc(story: dict[str, Any], rewatch: Callable[[GitRepo], None]) -> None:
    repo, s = story["repo"], story["session"]
    git(repo.path, "gc", "-q", "--prune=now")
    rewatch(repo)  # gc packs the user's refs: that is the user's own act
    for snap in s.track.sidecar.snapshots.values():
        assert git(repo.path, "cat-file", "-t", snap.commit).strip() == "commit"


def test_snapshots_can_be_turned_off_and_on(repo: GitRepo) -> None:
    cli(repo, "init", "--no-snapshots")
    cli(repo, "user", "q")
    assert cli_json(repo, "assistant", "a")["snapshot"] is None
    cli(repo, "snapshots", "on")
    assert cli_json(repo, "assistant", "b")["snapshot"]["commit"]


def test_outside_git_the_workspace_track_says_so_plainly(tmp_path: Path) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    s = Session.create(folder)
    s.append.user("q")
    with pytest.raises(NoWorkspaceError):
        s.snapshots.snapshot()
    result = invoke("-C", str(folder), "snapshot")
    assert result.exit_code == 1 and "needs a git repository" in result.stderr
    result = invoke("-C", str(folder), "status")
    assert result.exit_code == 0 and "no git repository" in result.stdout


def test_a_folder_named_git_that_git_does_not_read_is_no_repository(tmp_path: Path) -> None:
    (tmp_path / ".git" / "convgit").mkdir(parents=True)  # a stray folder, no HEAD in it
    folder = tmp_path / "plain"
    folder.mkdir()
    result = invoke("-C", str(folder), "init")
    assert result.exit_code == 0 and "no git repository: conversation only" in result.stdout
    assert (folder / ".convgit" / "sessions").is_dir()
    assert list((tmp_path / ".git" / "convgit").iterdir()) == []


def test_the_demo_tells_the_whole_story(tmp_path: Path) -> None:
    folder = tmp_path / "demo"
    env: dict[str, str | None] = {k: None for k in os.environ if k.startswith("CONVGIT_")}
    done = run("demo", "--dir", str(folder), cwd=tmp_path, env=env, code=None, timeout=300)
    assert done.code == 0, done.stdout + done.stderr
    out = done.stdout
    assert "files: not changed; 1 file differs from the snapshot of" in out
    assert ", on another branch" in out
    assert "restored 1 file to the snapshot of" in out
    assert out.rstrip().endswith(f"cd {folder} && convgit tree")
    assert "plan B" in (folder / "calc.py").read_text()  # undo returned plan B's file


def test_a_damaged_snapshot_record_is_reported_refused_and_repaired(story: dict[str, Any]) -> None:
    repo, s = story["repo"], story["session"]
    sidecar = s.track.file.path
    with sidecar.open("ab") as f:
        f.write(b'{"type":"restore","entry":"x"}\n')  # a restore record missing its fields
    before = sidecar.read_bytes()
    report = cli(repo, "fsck", code=3).stderr
    assert "of the sidecar lacks the field 'before'" in report
    err = cli(repo, "status", code=3).stderr
    assert "snapshot records" in err and "convgit repair" in err
    assert sidecar.read_bytes() == before
    cli(repo, "repair")
    cli(repo, "fsck")
    quarantined = s.track.file.quarantine_path.read_text()
    assert '\\"entry\\":\\"x\\"' in quarantined
    assert cli_json(repo, "status")["files"]["matches"] == story["b"]


def test_restore_says_which_files_it_left_alone(story: dict[str, Any]) -> None:
    repo = story["repo"]
    repo.write(".gitignore", "notes.txt\n")
    repo.write("notes.txt", "my private notes, now ignored\n")
    planned = cli(repo, "restore", story["a"], "--dry-run").stdout
    assert "left alone: notes.txt (ignored by git" in planned
    result = cli_json(repo, "restore", story["a"], "--yes")
    assert (repo.path / "notes.txt").read_text() == "my private notes, now ignored\n"
    alone = {row["path"]: row["reason"] for row in result["left_alone"]}
    assert set(alone) == {".gitignore", "notes.txt"}  # .gitignore: no snapshot held it
    assert "ignored by git" in alone["notes.txt"]
    assert "no snapshot of the session held it" in alone[".gitignore"]
    words = cli(repo, "restore", "--undo", "--yes").stdout
    assert "restored" in words


def test_damage_to_a_field_read_leniently_counts_as_not_written(story: dict[str, Any]) -> None:
    repo, s = story["repo"], story["session"]
    cli(repo, "restore", story["a"], "--yes")
    sidecar = s.track.file.path
    records = [orjson.loads(line) for line in sidecar.read_bytes().splitlines()]
    assert [r["type"] for r in records[-2:]] == ["restore", "restored"]
    records[-2]["files"] = "src/app.py"  # an optional field of the wrong type
    records[-1]["before"] = 7  # the `restored` record no longer names the restore it finished
    sidecar.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    cli(repo, "fsck")  # neither damage makes the sidecar unreadable
    assert "a restore was interrupted" in cli(repo, "status").stdout
    (state,) = cli_json(repo, "restores")["saved_states"]
    assert state["commit"] == records[-2]["before"] and state["files"] == []
    assert state["before"]["entry"] == story["a"]
