"""`convgit hooks install git` with `[attribution] trailers = true`: a prepare-commit-msg hook,
chaining the one that was there, that names in trailers the session and the entry whose snapshot
the committed files match (or the nearest); `convgit why COMMIT` shows the conversation that led
there."""

from __future__ import annotations

import stat

from tests.sharing.clones import Clone
from tests.workspace.cli import one_sentence
from tests.workspace.gitrepo import UserStateGuard, git

THEIRS = "#!/bin/sh\necho 'their hook ran' >> \"$1\"\n"


def trailers(clone: Clone) -> dict[str, str]:
    listed = git(clone.path, "log", "-1", "--format=%(trailers:only,unfold)")
    return dict(line.split(": ", 1) for line in listed.splitlines() if ": " in line)


def test_commits_name_their_conversation_and_why_shows_it(
    a: Clone, user_state_guard: UserStateGuard
) -> None:
    hook = a.path / ".git" / "hooks" / "prepare-commit-msg"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text(THEIRS)
    hook.chmod(hook.stat().st_mode | stat.S_IXUSR)
    sid = a.json("init")["id"]
    a.write("src/app.py", "print('asked for')\n")
    a.run("user", "make it print what was asked for")
    entry = a.json("assistant", "done")["id"]
    (a.path / ".git" / "convgit" / "config.toml").write_text("[attribution]\ntrailers = true\n")
    installed = a.json("hooks", "install", "git")["hooks"]
    assert [(h["hook"], h["chained"]) for h in installed] == [
        ("prepare-commit-msg", True),
        ("post-commit", False),
        ("post-rewrite", False),
    ]

    git(a.path, "add", "-A")
    git(a.path, "commit", "-q", "-m", "print what was asked for")
    user_state_guard.watch(a.path)  # the user's own commit
    message = git(a.path, "log", "-1", "--format=%B")
    assert "their hook ran" in message  # the hook that was there ran first
    assert trailers(a) == {
        "Convgit-Session": sid,
        "Convgit-Entry": entry,
        "Convgit-Files": "exact",
    }
    why = a.json("why", "HEAD")
    assert (why["session"], why["entry"], why["exact"], why["found_by"]) == (
        sid, entry, True, "trailers",
    )  # fmt: skip
    assert [r["id"] for r in why["path"]][-1] == entry and len(why["path"]) == 2
    shown = a.run("why", "HEAD").stdout
    assert "the conversation that led there:" in shown and "make it print" in shown

    # a commit of part of the files: the nearest snapshot, and how many files differ
    a.write("src/app.py", "print('changed by hand')\n")
    a.write("other.txt", "not committed\n")
    git(a.path, "add", "src/app.py")
    git(a.path, "commit", "-q", "-m", "a hand edit")
    user_state_guard.watch(a.path)
    assert trailers(a)["Convgit-Entry"] == entry
    assert trailers(a)["Convgit-Files"] == "nearest, 1 files differ"
    assert a.json("why", "HEAD")["differ"] == 1

    removed = a.json("hooks", "uninstall", "git")["hooks"]
    assert removed[0]["changed"] and hook.read_text() == THEIRS


def test_why_a_commit_no_conversation_made_is_one_sentence(a: Clone) -> None:
    a.run("init")
    refused = a.run("why", "HEAD", code=1)
    assert "names no conversation" in one_sentence(refused.stderr)
    refused = a.run("why", "no-such-revision", code=1)
    one_sentence(refused.stderr)


def test_hooks_install_prints_one_shape_for_git_and_for_an_agent(a: Clone) -> None:
    """`hooks install --json` (and uninstall) has the same keys whatever the agent named: git's
    hook files are listed in `hooks`, an agent's is an empty list."""
    a.json("init")
    for verb in ("install", "uninstall"):
        for_git = a.json("hooks", verb, "git")
        for_claude = a.json("hooks", verb, "claude-code")
        assert set(for_git) == set(for_claude), verb
        assert for_git["agent"] == "git" and for_git["hooks"]
        assert for_claude["hooks"] == []
