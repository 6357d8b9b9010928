"""`convgit search --file PATH` finds the turns whose snapshot changed PATH as git's own diff of
the snapshots says (against the nearest snapshot above on the path, on every branch), and the
filters keep what they name: the role, the active path, a session, an agent, a time."""

from __future__ import annotations

from pathlib import Path

from tests.search.oracle import changed_by_git, searched, turn
from tests.workspace.cli import convgit
from tests.workspace.gitrepo import GitRepo

ROOT = Path(__file__).resolve().parents[2]


def test_files_changed_are_gits_diff_of_the_snapshots_on_every_branch(repo: GitRepo) -> None:
    here = repo.path
    sid = convgit(here, "init", "--json").json()["id"]
    turn(here, "fix the calc please", role="user")
    repo.write("calc.py", "x = 1\n")
    first = turn(here, "edited calc")
    repo.write("calc.py", "x = 2\n")
    repo.write("lib/util.py", "def f(): pass\n")
    turn(here, "calc and util")
    convgit(here, "switch", first)  # a branch below the first reply
    repo.write("other.py", "o\n")
    turn(here, "a new file on a branch")
    (here / "lib" / "util.py").unlink()
    turn(here, "util gone")
    convgit(here, "snapshot")  # the leaf's snapshot replaced (its files unchanged)

    expected = changed_by_git(here, sid)
    assert any(expected.values()), "set up"
    for path in ("calc.py", "lib/util.py", "other.py", "README.md", "nowhere.txt"):
        want = {entry for entry, paths in expected.items() if path in paths}
        assert searched(here, "--file", path) == want, path
    # a path is taken as git takes it: from the folder the command runs in
    assert searched(here / "lib", "--file", "util.py") == searched(here, "--file", "lib/util.py")


def test_filters_keep_the_role_the_active_path_a_session_an_agent_and_a_time(
    repo: GitRepo, tmp_path: Path
) -> None:
    here = repo.path
    one = convgit(here, "init", "--name", "first", "--json").json()["id"]
    asked = turn(here, "alpha question", role="user", ts="2026-01-01T10:00:00.000Z")
    old = turn(here, "alpha answer old", ts="2026-01-02T10:00:00.000Z")
    convgit(here, "switch", asked)
    new = turn(here, "alpha answer new", ts="2026-03-01T10:00:00.000Z")
    two = convgit(here, "init", "--name", "second", "--json").json()["id"]
    other = turn(here, "alpha elsewhere", ts="2026-02-01T10:00:00.000Z")
    imported = convgit(
        here, "import", "claude-code", str(ROOT / "fixtures" / "claude-code" / "compaction.jsonl"),
        "--json",
    ).json()["imports"][0]["session"]  # fmt: skip
    assert imported not in (one, two)

    assert searched(here, "alpha") == {asked, old, new, other}
    assert searched(here, "alpha", "--role", "user") == {asked}
    assert searched(here, "alpha", "--role", "assistant") == {old, new, other}
    assert searched(here, "alpha", "--branch") == {asked, new, other}  # each session's path
    assert searched(here, "alpha", "--session", one) == {asked, old, new}
    assert searched(here, "alpha", "--session", "second") == {other}
    assert searched(here, "alpha", "--since", "2026-01-02") == {old, new, other}
    assert searched(here, "alpha", "--until", "2026-01-02") == {asked, old}
    assert searched(here, "alpha", "--since", "2026-01-02T12:00", "--until", "2026-02-28") == {
        other
    }
    assert searched(here, "alpha", "--agent", "claude-code") == set()
    found = convgit(here, "search", "--agent", "claude-code", "-n", "1000", "--json").json()
    assert found["results"] and {r["session"] for r in found["results"]} == {imported}
    newest = [r["entry"] for r in convgit(here, "search", "alpha", "--json").json()["results"]]
    assert newest == [new, other, old, asked], "newest first"
