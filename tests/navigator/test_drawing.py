"""`convgit ui` draws true: a connector only where the conversation forks (the rest of a branch
is one line, drawn with none), the marks before an entry's text (a narrow pane never cuts them),
every key of the footer at 80 columns, the right pane showing what was asked last however fast
the keys come, and with --stable the same picture wherever the context moves. Driven by
textual's pilot on real sessions."""

from __future__ import annotations

import asyncio

from textual import events
from textual.widgets import Static

from convgit.navigator.app import Navigator
from convgit.session import Session
from tests.navigator.drive import Drive, Story, drive, go_to, settle, shown, story
from tests.workspace.cli import convgit
from tests.workspace.gitrepo import GitRepo

CONNECTORS = ("├─", "└─")


def row(app: Navigator, ident: str) -> str:
    """The row of ``ident`` as the tree pane draws it (its node must be made)."""
    tree = app.drawn
    line = tree.nodes[ident].line
    return tree.render_line(line - tree.scroll_offset.y).text


def test_a_branch_continues_with_no_connector_and_only_forks_get_one(repo: GitRepo) -> None:
    told: Story = story(repo)
    # one entry more on the branch off the active path: again, plan_two, then more
    convgit(repo.path, "switch", told.plan_two)
    more = convgit(repo.path, "user", "and more", "--json").json()["id"]
    convgit(repo.path, "switch", told.three)

    async def look(app: Navigator, pilot: Drive) -> None:
        await go_to(app, pilot, more)
        head = row(app, told.again)
        assert head.lstrip().startswith(CONNECTORS)  # the branch forks from plan one
        for ident in (told.plan_two, more):  # the rest of it is one line
            drawn = row(app, ident)
            assert not any(c in drawn for c in CONNECTORS), drawn
            # its text starts where the branch's first entry's text does
            short = app.view.short_id(ident)
            assert drawn.index(short) == head.index(app.view.short_id(told.again))

    drive(repo.path, look, size=(140, 30))


def test_at_80_columns_the_marks_and_every_key_are_shown(repo: GitRepo) -> None:
    told: Story = story(repo)
    convgit(repo.path, "label", told.three, "third-plan-with-a-long-label")

    async def look(app: Navigator, pilot: Drive) -> None:
        leaf = row(app, told.three)
        assert "← files" in leaf and "← context" in leaf and "[third-plan" in leaf
        keys = str(app.query_one("#keys", Static).content)
        assert all(len(line) <= app.size.width - 2 for line in keys.splitlines())
        for word in ("/ search", "s switch", "a resume", "q quit", "? help"):
            assert word in keys

    drive(repo.path, look, size=(80, 24))


def test_d_typed_fast_after_moves_shows_the_diff_not_an_entry(repo: GitRepo) -> None:
    told: Story = story(repo)
    repo.write("plan.txt", "edited by hand\n")

    async def burst(app: Navigator, pilot: Drive) -> None:
        # as a terminal delivers keys typed fast: all queued before the tree says where its
        # cursor went
        for key in ("up", "up", "down", "down", "d"):
            app.post_message(events.Key(key, None))
        await settle(app, pilot)
        await asyncio.sleep(0.3)
        await settle(app, pilot)
        assert app.selected == told.three
        right = shown(app, "#entry")
        assert right.startswith(f"diff from {app.view.short_id(told.three)} to the files now")
        assert "+edited by hand" in right
        await pilot.press("up")  # moving on shows the entry there again
        await settle(app, pilot)
        assert shown(app, "#entry").startswith(f"entry {app.view.short_id(told.other)}")

    drive(repo.path, burst)


def test_stable_keeps_the_picture_when_the_context_moves(repo: GitRepo) -> None:
    told: Story = story(repo)

    def order(stable: bool) -> tuple[list[str], list[str]]:
        seen: list[list[str]] = []

        async def switch(app: Navigator, pilot: Drive) -> None:
            await go_to(app, pilot, told.plan_two)
            seen.append(app.drawn.placed.drawing_order())
            await pilot.press("s")
            await settle(app, pilot)
            assert Session.open(repo.path).conversation.leaf == told.plan_two
            seen.append(app.drawn.placed.drawing_order())
            await go_to(app, pilot, told.three)
            await pilot.press("s")  # back where it was
            await settle(app, pilot)

        drive(repo.path, switch, stable=stable)
        return seen[0], seen[1]

    before, after = order(stable=True)
    assert before == after  # nothing moved
    before, after = order(stable=False)
    assert before != after  # by default the context's branch comes first, so it moves
