"""The migration seam beside the session loader (``convgit.store.migrations``): a session file
of an older format version is read through the steps of ``MIGRATIONS``, in memory, its bytes
left as they are, and never appended to. No older version exists yet, so the fixture is a
format v0 made up for the test (a message's text under "text", not "content") and its step is
put in the table for the test, as a change of the format would put it there."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from convgit import Session, schema
from convgit.base.errors import UnsupportedVersionError
from convgit.store import load, migrations, sessions
from convgit.store.location import StoreLocation

TS = "2026-12-01T00:00:00.000Z"
SID = "0123456789ab"
V0 = [
    {"type": "session", "v": 0, "id": SID, "created": TS, "cwd": "."},
    {"type": "message", "id": "u1", "parentId": None, "ts": TS, "role": "user", "text": "hi"},
    {"type": "message", "id": "a1", "parentId": "u1", "ts": TS, "role": "assistant", "text": "yo"},
    {"type": "leaf", "target": "a1", "ts": TS},
]


def _v0_to_v1(records: list[Any]) -> list[Any]:
    """The made-up v0's step: a message's text moves from "text" to "content"."""
    moved = []
    for record in records:
        if record.get("type") == "message":
            record = {**record, "content": record["text"]}
            del record["text"]
        moved.append(record)
    return moved


def test_the_steps_bring_older_records_to_the_current_version() -> None:
    assert schema.FORMAT_VERSION == 1 and migrations.MIGRATIONS == {}  # no older version yet
    records, said = migrations.migrate(V0, {0: _v0_to_v1})
    assert said == 0 and migrations.version_of(records) == schema.FORMAT_VERSION
    assert [r.get("content") for r in records[1:3]] == ["hi", "yo"]
    assert all("text" not in r for r in records[1:3]) and V0[1]["text"] == "hi"  # a copy
    current = [{**V0[0], "v": 1}, *_v0_to_v1(V0[1:])]
    assert migrations.migrate(current, {0: _v0_to_v1}) == (current, None)  # nothing to do
    assert migrations.migrate(V0, {}) == (V0, None)  # no way from v0: left as it is


@pytest.fixture
def older(tmp_path: Path) -> tuple[StoreLocation, Path]:
    """A store holding one session file of format v0, made current."""
    location = StoreLocation(tmp_path / "store", None)
    location.sessions.mkdir(parents=True)
    path = location.sessions / f"{SID}.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in V0))
    location.set_current(SID)
    return location, path


def test_an_older_file_is_read_through_the_seam_and_never_written(
    older: tuple[StoreLocation, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    location, path = older
    before = path.read_bytes()
    with pytest.raises(UnsupportedVersionError, match="format v0; this convgit reads v1 only"):
        load.session(sessions.session_file(location, SID), SID)  # no step from v0: refused
    monkeypatch.setitem(migrations.MIGRATIONS, 0, _v0_to_v1)
    _, found = load.session(sessions.session_file(location, SID), SID)
    assert found.read_from_version == 0 and not found.fatal
    assert [found.entries[i]["content"] for i in ("u1", "a1")] == ["hi", "yo"]
    session = Session.open(location.root, session=SID, store_dir=location.root)
    assert [e.text for e in session.conversation.path("@")] == ["hi", "yo"]  # type: ignore[attr-defined]
    with pytest.raises(UnsupportedVersionError, match=f"Session {SID} is in format v0"):
        session.append.user("more")
    assert path.read_bytes() == before


def test_an_older_session_goes_on_in_a_fork_written_in_the_current_format(
    older: tuple[StoreLocation, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the refusal's hint says: the fork holds the path in the current format."""
    location, path = older
    before = path.read_bytes()
    monkeypatch.setitem(migrations.MIGRATIONS, 0, _v0_to_v1)
    session = Session.open(location.root, session=SID, store_dir=location.root)
    fork = session.fork_session("@")
    fork.append.user("more")
    written = [orjson.loads(line) for line in fork.conversation.file.path.read_bytes().splitlines()]
    assert written[0]["v"] == schema.FORMAT_VERSION
    assert [r["content"] for r in written if r["type"] == "message"] == ["hi", "yo", "more"]
    assert path.read_bytes() == before
