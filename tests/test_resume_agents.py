"""`convgit resume REF` for pi and Codex sessions, through the CLI on imported files (the live
round trips with the real CLIs are in tests/agents/test_resume_pi_codex.py): the file holds the
path's own records, files change only with --restore (git status judges), a session of another
agent resumes too and what that agent adds is a branch of the same session, and an unknown
entry or a path the agent cannot hold are refused in one sentence."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests import clirun
from tests.workspace.gitrepo import UserStateGuard, init_repo

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
PI_FILE = "v3-tool-calls-and-thinking.jsonl"
CODEX_FILE = "parallel-function-calls.jsonl"


def run(cwd: Path, *args: str, code: int = 0) -> str:
    done = clirun.run(*args, cwd=cwd, code=code)
    if code:
        assert done.stderr.startswith("convgit: ") and done.stderr.count("\n") <= 2
    return done.stdout if code == 0 else done.stderr


def run_json(cwd: Path, *args: str) -> Any:
    return json.loads(run(cwd, *args, "--json"))


def git_status(repo: Path) -> str:
    return subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def text_of(entry: dict[str, Any]) -> str:
    content = entry.get("content", "")
    if isinstance(content, str):
        return content
    return "".join(p.get("text", "") for p in content if p.get("type") == "text")


def imported(tmp_path: Path, agent: str, fixture: str, where: str) -> tuple[Path, Path]:
    """A guarded repository with ``fixture`` imported from where the agent keeps its files."""
    repo = init_repo(tmp_path / "project").path
    source = tmp_path / where / fixture
    source.parent.mkdir(parents=True)
    shutil.copy(FIXTURES / agent / fixture, source)
    run(repo, "import", agent, str(source))
    return repo, source


def test_pi_files_change_only_with_restore(tmp_path: Path) -> None:
    guard = UserStateGuard()
    repo, source = imported(tmp_path, "pi", PI_FILE, "pi/sessions/--home-dev-proj--")
    guard.watch(repo)
    (repo / "a.txt").write_text("alpha\n")
    run(repo, "snapshot", "10000007")
    at_snapshot = git_status(repo)
    (repo / "a.txt").write_text("changed\n")
    (repo / "new.txt").write_text("new\n")
    changed = git_status(repo)

    result = run_json(repo, "resume", "10000007")
    assert git_status(repo) == changed  # without --restore nothing changed
    path = Path(result["path"])
    assert path.parent == source.parent and result["agent"] == "pi"
    written = path.read_bytes().splitlines()
    assert written[1:] == source.read_bytes().splitlines()[1:]  # pi's records, byte for byte
    header = json.loads(written[0])
    assert header["id"] == result["agent_session_id"] and header["parentSession"] == str(source)

    restored = run_json(repo, "resume", "10000007", "--restore", "--yes")
    # new.txt, which no snapshot held, is the user's: left alone, and listed
    assert "restore" in restored and git_status(repo) == at_snapshot + "?? new.txt\n"
    assert [s["path"] for s in restored["restore"]["left_alone"]] == ["new.txt"]
    assert (repo / "a.txt").read_text() == "alpha\n"
    assert restored["agent_session_id"] != result["agent_session_id"]
    guard.verify()


def test_codex_rollout_keeps_every_line_where_it_was(tmp_path: Path) -> None:
    repo, source = imported(tmp_path, "codex", CODEX_FILE, "codex/sessions/2026/04/20")
    tree = run_json(repo, "tree")["entries"]
    (reply,) = [e for e in tree if text_of(e) == "On main, with a.py modified."]
    before = git_status(repo)
    result = run_json(repo, "resume", reply["id"])
    assert git_status(repo) == before
    path = Path(result["path"])
    assert path.parents[3] == tmp_path / "codex" / "sessions"
    assert path.name.endswith(f"-{result['agent_session_id']}.jsonl")
    assert result["command"] == f"codex resume {result['agent_session_id']}"
    original = source.read_bytes().splitlines()
    written = path.read_bytes().splitlines()
    assert written[-1] == reply["native"]["text"].encode()  # it ends at REF's record
    assert written[1:] == original[1 : len(written)]
    meta, old = json.loads(written[0]), json.loads(original[0])
    assert meta["payload"]["id"] == result["agent_session_id"] != old["payload"]["id"]
    assert meta["payload"]["model_provider"] == old["payload"]["model_provider"]
    assert run_json(repo, "log")["entries"][-1]["id"] == reply["id"]


def test_refusals_are_one_sentence(tmp_path: Path) -> None:
    repo, _ = imported(tmp_path, "pi", PI_FILE, "pi/sessions/--home-dev-proj--")
    assert "nosuch" in run(repo, "resume", "nosuch", code=1)
    assert "inside a tool run" in run(repo, "resume", "10000004", code=1)
    assert "no reply of the model" in run(repo, "resume", "10000003", code=1)

    codex_repo, _ = imported(tmp_path / "c", "codex", CODEX_FILE, "codex/sessions/2026/04/20")
    assert "convgit cannot hand a session back to 'aider'" in run(
        codex_repo, "resume", "@", "--agent", "aider", code=1
    )
    sessions = tmp_path / "c" / "codex" / "sessions"
    assert len(list(sessions.rglob("*.jsonl"))) == 1  # a refusal writes no file


@pytest.mark.parametrize(
    "fixture",
    ["v1-compaction-index.jsonl", "v2-hook-message.jsonl", "v3-tool-calls-and-thinking.jsonl"],
)
def test_a_turn_pi_adds_to_the_resumed_file_imports_below_ref(tmp_path: Path, fixture: str) -> None:
    repo, _ = imported(tmp_path, "pi", fixture, "pi/sessions/--home-dev-proj--")
    ref = run_json(repo, "log")["entries"][-1]["id"]
    result = run_json(repo, "resume", ref)
    path = Path(result["path"])
    last = json.loads(path.read_bytes().splitlines()[-1])
    prompt = {"type": "message", "id": "f0000001", "parentId": last["id"]}
    prompt |= {"timestamp": "2026-12-01T00:00:00.000Z"}
    prompt["message"] = {"role": "user", "content": "Go on from here."}
    with path.open("a") as file:
        file.write(json.dumps(prompt) + "\n")
    again = run_json(repo, "import", "pi", str(path))["imports"][0]
    assert again["new"] == 1 and again["agent_session_id"] == result["agent_session_id"]
    (added,) = [e for e in run_json(repo, "tree")["entries"] if text_of(e) == "Go on from here."]
    assert added["parentId"] == ref


def test_a_turn_codex_adds_to_the_resumed_rollout_imports_below_ref(tmp_path: Path) -> None:
    repo, _ = imported(tmp_path, "codex", CODEX_FILE, "codex/sessions/2026/04/20")
    tree = run_json(repo, "tree")["entries"]
    (ref,) = [e["id"] for e in tree if text_of(e) == "Show the branch and the status."]
    result = run_json(repo, "resume", ref)
    path = Path(result["path"])
    item = {"type": "message", "role": "assistant"}
    item["content"] = [{"type": "output_text", "text": "Another answer."}]
    line = {"timestamp": "2026-12-01T00:00:00.000Z", "type": "response_item", "payload": item}
    with path.open("a") as file:
        file.write(json.dumps(line) + "\n")
    again = run_json(repo, "import", "codex", str(path))["imports"][0]
    assert again["new"] == 1 and again["agent_session_id"] == result["agent_session_id"]
    (added,) = [e for e in run_json(repo, "tree")["entries"] if text_of(e) == "Another answer."]
    assert added["parentId"] == ref
    assert (
        len([e for e in run_json(repo, "tree")["entries"] if e["parentId"] == ref]) == 2
    )  # a branch


def test_a_pi_session_resumes_in_codex_and_codex_turns_are_a_branch_below_ref(
    tmp_path: Path,
) -> None:
    """One tree (issue 36): the rollout written for Codex holds the pi path with pi's calls as
    Codex's own tools; a reply Codex appends is imported below REF in the same session, naming
    Codex, not as a new session holding a copy."""
    repo, _ = imported(tmp_path, "pi", PI_FILE, "pi/sessions/--home-dev-proj--")
    sessions = len(run_json(repo, "sessions")["sessions"])
    result = run_json(repo, "resume", "10000007", "--agent", "codex")
    assert result["agent"] == "codex"
    path = Path(result["path"])
    lines = [json.loads(line) for line in path.read_bytes().splitlines()]
    assert lines[0]["type"] == "session_meta"
    names = {
        line["payload"]["name"]
        for line in lines
        if line["type"] == "response_item" and "name" in line["payload"]
    }
    assert names and names <= {"apply_patch", "exec_command", "shell"}
    item = {"type": "message", "role": "assistant"}
    item["content"] = [{"type": "output_text", "text": "Codex goes on."}]
    line = {"timestamp": "2026-12-01T00:00:00.000Z", "type": "response_item", "payload": item}
    with path.open("a") as file:
        file.write(json.dumps(line) + "\n")
    again = run_json(repo, "import", "codex", str(path))["imports"][0]
    assert again["new"] == 1
    entries = run_json(repo, "tree")["entries"]
    (added,) = [e for e in entries if text_of(e) == "Codex goes on."]
    assert added["parentId"] == "10000007" and added["agent"] == "codex"
    assert f"{added['id'][:8]} assistant (codex): Codex goes on." in run(repo, "tree")
    assert len(run_json(repo, "sessions")["sessions"]) == sessions


@pytest.mark.parametrize(
    ("agent", "fixture"),
    [("gemini", "thoughts-and-tool-calls.json"), ("claude-code", "subagent-file/main.jsonl")],
)
def test_a_gemini_json_session_and_a_claude_session_with_subagents_resume_in_every_agent(
    tmp_path: Path, agent: str, fixture: str
) -> None:
    """Issue 36: the Gemini CLI session of the older ``.json`` form and a Claude Code session
    with a subagent resume at their last reply in every agent, each file one that agent's
    importer recognises as its own."""
    from convgit.agents import registry
    from convgit.agents.recognise import agent_of

    repo = init_repo(tmp_path / "project").path
    source = FIXTURES / agent / fixture
    if source.name == "main.jsonl":  # the subagent's file beside it, as Claude Code keeps it
        shutil.copytree(source.parent, tmp_path / "claude", dirs_exist_ok=True)
        source = tmp_path / "claude" / "main.jsonl"
    run(repo, "import", agent, str(source))
    entries = run_json(repo, "log")["entries"]
    ref = [e["id"] for e in entries if e.get("role") == "assistant" and text_of(e)][-1]
    for target in registry.names("resume"):
        resumed = run_json(repo, "resume", ref, "--agent", target)
        assert resumed["agent"] == target and resumed["entry"] == ref
        assert agent_of(Path(resumed["path"]).read_bytes()) == target
