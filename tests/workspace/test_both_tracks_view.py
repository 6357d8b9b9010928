"""`convgit tree --files`: the README's picture from the session itself. The conversation tree on
the left; on each entry's row the workspace track as git holds it (the snapshot's commit, its
parent commit, the files changed) and the restores made there, each with the saved state that
holds the files from before; the git command that draws the same track is said, and shows
those commits."""

from __future__ import annotations

from pathlib import Path

from tests.workspace.cli import convgit, one_sentence
from tests.workspace.gitrepo import GitRepo


def said(repo: GitRepo, *args: str) -> str:
    return str(convgit(repo.path, *args, "--json").json()["id"])


def commit_of(repo: GitRepo, entry: str) -> str:
    return str(convgit(repo.path, "show", entry, "--json").json()["snapshot"]["commit"])


def test_both_tracks_side_by_side_aligned_by_entry(repo: GitRepo) -> None:
    convgit(repo.path, "init", "--name", "fix add()")
    task = said(repo, "user", "test_add fails")
    convgit(repo.path, "label", task, "task")
    repo.write("calc.py", "plan A\n")
    plan_a = said(repo, "assistant", "Plan A")
    convgit(repo.path, "fork", task, "--summary", "Plan A fails")
    convgit(repo.path, "restore", task, "--yes")
    asked = said(repo, "user", "Try plan B")  # carries the restore's note
    repo.write("calc.py", "plan B\n")
    plan_b = said(repo, "assistant", "Plan B")
    convgit(repo.path, "restore", plan_a, "--yes")
    convgit(repo.path, "restore", "--undo", "--yes")
    saved = [s["id"] for s in convgit(repo.path, "restores", "--json").json()["saved_states"]]

    lines = convgit(repo.path, "tree", "--files", env={"COLUMNS": "160"}).stdout.splitlines()
    assert lines[1].startswith("conversation track") and "workspace track" in lines[1]

    def row(entry: str) -> str:
        return next(line for line in lines if line.lstrip("├└│─ ").startswith(entry[:8]))

    for entry in (task, plan_a, plan_b):
        commit = commit_of(repo, entry)
        parents = repo.git("rev-list", "--parents", "-n", "1", commit).split()[1:]
        right = row(entry).split("─  ")[-1]
        assert right.startswith(f"◆ {commit[:7]}")
        if parents:
            changed = repo.git("diff", "--name-status", parents[0], commit).split()
            assert right.endswith(f"from {parents[0][:7]}: {' '.join(changed)}")
        else:
            assert "the first" in right
    note = convgit(repo.path, "show", asked, "--json").json()["entry"]["parentId"]
    told = row(note)
    assert f"⟲ restore task → {commit_of(repo, task)[:7]}, saving {saved[-1]} first" in told
    # the restore to plan A and its undo happened at plan B, after its snapshot, on lines below
    then, undone = lines[lines.index(row(plan_b)) + 1 :][:2]
    assert f"⟲ restore {plan_a[:8]} → " in then and f"saving {saved[1]} first" in then
    assert "⟲ restore --undo → " in undone and f"saving {saved[0]} first" in undone
    # the git command said draws the same commits
    command = lines[-1].split(": ", 1)[1]
    assert command.startswith("git log --graph --oneline --glob=refs/convgit/")
    shown = repo.git(*command.split()[1:])
    for entry in (task, plan_a, plan_b):
        assert commit_of(repo, entry)[:7] in shown


def test_files_takes_no_json(repo: GitRepo) -> None:
    convgit(repo.path, "init")
    convgit(repo.path, "user", "hi")
    refused = convgit(repo.path, "tree", "--files", "--json", code=2)
    assert "--files" in one_sentence(refused.stderr)


def test_what_the_readme_says_git_shows_of_convgits_commits(repo: GitRepo, tmp_path: Path) -> None:
    """The README: `git log` leaves convgit's commits out, `git log --all` shows them, and
    `git clone --mirror` carries them all."""
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    text = " ".join(readme.split())
    assert "`git log --all` shows convgit's commits" in text
    assert "`git push --mirror` (or `git clone --mirror`) carries them all" in text
    convgit(repo.path, "init")
    convgit(repo.path, "user", "task")
    repo.write("a.txt", "a\n")
    commit = commit_of(repo, said(repo, "assistant", "wrote a.txt"))
    assert commit[:7] not in repo.git("log", "--oneline")
    assert commit[:7] in repo.git("log", "--all", "--oneline")
    mirror = tmp_path / "mirror.git"
    repo.git("clone", "-q", "--mirror", str(repo.path), str(mirror))
    assert commit in repo.git("--git-dir", str(mirror), "for-each-ref", "refs/convgit/")
