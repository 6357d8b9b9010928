"""What a person reads: ``diff -p`` and ``--stat`` are git's own output between the hidden
commits (coloured only on a terminal), ``show`` reads as an entry (and ``-p`` is its
snapshot's diff from the previous one on its path), ``context`` shows a reply's blocks as text
and tool calls as ``→ name(args)``; every ``--json`` keeps one shape whatever the flags."""

from __future__ import annotations

import json
from pathlib import Path

from tests.workspace.cli import convgit
from tests.workspace.gitrepo import GitRepo

NO_COLOUR = {"FORCE_COLOR": ""}  # as piped: the variable render.colour reads is unset


def _append(repo: GitRepo, *records: dict[str, object]) -> list[str]:
    lines = "".join(json.dumps(r) + "\n" for r in records)
    ids: list[str] = convgit(repo.path, "append", "--json", input=lines).json()["ids"]
    return ids


def _commit(repo: GitRepo, ref: str) -> str:
    commit: str = convgit(repo.path, "show", ref, "--json").json()["snapshot"]["commit"]
    return commit


def _two_snapshots(repo: GitRepo) -> tuple[str, str]:
    convgit(repo.path, "init")
    first = convgit(repo.path, "user", "change things", "--json").json()["id"]
    repo.write("src/app.py", "print('changed')\n")
    repo.write("notes/new.txt", "a new file\n")
    (repo.path / "README.md").unlink()
    second = convgit(repo.path, "assistant", "changed them", "--json").json()["id"]
    return first, second


def test_diff_p_and_stat_print_what_git_diff_prints_between_the_snapshots(repo: GitRepo) -> None:
    first, second = _two_snapshots(repo)
    a, b = _commit(repo, first), _commit(repo, second)
    patch = repo.git("diff", a, b)
    assert "+print('changed')" in patch and "+++ b/notes/new.txt" in patch
    for flag in ("-p", "--patch"):
        assert convgit(repo.path, "diff", first, second, flag, env=NO_COLOUR).stdout == patch
    stat = convgit(repo.path, "diff", first, second, "--stat", env=NO_COLOUR).stdout
    assert stat == repo.git("diff", "--stat", a, b)
    both = convgit(repo.path, "diff", first, second, "--stat", "-p", env=NO_COLOUR).stdout
    assert both == repo.git("diff", "--stat", "--patch", a, b)
    assert "\x1b[" not in patch + stat, "no colour when not on a terminal"

    # the default stays the list of files
    listed = convgit(repo.path, "diff", first, second, env=NO_COLOUR).stdout.splitlines()
    assert listed == ["D README.md", "A notes/new.txt", "M src/app.py"]

    # on a terminal (FORCE_COLOR stands for one), git's colours
    coloured = convgit(repo.path, "diff", first, second, "-p", env={"FORCE_COLOR": "1"}).stdout
    assert coloured == repo.git("diff", "--color=always", a, b)
    assert "\x1b[" in coloured

    # --json: one shape whatever the flags
    shapes = {
        json.dumps(convgit(repo.path, "diff", first, second, *flags, "--json").json()["changes"])
        for flags in ((), ("-p",), ("--stat",), ("--stat", "--patch"))
    }
    assert len(shapes) == 1
    assert json.loads(shapes.pop())[0] == {"path": "README.md", "status": "deleted"}


def test_diff_p_against_the_files_now_is_git_s_diff_of_them(repo: GitRepo) -> None:
    _, second = _two_snapshots(repo)
    repo.write("src/app.py", "print('third')\n")
    ran = convgit(repo.path, "diff", second, "-p", env=NO_COLOUR)
    assert ran.stdout.startswith("diff --git a/src/app.py b/src/app.py\n")
    assert "-print('changed')\n+print('third')\n" in ran.stdout
    assert convgit(repo.path, "diff", second, "--name-only", "-p", code=2).stdout == ""


def test_show_reads_as_an_entry_and_p_adds_its_snapshot_s_diff(repo: GitRepo) -> None:
    first, _ = _two_snapshots(repo)
    repo.write("src/app.py", "print('edited by a tool')\n")
    call = {"type": "tool_call", "id": "c1", "name": "edit", "input": {"path": "src/app.py"}}
    (reply,) = _append(
        repo,
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "text", "text": "Editing it.\nOne more line."}, call],
        },
    )
    convgit(repo.path, "label", reply, "edited")
    shown = convgit(repo.path, "show", "edited", env=NO_COLOUR).stdout
    lines = shown.splitlines()
    assert lines[0] == f"entry {reply[:8]} [edited] ← context"
    assert "role:     assistant" in lines
    assert any(line.startswith("time:     20") for line in lines)
    assert "    Editing it." in lines and "    One more line." in lines
    assert '    → edit(path="src/app.py")' in lines
    assert '"type"' not in shown, "never the raw record"
    snapshot = next(line for line in lines if line.startswith("snapshot: "))
    here = _commit(repo, reply)
    assert snapshot.startswith(f"snapshot: ◆ {here[:12]}, 2 files; the previous on its path is")

    previous = repo.git("rev-parse", f"{here}^").strip()  # the snapshot of the reply before
    patched = convgit(repo.path, "show", "edited", "-p", env=NO_COLOUR).stdout
    assert patched == shown + "\n" + repo.git("diff", previous, here)
    assert "+print('edited by a tool')" in patched

    # the first snapshot on its path: its diff from no file at all
    empty = repo.git("hash-object", "-t", "tree", "/dev/null").strip()
    root = convgit(repo.path, "show", first, "-p", env=NO_COLOUR).stdout
    assert root.endswith("\n" + repo.git("diff", empty, _commit(repo, first)))
    assert "the first on its path" in root

    # --json: the record, the same whatever the flags
    plain = convgit(repo.path, "show", "edited", "--json").json()
    assert convgit(repo.path, "show", "edited", "-p", "--json").json() == plain
    assert plain["entry"]["id"] == reply and plain["entry"]["content"][1] == call
    assert plain["snapshot"]["commit"] == here


def test_context_shows_a_reply_of_blocks_as_text_and_calls_as_arrows(repo: GitRepo) -> None:
    convgit(repo.path, "init")
    convgit(repo.path, "user", "What is here?")
    _append(
        repo,
        {
            "type": "message",
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "List the folder."},
                {"type": "text", "text": "Let me look."},
                {
                    "type": "tool_call",
                    "id": "c1",
                    "name": "bash",
                    "input": {"command": "ls -a", "timeout": 5},
                },
            ],
        },
        {
            "type": "message",
            "role": "tool",
            "toolCallId": "c1",
            "content": [{"type": "text", "text": "README.md\nsrc"}],
        },
        {"type": "message", "role": "assistant", "content": [{"type": "text", "text": "Two."}]},
    )
    ran = convgit(repo.path, "context", env=NO_COLOUR)
    assert ran.stdout.splitlines() == [
        "user: What is here?",
        "assistant: (thinking) List the folder.",
        "Let me look.",
        '→ bash(command="ls -a", timeout=5)',
        "tool (bash): README.md",
        "src",
        "assistant: Two.",
    ]
    assert convgit(repo.path, "context", "--format", "text").stdout == ran.stdout


def test_a_tool_error_and_an_unanswered_call_read_as_errors(repo: GitRepo, tmp_path: Path) -> None:
    convgit(repo.path, "init")
    convgit(repo.path, "user", "Run it twice.")
    calls = [{"type": "tool_call", "id": f"c{n}", "name": "run", "input": {"n": n}} for n in (1, 2)]
    _append(
        repo,
        {"type": "message", "role": "assistant", "content": calls},
        {"type": "message", "role": "tool", "toolCallId": "c1", "content": "boom", "isError": True},
    )
    lines = convgit(repo.path, "context").stdout.splitlines()
    assert lines[1:4] == ["assistant: → run(n=1)", "→ run(n=2)", "tool (run) error: boom"]
    assert lines[4].startswith("tool (run) error: No result was recorded for this tool call")
