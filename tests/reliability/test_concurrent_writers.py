"""Concurrent writers: 8 processes (4 through the API, 4 through the CLI) append 500 entries each
to one session at once. Every entry lands exactly once, in each writer's order, no line is
interleaved, ids are unique and fsck is clean."""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
from pathlib import Path

import orjson

from convgit import Session

WRITERS_API = 4
WRITERS_CLI = 4
ENTRIES = 500
CLI_BATCH = 50


def _api_writer(store: str, sid: str, name: str, start: multiprocessing.synchronize.Event) -> None:
    session = Session.open(store, session=sid, store_dir=store)
    start.wait()
    for i in range(ENTRIES):
        record = {"type": "message", "role": "user", "content": f"{name}-{i}"}
        session.append.entries([record], follow=True)


def _cli_writer(store: str, sid: str, name: str) -> subprocess.Popen[bytes]:
    lines = [
        b'{"type":"message","role":"assistant","content":"%s-%d"}\n' % (name.encode(), i)
        for i in range(ENTRIES)
    ]
    script = (
        "import subprocess, sys\n"
        "data = sys.stdin.buffer.read().splitlines(keepends=True)\n"
        f"for k in range(0, len(data), {CLI_BATCH}):\n"
        "    chunk = b''.join(data[k:k + %d])\n"
        % CLI_BATCH
        + "    cmd = [sys.executable, '-m', 'convgit', '--store', sys.argv[1], '--session',"
        " sys.argv[2], 'append']\n"
        "    subprocess.run(cmd, input=chunk, check=True, stdout=subprocess.DEVNULL)\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", script, store, sid],
        stdin=subprocess.PIPE,
        env=dict(os.environ),
    )
    assert proc.stdin is not None
    proc.stdin.write(b"".join(lines))
    proc.stdin.close()
    return proc


def test_eight_writers_lose_nothing_and_interleave_nothing(tmp_path: Path) -> None:
    store = str(tmp_path / "store")
    session = Session.create(tmp_path, store_dir=store, snapshots=False)
    ctx = multiprocessing.get_context("spawn")
    start = ctx.Event()
    api = [
        ctx.Process(target=_api_writer, args=(store, session.id, f"api{n}", start))
        for n in range(WRITERS_API)
    ]
    for p in api:
        p.start()
    cli = [_cli_writer(store, session.id, f"cli{n}") for n in range(WRITERS_CLI)]
    start.set()
    for p in api:
        p.join(timeout=600)
        assert p.exitcode == 0
    for proc in cli:
        assert proc.wait(timeout=600) == 0

    raw = session.conversation.file.path.read_bytes()
    assert raw.endswith(b"\n")
    records = [orjson.loads(line) for line in raw.splitlines()]  # no interleaved line
    entries = records[1:]
    total = (WRITERS_API + WRITERS_CLI) * ENTRIES
    assert len(entries) == total
    assert len({e["id"] for e in entries}) == total
    by_writer: dict[str, list[int]] = {}
    for e in entries:
        name, _, number = e["content"].rpartition("-")
        by_writer.setdefault(name, []).append(int(number))
    assert sorted(by_writer) == sorted(
        [f"api{n}" for n in range(WRITERS_API)] + [f"cli{n}" for n in range(WRITERS_CLI)]
    )
    for numbers in by_writer.values():
        assert numbers == list(range(ENTRIES))  # exactly once each, in the writer's order
    again = Session.open(store, session=session.id, store_dir=store)
    assert not again.problems()
    # every entry hangs off the one written just before it: one straight path, nothing lost
    assert len(again.conversation.tree.path()) == total
