"""`convgit search` finds what grep finds: over random sessions whose words are drawn from an
alphabet JSON writes as it is (and that no key, id or time of a record holds), the entries a
search returns for a string are exactly those whose line ``grep -F -i`` finds it on; after more
turns are appended the index, behind the files, is brought up to date and the same holds."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from convgit import schema
from convgit.search import index, query
from convgit.store.location import StoreLocation

# no letter of a key, a role, an id (hex), a time or "session", no character of JSON's syntax
# or of the header's folder, and nothing JSON escapes
ALPHABET = "qjkhQJKHéÉ日本ü !?"
words = st.text(ALPHABET, min_size=0, max_size=40)


@st.composite
def sessions(draw: st.DrawFn) -> list[list[dict[str, object]]]:
    made = []
    for _ in range(draw(st.integers(1, 3))):
        entries = []
        for _ in range(draw(st.integers(1, 8))):
            role = draw(st.sampled_from(["user", "assistant", "tool", "call"]))
            text = draw(words)
            if role == "call":
                arguments = {"qqq": draw(words)}
                call = {"type": "tool_call", "id": "c1", "name": "qqk", "input": arguments}
                content: object = [{"type": "text", "text": text}, call]
                role = "assistant"
            else:
                content = text if draw(st.booleans()) else [{"type": "text", "text": text}]
            entries.append({"type": "message", "role": role, "content": content})
        made.append(entries)
    return made


def _write(store: Path, made: list[list[dict[str, object]]], start: int = 0) -> None:
    """Write (or append to) one session file per list, entries chained by parentId."""
    for number, entries in enumerate(made):
        sid = f"s{number}"
        path = store / "sessions" / f"{sid}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        lines = [] if path.exists() else [orjson.dumps(schema.header(sid, "/"))]
        have = path.read_bytes().count(b"\n") if path.exists() else 1
        for k, entry in enumerate(entries):
            n = have - 1 + k
            record = {**entry, "id": f"{number:02x}{n:06x}", "ts": "2026-12-01T10:00:00.000Z",
                      "parentId": None if n == 0 else f"{number:02x}{n - 1:06x}"}  # fmt: skip
            lines.append(orjson.dumps(record))
        with path.open("ab") as f:
            f.write(b"".join(line + b"\n" for line in lines))


def _words(content: object) -> list[str]:
    """The strings a test's entry holds (the needles are cut from them)."""
    if isinstance(content, str):
        return [content]
    found = []
    for part in content if isinstance(content, list) else []:
        found += [part.get("text", ""), *part.get("input", {}).values()]
    return found


def _grep(store: Path, needle: str) -> set[tuple[str, str]]:
    """(session, entry) of every line ``grep -F -i`` finds ``needle`` on."""
    found = set()
    for path in sorted((store / "sessions").glob("*.jsonl")):
        done = subprocess.run(
            ["grep", "-F", "-i", "--", needle, str(path)],
            capture_output=True,
            env={**os.environ, "LC_ALL": "C.UTF-8"},
        )
        assert done.returncode in (0, 1), done.stderr
        for line in done.stdout.splitlines():
            record = orjson.loads(line)
            found.add((path.name.removesuffix(".jsonl"), record["id"]))
    return found


def _search(location: StoreLocation, needle: str) -> set[tuple[str, str]]:
    db, _ = index.fresh(location)
    try:
        results, more = query.search(db, location, [needle], query.Filters(), 10_000)
    finally:
        db.close()
    assert not more
    return {(r.session, r.entry) for r in results}


@pytest.mark.slow
@settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(made=sessions(), more=sessions(), pick=st.data())
def test_search_finds_exactly_the_entries_grep_finds(
    tmp_path_factory: pytest.TempPathFactory,
    made: list[list[dict[str, object]]],
    more: list[list[dict[str, object]]],
    pick: st.DataObject,
) -> None:
    store = tmp_path_factory.mktemp("store")
    location = StoreLocation(store, None)
    _write(store, made)
    texts = [t for s in made + more for e in s for t in _words(e["content"])] or ["qqq"]
    for round_ in range(2):
        for _ in range(3):
            source = pick.draw(st.sampled_from(texts))
            start = pick.draw(st.integers(0, max(len(source) - 1, 0)))
            needle = pick.draw(st.one_of(
                st.just(source[start : start + pick.draw(st.integers(1, 6))]),
                st.text(ALPHABET, min_size=1, max_size=5),
            ))  # fmt: skip
            if not needle.strip():
                continue
            assert _search(location, needle) == _grep(store, needle), (needle, round_)
        _write(store, more)  # the index is behind the files now: appended turns


def test_a_string_across_a_tool_calls_name_and_its_arguments_is_not_found(
    tmp_path: Path,
) -> None:
    """The example the property found: a call named ``qqk`` with arguments ``{"qqq": ""}``;
    grep does not find ``K `` on its line (the file keeps the name and the arguments apart), so
    neither does the search."""
    call = {"type": "tool_call", "id": "c1", "name": "qqk", "input": {"qqq": ""}}
    made: list[list[dict[str, object]]] = [
        [{"type": "message", "role": "assistant", "content": [{"type": "text", "text": ""}, call]}]
    ]
    _write(tmp_path, made)
    location = StoreLocation(tmp_path, None)
    assert _grep(tmp_path, "K ") == set() == _search(location, "K ")
    assert _search(location, "qqk") == _grep(tmp_path, "qqk") == {("s0", "00000000")}
