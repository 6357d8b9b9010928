"""A long session: the navigator makes rows only for what is open (a long line's older part is
folded, a branch off the active path too), so it starts as fast on thousands of entries as on
ten; every entry is still reached, by the keys or by a search."""

from __future__ import annotations

import orjson

from convgit.navigator.app import Navigator
from convgit.navigator.shape import WINDOW
from convgit.session import Session
from tests.navigator.drive import Drive, drive, go_to, said, settle, shown, type_line
from tests.workspace.cli import convgit
from tests.workspace.gitrepo import GitRepo

ENTRIES = 3 * WINDOW


def test_a_long_line_is_folded_and_every_entry_is_reached(repo: GitRepo) -> None:
    convgit(repo.path, "init", "--no-snapshots")
    lines = b"".join(
        orjson.dumps({"type": "message", "role": r, "content": f"{r} turn {n}."}) + b"\n"
        for n, r in enumerate(["user", "assistant"] * (ENTRIES // 2))
    )
    ids = convgit(repo.path, "append", "--json", input=lines).json()["ids"]

    async def walk(app: Navigator, pilot: Drive) -> None:
        assert app.selected == ids[-1]
        assert len(app.drawn.nodes) == WINDOW  # the older entries wait in folds
        assert "… 200 entries" in str(app.drawn.fold_nodes[next(iter(app.drawn.fold_nodes))].label)
        await go_to(app, pilot, ids[5])  # by the keys: up to the fold, right, down
        assert "assistant turn 5." in shown(app, "#entry")
        await pilot.press("slash")
        await type_line(pilot, "user turn 250.")
        await settle(app, pilot)
        assert app.selected == ids[250] and "match 1 of 1" in said(app)

    drive(repo.path, walk)
    assert Session.open(repo.path).conversation.leaf == ids[-1]
