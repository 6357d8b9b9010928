"""The recorder rows of scripts/bench.py (issue 37): Claude Code's hook events, run as
`convgit hooks install claude-code` writes them, handed to the recorder of their working tree
(``convgit.agents.live.recorder``, started by the first event, watchman on PATH), each against
a baseline in the same run, alternating:

* a snapshot after a one-file change (a UserPromptSubmit, the whole hook process included)
  on a large generated tree, against git's own kept-index pipeline on the same tree (``git add
  -A``, ``write-tree``, ``commit-tree``, ``update-ref`` into a kept split index);
* one hook event at 10,000 files (a prompt with no change, a tool call, a Stop after a one-file
  change with four transcript lines), against starting Python itself (``python -S -c pass``);
* the same events without the recorder (``CONVGIT_RECORDER=off``: the hook does the work
  itself), against the hook of another convgit checkout (``--against PATH``: today's main) on
  a tree of its own, which the run leaves out with a note when none is given.

The recorders run with a folder of sockets of the run's own (``XDG_RUNTIME_DIR``), are stopped
(``convgit recorder stop``) and their watchman watches dropped at the end. Each row checks the
hook log: every timed event went the way the row names (through the recorder, or not)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

# the snapshot rows' goals, by size (ratio to git's kept-index pipeline)
SNAPSHOT_GOALS = {100_000: 0.3, 1_000_000: 0.1}
EVENT_GOAL = 1.5  # one hook event through the recorder, to `python -S -c pass`
FALLBACK_GOAL = 1.0  # the hook without a recorder, to today's main's hook


def bench_recorder(
    bench: Any,
    sizes: tuple[int, ...],
    make_tree: Any,
    turns_of: Any,
    identity: Any,
    claude_turns: Any,
    hook: list[str],
    against: Path | None,
) -> None:
    if shutil.which("watchman", path=bench.env.get("PATH")) is None:
        bench.notes.append("recorder rows: watchman is not on PATH, left out")
        return
    run = bench.root / "run"  # the recorders' sockets: $XDG_RUNTIME_DIR/convgit
    run.mkdir(mode=0o700, exist_ok=True)
    env = {
        **bench.env, "XDG_RUNTIME_DIR": str(run), "CONVGIT_RECORDER_IDLE": "3600",
        "CONVGIT_RECORDER": "on",
    }  # fmt: skip
    roots: list[Path] = []
    try:
        for files in sizes:
            roots.append(
                _snapshot_row(bench, env, files, make_tree, turns_of, identity, claude_turns, hook)
            )
        roots.append(_event_rows(bench, env, make_tree, turns_of, claude_turns, hook))
        roots += _fallback_rows(bench, make_tree, turns_of, claude_turns, hook, against)
    finally:
        for root in roots:
            subprocess.run([*bench.cli, "recorder", "stop"], cwd=root, env=env, capture_output=True)
            subprocess.run(["watchman", "watch-del", str(root)], capture_output=True, check=False)


class _Hooked:
    """A Claude Code session on ``root`` whose events go through the installed hook."""

    def __init__(
        self, bench: Any, env: dict[str, str], root: Path, claude_turns: Any, hook: list[str]
    ) -> None:
        self.bench, self.env, self.root, self.hook = bench, env, root, hook
        folder = root.parent / f"{root.name}-claude"
        folder.mkdir()
        self.claude = claude_turns(folder, root)
        self.send("SessionStart", source="startup")

    def send(self, name: str, **more: Any) -> float:
        event = self.claude.event(name, **more)
        return float(self.bench.timed(self.hook, self.root, input=event, env=self.env))

    def stop(self, lines: int = 4) -> float:
        reply = self.claude.append_turn(lines)
        return self.send("Stop", last_assistant_message=reply)

    def log(self) -> list[str]:
        text = (self.root / ".git" / "convgit" / "logs" / "hooks.log").read_text()
        return [line for line in text.splitlines() if line[:1].isdigit()]

    def wait_recorder(self) -> dict[str, Any]:
        """The recorder's status, once it answers (it starts with the first event, and warms up:
        watchman crawls the tree, and it takes the full scan later snapshots patch)."""
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            said = self.bench.run(
                [*self.bench.cli, "recorder", "status", "--json"], self.root, env=self.env
            )
            found: dict[str, Any] = json.loads(said.stdout)
            if found["running"]:
                return found
            time.sleep(0.2)
        raise SystemExit(f"bench: no recorder answered at {self.root}")

    def check(self, lines: list[str], through: bool, what: str) -> None:
        """A note unless every line says it went through the recorder (``through``) or not."""
        wrong = [
            line
            for line in lines
            if ("problem" in line) or ((" through the recorder" in line) != through)
        ]
        if wrong:
            self.bench.notes.append(
                f"{what}: {len(wrong)} event(s) went another way: {wrong[0][:200]}"
            )


def _snapshot_row(
    bench: Any,
    env: dict[str, str],
    files: int,
    make_tree: Any,
    turns_of: Any,
    identity: Any,
    claude_turns: Any,
    hook: list[str],
) -> Path:
    size = f"{files:,} files"
    print(f"generating a {files:,}-file repository (recorder rows)", file=sys.stderr, flush=True)
    root = make_tree(bench, bench.root / f"recorded-{files}", files)
    turns = turns_of(root)
    hooked = _Hooked(bench, env, root, claude_turns, hook)
    hooked.wait_recorder()
    hooked.send("UserPromptSubmit")  # the recorder's first patch after its warm-up
    hooked.stop()
    kept = bench.root / f"recorder-kept-index-{files}"
    genv = {**bench.env, **identity, "GIT_INDEX_FILE": str(kept)}
    split = ["-c", "core.splitIndex=true"]
    state = {"parent": bench.run(["git", "rev-parse", "HEAD"], root).stdout.decode().strip()}
    seen = len(hooked.log())
    hows: list[str] = []

    def latest() -> dict[str, Any]:
        said = bench.run([*bench.cli, "recorder", "status", "--json"], root, env=env)
        return json.loads(said.stdout)["latest_snapshot"] or {"number": 0, "how": ""}

    def ours() -> float:
        turns.change()
        hooked.claude.n += 1
        before = latest()["number"]
        took = hooked.send("UserPromptSubmit")
        after = latest()  # the prompt's own snapshot, not another index's last one
        hows.append(after["how"] if after["number"] > before else "no snapshot taken")
        hooked.stop()
        return took

    def git_pipeline() -> float:
        turns.change()
        start = time.perf_counter()
        bench.run(["git", *split, "add", "-A"], root, env=genv)
        tree = bench.run(["git", *split, "write-tree"], root, env=genv).stdout.decode().strip()
        made = bench.run(
            ["git", "commit-tree", tree, "-p", state["parent"], "-m", "bench"], root, env=genv
        )
        state["parent"] = made.stdout.decode().strip()
        bench.run(["git", "update-ref", "refs/bench/recorder", state["parent"]], root, env=genv)
        return time.perf_counter() - start

    reps = max(3, bench.reps // 2) if files >= 1_000_000 else None
    a, b = bench.alternate(ours, git_pipeline, reps)
    hooked.check(hooked.log()[seen:], True, f"recorder snapshot row at {size}")
    unpatched = [h for h in hows if not h.startswith("patched")]
    if unpatched:
        bench.notes.append(
            f"recorder snapshot row at {size}: {len(unpatched)} not patched: {unpatched[0]}"
        )
    else:
        bench.notes.append(f"recorder snapshot row at {size}: all {len(hows)} turns patched")
    bench.add(
        "snapshot after a one-file change, recorder + watchman (a UserPromptSubmit hook, whole)",
        size, a, b, "git add -A/write-tree/commit-tree/update-ref, kept split index",
        SNAPSHOT_GOALS.get(files),
    )  # fmt: skip
    return root


def _event_rows(
    bench: Any,
    env: dict[str, str],
    make_tree: Any,
    turns_of: Any,
    claude_turns: Any,
    hook: list[str],
) -> Path:
    files = 10_000
    root = make_tree(bench, bench.root / f"recorded-events-{files}", files)
    turns = turns_of(root)
    hooked = _Hooked(bench, env, root, claude_turns, hook)
    hooked.wait_recorder()
    _rows(bench, hooked, turns, files, "through the recorder", True, "`python -S -c pass`", None)
    return root


def _rows(
    bench: Any,
    hooked: _Hooked,
    turns: Any,
    files: int,
    how: str,
    through: bool,
    baseline: str,
    other: _Hooked | None,
) -> None:
    """The prompt, tool and Stop rows of ``hooked``: against ``python -S -c pass``, or against
    the same event of ``other`` (another convgit's hook) when given."""
    size = f"{files:,} files"
    python = [sys.executable, "-S", "-c", "pass"]

    def base(event: str) -> float:
        if other is None:
            return float(bench.timed(python, hooked.root))
        return timed(other, event)

    def timed(side: _Hooked, event: str) -> float:
        if event == "prompt":  # the last turn is closed; nothing changed since its snapshot
            side.stop()
            side.claude.n += 1
            return side.send("UserPromptSubmit")
        if event == "tool":
            return side.send(
                "PostToolUse", tool_name="Bash", tool_input={"command": "true"}, tool_response={}
            )
        turns.change()
        return side.stop()

    goal = EVENT_GOAL if other is None else FALLBACK_GOAL
    for event, words in (
        ("prompt", "a prompt with no file change (UserPromptSubmit)"),
        ("tool", "a tool call (PostToolUse)"),
        ("stop", "a Stop after a one-file change, 4 transcript lines"),
    ):
        seen = len(hooked.log())
        a, b = bench.alternate(
            lambda e=event: timed(hooked, e), lambda e=event: base(e), max(bench.reps, 10)
        )
        hooked.check(hooked.log()[seen:], through, f"{how} {event} row")
        bench.add(f"hook event {how}: {words}", size, a, b, baseline, goal)


def _fallback_rows(
    bench: Any,
    make_tree: Any,
    turns_of: Any,
    claude_turns: Any,
    hook: list[str],
    against: Path | None,
) -> list[Path]:
    if against is None:
        bench.notes.append("fallback rows: no --against checkout to compare with, left out")
        return []
    files = 10_000
    ours_root = make_tree(bench, bench.root / f"fallback-ours-{files}", files)
    main_root = make_tree(bench, bench.root / f"fallback-main-{files}", files)
    here = str(Path(__file__).resolve().parent.parent)
    other_hook = [part.replace(here, str(against.resolve())) for part in hook]
    off = {**bench.env, "CONVGIT_RECORDER": "off"}
    main_env = {**bench.env, "PYTHONPATH": str(against.resolve())}
    ours = _Hooked(bench, off, ours_root, claude_turns, hook)
    main = _Hooked(bench, main_env, main_root, claude_turns, other_hook)
    _rows(
        bench,
        ours,
        _Both(turns_of(ours_root), turns_of(main_root)),
        files,
        "without the recorder (CONVGIT_RECORDER=off)",
        False,
        f"the same event, {against.name}'s hook",
        main,
    )
    return [ours_root, main_root]


class _Both:
    """One-file changes on both trees of the fallback rows."""

    def __init__(self, *turns: Any) -> None:
        self.turns = turns

    def change(self) -> None:
        for turns in self.turns:
            turns.change()
