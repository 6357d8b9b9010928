"""Restore deletes only what its target accounts for. A file absent from the target snapshot goes
only when the target's own ignore rules would not ignore it and its snapshot did not leave it
out; convgit's store is never snapshotted or restored. Each is listed as left alone, and diff and
status never call such a file added or deleted. Every example runs the real CLI on a real
repository, under the guard that the user's index, HEAD, branches, tags and stash never change."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.workspace.cli import convgit
from tests.workspace.gitrepo import GitRepo, digest, git, restore_files

MIB = 1024 * 1024


def test_restore_never_deletes_what_the_targets_gitignore_ignores(repo: GitRepo) -> None:
    """The agent empties .gitignore; the next snapshot takes .env and node_modules/; restoring
    the earlier entry brings .gitignore back and leaves .env and node_modules alone."""
    repo.write(".gitignore", ".env\nnode_modules/\n")
    repo.write(".env", "SECRET=1\n")
    repo.write("node_modules/pkg/index.js", "module.exports = 1\n")
    convgit(repo.path, "init")
    task = convgit(repo.path, "user", "task", "--json").json()["id"]
    repo.write(".gitignore", "")
    reply = convgit(repo.path, "assistant", "emptied .gitignore", "--json").json()
    assert ".env" in repo.tree_paths(reply["snapshot"]["tree"])  # git stages them now
    kept = {p: v for p, v in digest(repo.path).items() if p.startswith((".env", "node_modules"))}

    planned = convgit(repo.path, "restore", task, "--dry-run").stdout
    assert "left alone: .env (ignored by the snapshot's .gitignore" in planned
    result = convgit(repo.path, "restore", task, "--yes", "--json").json()

    assert (repo.path / ".gitignore").read_text() == ".env\nnode_modules/\n"
    assert {p: v for p, v in digest(repo.path).items() if p in kept} == kept
    alone = {row["path"]: row["reason"] for row in result["left_alone"]}
    assert set(alone) == {".env", "node_modules/pkg/index.js"}
    assert all("ignored by the snapshot's .gitignore" in why for why in alone.values())
    assert [c["path"] for c in result["changes"]] == [".gitignore"]


def test_restore_never_deletes_a_file_its_snapshot_left_out_over_the_size_cap(
    repo: GitRepo, rewatch
) -> None:
    """A tracked 15 MB file is over the cap when the user message is snapshotted; the agent
    shrinks it: diff and status say "left alone (size cap)", and restore keeps it."""
    repo.write("data/big.bin", os.urandom(15 * MIB))
    repo.commit_all("a big file")
    rewatch(repo)
    convgit(repo.path, "init")
    task = convgit(repo.path, "user", "load the data", "--json").json()
    assert task["snapshot"]["skipped"][0]["path"] == "data/big.bin"
    repo.write("data/big.bin", b"now small\n")
    repo.write("src/app.py", "print('changed')\n")
    convgit(repo.path, "assistant", "shrank it", "--json")

    changes = convgit(repo.path, "diff", task["id"], "--json").json()["changes"]
    assert {"path": "data/big.bin", "status": "left alone", "reason": "size cap"} in changes
    assert "left alone (size cap): data/big.bin" in convgit(repo.path, "diff", task["id"]).stdout
    convgit(repo.path, "switch", task["id"])
    status = convgit(repo.path, "status", "--json").json()
    assert status["files"]["changed"] == ["src/app.py"]
    assert status["left_alone"] == [{"path": "data/big.bin", "reason": "size cap"}]
    assert "left alone (size cap): data/big.bin" in convgit(repo.path, "status").stdout

    result = convgit(repo.path, "restore", task["id"], "--yes", "--json").json()
    assert (repo.path / "data/big.bin").read_bytes() == b"now small\n"
    assert [c["path"] for c in result["changes"]] == ["src/app.py"]
    assert result["left_alone"][0]["path"] == "data/big.bin"
    assert "not in the snapshot: larger than the size cap" in result["left_alone"][0]["reason"]


def _store_in(store: Path) -> list[Path]:
    return sorted(p for p in store.rglob("*") if p.is_file() and p.suffix == ".jsonl")


def test_a_store_inside_the_working_tree_is_never_snapshotted_nor_rewound(repo: GitRepo) -> None:
    """CONVGIT_STORE=./.convstore: the snapshots hold no file of the store, and a restore
    leaves the conversation as it is."""
    env = {"CONVGIT_STORE": "./.convstore"}
    convgit(repo.path, "init", env=env)
    task = convgit(repo.path, "user", "task", "--json", env=env).json()
    repo.write("src/app.py", "print('plan A')\n")
    reply = convgit(repo.path, "assistant", "plan A", "--json", env=env).json()
    for snap in (task["snapshot"], reply["snapshot"]):
        assert not [p for p in repo.tree_paths(snap["tree"]) if p.startswith(".convstore")]
    assert any(s["path"] == ".convstore" for s in reply["snapshot"]["skipped"])
    before = {p: p.read_bytes() for p in _store_in(repo.path / ".convstore")}

    convgit(repo.path, "restore", task["id"], "--yes", env=env)
    assert (repo.path / "src/app.py").read_text() == "print('hello')\n"
    for path, data in before.items():  # appended to (the restore records, the note), not rewound
        assert path.read_bytes().startswith(data)
    log = convgit(repo.path, "log", "--json", env=env).json()["entries"]
    assert [e["id"] for e in log][:2] == [task["id"], reply["id"]]
    assert log[-1]["id"] == reply["id"]  # the note waits for the next turn


def test_a_store_the_user_committed_stays_out_of_snapshots_and_restores(
    repo: GitRepo, rewatch
) -> None:
    """The user ran `git add -A` with the store inside the tree: convgit still never
    snapshots it, and a restore to a snapshot never rewinds it."""
    env = {"CONVGIT_STORE": "./.convstore"}
    convgit(repo.path, "init", env=env)
    convgit(repo.path, "user", "task", env=env)
    repo.commit_all("the user commits everything, the store too")
    rewatch(repo)
    convgit(repo.path, "init", env=env)  # a new session: its private index copies the user's
    task = convgit(repo.path, "user", "again", "--json", env=env).json()
    assert not [p for p in repo.tree_paths(task["snapshot"]["tree"]) if ".convstore" in p]
    repo.write("notes.txt", "notes\n")
    convgit(repo.path, "assistant", "wrote notes", env=env)
    before = {p: p.read_bytes() for p in _store_in(repo.path / ".convstore")}
    convgit(repo.path, "restore", task["id"], "--yes", env=env)
    assert not (repo.path / "notes.txt").exists()
    for path, data in before.items():
        assert path.read_bytes().startswith(data)


def test_a_convgit_folder_from_before_git_init_keeps_its_session_and_stays_out(
    tmp_path: Path, user_state_guard
) -> None:
    """convgit started in a plain folder (./.convgit); then the agent ran `git init`: the
    session goes on in ./.convgit, and no snapshot or restore touches that folder."""
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "app.py").write_text("print('v1')\n")
    sid = convgit(folder, "init", "--json").json()["id"]
    first = convgit(folder, "user", "task", "--json").json()["id"]
    git(folder, "init", "-q", "-b", "main")
    git(folder, "add", "app.py")
    git(folder, "commit", "-q", "--no-verify", "-m", "first")
    user_state_guard.watch(folder)
    assert convgit(folder, "log", "--json").json()["entries"][0]["id"] == first
    convgit(folder, "snapshots", "on")
    task = convgit(folder, "user", "now in git", "--json").json()
    assert task["snapshot"] and not any(".convgit" in p for p in repo_paths(folder, task))
    (folder / "app.py").write_text("print('v2')\n")
    convgit(folder, "assistant", "v2")
    session_file = folder / ".convgit" / "sessions" / f"{sid}.jsonl"
    before = session_file.read_bytes()
    convgit(folder, "restore", task["id"], "--yes")
    assert (folder / "app.py").read_text() == "print('v1')\n"
    assert session_file.read_bytes().startswith(before)


def repo_paths(folder: Path, made: dict[str, object]) -> list[str]:
    snapshot = made["snapshot"]
    assert isinstance(snapshot, dict)
    return git(folder, "ls-tree", "-r", "--name-only", snapshot["tree"]).split()


def test_a_submodule_with_edits_is_left_alone_and_listed(repo: GitRepo, make_repo, rewatch) -> None:
    """The agent commits and edits inside a submodule: the snapshot keeps its gitlink, and a
    restore moves nothing in it and says so."""
    library = make_repo("library")
    repo.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(library.path), "lib")
    repo.git("commit", "-q", "--no-verify", "-m", "add submodule")
    rewatch(repo)
    convgit(repo.path, "init")
    task = convgit(repo.path, "user", "task", "--json").json()["id"]
    inner = repo.path / "lib"
    (inner / "README.md").write_text("committed inside the submodule\n")
    git(inner, "commit", "-q", "--no-verify", "-am", "inside")
    (inner / "README.md").write_text("and edited, not committed\n")
    convgit(repo.path, "assistant", "worked in lib")
    inside = digest(inner)
    result = convgit(repo.path, "restore", task, "--yes", "--json").json()
    assert digest(inner) == inside
    assert [row["path"] for row in result["left_alone"]] == ["lib"]
    assert "a submodule; convgit does not move it" in result["left_alone"][0]["reason"]


def test_a_submodule_the_target_lacks_is_not_deleted(repo: GitRepo, make_repo, rewatch) -> None:
    """A target without the submodule's gitlink: its folder and files stay, listed."""
    library = make_repo("library")
    repo.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(library.path), "lib")
    repo.git("commit", "-q", "--no-verify", "-m", "add submodule")
    rewatch(repo)
    ws = repo.workspace
    now = ws.snapshot(repo.index, message="m\n", parent=None)
    listing = repo.git("ls-tree", now.tree_id)
    without = "".join(line + "\n" for line in listing.splitlines() if not line.endswith("\tlib"))
    tree = subprocess.run(
        ["git", "mktree"], cwd=repo.path, input=without, capture_output=True, text=True
    ).stdout.strip()
    target = repo.git("commit-tree", tree, "-m", "no submodule").strip()
    inside = digest(repo.path / "lib")
    _, done = restore_files(ws, target, index=repo.index)
    assert digest(repo.path / "lib") == inside
    reasons = [(s.path, s.reason) for s in done.left_alone]
    assert ("lib", "a submodule the snapshot lacks; left alone") in reasons
