"""What the command line says is true: its hints name only options their command takes, a file
left alone is named for what it is, a command's output shows as a terminal shows it, a --path is
read from the folder convgit runs in however it was reached, and a replaced snapshot can be named
(``REF@{N}``) wherever a snapshot can."""

from __future__ import annotations

import ast
import os
import re
import sys
from pathlib import Path

import typer.main

from tests.workspace.cli import convgit, one_sentence
from tests.workspace.gitrepo import GitRepo

SOURCE = Path(__file__).resolve().parents[2] / "convgit"
# `convgit WORD [WORD]` and what follows it up to the end of the command as text shows it
MENTION = re.compile(r"convgit((?: [a-z][a-z-]*)+)([^`;()\n]*)")


def _texts(path: Path) -> list[tuple[int, str]]:
    """The string literals of a module (f-strings with their holes as X), docstrings aside."""
    tree = ast.parse(path.read_text())
    docs = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
    }
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            parts = (v.value if isinstance(v, ast.Constant) else "X" for v in node.values)
            found.append((node.lineno, "".join(map(str, parts))))
        elif (
            isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs
        ):
            found.append((node.lineno, node.value))
    return found


def test_every_hint_names_only_options_its_command_takes() -> None:
    from convgit.cli import app

    group = typer.main.get_command(app)
    common = {opt for param in group.params for opt in param.opts} | {"--help"}
    wrong: list[str] = []
    mentions = 0
    for path in sorted(SOURCE.rglob("*.py")):
        for line, text in _texts(path):
            for found in MENTION.finditer(text):
                words = found.group(1).split()
                command, used = group, 0
                for word in words:
                    sub = getattr(command, "commands", {}).get(word)
                    if sub is None:
                        break
                    command, used = sub, used + 1
                if command is group:
                    continue  # prose: "convgit does not …"
                mentions += 1
                takes = {opt for param in command.params for opt in param.opts} | common
                rest = " ".join(words[used:]) + found.group(2)
                for option in re.findall(r"(?<![\w-])(--?[a-zA-Z][\w-]*)", rest):
                    if option not in takes:
                        where = f"{path.relative_to(SOURCE.parent)}:{line}"
                        wrong.append(f"{where}: {found.group(0)!r} ({option})")
    assert mentions > 50, "the scan finds the hints"
    assert not wrong, wrong


def test_every_option_a_command_names_in_its_own_words_is_its_own() -> None:
    """Each command's sentences and hints (in its function in convgit/cli) name its options."""
    from convgit.cli import app

    group = typer.main.get_command(app)
    common = {opt for param in group.params for opt in param.opts} | {"--help"}
    wrong: list[str] = []
    checked = 0
    for path in sorted((SOURCE / "cli").glob("*.py")):
        for function in ast.parse(path.read_text()).body:
            if not isinstance(function, ast.FunctionDef):
                continue
            for decorator in function.decorator_list:
                if not (
                    isinstance(decorator, ast.Call)
                    and getattr(decorator.func, "id", "") == "command"
                ):
                    continue
                named = [a.value for a in decorator.args if isinstance(a, ast.Constant)]
                name = named[0] if named else function.name.replace("_", "-")
                owner = next((k.value for k in decorator.keywords if k.arg == "group"), None)
                command = group.commands[name] if owner is None else None  # type: ignore[attr-defined]
                if owner is not None:
                    sub = group.commands[getattr(owner, "id", "").removesuffix("_app")]  # type: ignore[attr-defined]
                    command = sub.commands[name]
                checked += 1
                takes = {opt for param in command.params for opt in param.opts} | common
                for line, text in _texts_in(function):
                    for option in re.findall(r"(?<![\w-])(--[a-zA-Z][\w-]*)", text):
                        if option not in takes:
                            wrong.append(f"{path.name}:{line} convgit {name}: {option}")
    assert checked > 30, "the scan finds the commands"
    assert not wrong, wrong


def _texts_in(function: ast.FunctionDef) -> list[tuple[int, str]]:
    doc = function.body[0] if isinstance(function.body[0], ast.Expr) else None
    return [
        (node.lineno, node.value)
        for node in ast.walk(function)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and (doc is None or node is not doc.value)
    ]


def test_a_worktree_with_changes_is_refused_without_naming_a_force_it_lacks(
    repo: GitRepo, tmp_path: Path
) -> None:
    convgit(repo.path, "init")
    convgit(repo.path, "user", "try it")
    side = tmp_path / "side"
    convgit(repo.path, "worktree", "@", str(side))
    (side / "scratch.txt").write_text("test output\n")
    ran = convgit(repo.path, "worktree", "--remove", str(side), code=1)
    assert "holds changes" in one_sentence(ran.stderr)
    for option in re.findall(r"(?<![\w-])--[a-z][\w-]*", ran.stderr):
        assert f"git worktree remove {option}" in ran.stderr, "only git's own, named as git's"
    assert (side / "scratch.txt").read_text() == "test output\n"
    convgit(repo.path, "worktree", "--remove", str(side), "--force", code=2)  # not an option


def test_a_fifo_left_alone_is_named_for_what_it_is(repo: GitRepo) -> None:
    convgit(repo.path, "init")
    repo.write("pipe", "a file first\n")
    convgit(repo.path, "user", "the start")  # snapshotted: pipe is a file
    (repo.path / "pipe").unlink()
    os.mkfifo(repo.path / "pipe")
    convgit(repo.path, "assistant", "pipe is a FIFO now")
    ran = convgit(repo.path, "restore", ":1", "--dry-run", "--json")
    reasons = {s["path"]: s["reason"] for s in ran.json()["left_alone"]}
    assert reasons["pipe"].startswith("a FIFO"), reasons
    assert "size cap" not in reasons["pipe"]


def test_run_shows_output_with_crlf_line_ends(repo: GitRepo) -> None:
    convgit(repo.path, "init")
    convgit(repo.path, "user", "run it")
    script = "import sys; sys.stdout.buffer.write(b'first\\r\\nsecond\\r\\n10%\\r100%\\r\\n')"
    ran = convgit(repo.path, "run", ".", "--", sys.executable, "-c", script)
    shown = [line.split("│ ", 1)[1] for line in ran.stdout.splitlines() if "│ " in line]
    assert shown == ["first", "second", "100%"]


def test_a_path_through_a_symlinked_current_folder_is_accepted(
    repo: GitRepo, tmp_path: Path
) -> None:
    convgit(repo.path, "init")
    convgit(repo.path, "user", "the start")  # src/app.py as committed
    repo.write("src/app.py", "print('changed')\n")
    repo.write("README.md", "# mine\n")
    (tmp_path / "into-src").symlink_to(repo.path / "src")
    (repo.path / "here").symlink_to("src")
    (tmp_path / "alias").symlink_to(repo.path)
    for folder in (tmp_path / "into-src", repo.path / "here", tmp_path / "alias" / "src"):
        ran = convgit(folder, "restore", ":1", "--path", "app.py", "--dry-run", "--json")
        assert [c["path"] for c in ran.json()["changes"]] == ["src/app.py"]
    ran = convgit(
        tmp_path / "alias", "restore", ":1", "--path", "src/app.py", "--dry-run", "--json"
    )
    assert [c["path"] for c in ran.json()["changes"]] == ["src/app.py"]
    # as the shell spells the folder ($PWD/app.py, a completed absolute path): through the links
    for given in (tmp_path / "into-src" / "app.py", tmp_path / "alias" / "src", tmp_path / "alias"):
        ran = convgit(
            tmp_path / "into-src", "restore", ":1", "--path", str(given), "--dry-run", "--json"
        )
        assert "src/app.py" in [c["path"] for c in ran.json()["changes"]], given
    (tmp_path / "elsewhere").mkdir()
    ran = convgit(repo.path, "restore", ":1", "--path", str(tmp_path / "elsewhere"), code=1)
    assert "outside the working tree" in one_sentence(ran.stderr)
    convgit(tmp_path / "into-src", "restore", ":1", "--path", "app.py", "--yes")
    assert (repo.path / "src/app.py").read_text() == "print('hello')\n"
    assert (repo.path / "README.md").read_text() == "# mine\n", "only the path given"


def test_a_replaced_snapshot_is_named_by_restore_diff_and_worktree(
    repo: GitRepo, tmp_path: Path
) -> None:
    convgit(repo.path, "init")
    convgit(repo.path, "user", "change it")
    repo.write("src/app.py", "print('first')\n")
    convgit(repo.path, "assistant", "first try")
    convgit(repo.path, "label", "@", "done")
    repo.write("src/app.py", "print('second')\n")
    replaced = convgit(repo.path, "snapshot", "done", "--json").json()["replaces"]
    assert replaced, "the first try's snapshot is replaced"
    repo.write("src/app.py", "print('third')\n")

    assert [
        c["path"]
        for c in convgit(repo.path, "diff", "done@{1}", "done", "--json").json()["changes"]
    ] == ["src/app.py"]
    assert convgit(repo.path, "diff", "done@{0}", "done", "--json").json()["changes"] == []
    convgit(repo.path, "worktree", "done@{1}", str(tmp_path / "side"))
    assert (tmp_path / "side/src/app.py").read_text() == "print('first')\n"
    convgit(repo.path, "restore", "done@{1}", "--yes")
    assert (repo.path / "src/app.py").read_text() == "print('first')\n"
    convgit(repo.path, "restore", "--undo", "--yes")
    assert (repo.path / "src/app.py").read_text() == "print('third')\n"

    by_commit = convgit(repo.path, "diff", replaced[:12], "done@{1}", "--json").json()["changes"]
    assert by_commit == [], "its commit names the same snapshot"
    ran = convgit(repo.path, "worktree", replaced[:9], str(tmp_path / "again"), "--json")
    assert ran.json()["added"]["commit"] == replaced
    assert (tmp_path / "again/src/app.py").read_text() == "print('first')\n"
    convgit(repo.path, "worktree", "--remove", str(tmp_path / "again"))
    convgit(repo.path, "restore", replaced[:12], "--path", "src", "--yes")
    assert (repo.path / "src/app.py").read_text() == "print('first')\n"

    ran = convgit(repo.path, "diff", "done@{2}", code=1)
    assert "replaced 1 earlier one" in one_sentence(ran.stderr)
    ran = convgit(repo.path, "label", "@", "x@{1}", code=2)
    convgit(repo.path, "worktree", "--remove", str(tmp_path / "side"))


def test_diff_without_an_entry_compares_the_files_with_the_snapshot_status_names(
    repo: GitRepo,
) -> None:
    """As `git diff` alone does: the files now against the context's snapshot, the one whose
    difference `status` counts, the leaf's own or the nearest above it."""
    convgit(repo.path, "init")
    ran = convgit(repo.path, "diff", code=1)
    assert one_sentence(ran.stderr) == (
        "convgit: There is no snapshot on the context's path to compare the files with yet."
    )
    convgit(repo.path, "user", "change it")
    repo.write("src/app.py", "print('first')\n")
    convgit(repo.path, "assistant", "first try")
    convgit(repo.path, "label", "@", "tried")
    convgit(repo.path, "user", "and more")  # no snapshot of its own: the reply's is nearest
    repo.write("src/app.py", "print('second')\n")
    repo.write("notes.txt", "new\n")

    counted = convgit(repo.path, "status", "--json").json()["files"]["changed"]
    alone = convgit(repo.path, "diff", "--json").json()["changes"]
    assert sorted(c["path"] for c in alone) == sorted(counted) == ["notes.txt", "src/app.py"]
    assert alone == convgit(repo.path, "diff", "tried", "--json").json()["changes"]
    patch = convgit(repo.path, "diff", "-p").stdout
    assert "-print('first')\n+print('second')" in patch


def test_diff_without_an_entry_outside_git_says_there_are_no_files_to_compare(
    tmp_path: Path,
) -> None:
    convgit(tmp_path, "init")
    convgit(tmp_path, "user", "hello")
    ran = convgit(tmp_path, "diff", code=1)
    assert one_sentence(ran.stderr).startswith("convgit: The workspace track needs a git")
