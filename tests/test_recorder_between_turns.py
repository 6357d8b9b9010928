"""What a user does to a session between two agent turns, while the recorder keeps that session
read between its events (``store.load.session_again``): labels, moves of the leaf, forks,
restores, renames, repair, gc, redact, the trash, appends by other processes and hand edits.
Each turn the recorder records is in the session once with its snapshot, the tree it keeps
never differs from the file read whole (``CONVGIT_HELD_CHECK``, set for every test, makes a
difference a problem in the hook log), and fsck finds nothing. Run with the real CLI and a
real recorder (tests/recorded.py)."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import clirun
from tests.recorded import Claude, Recorded, recording
from tests.workspace.gitrepo import GitRepo


@pytest.fixture
def recorded(repo: GitRepo, tmp_path: Path) -> Iterator[Recorded]:
    yield from recording(repo, tmp_path)


def session_file(recorded: Recorded) -> Path:
    """The current session's file."""
    sid = recorded.json("status")["session"]
    (found,) = (recorded.repo.path / ".git" / "convgit").rglob(f"{sid}.jsonl")
    return Path(found)


def turn(recorded: Recorded, claude: Claude, n: int, turns: dict[str, str]) -> None:
    """One Claude Code turn through the recorder: the user's edit, a prompt, the agent's edit, a
    Stop; ``turns`` gets the tree each of its two entries should snapshot."""
    repo = recorded.repo
    repo.write("src/app.py", f"print('edited by the user before turn {n}')\n")
    turns[f"u-{claude.session[:4]}-{claude.n + 1}"] = repo.oracle()
    recorded.hook(claude.prompt())
    repo.write(f"made-{n}.txt", f"made by the agent in turn {n}\n")
    turns[claude.ids()[1]] = repo.oracle()
    recorded.hook(claude.reply())


def problems(recorded: Recorded) -> list[str]:
    return [line for line in recorded.log() if ": problem after " in line]


def test_a_line_edited_in_place_by_hand_is_read_whole(recorded: Recorded, tmp_path: Path) -> None:
    """An editor that writes the file in place (nano does) keeps its inode and, for an edit of
    the same length, its size: nothing was appended, yet the file is not what was read."""
    claude = Claude(tmp_path / "claude", recorded.repo.path)
    recorded.hook(claude.start())
    recorded.wait_running()
    turns: dict[str, str] = {}
    turn(recorded, claude, 1, turns)
    path = session_file(recorded)
    data = path.read_bytes()
    assert data.count(b'"prompt 1"') == 1
    with open(path, "r+b") as out:
        out.write(data.replace(b'"prompt 1"', b'"prompt X"'))
    turn(recorded, claude, 2, turns)
    assert not problems(recorded), problems(recorded)
    shown = recorded.json("show", "u-0b9c-1")
    assert "prompt X" in json.dumps(shown)


class User:
    """What a user does to the session between two turns, each through the real CLI or by hand
    on its file."""

    def __init__(self, recorded: Recorded, sid: str, path: Path, turns: dict[str, str]) -> None:
        self.recorded, self.sid, self.path, self.turns = recorded, sid, path, turns
        self.n = 0
        self.restored = False

    def cli(self, *args: str, code: int | None = 0, input: str | None = None) -> clirun.Ran:
        return clirun.run(
            *args, cwd=self.recorded.repo.path, env=self.recorded.env, code=code, input=input
        )

    def replies(self) -> list[str]:
        return [ref for ref in self.turns if ref.startswith("a-")]

    def label(self) -> None:
        self.n += 1
        self.cli("-s", self.sid, "label", self.replies()[-1], f"mark-{self.n}")

    def switch(self) -> None:
        self.cli("-s", self.sid, "switch", self.replies()[0])

    def switch_tip(self) -> None:
        self.cli("-s", self.sid, "switch", "--tip", self.replies()[0])

    def fork(self) -> None:
        self.cli("-s", self.sid, "fork", self.replies()[0], "a question on a side branch")

    def fork_new_session(self) -> None:
        self.cli("-s", self.sid, "fork", "--new-session", self.replies()[-1])

    def restore(self) -> None:
        self.cli("-s", self.sid, "restore", "--yes", next(iter(self.turns)))  # the first prompt
        self.restored = True

    def restore_undo(self) -> None:
        """Back to the state saved by the last restore (one made first, when none was)."""
        if not self.restored:
            self.restore()
        self.cli("-s", self.sid, "restore", "--undo", "--yes")

    def name(self) -> None:
        self.n += 1
        self.cli("-s", self.sid, "name", f"the kept session {self.n}")

    def torn_then_repair(self) -> None:
        with self.path.open("ab") as out:  # a writer stopped mid-line
            out.write(b'{"type":"message","id":"torn')
        self.cli("-s", self.sid, "fsck", code=None)
        self.cli("-s", self.sid, "repair")
        self.cli("-s", self.sid, "fsck")

    def torn(self) -> None:
        """Left for the recorder's next write to move to the quarantine."""
        with self.path.open("ab") as out:
            out.write(b'{"type":"message","id":"torn-by-hand","role":"us')

    def gc(self) -> None:
        self.cli("gc")

    def redact(self) -> None:
        self.cli("-s", self.sid, "redact", "--yes", "Done")

    def trash(self) -> None:
        self.cli("sessions", "rm", "--yes", self.sid)
        self.cli("sessions", "restore", self.sid)

    def append(self) -> None:
        entry = {"type": "message", "role": "user", "content": "a note appended by hand"}
        self.cli("-s", self.sid, "append", input=json.dumps(entry) + "\n")

    def truncate(self) -> None:
        """The last line cut off by hand (whatever it is: an entry, a label, an import's mark)."""
        data = self.path.read_bytes()
        with self.path.open("r+b") as out:
            out.truncate(data.rstrip(b"\n").rfind(b"\n") + 1)

    def edit_in_place(self) -> None:
        """An earlier prompt's text changed by an editor that writes in place (nano does)."""
        data = self.path.read_bytes()
        with self.path.open("r+b") as out:
            out.write(data.replace(b'"content":"prompt 1"', b'"content":"prompt !"', 1))


@pytest.mark.slow
def test_what_a_user_does_between_turns_leaves_the_kept_session_as_the_file(
    recorded: Recorded, tmp_path: Path
) -> None:
    """Every command a user runs on the session between two Claude Code turns, and hand edits
    of its file, in an order shuffled with a fixed seed: no event finds its kept tree differing
    from the file, each turn is recorded once with the snapshot ``git add -A`` gives, and fsck
    finds the session sound."""
    claude = Claude(tmp_path / "claude", recorded.repo.path)
    recorded.hook(claude.start())
    recorded.wait_running()
    turns: dict[str, str] = {}
    turn(recorded, claude, 1, turns)
    sid = recorded.json("status")["session"]
    user = User(recorded, sid, session_file(recorded), turns)
    doings = [
        user.label, user.switch, user.switch_tip, user.fork, user.fork_new_session,
        user.restore, user.restore_undo, user.name, user.torn_then_repair, user.torn, user.gc,
        user.redact, user.trash, user.append, user.truncate, user.edit_in_place,
    ]  # fmt: skip
    random.Random(1207).shuffle(doings)
    for n, doing in enumerate(doings, 2):
        doing()
        turn(recorded, claude, n, turns)
        assert not problems(recorded), (doing.__name__, problems(recorded))
    records = [json.loads(line) for line in user.path.read_bytes().splitlines()]
    for ref, tree in turns.items():
        assert sum(r.get("type") == "message" and r.get("id") == ref for r in records) == 1, ref
        assert recorded.json("-s", sid, "show", ref)["snapshot"]["tree"] == tree, ref
    user.cli("-s", sid, "fsck")
    events = recorded.log()[1:]  # after the SessionStart the hook did itself
    assert len(events) == len(turns) and all(" through the recorder (" in e for e in events)
