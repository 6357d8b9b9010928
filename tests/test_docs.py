"""The documentation is checked like code: every command has help text and is in the README,
and the README's first lines give the two commands a new user runs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import typer.main

from convgit.cli import app

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
COMMANDS = sorted(typer.main.get_command(app).commands)  # type: ignore[attr-defined]


def test_there_are_commands() -> None:
    expected = {"init", "user", "assistant", "log", "tree", "restore", "status", "demo"}
    assert expected <= set(COMMANDS)


@pytest.mark.parametrize("name", COMMANDS)
def test_every_command_has_help_text(name: str) -> None:
    command = typer.main.get_command(app).commands[name]  # type: ignore[attr-defined]
    assert command.help and len(command.help.strip()) > 10


@pytest.mark.parametrize("name", COMMANDS)
def test_every_command_is_in_the_readme(name: str) -> None:
    assert re.search(rf"convgit {name}\b", README), f"`convgit {name}` is not in README.md"


def test_readme_opens_with_install_and_demo_then_tests() -> None:
    head = "\n".join(README.splitlines()[:25])
    assert "convgit demo" in head
    assert ".ci/run" in head or "pytest" in head


def test_changelog_exists() -> None:
    assert "## " in (ROOT / "CHANGELOG.md").read_text()
