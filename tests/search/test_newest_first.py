"""The newest results first, without sorting every match: a word most entries hold gives its
newest ``-n`` from the entries written last (the work does not grow with the matches), and
sessions indexed out of their times' order (a session with newer entries indexed first) still
give the newest by time."""

from __future__ import annotations

import sqlite3
from datetime import datetime, timedelta, timezone
from pathlib import Path

import orjson

from convgit import schema
from convgit.search import index, query
from convgit.store.location import StoreLocation


def _session(store: Path, sid: str, count: int, hour: int) -> list[tuple[str, str]]:
    """A session of ``count`` messages holding "needle", a minute apart from ``hour``;
    (ts, id) of each."""
    path = store / "sessions" / f"{sid}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [orjson.dumps(schema.header(sid, "/"))]
    made = []
    for n in range(count):
        at = datetime(2026, 12, 1, hour, tzinfo=timezone.utc) + timedelta(minutes=n)
        ts = at.strftime("%Y-%m-%dT%H:%M:%S.000Z")
        ident = f"{sid}{n:06x}"
        parent = f"{sid}{n - 1:06x}" if n else None
        record = {"type": "message", "id": ident, "parentId": parent, "ts": ts,
                  "role": "user", "content": f"a needle in entry {n}"}  # fmt: skip
        lines.append(orjson.dumps(record))
        made.append((ts, ident))
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    return made


def _searched(location: StoreLocation, limit: int) -> tuple[list[str], int]:
    """The entries a search for "needle" gives, and how much SQLite work it took (its
    progress handler's calls, one per 100 virtual machine steps)."""
    db, _ = index.fresh(location)
    steps = 0

    def count() -> int:
        nonlocal steps
        steps += 1
        return 0

    db.set_progress_handler(count, 100)
    try:
        results, more = query.search(db, location, ["needle"], query.Filters(), limit)
    finally:
        db.close()
    assert more
    return [r.entry for r in results], steps


def test_the_newest_of_many_matches_cost_what_the_few_shown_cost(tmp_path: Path) -> None:
    work = []
    for size in (1_000, 8_000):
        store = tmp_path / str(size)
        made = _session(store, "s0", size, 0)
        found, steps = _searched(StoreLocation(store, None), 10)
        assert found == [ident for _, ident in sorted(made, reverse=True)[:10]]
        work.append(steps)
    assert work[1] < 2 * work[0], work  # eight times the matches, not eight times the work


def test_sessions_indexed_out_of_their_times_order_give_the_newest_by_time(
    tmp_path: Path,
) -> None:
    newer = _session(tmp_path, "a0", 300, 12)  # indexed first (its rowids are the lower)
    older = _session(tmp_path, "b1", 300, 0)
    location = StoreLocation(tmp_path, None)
    found, _ = _searched(location, 10)
    assert found == [ident for _, ident in sorted(newer + older, reverse=True)[:10]]
    db = sqlite3.connect(tmp_path / "search.sqlite")
    first = db.execute("select min(rowid), max(rowid) from entries where sid = 'a0'").fetchone()
    db.close()
    assert first[1] < 301, "set up: the newer session's entries were written first"
