"""The page names a system prompt entry as `convgit tree` does, and says what it is."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from convgit.text import render
from tests.page.conftest import Shown, convgit_json, run_convgit


def test_a_system_prompt_is_drawn_in_the_words_of_convgit_tree(tmp_path: Path, show: Any) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    run_convgit(folder, "init")
    run_convgit(folder, "user", "hi")
    made = convgit_json(folder, "system", "Be brief.")["entry"]
    cleared = convgit_json(folder, "system", "--clear")["entry"]
    shown: Shown = show(Path(convgit_json(folder, "html")["path"]))
    for record in (made, cleared):
        row = shown.row(record["id"])
        kind, text = row.locator(".kind").inner_text(), row.locator(".text").inner_text()
        assert f"{kind}: {text}" == render.summary(record)
    shown.select(made["id"])
    details = shown.page.locator("#details").inner_text()
    assert "the system prompt from here on" in details and "Be brief." in details
    assert shown.errors == []
