"""`convgit ui` follows the session while Claude Code's hook records turns into it: the hook
runs in its own process, as Claude runs it, and its entries show up in the tree."""

from __future__ import annotations

from pathlib import Path

from convgit.navigator.app import FOLLOW_SECONDS, Navigator
from convgit.session import Session
from tests.navigator.drive import Drive, drive
from tests.test_hook import event, hook, line
from tests.workspace.gitrepo import GitRepo


def test_a_turn_the_hook_records_while_the_app_runs_shows_up(repo: GitRepo, tmp_path: Path) -> None:
    transcript = tmp_path / "transcript.jsonl"
    transcript.write_text(
        line("user", "u1", None, "make a plan")
        + line("assistant", "a1", "u1", [{"type": "text", "text": "plan one"}])
    )
    repo.write("plan.txt", "one\n")
    for name in ("SessionStart", "UserPromptSubmit", "Stop"):
        assert hook(repo.path, event(name, transcript, repo.path)).returncode == 0
    sid = Session.open(repo.path).id

    async def follow(app: Navigator, pilot: Drive) -> None:
        before = set(app.drawn.placed.place)
        with transcript.open("a") as more:
            more.write(line("user", "u2", "a1", "now plan two"))
            more.write(line("assistant", "a2", "u2", [{"type": "text", "text": "plan two"}]))
        repo.write("plan.txt", "two\n")
        assert hook(repo.path, event("Stop", transcript, repo.path)).returncode == 0
        for _ in range(100):  # the app looks every FOLLOW_SECONDS
            if len(app.drawn.placed.place) > len(before):
                break
            await pilot.pause(FOLLOW_SECONDS / 2)
        new = set(app.drawn.placed.place) - before
        texts = " ".join(str(app.drawn.nodes[i].label) for i in new)
        assert "now plan two" in texts and "◆ ← files ← context assistant: plan two" in texts
        assert app.session.id == sid

    drive(repo.path, follow)
