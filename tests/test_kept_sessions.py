"""A process that stays (the recorder) keeps each session it read between its events
(``store.load.session_again``): its next read takes only the whole lines appended since, by
itself or by any other process, and the tree it then holds says exactly what the file read
whole says; anything but appends of whole lines since (the file replaced, shortened, changed
in place, ended mid-line) makes it read the file whole, as every other process does."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from convgit import Session
from convgit.base.errors import ConvgitError
from convgit.conversation import tree
from convgit.store import jsonl, load

pytestmark = pytest.mark.session


@pytest.fixture
def keeping(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Path]]:
    """This process keeps sessions (as the recorder does); the list names each file read whole
    (``JsonlFile.read``) while it does."""
    read: list[Path] = []
    whole = jsonl.JsonlFile.read

    def counted(self: jsonl.JsonlFile) -> jsonl.Lines:
        read.append(self.path)
        return whole(self)

    monkeypatch.setattr(jsonl.JsonlFile, "read", counted)
    monkeypatch.delenv("CONVGIT_HELD_CHECK", raising=False)  # the tests compare it themselves
    monkeypatch.setattr(load, "_held", {})
    yield read
    monkeypatch.setattr(load, "_held", None)


def opened(session: Session) -> Session:
    """The session as the next event opens it."""
    return Session(session.location, session.id)


@contextmanager
def elsewhere() -> Iterator[None]:
    """What the block does, as another process does it: one that keeps no session."""
    kept, load._held = load._held, None
    try:
        yield
    finally:
        load._held = kept


def whole(session: Session) -> tree.Tree:
    """The session's file read whole, as a process that keeps nothing reads it."""
    return load.session(
        jsonl.JsonlFile(session.conversation.file.path, Path(os.devnull)), session.id
    )[1]


def same(kept: tree.Tree, read: tree.Tree) -> None:
    for name in ("entries", "leaf", "labels", "header", "kept"):
        assert getattr(kept, name) == getattr(read, name), name
    assert [p.what for p in kept.problems] == [p.what for p in read.problems]


def test_a_kept_session_takes_in_only_what_was_appended_and_says_what_the_file_says(
    tmp_path: Path, keeping: list[Path]
) -> None:
    made = Session.create(tmp_path, store_dir=tmp_path / "store", snapshots=False)
    path = made.conversation.file.path
    assert keeping.count(path) == 1  # read whole, and kept
    made.append.user("first question")
    event = opened(made)
    event.reload()  # an event's read: what was appended since, none here
    event.append.assistant("its answer")  # the recorder's own write, through the kept file
    with elsewhere():  # a command between two events
        other = opened(made)
        other.reload()
        fork = other.append.user("a question on a side branch", force=True).id
        other.moves.label(fork, "aside")
        other.moves.switch(fork)
    assert keeping.count(path) == 2
    next_event = opened(made)
    next_event.reload()
    assert keeping.count(path) == 2  # the next event read the lines appended, not the file
    same(next_event.conversation.tree, whole(made))
    assert next_event.conversation.tree.leaf == fork
    answer = next_event.append.assistant("answered on the side branch", force=True).id
    assert whole(made).entries[answer]["parentId"] == fork


@pytest.mark.parametrize(
    "change", ["replaced", "shortened", "torn", "edited in place", "cut and appended to"]
)
def test_a_kept_session_is_read_whole_when_it_was_not_only_appended_to(
    tmp_path: Path, keeping: list[Path], change: str
) -> None:
    made = Session.create(tmp_path, store_dir=tmp_path / "store", snapshots=False)
    made.append.user("first question")
    made.append.assistant("first answer")
    path = made.conversation.file.path
    data = path.read_bytes()
    with elsewhere():
        if change == "replaced":  # as a repair writes it: another file in its place, a line more
            other = opened(made)
            other.reload()
            other.append.user("second question")
            copy = path.with_name("copy")
            copy.write_bytes(path.read_bytes())
            os.replace(copy, path)
        elif change == "shortened":  # cut by hand to its header and first entry
            path.write_bytes(b"".join(data.splitlines(keepends=True)[:2]))
        elif change == "edited in place":  # as nano writes it: the same inode, the same size
            with path.open("r+b") as out:
                out.write(data.replace(b"first answer", b"first rewrite"[:12]))
        elif change == "cut and appended to":  # its two entries cut off by hand, then
            cut = len(b"".join(data.splitlines(keepends=True)[:-2]))  # appended to until a line
            with path.open("r+b") as out:  # ends where the file read ended: as long as it was
                out.truncate(cut)  # read and more, its last byte read a newline, as an append
            other = opened(made)
            other.reload()
            other.append.user("q")  # on the header: its parentId null, 6 bytes less than an id
            wider = len(path.read_bytes()) - cut - 1 + 6  # the next line's bytes besides its text
            other.append.user("x" * (len(data) - len(path.read_bytes()) - wider))
            assert path.read_bytes()[len(data) - 1 :] == b"\n"
        else:  # a writer stopped mid-line
            with path.open("ab") as out:
                out.write(b'{"type": "message", "id": "torn')
    before = keeping.count(path)
    again = opened(made)
    try:
        again.reload()
        said: tree.Tree | str = again.conversation.tree
    except ConvgitError as exc:
        said = exc.message
    assert keeping.count(path) == before + 1  # read whole again, as a fresh process reads it
    try:
        read: tree.Tree | str = whole(made)
    except ConvgitError as exc:
        read = exc.message
    if isinstance(said, str) or isinstance(read, str):
        assert said == read
    else:
        same(said, read)


@pytest.mark.parametrize("lines", ["a parent cycle", "a target written at last"])
def test_a_kept_session_finds_what_lines_appended_by_hand_close_or_mend(
    tmp_path: Path, keeping: list[Path], lines: str
) -> None:
    """Whole lines appended by hand that name an entry before it is written: a parent cycle
    among them is found as a whole read finds it, and a fatal problem a later line mends (a
    label's target written at last) is gone as it is from the file read whole."""
    made = Session.create(tmp_path, store_dir=tmp_path / "store", snapshots=False)
    first = made.append.user("first question").id
    path = made.conversation.file.path

    def by_hand(*records: dict[str, object]) -> tree.Tree:
        with path.open("ab") as out:
            out.write(b"".join(json.dumps(r).encode() + b"\n" for r in records))
        again = opened(made)
        again.reload()
        same(again.conversation.tree, whole(made))
        return again.conversation.tree

    def entry(ident: str, parent: str) -> dict[str, object]:
        ts = "2026-12-01T10:00:00.000Z"
        return {"type": "message", "id": ident, "parentId": parent, "ts": ts, "role": "user",
                "content": ident}  # fmt: skip

    opened(made).reload()  # kept
    if lines == "a parent cycle":
        found = by_hand(entry("loop-a", "loop-b"), entry("loop-b", "loop-a"))
        assert any("parent cycle" in p.what for p in found.fatal)
    else:
        label = {"type": "label", "target": "late", "label": "ahead", "ts": "2026-12-01T10:00:00Z"}
        assert by_hand(label).fatal  # kept, with what it found wrong
        assert not by_hand(entry("late", first)).fatal
