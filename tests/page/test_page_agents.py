"""The page names the agent of an entry another agent wrote (a turn continued after a handoff,
issue 36) as `convgit tree` does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from convgit.text import render
from tests.page.conftest import Shown, convgit_json, run_convgit


def test_an_entry_another_agent_wrote_names_it_as_convgit_tree_does(
    tmp_path: Path, show: Any
) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    run_convgit(folder, "init")
    run_convgit(folder, "user", "hi")
    reply = {"type": "message", "role": "assistant", "content": "Codex goes on.", "agent": "codex"}
    convgit_json(folder, "append", input=orjson.dumps(reply).decode() + "\n")
    (record,) = [e for e in convgit_json(folder, "log")["entries"] if e.get("agent") == "codex"]
    assert render.summary(record) == "assistant (codex): Codex goes on."
    assert (
        f"{record['id'][:8]} assistant (codex): Codex goes on."
        in run_convgit(folder, "tree").stdout
    )
    shown: Shown = show(Path(convgit_json(folder, "html")["path"]))
    row = shown.row(record["id"])
    kind, text = row.locator(".kind").inner_text(), row.locator(".text").inner_text()
    assert f"{kind}: {text}" == render.summary(record)
    assert shown.errors == []
