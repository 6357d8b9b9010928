"""`convgit completion bash|zsh|fish` prints the script a shell loads; bash, given that
script, completes convgit's commands and options by asking convgit (typer's machinery)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.workspace.cli import convgit, one_sentence
from tests.workspace.gitrepo import GitRepo


@pytest.fixture
def on_path(tmp_path: Path) -> dict[str, str]:
    """An environment whose PATH has a `convgit` that runs this checkout's convgit."""
    folder = tmp_path / "bin"
    folder.mkdir()
    program = folder / "convgit"
    program.write_text(f'#!/bin/sh\nexec {sys.executable} -m convgit "$@"\n')
    program.chmod(0o755)
    return {**os.environ, "PATH": f"{folder}{os.pathsep}{os.environ['PATH']}"}


def bash_completes(env: dict[str, str], cwd: Path, *words: str) -> list[str]:
    """What bash offers for the last of ``words`` after loading `convgit completion bash`."""
    quoted = " ".join(f"'{w}'" for w in words)
    script = (
        'eval "$(convgit completion bash)"\n'
        f"COMP_WORDS=({quoted}); COMP_CWORD={len(words) - 1}\n"
        f"COMP_LINE={quoted!r}; COMP_POINT=${{#COMP_LINE}}\n"
        "_convgit_completion convgit\n"
        'printf "%s\\n" "${COMPREPLY[@]}"\n'
    )
    done = subprocess.run(
        ["bash", "--norc", "--noprofile", "-c", script],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    return [line for line in done.stdout.splitlines() if line]


def test_bash_completes_commands_and_options_with_the_printed_script(
    on_path: dict[str, str], tmp_path: Path
) -> None:
    assert bash_completes(on_path, tmp_path, "convgit", "lo") == ["log"]
    assert sorted(bash_completes(on_path, tmp_path, "convgit", "res")) == [
        "restore",
        "restores",
        "resume",
    ]
    assert "--max-count" in bash_completes(on_path, tmp_path, "convgit", "log", "--m")
    assert "--no-pager" in bash_completes(on_path, tmp_path, "convgit", "--no")
    assert bash_completes(on_path, tmp_path, "convgit", "hooks", "inst") == ["install"]


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_each_shells_script_asks_convgit_through_one_variable(tmp_path: Path, shell: str) -> None:
    script = convgit(tmp_path, "completion", shell).stdout
    assert "_CONVGIT_COMPLETE=complete_" + shell in script
    assert "convgit" in script.split("_CONVGIT_COMPLETE", 1)[1]


def test_an_unknown_shell_is_one_sentence(tmp_path: Path) -> None:
    error = convgit(tmp_path, "completion", "tcsh", code=2).stderr
    assert one_sentence(error) == "convgit: convgit completes in bash, zsh or fish, not 'tcsh'."


def started(repo: Path) -> dict[str, str]:
    """A session named "work" with two labels, a second session and one in the trash."""

    def said(*args: str) -> str:
        return str(convgit(repo, *args, "--json").json()["id"])

    convgit(repo, "init", "--name", "gone")
    convgit(repo, "user", "soon in the trash")
    convgit(repo, "init", "--name", "other")
    convgit(repo, "sessions", "rm", "gone", "--yes")
    sid = said("init", "--name", "work")
    task = said("user", "task")
    convgit(repo, "label", task, "task")
    reply = said("assistant", "plan A")
    convgit(repo, "label", reply, "planA")
    return {"sid": sid, "task": task, "reply": reply}


def test_bash_completes_labels_ids_sessions_agents_and_shells(
    on_path: dict[str, str], repo: GitRepo
) -> None:
    here = repo.path
    ids = started(here)
    assert bash_completes(on_path, here, "convgit", "show", "") == ["planA", "task", "@", "root"]
    assert bash_completes(on_path, here, "convgit", "diff", "planA", "t") == ["task"]
    assert bash_completes(on_path, here, "convgit", "switch", ids["reply"][:3]) == [ids["reply"]]
    sessions = bash_completes(on_path, here, "convgit", "use", "")
    assert ids["sid"] in sessions and {"work", "other"} <= set(sessions) and "gone" not in sessions
    assert bash_completes(on_path, here, "convgit", "-s", "wo") == ["work"]
    trashed = bash_completes(on_path, here, "convgit", "sessions", "restore", "")
    assert "gone" in trashed and "work" not in trashed
    agents = bash_completes(on_path, here, "convgit", "hooks", "install", "")
    known = {"claude-code", "codex", "copilot", "gemini", "opencode", "pi", "qwen"}
    assert known | {"git"} == set(agents)
    assert "git" not in bash_completes(on_path, here, "convgit", "resume", "@", "--agent", "")
    assert bash_completes(on_path, here, "convgit", "completion", "") == ["bash", "zsh", "fish"]


def test_completing_a_ref_reads_no_whole_session(on_path: dict[str, str], repo: GitRepo) -> None:
    """On a session of 100,000 entries, completing a REF adds less than half of what loading the
    session adds to a command (`convgit log -n 1`): its labels and ids are found in the file's
    bytes, and no session is loaded."""
    here = repo.path
    sid = convgit(here, "init", "--no-snapshots", "--json").json()["id"]
    lines = [f'{{"type":"session","v":1,"id":"{sid}","created":"2026-01-01T00:00:00.000Z"}}']
    parent = "null"
    for n in range(100_000):
        lines.append(
            f'{{"type":"message","role":"user","content":"message {n}","id":"e{n:07d}",'
            f'"ts":"2026-01-01T00:00:00.000Z","parentId":{parent}}}'
        )
        parent = f'"e{n:07d}"'
    lines.append('{"type":"label","target":"e0099999","label":"last","ts":"2026-01-01T00:00:01Z"}')
    (here / ".git" / "convgit" / "sessions" / f"{sid}.jsonl").write_text("\n".join(lines) + "\n")

    def fastest(*words: str, completing: bool = True) -> tuple[float, list[str]]:
        env = dict(on_path)
        if completing:
            env.update(
                _CONVGIT_COMPLETE="complete_bash",
                COMP_WORDS=" ".join(words),
                COMP_CWORD=str(len(words) - 1),
            )
        command = ["convgit"] if completing else list(words)
        times, said = [], ""
        for _ in range(3):
            start = time.perf_counter()
            said = subprocess.run(
                command, env=env, cwd=here, capture_output=True, text=True, check=True
            ).stdout
            times.append(time.perf_counter() - start)
        return min(times), said.split()

    names, _ = fastest("convgit", "sh")
    loading, _ = fastest("convgit", "log", "-n", "1", completing=False)
    labels, offered = fastest("convgit", "show", "la")
    assert offered == ["last"]
    ids, offered = fastest("convgit", "show", "e009999")
    assert offered == [f"e009999{n}" for n in range(10)]
    limit = names + (loading - names) / 2
    assert labels < limit and ids < limit, (names, loading, labels, ids)
