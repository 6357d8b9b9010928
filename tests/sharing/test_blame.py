"""`convgit blame FILE`: each line's source, a turn, a hand edit, an older commit or not
recorded yet, exactly as git blame says of the same chain of file versions."""

from __future__ import annotations

import os
from pathlib import Path

from tests.sharing.clones import Clone
from tests.workspace.gitrepo import UserStateGuard, git


def old() -> dict[str, str]:
    """The environment of a commit made long ago (read when called: the run's own)."""
    dated = {"GIT_AUTHOR_DATE": "2020-01-01T00:00:00", "GIT_COMMITTER_DATE": "2020-01-01T00:00:00"}
    return {**os.environ, **dated}


# the file's versions, in order, and who wrote each
STATES = [
    ("older commit", "a\nb\nc\n"),
    ("turn 1", "a\nb\nc\nd\n"),
    ("turn 2", "a\nB\nc\nd\n"),
    ("hand edit", "a\nB\nc\nd\nhand\n"),
    ("turn 3", "a\nB\nc\nd\nhand\ne\n"),
    ("not recorded yet", "a\nB\nc\nd\nhand\ne\nnow\n"),
]


def oracle(tmp_path: Path) -> list[str]:
    """git blame of the same versions committed one after another in a scratch repository:
    for each line, the name of the version that wrote it."""
    scratch = tmp_path / "oracle"
    scratch.mkdir()
    git(scratch, "init", "-q")
    names = {}
    for name, text in STATES:
        (scratch / "f.txt").write_text(text)
        git(scratch, "add", "f.txt")
        git(scratch, "-c", "user.name=o", "-c", "user.email=o@o", "commit", "-qm", name)
        names[git(scratch, "rev-parse", "HEAD").strip()] = name
    listed = git(scratch, "blame", "--root", "-l", "-s", "f.txt")
    return [names[line.split()[0]] for line in listed.splitlines()]


def test_blame_names_each_lines_source_as_git_blame_of_the_same_chain(
    a: Clone, b: Clone, tmp_path: Path, user_state_guard: UserStateGuard
) -> None:
    a.write("f.txt", STATES[0][1])
    git(a.path, "add", "f.txt")
    git(
        a.path,
        "-c",
        "user.name=Ann",
        "-c",
        "user.email=ann@x",
        "commit",
        "-qm",
        "old lines",
        env=old(),
    )
    git(a.path, "push", "-q", "origin", "main")
    user_state_guard.watch(a.path)
    older = git(a.path, "rev-parse", "HEAD").strip()
    sid = a.json("init")["id"]
    prompts = ["add d", "change b", "add e"]
    a.run("user", prompts[0])
    a.write("f.txt", STATES[1][1])
    turn1 = a.json("assistant", "added d")["id"]
    a.run("user", prompts[1])
    a.write("f.txt", STATES[2][1])
    turn2 = a.json("assistant", "changed b")["id"]
    a.write("f.txt", STATES[3][1])  # by hand, before the next prompt
    hand = a.json("user", prompts[2])["id"]
    a.write("f.txt", STATES[4][1])
    turn3 = a.json("assistant", "added e")["id"]
    a.write("f.txt", STATES[5][1])
    expected_names = oracle(tmp_path)
    meaning = {
        "older commit": ("commit", None, older),
        "turn 1": ("turn", turn1, None),
        "turn 2": ("turn", turn2, None),
        "hand edit": ("hand edit", hand, None),
        "turn 3": ("turn", turn3, None),
        "not recorded yet": ("not recorded yet", None, None),
    }
    found = a.json("blame", "f.txt")
    got = [(line["kind"], line["entry"], line["commit"]) for line in found["lines"]]
    assert got == [meaning[name] for name in expected_names]
    assert [line["text"] for line in found["lines"]] == STATES[-1][1].splitlines()
    answered = {line["entry"]: line["prompt"] for line in found["lines"] if line["kind"] == "turn"}
    assert answered == {turn1: "add d", turn2: "change b", turn3: "add e"}
    assert found["lines"][0]["summary"] == "old lines" and found["lines"][0]["author"] == "Ann"
    text = a.run("blame", "f.txt").stdout
    assert 'answered "change b"' in text and "not recorded yet" in text

    # a fetched session: the same answer in the other clone, up to the last snapshot
    a.run("share", sid)
    a.run("push")
    b.run("fetch")
    git(b.path, "pull", "-q", "origin", "main")
    user_state_guard.watch(b.path)
    b.write("f.txt", STATES[5][1])
    there = b.json("--session", sid, "blame", "f.txt")
    assert [(line["kind"], line["entry"], line["commit"]) for line in there["lines"]] == got
