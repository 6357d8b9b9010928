"""A restore judges "left out by a rule" by the rules in force when its target was taken. A file
the snapshot left out because `.git/info/exclude`, the excludes file (core.excludesFile) or a
sparse-checkout cone said so is left alone and listed, even once that rule is gone. Every example
runs the real CLI on a real repository, under the guard that the user's index, HEAD, branches,
tags and stash never change (a test's own git commands as the user are re-recorded)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.workspace.cli import convgit
from tests.workspace.gitrepo import GitRepo


def _story(repo: GitRepo, drop_rule) -> tuple[dict[str, object], dict[str, object]]:
    """A snapshot leaves `secret.env` out by a rule; the rule goes; the agent edits app.py
    (and the next snapshot takes secret.env): the user restores the first entry."""
    convgit(repo.path, "init")
    task = convgit(repo.path, "user", "task", "--json").json()
    assert "secret.env" not in repo.tree_paths(task["snapshot"]["tree"])
    drop_rule()
    repo.write("src/app.py", "print('changed')\n")
    reply = convgit(repo.path, "assistant", "changed app.py", "--json").json()
    assert "secret.env" in repo.tree_paths(reply["snapshot"]["tree"])  # not ignored now
    planned = convgit(repo.path, "restore", task["id"], "--dry-run", "--json").json()
    restored = convgit(repo.path, "restore", task["id"], "--yes", "--json").json()
    assert planned["changes"] == restored["changes"]
    assert (repo.path / "src/app.py").read_text() == "print('hello')\n"
    return restored, task


def test_a_file_info_exclude_ignored_then_stays_once_the_line_is_gone(repo: GitRepo) -> None:
    exclude = repo.path / ".git" / "info" / "exclude"
    exclude.write_text("# mine\nsecret.env\n")
    repo.write("secret.env", "TOKEN=1\n")
    restored, _ = _story(repo, lambda: exclude.write_text("# mine\n"))
    assert (repo.path / "secret.env").read_text() == "TOKEN=1\n"
    alone = {row["path"]: row["reason"] for row in restored["left_alone"]}
    assert alone == {
        "secret.env": "ignored by info/exclude when the snapshot was taken; left alone"
    }
    assert [c["path"] for c in restored["changes"]] == ["src/app.py"]


def test_a_file_the_excludes_file_ignored_then_stays_once_the_line_is_gone(
    repo: GitRepo, tmp_path: Path
) -> None:
    ignore = tmp_path / "global-ignore"
    ignore.write_text("*.env\n")
    repo.git("config", "core.excludesFile", str(ignore))
    repo.write("secret.env", "TOKEN=1\n")
    restored, _ = _story(repo, lambda: ignore.write_text(""))
    assert (repo.path / "secret.env").read_text() == "TOKEN=1\n"
    alone = {row["path"]: row["reason"] for row in restored["left_alone"]}
    assert alone == {
        "secret.env": "ignored by the excludes file (core.excludesFile) when the snapshot was"
        " taken; left alone"
    }


def test_files_outside_the_sparse_cone_then_stay_once_the_cone_widens(
    repo: GitRepo, rewatch
) -> None:
    """The snapshot is taken in a sparse checkout of src/ (docs/ is not on disk); the user
    widens the cone and docs/ appears: going back to that snapshot keeps docs/."""
    repo.write("docs/guide.md", "# guide\n")
    repo.write("docs/api/index.md", "# api\n")
    repo.commit_all("docs")
    repo.git("sparse-checkout", "set", "src")
    assert not (repo.path / "docs").exists()
    rewatch(repo)
    convgit(repo.path, "init")
    task = convgit(repo.path, "user", "task", "--json").json()
    assert not [p for p in repo.tree_paths(task["snapshot"]["tree"]) if p.startswith("docs/")]
    repo.git("sparse-checkout", "set", "src", "docs")
    assert (repo.path / "docs/guide.md").read_text() == "# guide\n"
    rewatch(repo)
    repo.write("src/app.py", "print('changed')\n")
    convgit(repo.path, "assistant", "changed app.py")

    restored = convgit(repo.path, "restore", task["id"], "--yes", "--json").json()
    assert (repo.path / "src/app.py").read_text() == "print('hello')\n"
    assert (repo.path / "docs/guide.md").read_text() == "# guide\n"
    assert (repo.path / "docs/api/index.md").read_text() == "# api\n"
    alone = {row["path"]: row["reason"] for row in restored["left_alone"]}
    assert alone == {
        path: "not in the snapshot: outside the sparse checkout then; left alone"
        for path in ("docs/api/index.md", "docs/guide.md")
    }
    assert [c["path"] for c in restored["changes"]] == ["src/app.py"]


def _snapshot_records(repo: GitRepo) -> list[dict[str, object]]:
    sessions = repo.path / ".git" / "convgit" / "sessions"
    (sidecar,) = sessions.glob("*.files.jsonl")
    lines = [json.loads(line) for line in sidecar.read_text().splitlines()]
    return [r for r in lines if r.get("type") == "snapshot"]


def test_unchanged_rules_are_recorded_once_and_named_again(repo: GitRepo) -> None:
    """Most turns the rules did not move: every snapshot names the same recorded rules, one
    copy in the store, and no ref is added; a changed exclude file makes one more copy."""
    (repo.path / ".git" / "info" / "exclude").write_text("*.log\n")
    convgit(repo.path, "init")
    for turn in range(3):
        repo.write("src/app.py", f"print({turn})\n")
        convgit(repo.path, "user", f"turn {turn}")
    rules = {r["rules"] for r in _snapshot_records(repo)}
    assert len(rules) == 1
    copies = repo.path / ".git" / "convgit" / "rules"
    assert [p.name for p in copies.iterdir()] == list(rules)
    assert (copies / rules.pop() / "exclude").read_text() == "*.log\n"
    refs = repo.git("for-each-ref", "--format=%(refname)", "refs/convgit").split()
    assert len(refs) == len(_snapshot_records(repo)) == 3  # one per snapshot, as before
    (repo.path / ".git" / "info" / "exclude").write_text("*.log\n*.tmp\n")
    repo.write("src/app.py", "print('again')\n")
    convgit(repo.path, "user", "one more")
    assert len({r["rules"] for r in _snapshot_records(repo)}) == 2
    assert len(list(copies.iterdir())) == 2


def test_a_snapshot_recorded_without_rules_is_judged_as_before(repo: GitRepo) -> None:
    """A snapshot recorded before convgit kept the rules (no "rules" in its record): restore
    judges it by today's rules and the snapshot's .gitignore, as it always did."""
    repo.write(".gitignore", ".env\n")
    repo.write(".env", "SECRET=1\n")
    exclude = repo.path / ".git" / "info" / "exclude"
    exclude.write_text("secret.env\n")
    repo.write("secret.env", "TOKEN=1\n")
    convgit(repo.path, "init")
    task = convgit(repo.path, "user", "task", "--json").json()
    sessions = repo.path / ".git" / "convgit" / "sessions"
    (sidecar,) = sessions.glob("*.files.jsonl")
    older = [json.loads(line) for line in sidecar.read_text().splitlines()]
    for record in older:
        record.pop("rules", None)
    sidecar.write_text("".join(json.dumps(r) + "\n" for r in older))
    repo.write(".gitignore", "")
    convgit(repo.path, "assistant", "emptied .gitignore")

    restored = convgit(repo.path, "restore", task["id"], "--yes", "--json").json()
    alone = {row["path"]: row["reason"] for row in restored["left_alone"]}
    assert alone == {".env": "ignored by the snapshot's .gitignore; left alone"}
    assert (repo.path / ".env").read_text() == "SECRET=1\n"
    assert (repo.path / "secret.env").read_text() == "TOKEN=1\n"  # ignored now: untouched
