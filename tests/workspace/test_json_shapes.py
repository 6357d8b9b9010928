"""`--json` on every command that prints data: one object per command, with the same keys in
the same order whatever the input (a first message or a later one, inside git or outside, one
result or several, a command that passed or failed), the one declared in
``convgit.schema.shapes`` (docs/json.md's table is checked against the same declarations in
tests/test_docs_pages.py)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import orjson

from convgit.schema import shapes
from tests.workspace.cli import convgit
from tests.workspace.gitrepo import GitRepo

ROOT = Path(__file__).resolve().parents[2]
CLAUDE = ROOT / "fixtures" / "claude-code"
CALL = {
    "type": "message",
    "role": "assistant",
    "content": [{"type": "tool_call", "id": "call-1", "name": "bash", "input": {"cmd": "ls"}}],
}


class Shapes:
    """Runs commands with --json and keeps the keys each printed, by command."""

    def __init__(self) -> None:
        self.seen: dict[str, list[tuple[tuple[str, ...], tuple[str, ...]]]] = defaultdict(list)

    def run(
        self, name: str, cwd: Path, *args: str, code: int | None = 0, input: bytes | None = None
    ) -> Any:
        at = args.index("--") if "--" in args else len(args)  # a command line to run follows --
        ran = convgit(cwd, *args[:at], "--json", *args[at:], code=code, input=input)
        value = orjson.loads(ran.stdout)
        assert isinstance(value, dict), (args, value)
        self.seen[name].append((args, tuple(value)))
        return value


def test_every_data_command_prints_one_object_shape(
    make_repo: Any, rewatch: Any, tmp_path: Path
) -> None:
    repo: GitRepo = make_repo()
    here = repo.path
    plain = tmp_path / "no-git"  # the conversation track only
    plain.mkdir()
    s = Shapes()

    s.run("init", here, "init", "--name", "shapes")
    s.run("init", plain, "init")
    first = s.run("user", here, "user", "task")  # snapshotted: the first message
    s.run("user", plain, "user", "task")
    repo.write("calc.py", "plan A\n")
    a = s.run("assistant", here, "assistant", "plan A")["id"]
    s.run("assistant", here, "assistant", "no change", "--id", "same-files")
    s.run("assistant", plain, "assistant", "plan A")
    s.run("append", here, "append", input=orjson.dumps(CALL) + b"\n")
    s.run("tool", here, "tool", "call-1", "calc.py")
    two = b"".join(orjson.dumps({"type": "message", "role": r, "content": r}) + b"\n"
                   for r in ("user", "assistant"))  # fmt: skip
    s.run("append", here, "append", input=two)
    s.run("system", here, "system")
    s.run("system", here, "system", "Be brief.")
    s.run("system", here, "system", "--clear")

    s.run("label", here, "label", a, "planA")
    s.run("label", here, "label", first["id"], "planA", "-f")
    s.run("label", here, "label", first["id"], "--clear")
    s.run("label", here, "label", a, "planA")
    s.run("name", here, "name", "shapes again")
    s.run("fork", here, "fork", first["id"], "plan B please")
    repo.write("calc.py", "plan B\n")
    b = s.run("assistant", here, "assistant", "plan B")["id"]
    s.run("fork", here, "fork", first["id"], "--summary", "left A and B")
    made = s.run("fork", here, "fork", "planA", "--new-session", "--name", "copy")
    s.run("use", here, "use", "shapes again")
    s.run("switch", here, "switch", "planA")
    s.run("switch", here, "switch", first["id"], "--branch", "2")
    s.run("edit", here, "edit", first["id"], "the task, again")
    s.run("retry", here, "retry", "planA")
    s.run("switch", here, "switch", b)
    s.run("retry", here, "retry", "--turn")
    s.run("switch", here, "switch", "planA")

    for where in (here, plain):
        s.run("log", where, "log")
        s.run("tree", where, "tree")
        s.run("status", where, "status")
        s.run("sessions", where, "sessions")
        s.run("fsck", where, "fsck")
        s.run("repair", where, "repair")
    s.run("log", here, "log", "-n", "1", first["id"])
    s.run("sessions", here, "--session", made["session"], "sessions")
    s.run("branches", here, "branches", first["id"])
    s.run("branches", here, "branches")

    s.run("restores", here, "restores")  # none yet
    s.run("snapshot", here, "snapshot")
    s.run("snapshot", here, "snapshot")  # unchanged
    s.run("restore", here, "restore", first["id"], "--dry-run")
    s.run("restore", here, "restore", first["id"], "--yes")
    s.run("restore", here, "restore", "--undo", "--yes")
    s.run("restores", here, "restores")
    s.run("status", here, "status")  # the files at another branch's snapshot
    s.run("snapshots", here, "snapshots", "off")
    s.run("snapshots", here, "snapshots", "on")

    side = tmp_path / "side"
    s.run("worktree", here, "worktree", "--list")
    s.run("worktree", here, "worktree", "planA", str(side))
    s.run("worktree", here, "worktree", "--list")
    s.run("worktree", here, "worktree", "--remove", str(side))

    s.run("run", here, "run", "planA", "--", sys.executable, "-c", "pass")
    fails = [sys.executable, "-c", "raise SystemExit(3)"]
    s.run("run", here, "run", "planA", ".", "--", *fails, code=1)  # they failed

    s.run("import", plain, "import", "claude-code", str(CLAUDE / "compaction.jsonl"))
    s.run("import", plain, "import", "claude-code", str(CLAUDE / "subagent-file" / "main.jsonl"))
    s.run("html", here, "html")
    s.run("html", here, "html", "-o", str(tmp_path / "page.html"))
    s.run("redact", here, "redact", "plan", "--dry-run")
    s.run("redact", here, "redact", "nothing-matches-this", "--yes")
    s.run("hooks status", here, "hooks", "status")
    s.run("hooks dismiss", here, "hooks", "dismiss")
    s.run("hooks install", here, "hooks", "install", "claude-code")
    s.run("hooks install", here, "hooks", "install", "claude-code")  # already there
    s.run("hooks uninstall", here, "hooks", "uninstall", "claude-code")
    s.run("hooks uninstall", here, "hooks", "uninstall", "claude-code")  # not there
    s.run("hooks install", here, "hooks", "install", "claude-code", "--mcp")
    s.run("hooks uninstall", here, "hooks", "uninstall", "claude-code", "--mcp")
    s.run("search", here, "search", "plan")
    s.run("search", here, "search", "--file", "calc.py", "-n", "1")  # more than one
    s.run("search", plain, "search", "nothing-matches-this", "--all-stores")

    s.run("diff", here, "diff", first["id"])
    s.run("diff", here, "diff", first["id"], "planA", "-p")
    s.run("diff", here, "diff", "planA", "--stat")
    s.run("show", here, "show", "planA")
    s.run("show", here, "show", first["id"], "-p")
    saved = convgit(here, "restores", "--json").json()["saved_states"][0]["id"]
    s.run("show", here, "show", saved)
    s.run("sessions rm", here, "sessions", "rm", made["session"], "--yes")
    s.run("sessions", here, "sessions", "--trash")
    s.run("sessions restore", here, "sessions", "restore", made["session"])
    s.run("sessions rm", here, "sessions", "rm", made["session"], "--yes")
    s.run("gc --trash", here, "gc", "--trash", "--yes")
    s.run("gc --trash", here, "gc", "--trash", "--yes")  # an empty trash
    s.run("gc", here, "gc", "--dry-run")
    s.run("gc", here, "gc")
    s.run("snapshots", here, "snapshots")
    s.run("show", here, "show", first["id"])

    s.run("context", here, "context")
    s.run("context", plain, "context")
    for provider in ("openai", "anthropic"):
        s.run("context --format", here, "context", "--format", provider)
        s.run("context --format", plain, "context", "--format", provider)
    agent = tmp_path / "agent"  # resume writes the agent's session file beside the one imported
    agent.mkdir()
    shutil.copy(CLAUDE / "compaction.jsonl", agent / "transcript.jsonl")
    convgit(agent, "import", "claude-code", str(agent / "transcript.jsonl"))
    s.run("resume", agent, "resume", "@")

    remote = tmp_path / "remote.git"  # sharing, through a bare repository
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    subprocess.run(["git", "-C", str(here), "remote", "add", "origin", str(remote)], check=True)
    s.run("share", here, "share", "shapes again")
    s.run("push", here, "push", "--dry-run")
    s.run("push", here, "push")
    s.run("push", here, "push")  # nothing new
    s.run("fetch", here, "fetch")
    s.run("pull", here, "pull")
    s.run("unshare", here, "unshare", "shapes again")
    s.run("recorder status", here, "recorder", "status")
    s.run("recorder stop", here, "recorder", "stop")
    s.run("hooks install", here, "hooks", "install", "git")
    s.run("hooks uninstall", here, "hooks", "uninstall", "git")
    (here / "blamed.txt").write_text("one\ntwo\n")
    s.run("user", here, "user", "blame this")
    s.run("blame", here, "blame", "blamed.txt")
    subprocess.run(["git", "-C", str(here), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(here), "commit", "-qm", "blamed"], check=True)
    rewatch(repo)  # the user's own commit (and the remote they added)
    s.run("why", here, "why", "HEAD")
    s.run("blame", here, "blame", "--notes", "blamed.txt")
    s.run("attribution rewrite", here, "attribution", "rewrite", "--from", "HEAD~1")

    for name, runs in s.seen.items():
        printed = {keys for _, keys in runs}
        assert len(printed) == 1, f"`{name} --json` printed {len(printed)} shapes: {runs}"
        assert name in shapes.SHAPES, f"`{name} --json` has no shape in convgit.schema.shapes"
        assert shapes.keys(name) == next(iter(printed)), f"the declared shape of `{name}`"
    never = set(shapes.SHAPES) - set(s.seen)
    assert not never, f"shapes never printed: {never}"
