#!/usr/bin/env python3
"""convgit's benchmark (issue 5): every target as a ratio against a baseline measured in the
same run, convgit and the baseline alternating (A B A B ...) after a warm-up.

    python scripts/bench.py           # full: 1k/10k/100k files, 10k/100k/1M entries
    python scripts/bench.py --quick   # small: 1k/10k files, 10k/100k entries, fewer repetitions
    python scripts/bench.py --only watcher --million  # the watcher rows at 100k and 1M files
    python scripts/bench.py --only recorder --against ../main  # the recorder's rows (issue 37)

Everything is generated under a temporary directory (removed at the end unless --keep). Needs
only convgit's own dependencies and git. Prints a markdown table to paste into
docs/technical/performance.md.
Never run as a timed test: the numbers depend on the machine; the ratios are the result.
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
try:
    import convgit
except ImportError:  # a fresh clone that is not installed: run from the source tree
    sys.path.insert(0, str(REPO))
    import convgit

import orjson  # noqa: E402 - convgit's own dependency, found once convgit is

FILE_SIZES_FULL = (1_000, 10_000, 100_000)
FILE_SIZES_QUICK = (1_000, 10_000)
ENTRY_SIZES_FULL = (10_000, 100_000, 1_000_000)
ENTRY_SIZES_QUICK = (10_000, 100_000)
IDENTITY = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@localhost",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@localhost",
}


# -- measuring ---------------------------------------------------------------------------------


@dataclass
class Row:
    """One target: convgit's samples against the baseline's, and the ratio it must stay under."""

    target: str
    size: str
    ours: list[float]
    base: list[float]
    baseline: str
    limit: float | None  # None: reported only
    note: str = ""
    seconds: float | None = None  # a goal in seconds for convgit's median, beside the ratio

    @property
    def ratio(self) -> float:
        return statistics.median(self.ours) / statistics.median(self.base)

    @property
    def verdict(self) -> str:
        if self.limit is None and self.seconds is None:
            return "info"
        ok = self.limit is None or self.ratio <= self.limit
        ok = ok and (self.seconds is None or statistics.median(self.ours) <= self.seconds)
        return "pass" if ok else "miss"

    @property
    def goal(self) -> str:
        goals = [] if self.limit is None else [f"<= {self.limit:g}x"]
        goals += [] if self.seconds is None else [f"< {self.seconds:g} s"]
        return ", ".join(goals) or "—"


@dataclass
class Bench:
    reps: int
    root: Path
    env: dict[str, str]
    cli: list[str]
    rows: list[Row] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def run(self, cmd: list[str], cwd: Path, **kwargs: Any) -> subprocess.CompletedProcess[bytes]:
        proc = subprocess.run(
            cmd, cwd=cwd, env=kwargs.pop("env", self.env), capture_output=True, **kwargs
        )
        if proc.returncode != 0:
            words = proc.stderr.decode(errors="replace").strip()
            raise SystemExit(f"bench: {' '.join(cmd)} failed ({proc.returncode}): {words}")
        return proc

    def timed(self, cmd: list[str], cwd: Path, **kwargs: Any) -> float:
        start = time.perf_counter()
        self.run(cmd, cwd, **kwargs)
        return time.perf_counter() - start

    def convgit(self, cwd: Path, *args: str, **kwargs: Any) -> subprocess.CompletedProcess[bytes]:
        return self.run([*self.cli, *args], cwd, **kwargs)

    def alternate(
        self, ours: Callable[[], float], base: Callable[[], float], reps: int | None = None
    ) -> tuple[list[float], list[float]]:
        """Warm both up once, then A B A B ...; each callable prepares untimed, returns seconds."""
        ours()
        base()
        a: list[float] = []
        b: list[float] = []
        for _ in range(reps or self.reps):
            a.append(ours())
            b.append(base())
        return a, b

    def add(self, *args: Any, **kwargs: Any) -> Row:
        row = Row(*args, **kwargs)
        self.rows.append(row)
        print(
            f"  {row.target} [{row.size}]: {_ms(row.ours)} vs {_ms(row.base)} -> "
            f"{row.ratio:.2f}x {row.verdict}",
            file=sys.stderr,
            flush=True,
        )
        return row


def _ms(samples: list[float]) -> str:
    med = statistics.median(samples)
    return f"{_fmt(med)} ({_fmt(min(samples))}-{_fmt(max(samples))})"


def _fmt(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms" if seconds < 10 else f"{seconds:.1f} s"


def _scrubbed_env(home: Path) -> dict[str, str]:
    """No GIT_* or CONVGIT_* from the caller, and no user or system git config."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("GIT_", "CONVGIT_")) and k != "PYTHONPATH"
    }
    home.mkdir(parents=True, exist_ok=True)
    # Byte-compiled modules are cached (a real install compiles them at install time), in the
    # bench's own folder rather than beside the sources, whatever PYTHONDONTWRITEBYTECODE says.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.update(
        PYTHONPYCACHEPREFIX=str(home.parent / "pycache"),
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        GIT_CONFIG_NOSYSTEM="1",
        LC_ALL="C",
        # the hook rows here are the hook doing its own work (bench_recorder.py has the
        # recorder's): no recorder started by "auto" where watchman is installed
        CONVGIT_RECORDER="off",
    )
    return env


def _cli_command(env: dict[str, str]) -> list[str]:
    """The console script a per-turn hook would call; ``python -m convgit`` from a clone."""
    env["PYTHONPATH"] = str(REPO)  # the convgit of this checkout, whatever is installed
    script = Path(sys.executable).parent / "convgit"
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", "convgit"]


# -- generating --------------------------------------------------------------------------------


def make_tree(bench: Bench, root: Path, files: int, *, functions: int = 0) -> Path:
    """A committed repository: ``files`` files in nested folders (50 per folder, 3 levels), a
    .gitignore and a few ignored files; with ``functions``, each file holds that many small
    functions (about 40 bytes each) instead of three lines. File times are set in the past so
    git's racy-entry check does not rehash what it just indexed."""
    root.mkdir(parents=True)
    past = time.time() - 60
    made: set[str] = set()
    for k in range(files):
        folder = f"pkg{k // 5000}/mod{(k // 250) % 20}/sub{(k // 50) % 5}"
        if folder not in made:
            os.makedirs(root / folder)
            made.add(folder)
        path = root / folder / f"file{k % 50}.py"
        body = "".join(f"def f{k}_{i}(x):\n    return x * {i}\n\n" for i in range(functions))
        path.write_bytes(body.encode() or f"# file {k}\nVALUE = {k}\n".encode() * 3)
        os.utime(path, (past, past))
    (root / ".gitignore").write_text("*.log\nbuild/\n__pycache__/\n")
    os.makedirs(root / "build")
    for i in range(20):
        (root / "build" / f"out{i}.o").write_bytes(b"\0" * 100)
        (root / f"run{i}.log").write_text("log\n")
    env = {**bench.env, **IDENTITY}
    bench.run(["git", "init", "-q", "-b", "main"], root)
    bench.run(["git", "add", "-A"], root)
    # packed now, as a repository that lived is: no `gc --auto` repacking it in the background
    # (the commit of a large tree leaves that many loose objects) beside the timed runs
    bench.run(
        ["git", "-c", "gc.auto=0", "commit", "-q", "--no-verify", "-m", "generated"], root, env=env
    )
    bench.run(["git", "repack", "-a", "-d", "-q"], root)
    os.sync()
    return root


def make_session(store: Path, sid: str, entries: int) -> Path:
    """A session file of ``entries`` messages (~300 bytes each) with a branch every 100."""
    from convgit import schema

    path = store / "sessions" / f"{sid}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    ts = schema.now()
    lines = [orjson.dumps(schema.header(sid, str(store)))]
    ids: list[str] = []
    filler = "lorem ipsum dolor sit amet " * 8
    parent: str | None = None
    for n in range(entries):
        ident = f"{n:08x}"
        if n % 100 == 99 and n > 200:
            parent = ids[n - 50]  # a branch: go back 50 entries and continue from there
        role = "user" if n % 2 == 0 else "assistant"
        record = {
            "type": "message",
            "id": ident,
            "parentId": parent,
            "ts": ts,
            "role": role,
            "content": f"{role} turn {n}: {filler}",
        }
        lines.append(orjson.dumps(record))
        ids.append(ident)
        parent = ident
    path.write_bytes(b"\n".join(lines) + b"\n")
    del lines, ids
    gc.collect()
    os.sync()  # no write-back of the fresh file competing with the timed runs
    return path


# -- targets -----------------------------------------------------------------------------------


class Turns:
    """One-file changes, each with new content, so every turn has something to record."""

    def __init__(self, root: Path) -> None:
        self.path = root / "pkg0" / "mod0" / "sub0" / "file0.py"
        self.n = 0

    def change(self) -> None:
        self.n += 1
        self.path.write_text(f"# turn {self.n}\n")


def bench_snapshots(bench: Bench, files: int, goals: dict[str, float | None]) -> None:
    size = f"{files:,} files"
    print(f"generating a {files:,}-file repository", file=sys.stderr, flush=True)
    root = make_tree(bench, bench.root / f"tree-{files}", files)
    turns = Turns(root)
    bench.convgit(root, "init")
    cenv = {**bench.env, **IDENTITY}
    kept = bench.root / f"kept-index-{files}"
    split = ["-c", "core.splitIndex=true"]
    state = {"parent": bench.run(["git", "rev-parse", "HEAD"], root).stdout.decode().strip()}

    def ours_turn() -> float:
        turns.change()
        return bench.timed([*bench.cli, "assistant", f"turn {turns.n}"], root)

    def git_pipeline(index: Path, seed: bool) -> float:
        turns.change()
        env = {**cenv, "GIT_INDEX_FILE": str(index)}
        start = time.perf_counter()
        if seed:  # the ghost-commit way: a fresh index from HEAD every turn, so every file rehashes
            index.unlink(missing_ok=True)
            bench.run(["git", "read-tree", "HEAD"], root, env=env)
        bench.run(["git", *split, "add", "-A"], root, env=env)
        tree = bench.run(["git", *split, "write-tree"], root, env=env).stdout.decode().strip()
        commit = bench.run(
            ["git", "commit-tree", tree, "-p", state["parent"], "-m", "bench"], root, env=env
        )
        state["parent"] = commit.stdout.decode().strip()
        bench.run(["git", "update-ref", "refs/bench/snapshot", state["parent"]], root, env=env)
        return time.perf_counter() - start

    a, b = bench.alternate(ours_turn, lambda: git_pipeline(kept, False))
    bench.add(
        "snapshot after a one-file change (CLI `convgit assistant`)",
        size, a, b, "git add -A/write-tree/commit-tree/update-ref, kept index + split index",
        goals["snapshot"],
    )  # fmt: skip
    ghost = bench.root / f"ghost-index-{files}"
    reps = max(2, bench.reps // 2) if files >= 100_000 else None
    a, b = bench.alternate(ours_turn, lambda: git_pipeline(ghost, True), reps)
    bench.add(
        "snapshot vs ghost commits (<= 0.2x is 5x faster)",
        size, a, b, "same pipeline with `read-tree HEAD` into a fresh index each turn",
        goals["ghost"],
    )  # fmt: skip

    def first_snapshot() -> float:
        bench.convgit(root, "init")  # a new session: its private index does not exist yet
        return ours_turn()

    a, b = bench.alternate(first_snapshot, ours_turn)
    bench.add(
        "first snapshot of a new session", size, a, b, "a warm snapshot (same CLI)", goals["first"]
    )

    commits: list[str] = []

    def unchanged_turn() -> float:
        elapsed = bench.timed([*bench.cli, "assistant", "nothing changed"], root)
        shown = bench.convgit(root, "show", "@", "--json").stdout
        commits.append(orjson.loads(shown)["snapshot"]["commit"])
        return elapsed

    ours_turn()
    a, b = bench.alternate(
        unchanged_turn, lambda: bench.timed(["git", "status", "--porcelain"], root)
    )
    if len(set(commits)) != 1:
        bench.notes.append(f"unchanged turns at {size} made {len(set(commits))} commits (want 1)")
    bench.add(
        "a turn with no change (no new commit)", size, a, b, "git status --porcelain",
        goals["unchanged"],
    )  # fmt: skip

    turns.change()
    wanted = turns.path.read_bytes()
    made = orjson.loads(bench.convgit(root, "assistant", "restore target", "--json").stdout)
    entry, commit = made["id"], made["snapshot"]["commit"]
    restore_index = bench.root / f"restore-index-{files}"

    def ours_restore() -> float:
        turns.change()
        return bench.timed([*bench.cli, "restore", entry, "--yes", "--json"], root)

    def git_restore() -> float:
        turns.change()
        env = {**cenv, "GIT_INDEX_FILE": str(restore_index)}
        bench.run(["git", "add", "-A"], root, env=env)  # the kept index knows the files now
        return bench.timed(["git", "read-tree", "--reset", "-u", commit], root, env=env)

    a, b = bench.alternate(ours_restore, git_restore)
    if turns.path.read_bytes() != wanted:
        bench.notes.append(f"restore at {size} did not bring the file back")
    bench.add(
        "restore of a one-file difference (with its saved state)", size, a, b,
        "git read-tree --reset -u, kept index", goals["restore"],
    )  # fmt: skip


def bench_restore_many(bench: Bench, files: int) -> None:
    """A restore that changes every file of a ``files``-file tree, and its undo, against git
    checking the same files out (`git checkout -f HEAD -- .`, the tree's commit being the
    snapshot restored) after the same change."""
    size = f"{files:,} changed files"
    print(f"generating a {files:,}-file repository", file=sys.stderr, flush=True)
    root = make_tree(bench, bench.root / f"restore-tree-{files}", files)
    bench.convgit(root, "init")
    made = orjson.loads(bench.convgit(root, "assistant", "restore target", "--json").stdout)
    entry = made["id"]
    paths = sorted(p for p in root.glob("pkg*/**/*.py"))
    rounds = [0]

    def change_all() -> bytes:
        rounds[0] += 1
        for path in paths:
            path.write_bytes(f"# changed {rounds[0]}\n".encode())
        os.sync()
        return paths[-1].read_bytes()

    def ours_restore() -> float:
        change_all()
        return bench.timed([*bench.cli, "restore", entry, "--yes", "--json"], root)

    def git_checkout() -> float:
        change_all()
        return bench.timed(["git", "checkout", "-f", "HEAD", "--", "."], root)

    a, b = bench.alternate(ours_restore, git_checkout)
    bench.add(
        "restore of every file (with its saved state and per-file checks)", size, a, b,
        "git checkout -f HEAD -- .", 2.0,
    )  # fmt: skip

    def ours_undo() -> float:
        changed = change_all()
        bench.convgit(root, "restore", entry, "--yes", "--json")
        elapsed = bench.timed([*bench.cli, "restore", "--undo", "--yes", "--json"], root)
        if paths[-1].read_bytes() != changed:
            bench.notes.append(f"undo at {size} did not bring the changed files back")
        return elapsed

    a, b = bench.alternate(ours_undo, git_checkout)
    bench.add(
        "undo of that restore (`restore --undo`)", size, a, b, "git checkout -f HEAD -- .", 2.0
    )


def bench_run(bench: Bench, files: int) -> None:
    """`convgit run` of a trivial command on two snapshots: its worktrees, made and removed,
    against git making and removing the same worktrees one after the other (`--force`, as a
    command that writes any file needs, and which skips rehashing the fresh checkout)."""
    size = f"{files:,} files"
    print(f"generating a {files:,}-file repository for run", file=sys.stderr, flush=True)
    root = make_tree(bench, bench.root / f"run-{files}", files)
    turns = Turns(root)
    bench.convgit(root, "init")
    entries, commits = [], []
    for n in range(2):
        turns.change()
        made = orjson.loads(bench.convgit(root, "assistant", f"plan {n}", "--json").stdout)
        entries.append(made["id"])
        commits.append(made["snapshot"]["commit"])
    side = bench.root / f"run-side-{files}"

    def git_worktrees() -> float:
        start = time.perf_counter()
        for n, commit in enumerate(commits):
            folder = side / str(n)
            bench.run(["git", "worktree", "add", "--detach", "--quiet", str(folder), commit], root)
            bench.run(["true"], folder)
            bench.run(["git", "worktree", "remove", "--force", str(folder)], root)
        return time.perf_counter() - start

    a, b = bench.alternate(
        lambda: bench.timed([*bench.cli, "run", *entries, "--", "true"], root), git_worktrees
    )
    bench.add(
        "`convgit run` of `true` on two snapshots", size, a, b,
        "git worktree add --detach, true, git worktree remove --force, per commit", 1.5,
    )  # fmt: skip


def bench_objects(bench: Bench, files: int) -> None:
    """Objects and disk after 100 snapshots (each after a one-file change), loose then packed."""
    from convgit.session import Session

    root = make_tree(bench, bench.root / f"objects-{files}", files)
    turns = Turns(root)
    objects = root / ".git" / "objects"

    def census() -> tuple[int, int, int]:
        loose = size = packed = 0
        for top, _, names in os.walk(objects):
            for name in names:
                bytes_ = os.lstat(os.path.join(top, name)).st_size
                size += bytes_
                if os.path.basename(top) == "pack":
                    packed += bytes_
                elif len(os.path.basename(top)) == 2:
                    loose += 1
        return loose, size, packed

    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(bench.env)
    try:
        session = Session.create(root)
        before = census()
        start = time.perf_counter()
        for n in range(100):
            turns.change()
            session.append.assistant(f"turn {n}")
        elapsed = time.perf_counter() - start
        after = census()
        session.track.workspace().maintain(threshold=0)
        packed = census()
    finally:
        os.environ.clear()
        os.environ.update(saved)
    bench.notes.append(
        f"100 snapshots at {files:,} files (one-file change each, in-process "
        f"{elapsed * 10:.1f} ms per turn): +{after[0] - before[0]} loose objects, "
        f"+{(after[1] - before[1]) / 1024:.0f} KiB on disk; after `Workspace.maintain` "
        f"(packs convgit's loose objects): {packed[0]} loose, objects folder "
        f"+{(packed[1] - before[1]) / 1024:.0f} KiB over the start "
        f"(packs {packed[2] / 1024:.0f} KiB in all)"
    )


def bench_first_turn(bench: Bench, files: int = 2_500) -> None:
    """The first turn in a project of source files (about 4 KB each) just committed, its objects
    still loose, against a warm turn: the first turn builds the private index, and must not pay
    for packing the user's objects."""
    warm = make_tree(bench, bench.root / f"warm-{files}", files, functions=100)
    turns = Turns(warm)
    bench.convgit(warm, "init")
    bench.convgit(warm, "user", "task")
    fresh = iter(range(1_000))

    def first_turn() -> float:
        root = make_tree(bench, bench.root / f"first-{files}-{next(fresh)}", files, functions=100)
        bench.convgit(root, "init")
        elapsed = bench.timed([*bench.cli, "user", "the task"], root)
        shutil.rmtree(root, ignore_errors=True)
        return elapsed

    def warm_turn() -> float:
        turns.change()
        return bench.timed([*bench.cli, "assistant", f"turn {turns.n}"], warm)

    a, b = bench.alternate(first_turn, warm_turn)
    bench.add(
        "first turn after committing a project (objects loose)", f"{files:,} files", a, b,
        "a warm turn (one-file change, same CLI)", 1.5,
    )  # fmt: skip


def bench_log(bench: Bench) -> None:
    folder = bench.root / "conversation-only"
    folder.mkdir()
    bench.convgit(folder, "init")
    lines = b"".join(
        orjson.dumps({"type": "message", "role": r, "content": f"{r} {i}"}) + b"\n"
        for i, r in enumerate(["user", "assistant"] * 5)
    )
    bench.convgit(folder, "append", input=lines)
    a, b = bench.alternate(
        lambda: bench.timed([*bench.cli, "log"], folder),
        lambda: bench.timed([sys.executable, "-c", "import typer, orjson"], folder),
        max(bench.reps, 10),
    )
    bench.add(
        "`convgit log` on a 10-entry session", "10 entries", a, b,
        'python -c "import typer, orjson"', 1.3,
    )  # fmt: skip
    a, b = bench.alternate(
        lambda: bench.timed([*bench.cli, "--version"], folder),
        lambda: bench.timed([sys.executable, "-c", "import typer, orjson"], folder),
        max(bench.reps, 10),
    )
    bench.add(
        "`convgit --version`", "—", a, b, 'python -c "import typer, orjson"', 1.1,
    )  # fmt: skip


# What a command that reads a whole session file cannot do with less: read it, split it into
# lines and parse every line, in a process of its own (its start and exit included).
_PARSE_FILE = """
import sys, orjson
with open(sys.argv[1], "rb") as f:
    records = [orjson.loads(line) for line in f.read().splitlines()]
"""


def bench_fsck(bench: Bench, entries: int = 300_000) -> None:
    """`convgit fsck` and `convgit log -n 1` on a long session, each a whole process, against
    a process that parses the same file with orjson."""
    store = bench.root / f"fsck-store-{entries}"
    sid = f"fsck{entries}"
    path = make_session(store, sid, entries)
    size = f"{entries:,} entries, {path.stat().st_size >> 20} MiB"
    parse = [sys.executable, "-c", _PARSE_FILE, str(path)]
    for args, what in (
        (["fsck"], "`convgit fsck` (load and every check)"),
        (["log", "-n", "1"], "`convgit log -n 1` (load, check, the active path)"),
    ):
        a, b = bench.alternate(
            lambda args=args: bench.timed(
                [*bench.cli, "--store", str(store), "-s", sid, *args], bench.root
            ),
            lambda: bench.timed(parse, bench.root),
        )
        bench.add(what, size, a, b, "python: orjson.loads of every line of the file", 1.5)


# Peak memory of this process alone (ru_maxrss would include the bench's own, across fork).
_PEAK = """
def peak():
    with open("/proc/self/status") as status:
        return next(int(l.split()[1]) for l in status if l.startswith("VmHWM:"))
"""
_LOAD = (
    _PEAK
    + """
import sys, time
start = time.perf_counter()
from convgit.session import Session
imported = time.perf_counter()
session = Session.open(sys.argv[1], session=sys.argv[2], store_dir=sys.argv[3])
session.conversation.tree.check()
path = session.conversation.tree.path()
done = time.perf_counter()
assert len(path) > 1
print(done - imported, peak())
"""
)
_PARSE = (
    _PEAK
    + """
import gc, sys, time
import orjson
start = time.perf_counter()
gc.disable()
with open(sys.argv[1], "rb") as f:
    records = [orjson.loads(line) for line in f.read().splitlines()]
gc.enable()
done = time.perf_counter()
print(done - start, peak())
"""
)


def bench_load(bench: Bench, entries: int) -> None:
    store = bench.root / f"store-{entries}"
    sid = f"load{entries}"
    path = make_session(store, sid, entries)
    peaks: dict[str, int] = {}

    def measure(name: str, code: str, *args: str) -> float:
        out = bench.run([sys.executable, "-c", code, *args], bench.root).stdout.split()
        peaks[name] = max(peaks.get(name, 0), int(out[1]))
        return float(out[0])

    reps = 3 if entries >= 1_000_000 else bench.reps
    a, b = bench.alternate(
        lambda: measure("ours", _LOAD, str(bench.root), sid, str(store)),
        lambda: measure("base", _PARSE, str(path)),
        reps,
    )
    bench.add(
        "load, validate, find the active path", f"{entries:,} entries", a, b,
        "orjson.loads of every line, collector paused", 1.2,
        note=f"peak RSS {peaks['ours'] / 1024:.0f} MiB vs {peaks['base'] / 1024:.0f} MiB",
    )  # fmt: skip


_WRITE = """
import sys, orjson
with open(sys.argv[1], "ab") as out:
    for line in sys.stdin.buffer:
        out.write(orjson.dumps(orjson.loads(line)) + b"\\n")
        out.flush()
"""


def bench_append(bench: Bench, entries: int) -> None:
    folder = bench.root / f"append-{entries}"
    folder.mkdir()
    data = b"".join(
        orjson.dumps({"type": "message", "role": r, "content": f"{r} turn {i}: " + "x" * 200})
        + b"\n"
        for i, r in zip(range(entries), ["user", "assistant"] * entries, strict=False)
    )
    counter = iter(range(1_000_000))

    def ours() -> float:
        bench.convgit(folder, "init", "--no-snapshots")
        return bench.timed([*bench.cli, "append", "--json"], folder, input=data)

    def base() -> float:
        target = folder / f"plain-{next(counter)}.jsonl"
        return bench.timed([sys.executable, "-c", _WRITE, str(target)], folder, input=data)

    a, b = bench.alternate(ours, base, 3 if entries >= 100_000 else bench.reps)
    bench.add(
        "`convgit append` from stdin", f"{entries:,} entries", a, b,
        "python: orjson loads+dumps, write and flush per line", 3.0,
    )  # fmt: skip


SAMPLES = REPO.parent / "shared" / "samples" / "transcripts"

_IMPORT = """
import gc, sys, time
from convgit.agents import importing as session_import
from convgit.agents import reading as importing
agent, source, folder, store = sys.argv[1:]
importing.importer(agent)  # modules load at start, as orjson does for the baseline
best = None
for n in range(5):
    gc.collect()
    start = time.perf_counter()
    session_import.import_file(agent, source, folder, store_dir=f"{store}-{n}")
    took = time.perf_counter() - start
    best = took if best is None else min(best, took)
print(best)
"""

_PARSE_LINES = """
import gc, sys, time, orjson
best = None
for n in range(5):
    gc.collect()
    start = time.perf_counter()
    with open(sys.argv[1], "rb") as f:
        records = [orjson.loads(line) for line in f.read().splitlines() if line.strip()]
    took = time.perf_counter() - start
    best = took if best is None else min(best, took)
print(best)
"""


def make_rollout(path: Path, turns: int) -> Path:
    """A Codex rollout of ``turns`` turns as Codex 0.121 writes them: each a prompt, reasoning,
    a commentary, a command and its output, a final reply, with their event_msg mirrors."""

    def line(kind: str, payload: dict[str, Any]) -> bytes:
        stamp = "2026-04-20T07:14:21.000Z"
        return orjson.dumps({"timestamp": stamp, "type": kind, "payload": payload}) + b"\n"

    def item(payload: dict[str, Any]) -> bytes:
        return line("response_item", payload)

    def event(payload: dict[str, Any]) -> bytes:
        return line("event_msg", payload)

    def text(role: str, words: str) -> dict[str, Any]:
        kind = "output_text" if role == "assistant" else "input_text"
        return {"type": "message", "role": role, "content": [{"type": kind, "text": words}]}

    meta = {"id": "019da9bd-7cbb-7d22-b21c-80faf72e7f8a", "timestamp": "2026-04-20T07:14:21Z",
            "cwd": "/home/dev/proj", "originator": "codex-tui", "cli_version": "0.121.0",
            "source": "cli", "model_provider": "openai",
            "base_instructions": {"text": "You are Codex. " * 200}}  # fmt: skip
    out = [line("session_meta", meta)]
    for turn in range(turns):
        tid, call = f"019da9c1-{turn:04x}", f"call_{turn:06d}"
        prompt = f"Turn {turn}: check why test_{turn} fails and fix it."
        out += [
            event({"type": "task_started", "turn_id": tid, "model_context_window": 258400}),
            line("turn_context", {"turn_id": tid, "cwd": "/home/dev/proj", "model": "gpt-5.4",
                                  "effort": "medium", "approval_policy": "on-request"}),
            item(text("user", prompt)),
            event({"type": "user_message", "message": prompt, "images": []}),
            item({"type": "reasoning", "summary": [], "encrypted_content": "gAAAA" + "x" * 800}),
            event({"type": "agent_message", "message": f"Running test_{turn}.", "phase": "c"}),
            item({**text("assistant", f"Running test_{turn}."), "phase": "commentary"}),
            item({"type": "function_call", "name": "exec_command", "call_id": call,
                  "arguments": orjson.dumps({"cmd": f"pytest -k test_{turn}"}).decode()}),
            event({"type": "exec_command_end", "call_id": call, "stdout": "1 failed" + "." * 400}),
            item({"type": "function_call_output", "call_id": call,
                  "output": "Process exited with code 1\nOutput:\n" + "F" * 1200}),
            event({"type": "token_count", "info": {"total_token_usage": {"total_tokens": turn}}}),
            item({**text("assistant", f"Fixed test_{turn}: an off-by-one."), "phase": "final"}),
            event({"type": "task_complete", "turn_id": tid, "last_agent_message": "Fixed."}),
        ]  # fmt: skip
    path.write_bytes(b"".join(out))
    return path


def bench_import(bench: Bench) -> None:
    """Importing the largest Claude Code and pi samples and a generated 1,000-turn Codex
    rollout into a new session, in one process (the interpreter's start is not the import's);
    each sample is the best of five in a process."""
    sources: list[tuple[str, Path, str]] = []
    for agent in ("claude-code", "pi"):
        found = sorted((SAMPLES / agent).rglob("*.jsonl"), key=lambda p: p.stat().st_size)
        if not found:
            bench.notes.append(f"import: no {agent} samples in {SAMPLES}; row skipped")
            continue
        sources.append((agent, found[-1], "the largest sample"))
    rollout = make_rollout(bench.root / "rollout-1000-turns.jsonl", 1_000)
    sources.append(("codex", rollout, "a generated 1,000-turn rollout"))
    folder = bench.root / "import"
    folder.mkdir()
    counter = iter(range(1_000_000))
    for agent, sample, what in sources:

        def ours(agent: str = agent, sample: Path = sample) -> float:
            store = folder / f"store-{next(counter)}"
            code = [sys.executable, "-c", _IMPORT, agent, str(sample), str(folder), str(store)]
            return float(bench.run(code, folder).stdout)

        def base(sample: Path = sample) -> float:
            code = [sys.executable, "-c", _PARSE_LINES, str(sample)]
            return float(bench.run(code, folder).stdout)

        a, b = bench.alternate(ours, base)
        lines = len(sample.read_bytes().splitlines())
        bench.add(
            f"`convgit import {agent}` of {what}, in-process",
            f"{lines:,} lines, {sample.stat().st_size // 1024:,} KiB", a, b,
            "orjson.loads of every line", 3.0,
        )  # fmt: skip


class ClaudeTurns:
    """A Claude Code session that grows as Claude writes it: each turn appends ``lines``
    transcript lines (a prompt, calls and results, a reply) and names its reply."""

    def __init__(self, root: Path, cwd: Path) -> None:
        self.session = "bench-0000-4000-8000-claudecode"
        self.transcript = root / f"{self.session}.jsonl"
        self.transcript.write_bytes(b"")
        self.cwd = cwd
        self.n = 0
        self.parent: str | None = None

    def event(self, name: str, **more: Any) -> bytes:
        payload = {
            "session_id": self.session,
            "transcript_path": str(self.transcript),
            "cwd": str(self.cwd),
            "hook_event_name": name,
            "prompt_id": f"prompt-{self.n}",
            **more,
        }
        return orjson.dumps(payload)

    def append_turn(self, lines: int) -> str:
        """Append one turn of ``lines`` lines; returns its reply's text."""
        self.n += 1
        out = []
        for k in range(lines):
            uuid = f"{self.n:06d}-{k:04d}-4000-8000-000000000000"
            if k == 0:
                kind, content = "user", f"prompt {self.n}"
            elif k == lines - 1:
                kind, content = "assistant", [{"type": "text", "text": f"reply {self.n}"}]
            elif k % 2:
                call = {"type": "tool_use", "id": f"t{self.n}-{k}", "name": "Bash"}
                kind, content = "assistant", [{**call, "input": {"command": f"echo {k}"}}]
            else:
                result = {"type": "tool_result", "tool_use_id": f"t{self.n}-{k - 1}"}
                kind, content = "user", [{**result, "content": f"{k - 1}\n" * 20}]
            message: dict[str, Any] = {"role": kind, "content": content}
            if kind == "assistant":
                message.update(id=f"msg_{self.n}_{k}", type="message", model="bench")
            line = {
                "parentUuid": self.parent,
                "isSidechain": False,
                "type": kind,
                "message": message,
                "uuid": uuid,
                "timestamp": "2026-12-01T10:00:00.000Z",
                "sessionId": self.session,
                "cwd": str(self.cwd),
            }
            out.append(orjson.dumps(line) + b"\n")
            self.parent = uuid
        with self.transcript.open("ab") as f:
            f.write(b"".join(out))
        return f"reply {self.n}"


# `convgit ui` to its first paint: textual's headless driver draws the screen as a terminal's
# would; once the app is ready and idle (drawn), a line on stdout says so
_UI_FIRST_PAINT = """
import sys
from convgit.navigator.app import Navigator
from convgit.session import Session

async def painted(pilot):
    await pilot.pause()
    sys.stdout.write("painted\\n")
    sys.stdout.flush()
    pilot.app.exit()

session = Session.open(".", session=sys.argv[1], store_dir=sys.argv[2])
Navigator(session).run(headless=True, auto_pilot=painted, size=(160, 50))
"""


def bench_ui(bench: Bench, entries: int = 10_000) -> None:
    """`convgit ui` from a fresh interpreter to its first paint (the screen drawn, before it
    quits), against `convgit tree` printing the same session (a branch every 100 entries)."""
    store = bench.root / f"ui-store-{entries}"
    sid = f"ui{entries}"
    make_session(store, sid, entries)

    def first_paint() -> float:
        start = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-c", _UI_FIRST_PAINT, sid, str(store)],
            cwd=bench.root,
            env=bench.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert proc.stdout is not None
        said = proc.stdout.readline()
        took = time.perf_counter() - start
        _, error = proc.communicate()
        if said != b"painted\n" or proc.returncode != 0:
            raise SystemExit(f"bench: convgit ui did not draw: {error.decode(errors='replace')}")
        return took

    a, b = bench.alternate(
        first_paint,
        lambda: bench.timed([*bench.cli, "--store", str(store), "-s", sid, "tree"], bench.root),
    )
    bench.add(
        "`convgit ui`: start to first paint", f"{entries:,} entries", a, b,
        "`convgit tree` printing the same session", 2.0, seconds=0.75,
    )  # fmt: skip


def installed_hook() -> list[str]:
    """The hook as Claude runs it: the command `convgit hooks install claude-code` writes (this
    checkout's convgit, started as the installed command starts it), in a shell."""
    from convgit.agents.claude_code import live as claude_code

    return ["sh", "-c", str(claude_code.handler()["command"])]


def bench_hooks(bench: Bench, file_sizes: tuple[int, ...]) -> None:
    """`convgit hook claude-code` as Claude Code runs it: a prompt with no file change against
    starting Python itself; the end of a turn (a one-file change, 200 new transcript lines)
    against git's own snapshot pipeline on the same tree."""
    hook = installed_hook()
    root = make_tree(bench, bench.root / "hooks-1000", 1_000)
    claude = ClaudeTurns(bench.root, root)
    bench.run(hook, root, input=claude.event("SessionStart", source="startup"))

    def turn() -> None:
        bench.run(hook, root, input=claude.event("UserPromptSubmit"))
        reply = claude.append_turn(4)
        bench.run(hook, root, input=claude.event("Stop", last_assistant_message=reply))

    def prompt_unchanged() -> float:
        turn()  # closes the last turn; the next prompt finds the files as its snapshot left them
        claude.n += 1
        return bench.timed(hook, root, input=claude.event("UserPromptSubmit"))

    a, b = bench.alternate(
        prompt_unchanged,
        lambda: bench.timed([sys.executable, "-c", "import orjson"], root),
        max(bench.reps, 10),
    )
    log = (root / ".git" / "convgit" / "logs" / "hooks.log").read_text()
    if "problem" in log or log.count("files unchanged") < len(a):
        bench.notes.append("hook rows: a prompt with no change did not find the files unchanged")
    bench.add(
        "hook event with no file change (UserPromptSubmit)", "1,000 files", a, b,
        'python -c "import orjson"', 2.0,
    )  # fmt: skip

    for files in file_sizes:
        if files >= 10_000:
            bench_hook_stop(bench, files)


def bench_hook_stop(bench: Bench, files: int) -> None:
    hook = installed_hook()
    root = make_tree(bench, bench.root / f"hooks-{files}", files)
    folder = bench.root / f"hooks-{files}-claude"
    folder.mkdir()
    claude = ClaudeTurns(folder, root)
    bench.run(hook, root, input=claude.event("SessionStart", source="startup"))
    turns = Turns(root)

    def stop() -> float:
        bench.run(hook, root, input=claude.event("UserPromptSubmit"))
        turns.change()
        reply = claude.append_turn(200)
        return bench.timed(hook, root, input=claude.event("Stop", last_assistant_message=reply))

    kept = bench.root / f"hooks-kept-index-{files}"
    env = {**bench.env, **IDENTITY, "GIT_INDEX_FILE": str(kept)}
    split = ["-c", "core.splitIndex=true"]
    state = {"parent": bench.run(["git", "rev-parse", "HEAD"], root).stdout.decode().strip()}

    def git_pipeline() -> float:
        turns.change()
        start = time.perf_counter()
        bench.run(["git", *split, "add", "-A"], root, env=env)
        tree = bench.run(["git", *split, "write-tree"], root, env=env).stdout.decode().strip()
        commit = bench.run(
            ["git", "commit-tree", tree, "-p", state["parent"], "-m", "bench"], root, env=env
        )
        state["parent"] = commit.stdout.decode().strip()
        bench.run(["git", "update-ref", "refs/bench/hook", state["parent"]], root, env=env)
        return time.perf_counter() - start

    reps = max(2, bench.reps // 2) if files >= 100_000 else None
    a, b = bench.alternate(stop, git_pipeline, reps)
    log = (root / ".git" / "convgit" / "logs" / "hooks.log").read_text()
    if "problem" in log or log.count(": 200 new entries; snapshot of") < len(a):
        bench.notes.append(f"hook rows at {files:,} files: a Stop did not import and snapshot")
    bench.add(
        "hook at Stop: one-file change, 200 new transcript lines", f"{files:,} files", a, b,
        "git add -A/write-tree/commit-tree/update-ref, kept index + split index", 2.0,
    )  # fmt: skip


# -- reporting ---------------------------------------------------------------------------------


def versions(env: dict[str, str]) -> str:
    git = subprocess.run(["git", "--version"], capture_output=True, text=True, env=env).stdout
    try:
        from importlib.metadata import version

        typer, orjson_version = version("typer"), version("orjson")
    except Exception:  # pragma: no cover - not installed as a distribution
        typer = orjson_version = "?"
    return (
        f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC; {platform.machine()}, "
        f"{os.cpu_count()} cores, {platform.system()} {platform.release()}; "
        f"Python {platform.python_version()}; {git.strip()}; convgit {convgit.__version__}, "
        f"typer {typer}, orjson {orjson_version}"
    )


def table(bench: Bench) -> str:
    out = [
        "| target | size | convgit: median (min-max) | baseline | baseline: median (min-max) "
        "| ratio | goal | result |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in bench.rows:
        goal = r.goal
        note = f" ({r.note})" if r.note else ""
        out.append(
            f"| {r.target}{note} | {r.size} | {_ms(r.ours)} | {r.baseline} | {_ms(r.base)} "
            f"| {r.ratio:.2f}x | {goal} | {r.verdict} |"
        )
    return "\n".join(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a small run, under a minute")
    parser.add_argument("--reps", type=int, help="repetitions per target (default 5, quick 3)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    parser.add_argument(
        "--only",
        default="",
        help="comma list of: snapshot, restore, first, run, objects, log, load, fsck, append, "
        "import, page, hooks, claude, gemini, opencode, pi, codex, live, ui, watcher, share, "
        "search, recorder",
    )
    parser.add_argument(
        "--million",
        action="store_true",
        help="the watcher and recorder rows at 1,000,000 files too (slow)",
    )
    parser.add_argument(
        "--against",
        type=Path,
        help="a checkout of convgit (today's main) whose hook the recorder's and the live turns'"
        " fallback rows are measured against",
    )
    args = parser.parse_args()
    only = set(filter(None, args.only.split(",")))
    root = Path(tempfile.mkdtemp(prefix="convgit-bench-"))
    env = _scrubbed_env(root / "home")
    bench = Bench(args.reps or (3 if args.quick else 5), root, env, _cli_command(env))
    file_sizes = FILE_SIZES_QUICK if args.quick else FILE_SIZES_FULL
    entry_sizes = ENTRY_SIZES_QUICK if args.quick else ENTRY_SIZES_FULL
    began = time.perf_counter()
    try:
        if not only or "log" in only:
            bench_log(bench)
        if not only or "snapshot" in only:
            for files in file_sizes:
                large = files >= 100_000
                goals = {
                    "snapshot": 1.0 if large else 1.5,
                    "ghost": 0.2 if large else None,
                    "first": 1.2,
                    "unchanged": 1.0,
                    "restore": 1.0,
                }
                bench_snapshots(bench, files, goals)
        if not only or "restore" in only:
            bench_restore_many(bench, 20_000)
        if not only or "first" in only:
            bench_first_turn(bench)
        if not only or "run" in only:
            bench_run(bench, 10_000)
        if not only or "objects" in only:
            bench_objects(bench, file_sizes[0])
        if not only or "load" in only:
            for entries in entry_sizes:
                bench_load(bench, entries)
        if not only or "fsck" in only:
            bench_fsck(bench, 100_000 if args.quick else 300_000)
        if not only or "append" in only:
            bench_append(bench, 10_000 if args.quick else 100_000)
        if not only or "import" in only:
            bench_import(bench)
        if not only or "page" in only:
            from bench_page import bench_page  # beside this file; needs the dev extra

            bench_page(bench)
        if not only or "hooks" in only:
            bench_hooks(bench, file_sizes)
        # a row alone, or every one
        agents = {
            "claude": "claude-code", "gemini": "gemini", "opencode": "opencode", "pi": "pi",
            "codex": "codex",
        }  # fmt: skip
        if not only or "live" in only or set(agents) & set(only):
            from bench_live import bench_live_turns  # beside this file

            chosen = (
                None if not only or "live" in only else {agents[a] for a in only if a in agents}
            )
            reps = {"reps": args.reps} if args.reps else {}
            bench_live_turns(bench, make_tree, REPO, chosen, args.against, **reps)
        if not only or "ui" in only:
            bench_ui(bench)
        if not only or "watcher" in only:
            from bench_watcher import bench_watcher  # beside this file

            for files in (100_000, 1_000_000) if args.million else (100_000,):
                bench_watcher(bench, files, make_tree, Turns, IDENTITY)
        if not only or "search" in only:
            from bench_search import bench_search  # beside this file

            big = 100_000 if args.quick else 1_000_000
            bench_search(bench, big, make_tree, make_session, Turns)
        if not only or "recorder" in only:
            from bench_recorder import bench_recorder  # beside this file

            bench_recorder(
                bench,
                (100_000, 1_000_000) if args.million else (100_000,),
                make_tree,
                Turns,
                IDENTITY,
                ClaudeTurns,
                installed_hook(),
                args.against,
            )
        if not only or "share" in only:
            from bench_share import bench_share  # beside this file

            bench_share(
                bench, 2_000 if args.quick else 10_000, 20 if args.quick else 100, make_tree, Turns
            )
    finally:
        gc.collect()
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
        else:
            print(f"kept {root}", file=sys.stderr)
    mode = "--quick" if args.quick else "full"
    print(f"\n### convgit benchmark ({mode}, {bench.reps} repetitions, A/B alternating)\n")
    print(versions(env) + "\n")
    print(table(bench))
    for note in bench.notes:
        print(f"\n* {note}")
    flag = " --quick" if args.quick else ""
    print(f"\n(ran in {time.perf_counter() - began:.0f} s: `python scripts/bench.py{flag}`)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
