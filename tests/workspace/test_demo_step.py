"""`convgit demo --step`, for a class: each command is shown as if typed, and runs only when
Enter is pressed; `q` stops there (the repository stays for the class to look at); the end of
the input runs the rest straight through."""

from __future__ import annotations

from pathlib import Path

from tests.workspace.cli import convgit


def test_each_command_is_shown_then_runs_on_enter_and_q_stops(tmp_path: Path) -> None:
    folder = tmp_path / "class"
    ran = convgit(tmp_path, "demo", "--dir", str(folder), "--step", input="\n\nq\n")
    lines = ran.stdout.splitlines()
    commands = [line for line in lines if line.startswith("$ ")]
    assert [c.split()[:3] for c in commands] == [
        ["$", "convgit", "init"],
        ["$", "convgit", "user"],
        ["$", "convgit", "label"],
    ]
    # init's and user's output follow their lines; label was shown, never run
    assert lines[lines.index(commands[0]) + 1].startswith("started session ")
    assert " user: test_add fails" in lines[lines.index(commands[1]) + 1]
    assert lines[-1] == f"stopped; the demo repository stays: cd {folder} && convgit tree"
    tree = convgit(folder, "tree", "--json").json()["entries"]
    assert len(tree) == 1 and "label" not in tree[0]


def test_the_end_of_the_input_runs_the_rest_through(tmp_path: Path) -> None:
    folder = tmp_path / "class"
    ran = convgit(tmp_path, "demo", "--dir", str(folder), "--step", input="\n")
    assert ran.stdout.rstrip().endswith(f"cd {folder} && convgit tree")
    assert "$ convgit tree --files" in ran.stdout
