"""`convgit resume` beside the real Claude Code CLI leaves Claude's own state alone: where
Claude reaches the entry itself (`--resume-session-at`, an entry on the branch it would load)
convgit writes nothing and prints that command; elsewhere it writes a transcript of the path
that does not become the one `claude -c` continues. What the scripted server was sent is the
judge of what Claude resumed."""

from __future__ import annotations

import json
from pathlib import Path

from tests.agents.hooked import convgit, convgit_json, reply_text
from tests.agents.runners import ClaudeCode, claude_project_dir
from tests.agents.script import call, say
from tests.agents.server import ModelServer
from tests.workspace.gitrepo import GitRepo


def folder_state(folder: Path) -> dict[str, tuple[bytes, int]]:
    """Every file of Claude's project folder: its bytes and modification time."""
    return {
        str(p.relative_to(folder)): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def entry_of(project: Path, text: str, role: str) -> dict[str, object]:
    found = [
        e
        for e in convgit_json(project, "tree")["entries"]
        if e.get("role") == role and reply_text(e) == text
    ]
    assert len(found) == 1, (text, found)
    return found[0]


def test_resume_uses_claudes_own_way_in_and_leaves_claude_c_where_it_was(
    model_server: ModelServer, claude_code: ClaudeCode, project: GitRepo, agent_home: Path
) -> None:
    convgit(project.path, "hooks", "install", "claude-code")
    model_server.expect(say("reply-A"), say("reply-B"), say("reply-C"))
    first = claude_code.run("ALPHA")
    claude_code.run("BRAVO", resume=first.session_id)
    claude_code.run("CHARLIE", resume=first.session_id)
    folder = claude_project_dir(agent_home, project.path.resolve())
    assert first.transcript is not None and first.transcript.parent == folder
    reply_a = entry_of(project.path, "reply-A", "assistant")["id"]
    reply_b = entry_of(project.path, "reply-B", "assistant")["id"]

    # reply-A is on the branch Claude would load: its own way in, nothing written
    before = folder_state(folder)
    resumed = convgit_json(project.path, "resume", str(reply_a), "--agent", "claude-code")
    assert folder_state(folder) == before, "resume changed Claude's project folder"
    assert resumed["written"] is False
    assert resumed["agent_session_id"] == first.session_id
    assert resumed["resume_at"] == reply_a
    assert resumed["command"] == f"claude -r {first.session_id} --resume-session-at {reply_a}"
    assert Path(resumed["path"]) == first.transcript
    words = convgit(project.path, "resume", str(reply_a))
    assert "nothing written" in words and resumed["command"] in words
    assert folder_state(folder) == before

    model_server.expect(say("reply-D"))
    claude_code.run("DELTA", "--resume-session-at", str(reply_a), resume=first.session_id)
    sent = model_server.scripted[-1]
    assert sent.prompts() == ["ALPHA", "DELTA"]
    assert sent.replies() == ["reply-A"]
    delta = entry_of(project.path, "DELTA", "user")
    assert delta["parentId"] == reply_a  # a new branch below reply-A, in the same session
    assert len(convgit_json(project.path, "sessions")["sessions"]) == 1

    # reply-B is now on a branch Claude does not load: a transcript of the path is written,
    # and `claude -c` still continues the transcript (and branch) it continued before
    again = convgit_json(project.path, "resume", str(reply_b), "--agent", "claude-code")
    assert again["written"] is True and again["resume_at"] is None
    written = Path(again["path"])
    assert written.parent == folder and written != first.transcript
    assert again["command"] == f"claude -r {again['agent_session_id']}"
    model_server.expect(say("reply-E"))
    claude_code.run("ECHO", "-c")
    sent = model_server.scripted[-1]
    assert sent.prompts() == ["ALPHA", "DELTA", "ECHO"]

    model_server.expect(say("reply-F"))
    claude_code.run("FOXTROT", resume=again["agent_session_id"])
    sent = model_server.scripted[-1]
    assert sent.prompts() == ["ALPHA", "BRAVO", "FOXTROT"]
    assert sent.replies() == ["reply-A", "reply-B"]
    assert entry_of(project.path, "FOXTROT", "user")["parentId"] == reply_b
    assert len(convgit_json(project.path, "sessions")["sessions"]) == 1


def test_a_resume_without_restore_says_the_files_are_ahead_and_the_next_prompt_keeps_them(
    model_server: ModelServer, claude_code: ClaudeCode, project: GitRepo
) -> None:
    """Resumed at an earlier reply without `--restore`, Claude goes on with the files of a
    later turn. The user is told so at the resume and by `status` (and that the model is
    not: nothing is put in its context); the branch's first prompt records those files as its
    own, so restoring it brings back what Claude went on from, not the earlier reply's."""
    convgit(project.path, "hooks", "install", "claude-code")
    notes = project.path / "a.txt"
    model_server.expect(
        call("Write", {"file_path": str(notes), "content": "one\n"}),
        say("Wrote a."),
        call("Bash", {"command": "echo two > a.txt"}),
        say("Edited a."),
        say("Three."),
    )
    first = claude_code.run("turn one")
    claude_code.run("turn two", resume=first.session_id)
    reply_one = entry_of(project.path, "Wrote a.", "assistant")["id"]
    reply_two = entry_of(project.path, "Edited a.", "assistant")["id"]

    resumed = convgit_json(project.path, "resume", str(reply_one))
    assert resumed["files"] == {"matches": reply_two, "changed": ["a.txt"], "ahead": True}
    said = convgit(project.path, "resume", str(reply_one))
    assert "ahead of the context" in said and "Claude Code's model is not told" in said
    status = convgit(project.path, "status")
    assert "ahead of the context" in status and "the model is not told" in status

    claude_code.run(
        "turn three", "--resume-session-at", resumed["resume_at"], resume=first.session_id
    )
    prompt = entry_of(project.path, "turn three", "user")
    assert prompt["parentId"] == reply_one
    snapshot = convgit_json(project.path, "show", str(prompt["id"]))["snapshot"]
    assert snapshot is not None, "the prompt keeps the files Claude went on from"
    assert project.git("cat-file", "-p", f"{snapshot['tree']}:a.txt") == "two\n"
    sent = json.dumps([r.body for r in model_server.requests])
    assert "ahead of the context" not in sent and "is not told" not in sent
