"""The search rows of scripts/bench.py (issue 38), each against its baseline in the same run:

* a search of a 20,000-entry store with its index warm, through the CLI, against `convgit log
  -n 1` on the same store (a plain start that reads the session);
* the same at 1,000,000 entries against `grep -F -r` over the session files;
* the index brought up to date after one new turn (two entries appended and a snapshot, through
  `convgit assistant`, untimed), timed in-process, against `python -S -c pass`;
* a full reindex of 1,000,000 entries, in-process, against orjson parsing every line of the
  files;
* two floors, reported only, which say how low the two rows above can go with the means the
  issue names (a Python command, SQLite's FTS5): a Python start as the `convgit` console script
  pays it (`python -c pass`, site included) against the same grep, and the entries' texts
  inserted into a bare FTS5 trigram table like the index's (the texts read and parsed first,
  untimed) against the same parse.

With --quick the large store has 100,000 entries. The stores are those `make_session` writes (a
branch every 100 entries, ~300 bytes a message); the words searched match one entry."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

_UPDATE = """
import sys, time
from convgit.search import index
from convgit.store.location import locate
location = locate(sys.argv[1])
start = time.perf_counter()
db, done = index.fresh(location, reindex=sys.argv[2] == "reindex")
took = time.perf_counter() - start
db.close()
assert done.rebuilt == (sys.argv[2] == "reindex"), done
print(took, done.entries, done.snapshots)
"""
_PARSE = """
import gc, sys, time
import orjson
start = time.perf_counter()
gc.disable()
for path in sys.argv[1:]:
    with open(path, "rb") as f:
        records = [orjson.loads(line) for line in f.read().splitlines()]
print(time.perf_counter() - start)
"""
_FTS5_ALONE = """
import gc, os, sqlite3, sys, time
import orjson
from convgit.search.texts import text
gc.disable()
texts = []
for path in sys.argv[2:]:
    with open(path, "rb") as f:
        texts.extend(text(orjson.loads(line)) for line in f.read().splitlines())
db = sqlite3.connect(sys.argv[1], isolation_level=None)
for pragma in ("page_size = 16384", "journal_mode = off", "synchronous = off"):
    db.execute("pragma " + pragma)
db.execute("pragma cache_size = -262144")
db.execute(
    "create virtual table words using fts5(body, tokenize='trigram', content='', columnsize=0)"
)
db.execute("insert into words(words, rank) values ('pgsz', 16000)")
db.execute("insert into words(words, rank) values ('automerge', 0)")
start = time.perf_counter()
db.execute("begin")
db.executemany("insert into words(rowid, body) values (?, ?)", enumerate(texts, 1))
db.execute("commit")
took = time.perf_counter() - start
db.close()
os.unlink(sys.argv[1])
print(took)
"""


def _store(bench: Any, make_tree: Any, make_session: Any, entries: int) -> tuple[Path, Path]:
    """A repository whose store holds one session of ``entries`` entries, current and with
    snapshots on (its session file written by ``make_session`` over the one `init` made)."""
    root = make_tree(bench, bench.root / f"search-{entries}", 100)
    made = bench.convgit(root, "init", "--json").stdout
    import orjson

    sid = orjson.loads(made)["id"]
    store = root / ".git" / "convgit"
    make_session(store, sid, entries)
    return root, store / "sessions" / f"{sid}.jsonl"


def bench_search(bench: Any, big: int, make_tree: Any, make_session: Any, turns_of: Any) -> None:
    print("generating a 20,000-entry store (search rows)", file=sys.stderr, flush=True)
    root, session = _store(bench, make_tree, make_session, 20_000)
    words = ["search", "turn 12345:"]

    def search(where: Path, *more: str) -> float:
        return bench.timed([*bench.cli, *words, *more], where)

    search(root)  # the index is built: what follows finds it warm
    a, b = bench.alternate(
        lambda: search(root), lambda: bench.timed([*bench.cli, "log", "-n", "1"], root), 10
    )
    bench.add(
        "`convgit search`, warm index", "20,000 entries", a, b,
        "`convgit log -n 1` on the same store", 1.3,
    )  # fmt: skip

    turns = turns_of(root)

    def update() -> float:
        turns.change()
        bench.convgit(root, "assistant", f"one more turn {turns.n}")  # untimed: the turn
        out = bench.run([sys.executable, "-c", _UPDATE, str(root), "update"], root).stdout.split()
        if out[1:] != [b"1", b"1"]:
            bench.notes.append(f"search update: {out[1:]!r} entries and snapshots, not 1 and 1")
        return float(out[0])

    a, b = bench.alternate(
        update, lambda: bench.timed([sys.executable, "-S", "-c", "pass"], root), 10
    )
    bench.add(
        "search index brought up to date after one new turn (with its snapshot), in-process",
        "20,000 entries", a, b, "python -S -c pass", 1.5,
    )  # fmt: skip

    print(f"generating a {big:,}-entry store (search rows)", file=sys.stderr, flush=True)
    root, session = _store(bench, make_tree, make_session, big)
    words = ["search", f"turn {big - 12345}:"]
    size = f"{big:,} entries, {session.stat().st_size // 2**20:,} MiB"

    def reindex() -> float:
        out = bench.run([sys.executable, "-c", _UPDATE, str(root), "reindex"], root).stdout
        return float(out.split()[0])

    def parse() -> float:
        return float(bench.run([sys.executable, "-c", _PARSE, str(session)], root).stdout)

    a, b = bench.alternate(reindex, parse, 2 if big >= 1_000_000 else 3)
    bench.add("full search reindex, in-process", size, a, b, "orjson.loads of every line", 3.0)
    grep = ["grep", "-F", "-r", "--", words[1], str(session.parent)]
    a, b = bench.alternate(lambda: search(root), lambda: bench.timed(grep, root), 10)
    bench.add("`convgit search`, warm index", size, a, b, "grep -F -r over the session files", 0.2)

    # the floors of the two rows above
    start = [sys.executable, "-c", "pass"]
    a, b = bench.alternate(lambda: bench.timed(start, root), lambda: bench.timed(grep, root), 10)
    bench.add(
        "floor: a Python start with site (`python -c pass`)", size, a, b,
        "grep -F -r over the session files", None,
    )  # fmt: skip
    scratch = str(bench.root / "fts5-alone.db")

    def fts5_alone() -> float:
        out = bench.run([sys.executable, "-c", _FTS5_ALONE, scratch, str(session)], root).stdout
        return float(out)

    a, b = bench.alternate(fts5_alone, parse, 2 if big >= 1_000_000 else 3)
    bench.add(
        "floor: the texts inserted into a bare FTS5 trigram table", size, a, b,
        "orjson.loads of every line", None,
    )  # fmt: skip
