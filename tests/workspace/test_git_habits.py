"""The small habits a git user expects of a command line, through the real CLI: --version and
-h, log -n, tree --depth and a tree that fits the terminal, labels named in status, ``← files``
in log, short ids that resolve back, a label that does not move without -f, and a suggestion
for a mistyped label."""

from __future__ import annotations

import re
from importlib.metadata import version
from pathlib import Path

import orjson
import pytest

from tests.workspace.cli import convgit, one_sentence
from tests.workspace.gitrepo import GitRepo
from tests.workspace.terminal import on_terminal

UUIDS = [
    "2b6fd122-5bd8-4e0f-9a40-63a8e36b5a11",
    "2b6fd122-5bd8-4e0f-9a40-000000000000",  # shares 24 characters with the one above
    "9c0ffee0-aaaa-4bbb-8ccc-dddddddddddd",
]


def test_version_prints_the_installed_version() -> None:
    ran = convgit(Path("."), "--version")
    assert ran.stdout == f"convgit {version('convgit')}\n"


def test_h_is_help_for_the_program_and_a_command(tmp_path: Path) -> None:
    for args in ([], ["log"], ["hooks", "install"]):
        short = convgit(tmp_path, *args, "-h").stdout
        assert short == convgit(tmp_path, *args, "--help").stdout
        assert short.startswith(f"Usage: convgit {' '.join(args)}".rstrip())


def plans(repo: GitRepo, *, restore: bool = False) -> dict[str, str]:
    """A task, plan A (labelled planA), then from the task plan B (labelled planB); with
    ``restore``, the files are restored to plan A's snapshot while the context stays on plan B."""
    convgit(repo.path, "init")
    ids = {"task": convgit(repo.path, "user", "task", "--json").json()["id"]}
    repo.write("calc.py", "plan A\n")
    ids["a"] = convgit(repo.path, "assistant", "plan A", "--json").json()["id"]
    convgit(repo.path, "label", ids["a"], "planA")
    convgit(repo.path, "fork", ids["task"], "try again")
    repo.write("calc.py", "plan B\n")
    ids["b"] = convgit(repo.path, "assistant", "plan B", "--json").json()["id"]
    convgit(repo.path, "label", ids["b"], "planB")
    if restore:
        convgit(repo.path, "restore", "planA", "--yes")
    return ids


def test_status_names_labels_and_log_marks_where_the_files_are(repo: GitRepo) -> None:
    ids = plans(repo, restore=True)
    status = convgit(repo.path, "status").stdout
    assert f"files:   at the snapshot of {ids['a']} [planA], on another branch" in status
    log = convgit(repo.path, "log").stdout.splitlines()
    (plan_b,) = [line for line in log if line.startswith(ids["b"])]
    assert plan_b.endswith("plan B [planB] ◆") or plan_b.endswith("[planB] ◆ ← context")
    assert not any("← files" in line for line in log)  # the files are on the other branch
    convgit(repo.path, "switch", "planA")
    log = convgit(repo.path, "log").stdout.splitlines()
    assert log[-1].endswith("plan A [planA] ◆ ← files ← context")
    assert "match the snapshot of" in convgit(repo.path, "status").stdout
    assert "[planA]" in convgit(repo.path, "status").stdout


def test_log_n_shows_the_last_n_entries_of_the_path(repo: GitRepo) -> None:
    ids = plans(repo)
    whole = convgit(repo.path, "log").stdout.splitlines()
    assert convgit(repo.path, "log", "-n", "2").stdout.splitlines() == whole[-2:]
    assert convgit(repo.path, "log", "--max-count", "9").stdout.splitlines() == whole
    entries = convgit(repo.path, "log", "-n", "1", "--json").json()["entries"]
    assert [e["id"] for e in entries] == [ids["b"]]
    assert "-n takes a positive whole number" in convgit(repo.path, "log", "-n", "x", code=2).stderr


def test_tree_depth_counts_the_branches_it_leaves_out(repo: GitRepo) -> None:
    ids = plans(repo)
    convgit(repo.path, "switch", "planA")
    convgit(repo.path, "user", "deeper on plan A")
    convgit(repo.path, "fork", "planA", "another way on plan A")  # a fork below a fork
    whole = convgit(repo.path, "tree").stdout.splitlines()
    assert len(whole) == 7  # the title and six entries
    trunk = convgit(repo.path, "tree", "--depth", "0").stdout.splitlines()
    assert trunk[:2] == whole[:2] and ids["task"] in trunk[1]
    assert len(trunk) == 3 and trunk[2].startswith("└─ … 5 more entries in 2 branches")
    assert trunk[2].endswith("← context")  # the hidden part holds the active leaf
    one = convgit(repo.path, "tree", "--depth", "1").stdout.splitlines()
    hidden = "│  └─ … 2 more entries in 2 branches ← files ← context"  # deeper on plan A has both
    assert one == [*whole[:3], hidden, *whole[5:]]
    assert convgit(repo.path, "tree", "--depth", "2").stdout.splitlines() == whole
    error = convgit(repo.path, "tree", "--depth", "-1", code=2).stderr
    assert "--depth takes a whole number" in one_sentence(error)


def test_tree_fits_the_terminal_and_a_pipe_gets_whole_lines(repo: GitRepo) -> None:
    convgit(repo.path, "init")
    long = "a task described at length, " * 6
    convgit(repo.path, "user", long)
    convgit(repo.path, "fork", "@", "a branch with its own rather long text " * 3)
    convgit(repo.path, "switch", "@~1")
    convgit(repo.path, "user", "another branch, still long enough to be cut " * 3)
    piped = convgit(repo.path, "tree").stdout.splitlines()
    shown = on_terminal(repo.path, "--no-pager", "tree", columns=40).shown.splitlines()
    assert len(shown) == len(piped) == 4
    for line, whole in zip(shown, piped, strict=True):
        assert len(line) <= 40
        # the text gives way, never the marks after it (◆, ← files, ← context)
        text, cut, marks = line.partition("… ")
        if not cut:
            text, cut, marks = line.removesuffix("…"), "…", ""
        assert line == whole or (whole.startswith(text) and whole.endswith(marks))
    assert shown[0] == piped[0]  # the title fits
    assert all("…" in line for line in shown[1:])
    wide = on_terminal(repo.path, "--no-pager", "tree", env={"COLUMNS": "60"}).shown
    assert max(len(line) for line in wide.splitlines()) == 60


def test_short_ids_everywhere_people_read_and_each_resolves_back(repo: GitRepo) -> None:
    convgit(repo.path, "init")
    records = [
        {"type": "message", "id": UUIDS[0], "role": "user", "content": "task"},
        {"type": "message", "id": UUIDS[1], "parentId": UUIDS[0], "role": "assistant"}
        | {"content": "plan A"},
        {"type": "message", "id": UUIDS[2], "parentId": UUIDS[0], "role": "assistant"}
        | {"content": "plan B"},
    ]
    repo.write("calc.py", "plan B\n")
    convgit(repo.path, "append", input=b"".join(orjson.dumps(r) + b"\n" for r in records))
    short = {
        UUIDS[0]: "2b6fd122-5bd8-4e0f-9a40-6",
        UUIDS[1]: "2b6fd122-5bd8-4e0f-9a40-0",
        UUIDS[2]: "9c0ffee0",
    }
    said = [
        convgit(repo.path, "tree").stdout,
        convgit(repo.path, "log").stdout,
        convgit(repo.path, "branches", "2b6fd122-5bd8-4e0f-9a40-6").stdout,
        convgit(repo.path, "status").stdout,
        convgit(repo.path, "label", UUIDS[1], "planA").stdout,
        convgit(repo.path, "snapshot", UUIDS[1]).stdout,
        convgit(repo.path, "switch", UUIDS[1]).stdout,
    ]
    text = "\n".join(said)
    assert not any(ident in text for ident in UUIDS), text  # never the whole uuid
    # ids as shown: 8 hex digits and the rest of a uuid's prefix (commits and sessions are 12)
    found = set(re.findall(r"\b[0-9a-f]{8}(?:-[0-9a-f-]*)?(?![0-9a-f])", text))
    assert found >= set(short.values()), found
    for ident, prefix in short.items():
        assert convgit(repo.path, "show", prefix, "--json").json()["entry"]["id"] == ident
    for prefix in found:  # every id shown is a reference to one entry
        assert convgit(repo.path, "show", prefix, "--json").json()["entry"]["id"] in UUIDS
    assert said[4].splitlines()[0] == f"{short[UUIDS[1]]} labelled planA"
    status = convgit(repo.path, "status").stdout
    assert f"context: at {short[UUIDS[1]]} [planA]" in status
    # --json keeps every id whole
    assert [e["id"] for e in convgit(repo.path, "log", "--json").json()["entries"]] == UUIDS[:2]


def test_label_refuses_to_move_a_label_without_force(repo: GitRepo) -> None:
    ids = plans(repo)
    before = convgit(repo.path, "tree", "--json").json()
    error = convgit(repo.path, "label", ids["task"], "planA", code=1).stderr
    assert one_sentence(error) == (
        f"convgit: The label 'planA' is on entry {ids['a']} already; nothing was changed."
    )
    assert f"`convgit label {ids['task']} planA -f` moves it here" in error
    assert convgit(repo.path, "tree", "--json").json() == before
    moved = convgit(repo.path, "label", ids["task"], "planA", "-f").stdout
    said, files = moved.splitlines()  # as every move, it ends with where the files are
    assert said == f"{ids['task']} labelled planA (moved from {ids['a']})"
    assert files.startswith("files: ")
    assert convgit(repo.path, "show", "planA", "--json").json()["entry"]["id"] == ids["task"]
    again = convgit(repo.path, "label", ids["task"], "planA", "--json").json()  # where it is
    assert again["moved_from"] is None


@pytest.mark.parametrize(
    ("typed", "meant"), [("plnA", "planA"), ("planb", "planB"), ("plan-B", "planB")]
)
def test_a_mistyped_label_gets_a_suggestion(repo: GitRepo, typed: str, meant: str) -> None:
    plans(repo)
    for args in (["show", typed], ["switch", typed], ["restore", typed, "--yes"]):
        error = convgit(repo.path, *args, code=1).stderr
        assert one_sentence(error) == f"convgit: No entry, label or id prefix matches '{typed}'."
        assert f"hint: did you mean '{meant}'?" in error
    far = convgit(repo.path, "show", "zzzz", code=1).stderr
    assert "did you mean" not in far
