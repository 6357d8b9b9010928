"""Every command's help, as `convgit COMMAND -h` prints it, names what the command takes in one
notation: UPPERCASE names (REF, SESSION, PATH, N), ``[NAME]`` when optional, ``NAME...`` when
repeated, for arguments and option values alike; no ``<name>`` or ``{name}`` forms."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import typer.main

from convgit.cli import app
from tests.workspace.cli import convgit

NAME = re.compile(r"^[A-Z][A-Z0-9_]*(\.\.\.)?$")


def command_lines() -> list[list[str]]:
    """Every command and subcommand, as words after `convgit`."""
    root = typer.main.get_command(app)
    found: list[list[str]] = []
    for name, cmd in sorted(root.commands.items()):  # type: ignore[attr-defined]
        subs = getattr(cmd, "commands", None)
        if subs:
            found += [[name, sub] for sub in sorted(subs)]
        else:
            found.append([name])
    return found


def test_every_command_is_checked() -> None:
    names = {" ".join(words) for words in command_lines()}
    assert {"log", "tree", "run", "hooks install", "completion", "label"} <= names
    assert len(names) >= 40


def usage_pieces(help_text: str, words: list[str]) -> list[str]:
    head = help_text.split("\n\n", 1)[0].replace("\n", " ")
    prefix = f"Usage: convgit {' '.join(words)} [OPTIONS]"
    assert head.startswith(prefix), head
    return head[len(prefix) :].split()


@pytest.mark.parametrize("words", command_lines(), ids=" ".join)
def test_help_names_arguments_and_values_in_one_notation(words: list[str], tmp_path: Path) -> None:
    text = convgit(tmp_path, *words, "-h").stdout
    for piece in usage_pieces(text, words):
        bare = piece[1:-1] if piece.startswith("[") and piece.endswith("]") else piece
        assert NAME.match(bare), f"usage piece {piece!r} of `convgit {' '.join(words)}`"
    section = ""
    for line in text.splitlines():
        if line.endswith(":") and not line.startswith(" "):
            section = line[:-1]
            continue
        if not line.startswith("  ") or line.startswith("   "):
            continue  # prose, or the continuation of an item's help
        head = re.split(r"\s{2,}", line.strip())[0]
        if section == "Arguments":
            assert NAME.match(head), f"argument {head!r} of `convgit {' '.join(words)}`"
        elif section == "Options":
            *names, last = head.split(" ")
            if names and not last.startswith("-"):  # the option takes a value
                assert NAME.match(last), f"value {head!r} of `convgit {' '.join(words)}`"
    assert not re.search(r"<[a-z][a-z_-]*>|\{[a-z][a-z_-]*\}", text), text
