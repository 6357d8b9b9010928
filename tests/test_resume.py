"""`convgit resume REF --agent claude-code` on imported transcripts (the live path with the
real CLI is in tests/agents): the new transcript holds exactly the lines of the path to REF,
byte for byte, in Claude's own tree; it lands beside the transcript it came from; only
--restore changes files; an entry Claude cannot resume at is refused plainly."""

from __future__ import annotations

import json
import shutil
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from tests import clirun
from tests.workspace.gitrepo import GitRepo, UserStateGuard, init_repo

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "claude-code"


def run(cwd: Path, *args: str, code: int = 0) -> str:
    done = clirun.run(*args, cwd=cwd, code=code)  # no terminal: what asks first needs --yes
    return done.stdout if code == 0 else done.stderr


def imported(tmp_path: Path, fixture: str) -> tuple[Path, Path]:
    """A folder with the fixture imported; the transcript copied where Claude keeps it."""
    folder = tmp_path / "work"
    folder.mkdir(exist_ok=True)
    transcript = tmp_path / "claude" / "projects" / "-work" / fixture
    transcript.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(FIXTURES / fixture, transcript)
    run(folder, "import", "claude-code", str(transcript))
    return folder, transcript


def resumed(folder: Path, ref: str, *more: str) -> dict[str, Any]:
    found: dict[str, Any] = json.loads(
        run(folder, "resume", ref, "--agent", "claude-code", *more, "--json")
    )
    return found


@pytest.mark.parametrize(
    ("fixture", "ref", "lines"),
    [
        # attachments and system lines the path goes through come with it; uuid-less lines do not
        ("progress-and-attachments.jsonl", "p2", [1, 3, 4, 5, 6, 7, 9]),
        ("progress-and-attachments.jsonl", "a1", [1, 3, 4, 5]),
        # the boundary a compaction's summary hangs below, and what came before it
        ("compaction.jsonl", "a2", [1, 2, 3, 4, 5, 6]),
        ("parallel-tool-results.jsonl", "r2", [1, 2, 3, 4, 5]),
        ("rewind.jsonl", "a1", [1, 2, 3, 4]),
        ("rewind.jsonl", "a2", [1, 2, 5, 6]),
    ],
)
def test_the_transcript_holds_exactly_the_lines_of_the_path_byte_for_byte(
    tmp_path: Path, fixture: str, ref: str, lines: list[int]
) -> None:
    folder, transcript = imported(tmp_path, fixture)
    result = resumed(folder, ref)
    assert set(result) == {
        "agent", "agent_session_id", "path", "command", "entry", "written", "resume_at", "files"
    }  # fmt: skip
    # the fixture's file is not named by its session, so Claude could not resume it itself
    assert result["written"] is True and result["resume_at"] is None
    assert result["command"] == f"claude -r {result['agent_session_id']}"
    written = Path(result["path"])
    assert written == transcript.parent / f"{result['agent_session_id']}.jsonl"
    # `claude -c` continues the newest transcript: still the one it was
    assert written.stat().st_mtime < transcript.stat().st_mtime
    original = transcript.read_bytes().splitlines(keepends=True)
    assert written.read_bytes() == b"".join(original[n - 1] for n in lines)
    last = json.loads(written.read_bytes().splitlines()[-1])
    assert last["uuid"] == ref
    (session,) = json.loads(run(folder, "sessions", "--json"))["sessions"]
    assert session["leaf"] == ref  # the conversation moved there; nothing else
    again = resumed(folder, ref)  # a second resume is a second Claude session
    assert again["agent_session_id"] != result["agent_session_id"]


@pytest.fixture
def repo(tmp_path: Path) -> Any:
    made = init_repo(tmp_path / "work")
    guard = UserStateGuard()
    guard.watch(made.path)
    yield made
    guard.verify()


def test_only_restore_changes_files_and_it_saves_them_first(repo: GitRepo, tmp_path: Path) -> None:
    folder, _ = imported(tmp_path, "rewind.jsonl")
    assert folder == repo.path
    repo.write("notes.txt", "at a1\n")
    run(folder, "snapshot", "a1")
    repo.write("notes.txt", "later\n")
    before = repo.digest()
    out = run(folder, "resume", "a1", "--agent", "claude-code")
    assert "files: not changed; 1 file differs from the snapshot of a1 (notes.txt)" in out
    assert repo.digest() == before
    result = resumed(folder, "a1", "--restore", "--yes")
    assert result["restore"]["changes"] == [{"path": "notes.txt", "status": "modified"}]
    assert (repo.path / "notes.txt").read_text() == "at a1\n"
    run(folder, "restore", "--undo", "--yes")
    assert repo.digest() == before
    no_snapshot = run(folder, "resume", "p0", "--restore", code=1)
    assert "has no snapshot above it" in no_snapshot


def test_an_entry_claude_cannot_resume_at_is_refused_plainly(tmp_path: Path) -> None:
    folder, _ = imported(tmp_path, "subagent-mirrors.jsonl")
    assert "subagent's side branch" in run(folder, "resume", "s-a1", code=1)
    assert "cannot hand a session back to 'aider'" in run(
        folder, "resume", "a1", "--agent", "aider", code=1
    )


def test_an_entry_convgit_wrote_and_a_session_of_convgit_or_claude_resume_in_any_agent(
    tmp_path: Path,
) -> None:
    """What Claude Code's own file cannot hold (a fork's summary convgit wrote, a session typed
    into convgit) and a Claude Code session handed to pi are written by the target's writer."""
    folder, _ = imported(tmp_path, "subagent-mirrors.jsonl")
    run(folder, "fork", "a2", "--summary", "left behind")
    made = json.loads(run(folder, "log", "--json"))["entries"][-1]["id"]
    written = Path(resumed(folder, made)["path"])
    assert "left behind" in written.read_text()
    plain = tmp_path / "plain"
    plain.mkdir()
    run(plain, "init")
    run(plain, "user", "hello")
    prompt = json.loads(Path(resumed(plain, "@")["path"]).read_text().splitlines()[-1])
    assert prompt["type"] == "user"
    assert prompt["message"]["content"] == [{"type": "text", "text": "hello"}]
    pi = json.loads(run(folder, "resume", "a2", "--agent", "pi", "--json"))
    assert json.loads(Path(pi["path"]).read_text().splitlines()[0])["type"] == "session"


def test_resume_restore_asks_and_its_note_lies_on_the_resumed_path(
    repo: GitRepo, tmp_path: Path
) -> None:
    folder, transcript = imported(tmp_path, "rewind.jsonl")
    repo.write("notes.txt", "at a1\n")
    run(folder, "snapshot", "a1")
    repo.write("notes.txt", "later\n")
    before, claude_folder = repo.digest(), sorted(transcript.parent.iterdir())
    leaf = json.loads(run(folder, "sessions", "--json"))["sessions"][0]["leaf"]

    # no terminal to ask on: refused as `restore` refuses, and nothing is done at all
    refused = run(folder, "resume", "a1", "--restore", code=1)
    assert "no terminal to ask; nothing was resumed or restored" in refused
    assert "--yes" in refused
    assert repo.digest() == before
    assert sorted(transcript.parent.iterdir()) == claude_folder
    assert json.loads(run(folder, "sessions", "--json"))["sessions"][0]["leaf"] == leaf

    result = resumed(folder, "a1", "--restore", "--yes")
    assert (repo.path / "notes.txt").read_text() == "at a1\n"
    note = json.loads(run(folder, "log", "--json"))["entries"][-1]
    assert note["type"] == "note" and note["parentId"] == "a1"
    # Claude goes on from a1 in the transcript written for it: its prompt comes after the note
    written = Path(result["path"])
    line = {
        "parentUuid": "a1",
        "isSidechain": False,
        "type": "user",
        "uuid": "p9",
        "timestamp": datetime.now(timezone.utc).isoformat().replace("+00:00", "Z"),
        "sessionId": result["agent_session_id"],
        "message": {"role": "user", "content": "Go on from here."},
    }
    with written.open("a") as out:
        out.write(json.dumps(line) + "\n")
    run(folder, "import", "claude-code", str(written))
    path = [e["id"] for e in json.loads(run(folder, "log", "--json"))["entries"]]
    assert path[-3:] == ["a1", note["id"], "p9"]  # the note on the resumed path
    tree = json.loads(run(folder, "tree", "--json"))["entries"]
    assert [e["id"] for e in tree if e.get("parentId") == note["id"]] == ["p9"]


def test_status_after_a_resume_says_the_files_are_further_down_the_branch(
    repo: GitRepo, tmp_path: Path
) -> None:
    folder, _ = imported(tmp_path, "rewind.jsonl")
    repo.write("notes.txt", "at a1\n")
    run(folder, "snapshot", "a1")
    run(folder, "resume", "p1")
    words = run(folder, "status")
    assert "at the snapshot of a1, further down this branch" in words, words
    assert "on another branch" not in words and "different branches" not in words
    status = json.loads(run(folder, "status", "--json"))
    assert status["further_down"] is True and status["diverged"] is False
    run(folder, "resume", "a2")  # another branch: said as before
    assert "on another branch" in run(folder, "status")
