"""docs/handoff.md's tables of what survives a handoff are the ones the code makes from each
agent's writer (issue 36): the page says exactly what the writers keep."""

from __future__ import annotations

from pathlib import Path

from convgit.agents import losses

PAGE = Path(__file__).resolve().parents[2] / "docs" / "handoff.md"


def test_the_pages_tables_are_the_ones_the_code_makes() -> None:
    text = PAGE.read_text()
    start, end = text.index(losses.BEGIN), text.index(losses.END) + len(losses.END)
    assert text[start:end] + "\n" == losses.markdown()


def test_the_table_says_what_each_target_keeps() -> None:
    """A few cells read against the writers' own words: Codex keeps no usage, Claude Code
    keeps another agent's thinking out, pi keeps everything of its own."""
    assert "usage" in losses.survives("claude-code", "codex")[1]
    assert "thinking" in losses.survives("pi", "claude-code")[1]
    assert "thinking" in losses.survives("claude-code", "claude-code")[0]
    assert losses.survives("pi", "pi")[1] == []
