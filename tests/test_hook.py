"""`convgit hook claude-code`, run as Claude Code runs it (one event on stdin, in the project),
on events written here by hand: whatever it is given it exits 0, prints nothing and logs a
problem; the end of a turn does not wait for a reply that is late, which gets the turn's
snapshot at the next event; `convgit hooks status` names the log."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests import clirun, recorded
from tests.workspace.gitrepo import GitRepo

SESSION = "0b9c3f4e-1111-4222-8333-944445555666"


def hook(cwd: Path, stdin: bytes, *args: str) -> subprocess.CompletedProcess[bytes]:
    ran = clirun.run(
        "hook", *(args or ("claude-code",)), cwd=cwd, input=stdin, code=None, timeout=60,
        logs_tracebacks=True,
    )  # fmt: skip
    return ran.completed()


def log_lines(repo: GitRepo) -> list[str]:
    text = (repo.path / ".git" / "convgit" / "logs" / "hooks.log").read_text()
    return [line for line in text.splitlines() if line[:1].isdigit()]


def convgit_json(cwd: Path, *args: str) -> Any:
    return clirun.run(*args, "--json", cwd=cwd).json()


@pytest.mark.parametrize(
    ("stdin", "args", "problem"),
    [
        (b"", (), "is not JSON"),
        (b"not an event at all", (), "is not JSON"),
        (b'{"hook_event_name": "Stop"', (), "is not JSON"),
        (b"\xff\xfe\x00garbage", (), "is not JSON"),
        (b"[1, 2, 3]", (), "is not a JSON object"),
        (b'{"session_id": "abc"}', (), "has no hook_event_name"),
        (b'{"hook_event_name": "Stop", "session_id": "../../etc"}', (), "no usable session_id"),
        (
            b'{"hook_event_name": "Stop", "session_id": "a", "transcript_path": "t.jsonl"}',
            (),
            "not absolute",
        ),
        (
            b'{"hook_event_name": "Stop", "session_id": "a"}',
            ("nope",),
            "does not run beside 'nope'",
        ),
        (b'{"sessionId": "a"}', ("copilot",), "names no GitHub Copilot CLI event"),
        (b'{"sessionId": "a"}', ("copilot", "nope"), "names no GitHub Copilot CLI event"),
        (b'{"sessionId": "../a"}', ("copilot", "agentStop"), "no usable sessionId"),
    ],
    ids=[
        "empty",
        "text",
        "cut",
        "binary",
        "array",
        "no-event",
        "bad-id",
        "relative",
        "agent",
        "copilot-unnamed",
        "copilot-unknown",
        "copilot-bad-id",
    ],
)
def test_whatever_comes_on_stdin_the_hook_exits_0_prints_nothing_and_logs(
    repo: GitRepo, stdin: bytes, args: tuple[str, ...], problem: str
) -> None:
    done = hook(repo.path, stdin, *args)
    assert (done.returncode, done.stdout) == (0, b"")
    (line,) = log_lines(repo)
    assert "problem" in line and problem in line
    status = clirun.run("hooks", "status", cwd=repo.path, code=None)
    assert "hooks.log (1 events, 1 problems)" in status.stdout


def event(name: str, transcript: Path, cwd: Path, **more: Any) -> bytes:
    payload = {
        "session_id": SESSION,
        "transcript_path": str(transcript),
        "cwd": str(cwd),
        "hook_event_name": name,
        **more,
    }
    return json.dumps(payload).encode()


def line(kind: str, uuid: str, parent: str | None, content: Any, **more: Any) -> str:
    """A line of Claude Code's transcript of this module's session (``tests.recorded.line``)."""
    return recorded.line(SESSION, kind, uuid, parent, content, **more)


def test_a_reply_that_reaches_the_transcript_after_stop_gets_the_turns_snapshot(
    repo: GitRepo, tmp_path: Path
) -> None:
    transcript = tmp_path / "claude" / f"{SESSION}.jsonl"
    transcript.parent.mkdir()
    transcript.write_text("")
    for done in (
        hook(repo.path, event("SessionStart", transcript, repo.path, source="startup")),
        hook(repo.path, event("UserPromptSubmit", transcript, repo.path, prompt_id="p-1")),
    ):
        assert (done.returncode, done.stdout) == (0, b"")
    with transcript.open("a") as out:
        out.write(line("user", "u-1", None, "Make notes.txt", promptId="p-1"))
    repo.write("notes.txt", "made by the agent\n")
    at_stop = repo.oracle()
    stop = event("Stop", transcript, repo.path, prompt_id="p-1", last_assistant_message="Made it.")
    done = hook(repo.path, stop)
    assert (done.returncode, done.stdout) == (0, b"")
    assert "the reply is not in the transcript yet" in log_lines(repo)[-1]
    prompt = convgit_json(repo.path, "show", "u-1")
    assert "notes.txt" not in repo.tree_paths(prompt["snapshot"]["tree"])  # before the turn

    with transcript.open("a") as out:  # the reply lands; the user edits before the next event
        out.write(line("assistant", "a-1", "u-1", [{"type": "text", "text": "Made it."}]))
    repo.write("notes.txt", "edited by the user afterwards\n")
    done = hook(repo.path, event("SessionEnd", transcript, repo.path, reason="other"))
    assert (done.returncode, done.stdout) == (0, b"")
    reply = convgit_json(repo.path, "show", "a-1")
    assert reply["snapshot"]["tree"] == at_stop
    assert all("problem" not in entry for entry in log_lines(repo))

    # delivered again, the Stop records nothing more
    sessions = repo.path / ".git" / "convgit" / "sessions"
    before = {p.name: p.read_bytes() for p in sessions.iterdir()}
    hook(repo.path, stop)
    assert {p.name: p.read_bytes() for p in sessions.iterdir()} == before


def test_a_turn_without_a_stop_is_closed_by_the_next_prompt(repo: GitRepo, tmp_path: Path) -> None:
    """Claude fires no Stop for a turn the user interrupts: the next prompt imports it and
    snapshots its last reply with the files then, before opening its own turn."""
    transcript = tmp_path / f"{SESSION}.jsonl"
    transcript.write_text("")
    hook(repo.path, event("SessionStart", transcript, repo.path, source="startup"))
    hook(repo.path, event("UserPromptSubmit", transcript, repo.path, prompt_id="p-1"))
    repo.write("half.txt", "written before the interrupt\n")
    with transcript.open("a") as out:
        out.write(line("user", "u-1", None, "Start", promptId="p-1"))
        out.write(line("assistant", "a-1", "u-1", [{"type": "text", "text": "Starting."}]))
    interrupted = repo.oracle()
    hook(repo.path, event("UserPromptSubmit", transcript, repo.path, prompt_id="p-2"))
    assert "turn interrupted" in log_lines(repo)[-1]
    assert convgit_json(repo.path, "show", "a-1")["snapshot"]["tree"] == interrupted
    with transcript.open("a") as out:
        out.write(line("user", "u-2", "a-1", "Go on", promptId="p-2"))
        out.write(line("assistant", "a-2", "u-2", [{"type": "text", "text": "Done."}]))
    stop = event("Stop", transcript, repo.path, prompt_id="p-2", last_assistant_message="Done.")
    hook(repo.path, stop)
    assert convgit_json(repo.path, "show", "a-2")["snapshot"]["tree"] == interrupted
    assert convgit_json(repo.path, "show", "u-2")["snapshot"] is None  # the files did not change


def test_a_turn_on_another_branchs_files_is_recorded_and_logged_in_one_line(
    repo: GitRepo, tmp_path: Path
) -> None:
    """Turn 2 writes plan B; the user rewinds Claude to before it (its next prompt hangs under
    turn 1's reply) and the files stay plan B's: the turn records them as they are, and the
    hook's line in the log says that they are turn 2's snapshot."""
    transcript = tmp_path / f"{SESSION}.jsonl"
    transcript.write_text("")
    hook(repo.path, event("SessionStart", transcript, repo.path, source="startup"))

    def turn(prompt: str, user: str, parent: str | None, reply: str) -> None:
        hook(repo.path, event("UserPromptSubmit", transcript, repo.path, prompt_id=prompt))
        with transcript.open("a") as out:
            out.write(line("user", user, parent, f"prompt {prompt}", promptId=prompt))
            out.write(line("assistant", reply, user, [{"type": "text", "text": "Done."}]))
        said = {"prompt_id": prompt, "last_assistant_message": "Done."}
        hook(repo.path, event("Stop", transcript, repo.path, **said))

    repo.write("plan.txt", "plan A\n")
    turn("p-1", "u-1", None, "a-1")
    repo.write("plan.txt", "plan B\n")
    turn("p-2", "u-2", "a-1", "a-2")
    assert "files: at" not in log_lines(repo)[-1]
    turn("p-3", "u-3", "a-1", "a-3")  # rewound: a sibling of u-2, the files still plan B's
    assert "files: at a-2's snapshot, recorded as this turn's" in log_lines(repo)[-1]
    assert convgit_json(repo.path, "show", "a-3")["snapshot"]["tree"] == repo.oracle()
    assert all("problem" not in entry for entry in log_lines(repo))


def test_an_agents_event_never_makes_an_empty_session_nor_takes_the_users_one(
    repo: GitRepo, tmp_path: Path
) -> None:
    """A Stop whose transcript is not written yet made a new, empty session current: `log`
    printed nothing and the user's next `convgit user` went into it. An agent's event makes
    no session until its transcript holds an entry, and never changes the session the user
    chose; with none chosen, the user's commands follow the agent's sessions."""
    clirun.run("init", cwd=repo.path)
    clirun.run("user", "my own question", cwd=repo.path)
    (mine,) = [s["id"] for s in convgit_json(repo.path, "sessions")["sessions"]]
    transcript = tmp_path / f"{SESSION}.jsonl"  # not written yet
    stop = event("Stop", transcript, repo.path, last_assistant_message="Done.")
    assert hook(repo.path, stop).returncode == 0
    assert "ok in" in log_lines(repo)[-1]
    assert [s["id"] for s in convgit_json(repo.path, "sessions")["sessions"]] == [mine]
    assert convgit_json(repo.path, "status")["session"] == mine
    clirun.run("user", "and another", cwd=repo.path)
    texts = [e["content"] for e in convgit_json(repo.path, "log")["entries"]]
    assert texts == ["my own question", "and another"]

    # the agent's turn is recorded in a session of its own; the user's stays current
    hook(repo.path, event("UserPromptSubmit", transcript, repo.path, prompt_id="p-1"))
    with transcript.open("a") as out:
        out.write(line("user", "u-1", None, "Make notes.txt", promptId="p-1"))
        out.write(line("assistant", "a-1", "u-1", [{"type": "text", "text": "Done."}]))
    hook(repo.path, event("Stop", transcript, repo.path, prompt_id="p-1"))
    sessions = convgit_json(repo.path, "sessions")["sessions"]
    (agents,) = [s for s in sessions if s["id"] != mine]
    assert agents["entries"] == 2 and agents["current"] is False
    assert convgit_json(repo.path, "status")["session"] == mine
    hook(repo.path, event("UserPromptSubmit", transcript, repo.path, prompt_id="p-2"))
    assert convgit_json(repo.path, "status")["session"] == mine

    # once the user picks the agent's session, another agent session's turn leaves it there
    clirun.run("use", agents["id"], cwd=repo.path)
    other = "0b9c3f4e-2222-4222-8333-944445555666"
    later = tmp_path / f"{other}.jsonl"
    with later.open("w") as out:
        out.write(line("user", "u-9", None, "Elsewhere", promptId="p-9", sessionId=other))
        out.write(line("assistant", "a-9", "u-9", "Done there.", sessionId=other))
    ended = json.loads(event("Stop", later, repo.path, prompt_id="p-9"))
    hook(repo.path, json.dumps({**ended, "session_id": other}).encode())
    assert len(convgit_json(repo.path, "sessions")["sessions"]) == 3
    assert convgit_json(repo.path, "status")["session"] == agents["id"]


def test_a_restore_in_an_agents_session_does_not_promise_the_model_a_note(
    repo: GitRepo, tmp_path: Path
) -> None:
    """The turns the hooks import hang where the agent put them, with no note: a restore in the
    agent's session says the model is not told (text and --json), and the next turn has no note
    indeed."""
    transcript = tmp_path / f"{SESSION}.jsonl"
    transcript.write_text("")
    hook(repo.path, event("SessionStart", transcript, repo.path, source="startup"))
    for n in (1, 2):
        hook(repo.path, event("UserPromptSubmit", transcript, repo.path, prompt_id=f"p-{n}"))
        parent = None if n == 1 else "a-1"
        with transcript.open("a") as out:
            out.write(line("user", f"u-{n}", parent, f"Turn {n}", promptId=f"p-{n}"))
            out.write(line("assistant", f"a-{n}", f"u-{n}", [{"type": "text", "text": f"R{n}."}]))
        repo.write(f"turn{n}.txt", f"{n}\n")
        hook(repo.path, event("Stop", transcript, repo.path, prompt_id=f"p-{n}"))
    said = clirun.run("restore", "a-1", "--yes", cwd=repo.path).stdout
    assert "the model will be told" not in said
    assert "no note for the model: it reads claude-code's own session file" in said
    undone = convgit_json(repo.path, "restore", "--undo", "--yes")
    assert undone["note"] is None and "back where they were" in undone["note_skipped"]
    again = convgit_json(repo.path, "restore", "a-1", "--yes")
    assert again["note"] is None and "claude-code's own session file" in again["note_skipped"]

    hook(repo.path, event("UserPromptSubmit", transcript, repo.path, prompt_id="p-3"))
    with transcript.open("a") as out:
        out.write(line("user", "u-3", "a-2", "Turn 3", promptId="p-3"))
        out.write(line("assistant", "a-3", "u-3", [{"type": "text", "text": "R3."}]))
    hook(repo.path, event("Stop", transcript, repo.path, prompt_id="p-3"))
    tree = convgit_json(repo.path, "tree")["entries"]
    assert "a-3" in {e["id"] for e in tree}
    assert [e for e in tree if e["type"] == "note"] == []  # the model was told nothing indeed
