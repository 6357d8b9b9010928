"""Driving ``convgit ui`` with textual's own headless pilot: the real app on a real session,
keys pressed as a person presses them, the session and the files read afterwards as the
commands read them."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from textual.pilot import Pilot
from textual.widgets import Static

from convgit.navigator.app import Navigator
from convgit.navigator.shape import Fold
from convgit.session import Session
from tests.workspace.cli import convgit
from tests.workspace.gitrepo import GitRepo

Drive = Pilot[list[str]]
Script = Callable[[Navigator, Drive], Awaitable[None]]


def drive(
    folder: Path, script: Script, size: tuple[int, int] = (140, 40), *, stable: bool = False
) -> Navigator:
    """Run the navigator on the current session of ``folder`` while ``script`` presses keys
    (``stable``: as ``convgit ui --stable``)."""

    async def main() -> Navigator:
        app = Navigator(Session.open(folder), stable=stable)
        async with app.run_test(size=size) as pilot:
            await settle(app, pilot)
            await script(app, pilot)
            await settle(app, pilot)
        return app

    return asyncio.run(main())


async def settle(app: Navigator, pilot: Drive) -> None:
    """Until what the keys started is drawn: messages handled, the diff's worker done."""
    await pilot.pause()
    await app.workers.wait_for_complete()
    await pilot.pause()


async def go_to(app: Navigator, pilot: Drive, ident: str) -> None:
    """The cursor on ``ident``, with the arrow keys only: down or up to each fold it is in,
    right to open it (its rows are made then), then down or up to the entry."""
    route = app.drawn.placed.route(ident)
    for step in route:
        await pilot.pause()
        target = app.drawn.fold_nodes[step] if isinstance(step, Fold) else app.drawn.nodes[step]
        for _ in range(len(app.drawn.nodes) + len(app.drawn.fold_nodes) + 1):
            if app.drawn.cursor_node is target:
                break
            await pilot.press("down" if target.line > app.drawn.cursor_line else "up")
        assert app.drawn.cursor_node is target, f"the cursor did not reach {step}"
        if step is not ident and not target.is_expanded:
            await pilot.press("right")
    await settle(app, pilot)


async def type_line(pilot: Drive, text: str) -> None:
    """Type ``text`` into the open input line and press enter."""
    for char in text:
        await pilot.press("space" if char == " " else char)
    await pilot.press("enter")


def said(app: Navigator) -> str:
    """What the line above the footer says."""
    return str(app.query_one("#status", Static).content)


def shown(app: Navigator, selector: str) -> str:
    return str(app.screen.query_one(selector, Static).content)


@dataclass
class Story:
    """A repository with two branches, snapshots on both and a restore undone."""

    repo: GitRepo
    plan_one: str  # the reply that wrote plan.txt "one" (the fork point)
    again: str  # the user message starting the first branch, off the active path
    plan_two: str  # its reply: plan.txt "two" and extra.txt
    other: str  # the user message starting the active branch
    three: str  # the leaf: plan.txt "three"

    def sid(self) -> str:
        return Session.open(self.repo.path).id


def story(repo: GitRepo) -> Story:
    def said(*args: str) -> str:
        return str(convgit(repo.path, *args, "--json").json()["id"])

    convgit(repo.path, "init")
    said("user", "make a plan")
    repo.write("plan.txt", "one\n")
    plan_one = said("assistant", "wrote plan one")
    again = said("user", "again")
    repo.write("plan.txt", "two\n")
    repo.write("extra.txt", "x\n")
    plan_two = said("assistant", "wrote plan two")
    other = str(convgit(repo.path, "fork", plan_one, "other idea", "--json").json()["id"])
    repo.write("plan.txt", "three\n")
    (repo.path / "extra.txt").unlink()
    three = said("assistant", "wrote plan three")
    convgit(repo.path, "restore", plan_two, "--yes")
    convgit(repo.path, "restore", "--undo", "--yes")
    return Story(repo, plan_one, again, plan_two, other, three)
