"""`convgit ui`, one test per key, each asserting the key's promise on a real repository with
two branches, snapshots and a restore, driven by textual's headless pilot. The user's git state
(HEAD, index, branches, stash) is checked unchanged after every test (the ``repo`` fixture)."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from convgit.navigator.app import FOLLOW_SECONDS, Navigator
from convgit.navigator.screens import Branches, Confirm, Help
from convgit.session import Session
from tests import clirun
from tests.navigator.drive import Drive, Story, drive, go_to, said, settle, shown, story, type_line
from tests.workspace.cli import convgit
from tests.workspace.gitrepo import GitRepo


@pytest.fixture
def told(repo: GitRepo) -> Story:
    return story(repo)


def files(repo: GitRepo) -> tuple[object, str]:
    """The working tree as git sees it: every file's bytes, and `git status`."""
    return repo.digest(), repo.git("status", "--porcelain", "--untracked-files=all")


def test_it_opens_on_the_leaf_with_both_tracks_said(told: Story) -> None:
    async def look(app: Navigator, pilot: Drive) -> None:
        assert app.selected == told.three
        assert "context: at" in said(app) and "files:   match the snapshot of" in said(app)
        # the entry on the right, with its snapshot's diff from the previous one on its path
        entry = shown(app, "#entry")
        assert "wrote plan three" in entry and "-one\n+three" in entry

    drive(told.repo.path, look)


def test_s_switches_the_context_here_and_changes_no_file(told: Story) -> None:
    before = files(told.repo)

    async def switch(app: Navigator, pilot: Drive) -> None:
        await go_to(app, pilot, told.plan_two)
        await pilot.press("s")
        await settle(app, pilot)
        assert "switched to" in said(app) and "files: not changed" in said(app)

    drive(told.repo.path, switch)
    assert Session.open(told.repo.path).conversation.leaf == told.plan_two
    assert files(told.repo) == before


def test_r_lists_what_changes_and_restores_only_when_confirmed(told: Story) -> None:
    before = files(told.repo)

    async def restore(app: Navigator, pilot: Drive) -> None:
        await go_to(app, pilot, told.plan_two)
        await pilot.press("r")
        await settle(app, pilot)
        assert isinstance(app.screen, Confirm)
        listed = shown(app, "#confirm")
        assert "would restore 2 files" in listed and "M plan.txt" in listed
        assert "A extra.txt" in listed
        await pilot.press("n")
        await settle(app, pilot)
        assert "nothing was restored" in said(app)
        assert files(told.repo) == before
        await pilot.press("r")
        await settle(app, pilot)
        await pilot.press("y")
        await settle(app, pilot)
        assert "restored 2 files" in said(app) and "saved the previous state" in said(app)

    drive(told.repo.path, restore)
    session = Session.open(told.repo.path)
    assert told.repo.oracle() == session.track.sidecar.snapshots[told.plan_two].tree_id
    assert session.conversation.leaf == told.three  # a restore moves no context
    saved = convgit(told.repo.path, "restores", "--json").json()["saved_states"]
    assert saved[0]["before"]["entry"] == told.plan_two  # the files were saved first


def test_u_brings_the_files_back(told: Story) -> None:
    before = files(told.repo)

    async def restore_then_undo(app: Navigator, pilot: Drive) -> None:
        await go_to(app, pilot, told.plan_one)
        await pilot.press("r")
        await settle(app, pilot)
        await pilot.press("y")
        await settle(app, pilot)
        assert files(told.repo) != before
        await pilot.press("u")
        await settle(app, pilot)
        assert isinstance(app.screen, Confirm)
        assert "the state before the last restore" in shown(app, "#confirm")
        await pilot.press("y")
        await settle(app, pilot)
        assert "restored" in said(app)

    drive(told.repo.path, restore_then_undo)
    assert files(told.repo) == before


def tool_run(repo: GitRepo, tool: str, path: str) -> str:
    """An assistant message calling ``tool`` on ``path``, and its result; the caller's id."""
    call = [{"type": "tool_call", "id": "c1", "name": tool, "input": {"path": path}}]
    reply = {"type": "message", "role": "assistant", "content": call}
    result = {"type": "message", "role": "tool", "toolCallId": "c1", "content": "done"}
    lines = orjson.dumps(reply) + b"\n" + orjson.dumps(result) + b"\n"
    return str(convgit(repo.path, "append", "--json", input=lines).json()["ids"][0])


def test_a_refused_fork_shows_the_refusals_sentence(repo: GitRepo) -> None:
    """A branch may not start inside a tool run: the app refuses with the command's words."""
    convgit(repo.path, "init", "--no-snapshots")
    convgit(repo.path, "user", "read it")
    caller = tool_run(repo, "read", "notes.md")
    refused = convgit(repo.path, "fork", caller, "instead", code=1).stderr
    before = (repo.path / ".git" / "convgit").rglob("*.jsonl")
    lines = {p: p.read_bytes() for p in before}

    async def fork(app: Navigator, pilot: Drive) -> None:
        await go_to(app, pilot, caller)
        await pilot.press("f")
        await type_line(pilot, "instead")
        await settle(app, pilot)
        assert said(app) == refused.rstrip("\n")

    drive(repo.path, fork)
    assert {p: p.read_bytes() for p in lines} == lines  # nothing was written


def test_e_writes_a_new_version_beside_the_message(told: Story) -> None:
    before = files(told.repo)

    async def edit(app: Navigator, pilot: Drive) -> None:
        await go_to(app, pilot, told.other)
        await pilot.press("e")
        await type_line(pilot, "a third idea")
        await settle(app, pilot)
        assert "edited:" in said(app) and "files: not changed" in said(app)
        assert (
            app.selected == Session.open(told.repo.path).conversation.leaf
        )  # the cursor on the new one

    drive(told.repo.path, edit)
    new = Session.open(told.repo.path).conversation.entry("@")
    assert new.to_wire()["content"] == "a third idea"
    assert new.parent_id == told.plan_one and new.id != told.other
    assert files(told.repo) == before


def test_f_forks_here_with_a_user_message(told: Story) -> None:
    async def fork(app: Navigator, pilot: Drive) -> None:
        await go_to(app, pilot, told.plan_two)
        await pilot.press("f")
        await type_line(pilot, "go on from two")
        await settle(app, pilot)
        assert "forked:" in said(app)

    drive(told.repo.path, fork)
    leaf = Session.open(told.repo.path).conversation.entry("@")
    assert leaf.parent_id == told.plan_two and leaf.to_wire()["content"] == "go on from two"


def test_f_after_a_restore_tells_the_model_above_the_new_message(told: Story) -> None:
    convgit(told.repo.path, "restore", told.plan_two, "--yes")

    async def fork(app: Navigator, pilot: Drive) -> None:
        await go_to(app, pilot, told.plan_two)
        await pilot.press("f")
        await type_line(pilot, "go on with these files")
        await settle(app, pilot)
        assert "forked:" in said(app) and "above it:" in said(app)

    drive(told.repo.path, fork)
    session = Session.open(told.repo.path)
    leaf = session.conversation.entry("@")
    note = session.conversation.tree.entries[str(leaf.parent_id)]
    assert note["type"] == "note" and note["source"] == "restore"
    assert note["parentId"] == told.plan_two and f"entry {told.plan_two}" in note["text"]


def test_l_labels_the_entry_and_an_empty_label_takes_it_off(told: Story) -> None:
    async def label(app: Navigator, pilot: Drive) -> None:
        await go_to(app, pilot, told.plan_one)
        await pilot.press("l")
        await type_line(pilot, "planA")
        await settle(app, pilot)
        assert "labelled planA" in said(app)
        assert "[planA]" in str(app.drawn.nodes[told.plan_one].label)
        assert Session.open(told.repo.path).conversation.labelled("planA") == [told.plan_one]
        await pilot.press("l", "ctrl+u")  # the line holds the label: cleared, nothing typed
        await type_line(pilot, "")
        await settle(app, pilot)
        assert "unlabelled" in said(app)

    drive(told.repo.path, label)
    assert Session.open(told.repo.path).conversation.labelled("planA") == []


def test_slash_finds_text_ids_labels_and_file_names(told: Story) -> None:
    convgit(told.repo.path, "label", told.plan_two, "second")

    async def search(app: Navigator, pilot: Drive) -> None:
        for query, found in (
            ("plan two", told.plan_two),  # text, in a folded branch: unfolded
            (told.again[:6], told.again),  # an id's first characters
            ("second", told.plan_two),  # a label
            ("make a", None),  # the first message
        ):
            await pilot.press("slash")
            await type_line(pilot, query)
            await settle(app, pilot)
            assert found is None or app.selected == found, query
            assert "match 1 of 1" in said(app), query
        await pilot.press("slash")
        await type_line(pilot, "nowhere to be found")
        await settle(app, pilot)
        assert "nothing matches" in said(app)

    drive(told.repo.path, search)


def test_slash_finds_a_file_name_in_a_tool_call(repo: GitRepo) -> None:
    convgit(repo.path, "init", "--no-snapshots")
    convgit(repo.path, "user", "fix it")
    caller = tool_run(repo, "edit", "src/calc.py")

    async def search(app: Navigator, pilot: Drive) -> None:
        await pilot.press("slash")
        await type_line(pilot, "calc.py")
        await settle(app, pilot)
        assert app.selected == caller

    drive(repo.path, search)


def test_d_diffs_this_snapshot_against_the_files_now_or_the_marked_one(told: Story) -> None:
    told.repo.write("plan.txt", "edited by hand\n")

    async def diff(app: Navigator, pilot: Drive) -> None:
        await go_to(app, pilot, told.three)
        await pilot.press("d")
        await settle(app, pilot)
        entry = shown(app, "#entry")
        assert "to the files now" in entry and "-three\n+edited by hand" in entry
        await pilot.press("m")
        await go_to(app, pilot, told.plan_two)
        await pilot.press("d")
        await settle(app, pilot)
        entry = shown(app, "#entry")
        assert "-three\n+two" in entry and "extra.txt" in entry

    drive(told.repo.path, diff)


def test_b_lists_the_branches_here_and_a_number_goes_to_one(told: Story) -> None:
    async def branches(app: Navigator, pilot: Drive) -> None:
        await go_to(app, pilot, told.three)
        await pilot.press("b")
        await settle(app, pilot)
        assert isinstance(app.screen, Branches)
        listed = shown(app, "#branches")
        assert "branches at" in listed and "wrote plan two" in listed
        await pilot.press("1")  # the branch started first: "again", to "wrote plan two"
        await settle(app, pilot)
        assert app.selected == told.plan_two

    drive(told.repo.path, branches)
    assert (
        Session.open(told.repo.path).conversation.leaf == told.three
    )  # going there is not switching


def test_a_resumes_a_session_no_agent_wrote_as_resume_does(told: Story) -> None:
    """Any session resumes in any agent (docs/handoff.md): one convgit alone wrote goes to
    Claude Code, the default, as `convgit resume` says, and the navigator gives its command."""
    said_by_cli = convgit(told.repo.path, "resume", told.three).stdout.splitlines()

    async def resume(app: Navigator, pilot: Drive) -> None:
        await go_to(app, pilot, told.three)
        await pilot.press("a")
        await pilot.pause()

    app = drive(told.repo.path, resume)
    assert app.return_value is not None
    assert app.return_value[-1].startswith("to continue there: claude -r ")
    assert said_by_cli[1].startswith("to continue there: claude -r ")


def test_a_resumes_in_the_agent_and_gives_the_command_after_quitting(
    tmp_path: Path,
) -> None:
    from tests.test_resume import imported

    folder, _ = imported(tmp_path, "progress-and-attachments.jsonl")

    async def resume(app: Navigator, pilot: Drive) -> None:
        await go_to(app, pilot, Session.open(folder).conversation.resolve("p2"))
        await pilot.press("a")
        await pilot.pause()

    app = drive(folder, resume)
    assert app.return_value is not None
    assert app.return_value[-1].startswith("to continue there: claude ")
    assert Session.open(folder).conversation.leaf == Session.open(folder).conversation.resolve("p2")


def test_an_append_by_another_process_shows_up_in_the_tree(told: Story) -> None:
    async def follow(app: Navigator, pilot: Drive) -> None:
        told.repo.write("plan.txt", "four\n")
        made = clirun.run("assistant", "and plan four", "--json", cwd=told.repo.path)
        ident = made.json()["id"]
        for _ in range(100):  # the app looks every FOLLOW_SECONDS
            if ident in app.drawn.nodes:
                break
            await pilot.pause(FOLLOW_SECONDS / 2)
        assert ident in app.drawn.nodes
        assert "← context" in str(app.drawn.nodes[ident].label)

    drive(told.repo.path, follow)


def test_arrows_fold_and_unfold_a_branch(told: Story) -> None:
    async def fold(app: Navigator, pilot: Drive) -> None:
        fork = app.drawn.nodes[told.plan_one]
        await go_to(app, pilot, told.plan_one)
        assert fork.is_expanded
        await pilot.press("left")
        assert not fork.is_expanded
        await pilot.press("right")
        assert fork.is_expanded
        head = app.drawn.nodes[told.again]
        assert not head.is_expanded  # a branch off the active path starts folded
        await go_to(app, pilot, told.plan_two)  # opened on the way
        assert head.is_expanded

    drive(told.repo.path, fold)


def test_question_mark_lists_every_key_and_q_quits(told: Story) -> None:
    async def keys(app: Navigator, pilot: Drive) -> None:
        await pilot.press("question_mark")
        await settle(app, pilot)
        assert isinstance(app.screen, Help)
        listed = shown(app, "#help")
        for key in ("/", "s", "r", "u", "d", "b", "e", "f", "a", "l", "q"):
            assert f"\n{key} " in listed, key
        await pilot.press("escape")
        await pilot.press("q")

    app = drive(told.repo.path, keys)
    assert app.return_value is None and not app.is_running
