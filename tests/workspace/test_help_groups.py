"""`convgit -h` lists the commands by task, in the groups and the order of docs/guide.md's
"Commands by task", each command once, each with the first sentence of its help whole."""

from __future__ import annotations

import re
from pathlib import Path

import typer.main

from convgit.cli import app
from tests.workspace.cli import convgit

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guide.md"


def guide_sections() -> list[tuple[str, str]]:
    """(title, text) of each section of the guide's "Commands by task"."""
    text = GUIDE.read_text().split("## Commands by task", 1)[1].split("\n## ", 1)[0]
    parts = re.split(r"^### (.+)$", text, flags=re.MULTILINE)[1:]
    return list(zip(parts[::2], parts[1::2], strict=True))


def help_groups(text: str) -> list[tuple[str, list[tuple[str, str]]]]:
    """(title, [(command, description)]) of each group `convgit -h` prints after its options."""
    groups: list[tuple[str, list[tuple[str, str]]]] = []
    for block in text.split("\n\n"):
        head, *rows = block.splitlines()
        if not head.endswith(":") or head.startswith((" ", "Options", "Usage")):
            continue
        found: list[tuple[str, str]] = []
        for row in rows:
            name, _, said = row.strip().partition("  ")
            if row.startswith("  ") and not row.startswith("   "):
                found.append((name, said.strip()))
            else:
                # a line wrapped after a hyphen ("read-" / "only") joins without a space
                gap = "" if found[-1][1].endswith("-") else " "
                found[-1] = (found[-1][0], f"{found[-1][1]}{gap}{row.strip()}")
        groups.append((head[:-1], found))
    return groups


def test_help_groups_the_commands_as_the_guide_does(tmp_path: Path) -> None:
    groups = help_groups(convgit(tmp_path, "-h", env={"COLUMNS": "100"}).stdout)
    sections = guide_sections()
    assert [title for title, _ in groups] == [title for title, _ in sections]
    for (title, rows), (_, text) in zip(groups, sections, strict=True):
        for name, _ in rows:
            assert f"`convgit {name}" in text, (
                f"`{name}` is under {title!r} in -h, not in the guide"
            )
    listed = [name for _, rows in groups for name, _ in rows]
    root = typer.main.get_command(app)
    visible = [n for n, c in root.commands.items() if not c.hidden]  # type: ignore[attr-defined]
    assert sorted(listed) == sorted(visible)  # each command once


def test_each_description_is_a_whole_sentence(tmp_path: Path) -> None:
    root = typer.main.get_command(app)
    for _, rows in help_groups(convgit(tmp_path, "-h").stdout):
        for name, said in rows:
            assert said.endswith((".", ")")) and not said.endswith("..."), (name, said)
            help_text = " ".join((root.commands[name].help or "").split())  # type: ignore[attr-defined]
            assert help_text.startswith(said), (name, said)
