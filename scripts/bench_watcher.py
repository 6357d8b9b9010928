"""The watcher rows of scripts/bench.py (issue 27): a snapshot after a one-file change on a large
generated tree, through the CLI, with the private index asking watchman what changed
(``[snapshots] fsmonitor = "watchman"``) and without (``"off"``), each against git's own
kept-index pipeline without a watcher (``git add -A``, ``write-tree``, ``commit-tree``,
``update-ref`` into a kept split index), in the same run. The two convgit sides keep a store of
their own each (``CONVGIT_STORE``), so neither rewrites the other's private index. Without
watchman on PATH, the watcher row is left out with a note."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from typing import Any

# the 100,000-file goals, then the 1,000,000-file ones
GOALS = {100_000: 0.3, 1_000_000: 0.1}


def bench_watcher(bench: Any, files: int, make_tree: Any, turns_of: Any, identity: Any) -> None:
    size = f"{files:,} files"
    print(f"generating a {files:,}-file repository (watcher rows)", file=sys.stderr, flush=True)
    root = make_tree(bench, bench.root / f"watched-{files}", files)
    turns = turns_of(root)
    stores = {}
    for setting in ("watchman", "off"):
        store = bench.root / f"store-{setting}-{files}"
        env = {**bench.env, "CONVGIT_STORE": str(store)}
        bench.run([*bench.cli, "init"], root, env=env)
        (store / "config.toml").write_text(f'[snapshots]\nfsmonitor = "{setting}"\n')
        stores[setting] = env
    kept = bench.root / f"watcher-kept-index-{files}"
    genv = {**bench.env, **identity, "GIT_INDEX_FILE": str(kept)}
    split = ["-c", "core.splitIndex=true"]
    state = {"parent": bench.run(["git", "rev-parse", "HEAD"], root).stdout.decode().strip()}

    def ours(setting: str) -> float:
        turns.change()
        return bench.timed([*bench.cli, "assistant", f"turn {turns.n}"], root, env=stores[setting])

    def git_pipeline() -> float:
        turns.change()
        start = time.perf_counter()
        bench.run(["git", *split, "add", "-A"], root, env=genv)
        tree = bench.run(["git", *split, "write-tree"], root, env=genv).stdout.decode().strip()
        commit = ["git", "commit-tree", tree, "-p", state["parent"], "-m", "bench"]
        made = bench.run(commit, root, env=genv)
        state["parent"] = made.stdout.decode().strip()
        bench.run(["git", "update-ref", "refs/bench/watcher", state["parent"]], root, env=genv)
        return time.perf_counter() - start

    baseline = "git add -A/write-tree/commit-tree/update-ref, kept split index, no watcher"
    if shutil.which("watchman", path=bench.env.get("PATH")) is None:
        bench.notes.append(f"watcher rows at {size}: watchman is not on PATH, left out")
    else:
        ours("watchman")  # the first query: watchman crawls the tree (watch-project)
        said = bench.run([*bench.cli, "status", "--json"], root, env=stores["watchman"]).stdout
        if b'"path":"watchman"' not in said.replace(b" ", b""):
            bench.notes.append(f"watcher rows at {size}: status says {said[-200:]!r}")
        a, b = bench.alternate(lambda: ours("watchman"), git_pipeline)
        bench.add(
            "snapshot after a one-file change, watcher on (`fsmonitor = \"watchman\"`)",
            size, a, b, baseline, GOALS.get(files),
        )  # fmt: skip
    a, b = bench.alternate(lambda: ours("off"), git_pipeline)
    bench.add(
        "snapshot after a one-file change, watcher off (`fsmonitor = \"off\"`)",
        size, a, b, baseline, 1.0,
    )  # fmt: skip
    subprocess.run(["watchman", "watch-del", str(root)], capture_output=True, check=False)
