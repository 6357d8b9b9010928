"""The recorder killed with SIGKILL at every point of an event (a fault point each,
``CONVGIT_RECORDER_FAULT``): the hook that handed it the event sees no answer and does the work
itself; nothing is lost (every turn's snapshots are git's trees of the files then), no lock is
left, and the next recorder starts clean and takes the next events."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.recorded import Claude, Recorded, alive, no_lock_is_left, recording
from tests.workspace.gitrepo import GitRepo

# In the order an event reaches them: the request read; watchman asked; the changed files
# hashed; the trees written; the transcript's entries appended (a Stop); the event recorded;
# the client answered.
POINTS = [
    "recorder:received",
    "patch:asked",
    "patch:hashed",
    "patch:written",
    "append:before-write",
    "append:after-write",
    "recorder:recorded",
    "recorder:answered",
]
MAIN = "patch:hashed"  # the one run in the main tier: blobs written, no tree or commit yet


@pytest.fixture
def recorded(repo: GitRepo, tmp_path: Path) -> Iterator[Recorded]:
    yield from recording(repo, tmp_path)


@pytest.mark.parametrize(
    "point", [p if p == MAIN else pytest.param(p, marks=pytest.mark.slow) for p in POINTS]
)
def test_the_recorder_killed_at_a_point_of_an_event_loses_nothing(
    recorded: Recorded, tmp_path: Path, point: str
) -> None:
    repo = recorded.repo
    claude = Claude(tmp_path / "claude", repo.path)
    recorded.env["CONVGIT_RECORDER_FAULT"] = f"{point}#1"
    recorded.hook(claude.start())
    first = int(str(recorded.wait_running()["pid"]))
    expected: dict[str, str] = {}
    for turn in range(2):
        repo.write("src/app.py", f"print('turn {turn}')\n")
        at_prompt = repo.oracle()
        recorded.hook(claude.prompt())
        repo.write(f"made-{turn}.txt", f"turn {turn}\n")
        at_stop = repo.oracle()
        recorded.hook(claude.reply())
        prompt, reply = claude.ids()
        expected |= {prompt: at_prompt, reply: at_stop}
    assert not alive(first), f"the recorder was not killed at {point}"
    for entry, tree in expected.items():
        assert recorded.json("show", entry)["snapshot"]["tree"] == tree, (point, entry)
    assert all("problem" not in line for line in recorded.log()), recorded.log()
    no_lock_is_left(repo.path)
    recorded.cli("fsck")

    # the next recorder, without the fault, starts clean and takes the next events
    recorded.end()
    del recorded.env["CONVGIT_RECORDER_FAULT"]
    recorded.allow_start()
    recorded.hook(claude.event("SessionStart", source="resume"))
    recorded.wait_running()
    repo.write("src/app.py", "print('after the kills')\n")
    at_prompt = repo.oracle()
    recorded.hook(claude.prompt())
    recorded.hook(claude.reply())
    assert all(" through the recorder" in line for line in recorded.log()[-2:]), recorded.log()
    assert recorded.json("show", claude.ids()[0])["snapshot"]["tree"] == at_prompt
