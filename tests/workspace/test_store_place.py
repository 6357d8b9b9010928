"""Where a store may live. Inside the working tree it is kept out of every snapshot and every
restore, wherever it is and however it is named; the working tree's root itself, git's own
folder (or a folder in it, a worktree's git dir included) and an empty name are refused in one
sentence, before anything is created. Every example runs the real CLI on a real repository,
under the guard that the user's index, HEAD, branches, tags and stash never change."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.workspace.cli import convgit, one_sentence
from tests.workspace.gitrepo import GitRepo, digest, init_repo


def _files(folder: Path) -> dict[str, bytes]:
    """Every file below ``folder`` and its bytes."""
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()
    }


def _listing(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*"))


# How a user names the working tree's root as the store: (options, environment).
ROOT_SPELLINGS = {
    "CONVGIT_STORE=.": ((), {"CONVGIT_STORE": "."}),
    "CONVGIT_STORE=$PWD/": ((), {"CONVGIT_STORE": "{root}/"}),
    "--store $PWD": (("--store", "{root}"), {}),
    "--store ./": (("--store", "./"), {}),
    "--store sub/..": (("--store", "src/.."), {}),
}


@pytest.mark.parametrize("spelling", sorted(ROOT_SPELLINGS))
def test_a_store_at_the_working_tree_root_is_refused_before_anything_is_made(
    repo: GitRepo, spelling: str
) -> None:
    """A store at the root would be in every snapshot, and a restore would rewind the
    conversation with the files: refused in one sentence (exit 2), nothing written."""
    options, env = ROOT_SPELLINGS[spelling]
    args = [a.format(root=repo.path) for a in options]
    env = {k: v.format(root=repo.path) for k, v in env.items()}
    before = digest(repo.path)
    for command in (["init"], ["user", "task"], ["status"]):
        ran = convgit(repo.path, *args, *command, code=2, env=env)
        one_sentence(ran.stderr)
        assert "working tree's root" in ran.stderr
    assert digest(repo.path) == before
    assert subprocess.run(["git", "status"], cwd=repo.path, capture_output=True).returncode == 0


def test_an_empty_store_name_is_refused_not_taken_for_the_current_folder(repo: GitRepo) -> None:
    """`--store ''` is an empty argument (exit 2), not `.`; an empty CONVGIT_STORE is unset."""
    before = digest(repo.path)
    ran = convgit(repo.path, "--store", "", "init", code=2)
    one_sentence(ran.stderr)
    assert "--store was given an empty folder name" in ran.stderr
    assert digest(repo.path) == before
    convgit(repo.path, "init", env={"CONVGIT_STORE": ""})
    assert digest(repo.path) == before  # the store went to its default place, in git's folder


# Stores inside the working tree, named as a user would: (options, environment, store folder).
INSIDE_SPELLINGS = {
    "hidden, relative": (("--store", ".convstore"), {}, ".convstore"),
    "plain name, deep, with a space": (("--store", "tools/my store"), {}, "tools/my store"),
    "absolute, in the environment": ((), {"CONVGIT_STORE": "{root}/notes/st"}, "notes/st"),
    "through a parent": (("--store", "src/../history"), {}, "history"),
}


@pytest.mark.parametrize("spelling", sorted(INSIDE_SPELLINGS))
def test_a_store_anywhere_inside_the_tree_is_never_snapshotted_nor_rewound(
    repo: GitRepo, spelling: str
) -> None:
    """The snapshots hold no file of the store, and a restore leaves every session file as
    it was, byte for byte, only appended to (the restore's record and note)."""
    options, env, folder = INSIDE_SPELLINGS[spelling]
    args = [a.format(root=repo.path) for a in options]
    env = {k: v.format(root=repo.path) for k, v in env.items()}
    convgit(repo.path, *args, "init", env=env)
    task = convgit(repo.path, *args, "user", "task", "--json", env=env).json()
    repo.write("src/app.py", "print('plan A')\n")
    reply = convgit(repo.path, *args, "assistant", "plan A", "--json", env=env).json()
    for snap in (task["snapshot"], reply["snapshot"]):
        assert not [p for p in repo.tree_paths(snap["tree"]) if p.startswith(folder + "/")]
    store = repo.path / folder
    before = _files(store / "sessions")
    assert before

    convgit(repo.path, *args, "restore", task["id"], "--yes", env=env)
    assert (repo.path / "src/app.py").read_text() == "print('hello')\n"
    after = _files(store / "sessions")
    assert set(before) <= set(after)
    for name, data in before.items():
        assert after[name].startswith(data), name
    log = convgit(repo.path, *args, "log", "--json", env=env).json()["entries"]
    assert [e["id"] for e in log][:2] == [task["id"], reply["id"]]


# Git's own folder, named as a user would (relative to the working tree's root).
GIT_SPELLINGS = {
    "--store .git": (("--store", ".git"), {}),
    "--store $PWD/.git": (("--store", "{root}/.git"), {}),
    "--store .git/store": (("--store", ".git/store"), {}),
    "--store .git/refs/convgit": (("--store", ".git/refs/convgit"), {}),
    "CONVGIT_STORE=.git": ((), {"CONVGIT_STORE": ".git"}),
    "CONVGIT_STORE=.git/": ((), {"CONVGIT_STORE": ".git/"}),
}


@pytest.mark.parametrize("spelling", sorted(GIT_SPELLINGS))
def test_a_store_in_gits_own_folder_is_refused_and_git_keeps_working(
    make_repo, spelling: str
) -> None:
    """In a repository without a commit, a store in .git would make `.git/index` a folder:
    refused in one sentence (exit 2); git works and nothing was created."""
    repo = make_repo(commit=False)
    repo.write("app.py", "print('v1')\n")
    options, env = GIT_SPELLINGS[spelling]
    args = [a.format(root=repo.path) for a in options]
    env = {k: v.format(root=repo.path) for k, v in env.items()}
    before = _listing(repo.path / ".git")
    for command in (["init"], ["user", "task"], ["log"]):
        ran = convgit(repo.path, *args, *command, code=2, env=env)
        one_sentence(ran.stderr)
        assert "inside git's own folder" in ran.stderr
    assert _listing(repo.path / ".git") == before
    status = subprocess.run(["git", "status"], cwd=repo.path, capture_output=True)
    assert status.returncode == 0, status.stderr


def test_a_store_in_a_worktrees_git_dir_is_refused_and_convgits_place_is_not(
    repo: GitRepo, tmp_path: Path
) -> None:
    """A linked worktree's git dir (and its `.git` file) is git's too; only
    `<git-common-dir>/convgit`, convgit's place in git's folder, may hold a store."""
    linked = tmp_path / "linked"
    repo.git("worktree", "add", "-q", str(linked), "feature")
    common = repo.path / ".git"
    git_dir = common / "worktrees" / "linked"
    before = _listing(common)
    for store in (str(git_dir), str(git_dir / "store"), ".git", ".git/x"):
        ran = convgit(linked, "--store", store, "user", "task", code=2)
        one_sentence(ran.stderr)
        assert "inside git's own folder" in ran.stderr
    assert _listing(common) == before
    assert subprocess.run(["git", "status"], cwd=linked, capture_output=True).returncode == 0

    place = os.fspath(common / "convgit")
    convgit(linked, "--store", place, "init")
    made = convgit(linked, "--store", place, "user", "task", "--json").json()
    assert made["snapshot"]["commit"]
    assert subprocess.run(["git", "status"], cwd=linked, capture_output=True).returncode == 0


def test_a_store_inside_the_tree_stays_out_of_the_hooks_snapshots(
    repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Claude Code's hook, with CONVGIT_STORE naming a folder inside the project: the hook
    finds the working tree from its live state (no git asked), and every snapshot it takes,
    at a turn's end and at the prompt that follows a closed turn, leaves the store out."""
    from tests.test_hook import event, hook, line

    monkeypatch.setenv("CONVGIT_STORE", str(repo.path / "agent-history"))
    transcript = tmp_path / "claude" / "transcript.jsonl"
    transcript.parent.mkdir()
    transcript.write_text("")
    hook(repo.path, event("SessionStart", transcript, repo.path, source="startup"))
    hook(repo.path, event("UserPromptSubmit", transcript, repo.path, prompt_id="p-1"))
    with transcript.open("a") as out:
        out.write(line("user", "u-1", None, "Start", promptId="p-1"))
        out.write(line("assistant", "a-1", "u-1", [{"type": "text", "text": "Started."}]))
    hook(repo.path, event("Stop", transcript, repo.path, last_assistant_message="Started."))
    repo.write("notes.txt", "the user's notes\n")
    hook(repo.path, event("UserPromptSubmit", transcript, repo.path, prompt_id="p-2"))
    with transcript.open("a") as out:
        out.write(line("user", "u-2", "a-1", "Go on", promptId="p-2"))
        out.write(line("assistant", "a-2", "u-2", [{"type": "text", "text": "Done."}]))
    hook(repo.path, event("Stop", transcript, repo.path, last_assistant_message="Done."))

    log = (repo.path / "agent-history" / "logs" / "hooks.log").read_text()
    assert "problem" not in log, log
    for entry in ("a-1", "u-2", "a-2"):
        snap = convgit(repo.path, "show", entry, "--json").json()["snapshot"]
        assert snap is not None, entry
        paths = repo.tree_paths(snap["tree"])
        assert not [p for p in paths if p.startswith("agent-history/")], (entry, sorted(paths))
    assert "notes.txt" in repo.tree_paths(
        convgit(repo.path, "show", "u-2", "--json").json()["snapshot"]["tree"]
    )


def test_a_moved_or_copied_repository_keeps_its_current_session(
    tmp_path: Path, rewatch: Callable[[GitRepo], None]
) -> None:
    """The current session is kept per worktree folder; moved (or copied) elsewhere, the
    repository's worktree finds it again, its snapshots still matched, and only when exactly one
    pointer lost its folder (two would be a guess)."""
    repo = init_repo(tmp_path / "first")
    sid = convgit(repo.path, "init", "--json").json()["id"]
    repo.write("a.txt", "a turn's file\n")
    convgit(repo.path, "assistant", "wrote a.txt")
    moved = tmp_path / "moved"
    repo.path.rename(moved)
    assert convgit(moved, "status", "--json").json()["session"] == sid
    assert "match the snapshot of" in convgit(moved, "status").stdout
    copied = tmp_path / "copied"
    subprocess.run(["cp", "-a", str(moved), str(copied)], check=True)
    assert convgit(copied, "status", "--json").json()["session"] == sid
    assert convgit(moved, "status", "--json").json()["session"] == sid, "the original keeps it"
    other = convgit(copied, "init", "--json").json()["id"]
    assert convgit(copied, "log", "--json").json()["session"] == other
    rewatch(GitRepo(moved))
    # a store whose two worktrees' folders are both gone cannot tell which was this one
    current = copied / ".git" / "convgit" / "current"
    for name in ("0123456789ab", "ba9876543210"):
        (current / name).write_text(other + "\n")
    for pointer in current.iterdir():
        if len(pointer.name) == 12 and pointer.name not in ("0123456789ab", "ba9876543210"):
            pointer.unlink()
    again = tmp_path / "again"
    copied.rename(again)
    rewatch(GitRepo(again))
    refused = convgit(again, "status", code=1)
    assert "There is no current convgit session here" in one_sentence(refused.stderr)


@pytest.mark.parametrize("store", [".", "kept/store"])
def test_a_relative_store_is_relative_to_the_folder_given_with_C(
    repo: GitRepo, tmp_path: Path, store: str
) -> None:
    """``-C DIR --store PATH``: a relative PATH is read from DIR, as git reads the paths after
    its ``-C`` (either order), never from the folder convgit was started in."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    into = repo.path / "notes"  # `--store .` in DIR: a folder in the tree, not its root
    into.mkdir()
    relative = os.path.relpath(into, elsewhere)
    sid = convgit(elsewhere, "-C", relative, "--store", store, "init", "--json").json()["id"]
    assert (into / store / "sessions" / f"{sid}.jsonl").is_file()
    assert _listing(elsewhere) == []
    found = convgit(elsewhere, "--store", store, "-C", relative, "sessions", "--json").json()
    assert [s["id"] for s in found["sessions"]] == [sid]


@pytest.mark.parametrize("store", ["kept/store", "../beside"])
def test_a_relative_convgit_store_is_relative_to_the_folder_given_with_C(
    repo: GitRepo, tmp_path: Path, store: str
) -> None:
    """``-C DIR`` with a relative ``CONVGIT_STORE``: read from DIR, as a relative ``--store``
    is, and as the hooks read it in the agent's folder; never from the folder convgit was
    started in."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    into = repo.path / "notes"
    into.mkdir()
    relative = os.path.relpath(into, elsewhere)
    env = {"CONVGIT_STORE": store}
    sid = convgit(elsewhere, "-C", relative, "init", "--json", env=env).json()["id"]
    assert ((into / store).resolve() / "sessions" / f"{sid}.jsonl").is_file()
    assert _listing(elsewhere) == []
    found = convgit(elsewhere, "-C", relative, "sessions", "--json", env=env).json()
    assert [s["id"] for s in found["sessions"]] == [sid]
    here = convgit(into, "sessions", "--json", env=env).json()  # the same store, from DIR
    assert [s["id"] for s in here["sessions"]] == [sid]
