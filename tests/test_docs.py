"""The documentation is checked like code: every command has help text and is in the user guide
(docs/guide.md; the other pages are checked in test_docs_pages.py), and the README's first lines
give the two commands a new user runs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import typer.main

from convgit.cli import app

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
GUIDE = (ROOT / "docs" / "guide.md").read_text()
COMMANDS = sorted(typer.main.get_command(app).commands)  # type: ignore[attr-defined]


def test_there_are_commands() -> None:
    expected = {"init", "user", "assistant", "log", "tree", "restore", "status", "demo"}
    assert expected <= set(COMMANDS)


@pytest.mark.parametrize("name", COMMANDS)
def test_every_command_has_help_text(name: str) -> None:
    command = typer.main.get_command(app).commands[name]  # type: ignore[attr-defined]
    assert command.help and len(command.help.strip()) > 10


@pytest.mark.parametrize("name", COMMANDS)
def test_every_command_is_in_the_guide(name: str) -> None:
    assert re.search(rf"convgit {name}\b", GUIDE), f"`convgit {name}` is not in docs/guide.md"


def test_readme_opens_with_install_and_demo_then_the_test_command_ci_runs() -> None:
    block = README.split("```sh\n", 1)[1].split("```", 1)[0]
    commands = [line.split("#", 1)[0].strip() for line in block.splitlines()]
    assert len(commands) == 2 and "convgit demo" in commands[0]
    tests = commands[1]
    # CI runs exactly the README's test command, and nothing else that could make it pass
    ci = [
        line
        for line in (ROOT / ".ci" / "run").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert ci[-1] == f"exec bash {tests}"
    assert all(line.startswith(("set ", "cd ")) for line in ci[:-1])


def test_changelog_exists() -> None:
    assert "## " in (ROOT / "CHANGELOG.md").read_text()


def _shape(text: str) -> list[str]:
    """A transcript with what differs from run to run put aside: ids and commits (hex), times,
    the demo's folder, the page's size."""
    text = re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", "TIME", text)
    text = re.sub(r"/\S*convgit-demo-[^/\s]+", "DEMO", text)
    text = re.sub(r"\b[0-9a-f]{7,40}\b", "ID", text)
    text = re.sub(r"\(\d+ KiB\)", "(N KiB)", text)
    return [line.rstrip() for line in text.strip("\n").splitlines()]


def test_the_readmes_demo_transcript_is_what_the_demo_prints(tmp_path: Path) -> None:
    """The README's demo, as written, is a run of `convgit demo` (at 120 columns)."""
    from tests import clirun

    folder = tmp_path / "convgit-demo-test"
    ran = clirun.run("demo", "--dir", str(folder), cwd=tmp_path, env={"COLUMNS": "120"})
    section = README.split("## The demo (real output)", 1)[1]
    written = section.split("```\n", 1)[1].split("\n```\n", 1)[0]
    assert _shape(written) == _shape(ran.stdout)
