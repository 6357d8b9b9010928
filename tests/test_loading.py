"""Loading takes shortcuts (many lines parsed in one call, a message's check written inline in the
loop, paths copied by runs); they must read every file exactly as the careful path does: the same
values, the same problems on the same line numbers, the same lines, leaf and paths."""

from __future__ import annotations

import gc
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from convgit import Session, schema
from convgit.base import codec
from convgit.base.errors import ConvgitError
from convgit.conversation import tree
from convgit.store import jsonl
from tests.reliability.bad_corpus import CORPUS, NOT_FIXTURES

TS = "2025-01-01T00:00:00.000Z"
HEADER = orjson.dumps({"type": "session", "v": 1, "id": "load000000", "created": TS})


def entry(ident: str, parent: str | None, **fields: Any) -> bytes:
    record = {"type": "message", "id": ident, "parentId": parent, "ts": TS, "role": "user"}
    return orjson.dumps({**record, "content": f"text of {ident}", **fields})


def _careful_only(
    found: tree.Tree,
    records: Iterator[Any],
    number: int,
    previous: object,
    leaf: str | None,
    checked: bool = False,
) -> None:
    for record in records:
        number += 1
        found._careful(number, record)


def _read(data: bytes, careful: bool) -> tuple[jsonl.Lines, tree.Tree]:
    with pytest.MonkeyPatch.context() as patch:
        if careful:
            patch.setattr(codec, "decode_lines", lambda lines: list(map(codec.decode_line, lines)))
            patch.setattr(tree, "_add_fast", _careful_only)
        lines = jsonl.parse_lines(data)
        return lines, tree.build_records(lines.records, lines.first)


def _value(value: Any) -> Any:
    return ("unparsable", value.raw, value.reason) if isinstance(value, codec.Unparsable) else value


def _paths(found: tree.Tree) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for ident in found.entries:
        try:
            out[ident] = found.path(ident)
        except (ConvgitError, KeyError) as exc:  # a loop, or a parent that is not there
            out[ident] = repr(exc)
    return out


def _assert_read_alike(data: bytes) -> tree.Tree | None:
    try:
        fast_lines, fast = _read(data, False)
    except ConvgitError as exc:  # a file no convgit of this version reads
        with pytest.raises(type(exc), match=re.escape(str(exc))):
            _read(data, True)
        return None
    slow_lines, slow = _read(data, True)
    assert list(map(_value, fast_lines.records)) == list(map(_value, slow_lines.records))
    for name in ("raw", "torn", "bom", "crlf", "unterminated"):
        assert getattr(fast_lines, name) == getattr(slow_lines, name), name
    _assert_trees_alike(fast, slow)
    return fast


def _assert_trees_alike(fast: tree.Tree, slow: tree.Tree) -> None:
    assert [p.sentence() for p in fast.problems] == [p.sentence() for p in slow.problems]
    assert fast.bad_lines == slow.bad_lines
    assert list(fast.entries.items()) == list(slow.entries.items())
    assert fast.lines == slow.lines
    meta = ("kept", "kept_records", "imports", "agent_sessions", "redactions")
    for name in ("header", "leaf", "labels", "name", "leaf_records", "label_records", *meta):
        assert getattr(fast, name) == getattr(slow, name), name
    assert _paths(fast) == _paths(slow)


def _deep(levels: int) -> bytes:
    return b'{"type":"custom","x":' + b"[" * levels + b"]" * levels + b"}"


ODD_LINES = [
    b"",
    b"   ",
    b"not json",
    b'{"type":"message","id":',
    b"\x00\x00\x00",
    b'{"text":"\xff\xfe"}',
    b'{"a":NaN}',
    b"[1,2]",
    b'"a string"',
    b"null",
    _deep(255),  # exactly as deep as convgit can write
    _deep(256),
    _deep(300),
    b'{"type":"note","text":"' + b"[" * 600 + b'"}',  # brackets in a string nest nothing
    b'{"a":' + b"{" * 200 + b"1" + b"}" * 200 + b"}",  # long, many brackets, not too deep
]


def test_decode_lines_equals_decoding_each_line_alone() -> None:
    good = [entry(f"{n:08x}", None) for n in range(50)]
    for odd in ODD_LINES:
        for lines in ([odd, *good], [*good[:25], odd, *good[25:]], [*good, odd], [odd, odd]):
            expected = [_value(codec.decode_line(line)) for line in lines]
            assert list(map(_value, codec.decode_lines(lines))) == expected


def test_a_bad_line_in_a_long_valid_file_keeps_its_number_and_message() -> None:
    good = [entry(f"{n:08x}", f"{n - 1:08x}" if n else None) for n in range(5000)]
    bad = b'{"type":"message","id":"broken"'
    data = b"\n".join([HEADER, *good[:2998], bad, *good[2998:]]) + b"\n"
    found = _assert_read_alike(data)
    assert found is not None
    alone = _read(HEADER + b"\n" + bad + b"\n", careful=True)[1]
    assert [p.sentence() for p in found.problems] == [
        p.sentence().replace("line 2 ", "line 3000 ") for p in alone.problems
    ]
    assert found.problems[0].sentence().startswith("line 3000 is not valid JSON")
    assert found.lines[f"{2998:08x}"] == 3001  # the entry after the bad line


@pytest.mark.parametrize("odd", ODD_LINES, ids=range(len(ODD_LINES)))
def test_an_odd_line_among_entries_is_read_as_the_careful_path_reads_it(odd: bytes) -> None:
    good = [entry(f"{n:08x}", f"{n - 1:08x}" if n else None) for n in range(300)]
    _assert_read_alike(b"\n".join([HEADER, *good[:150], odd, *good[150:]]) + b"\n")


@pytest.mark.parametrize(
    "name", sorted(p.name for p in CORPUS.iterdir() if p.name not in NOT_FIXTURES)
)
def test_every_hostile_file_is_read_as_the_careful_path_reads_it(name: str) -> None:
    _assert_read_alike((CORPUS / name).read_bytes())


# one JSON value of each type, to put in every field of every kind
VALUES_OF_EVERY_TYPE = ["text", "", None, True, False, 0, 1.5, [], [{"type": "text"}], {}]


def _odd_records() -> Iterator[dict[str, Any]]:
    """For every entry kind of the schema: a valid record, then that record with each of its
    fields missing or holding a value of each JSON type; messages with each role and odd parts."""
    good: dict[str, Any] = {"id": "odd", "parentId": "00000009", "ts": TS}
    valid = {
        "message": {"role": "tool", "content": "x", "toolCallId": "c", "isError": False},
        "model": {"provider": "p", "model": "m"},
        "thinking": {"level": "high"},
        "compaction": {"summary": "s", "firstKeptId": None},
        "branch_summary": {"fromId": "00000001", "summary": "s"},
        "note": {"text": "t", "source": "s"},
        "system": {"text": None},
        "custom": {"kind": "k", "data": 1},
    }
    assert set(valid) == set(schema.TREE_FIELDS)  # a new kind is tested here too
    for kind, fields in valid.items():
        record = {"type": kind, **good, **fields}
        yield record
        for name in [*record, "toolCallId", "isError"]:
            yield {k: v for k, v in record.items() if k != name}
            for value in VALUES_OF_EVERY_TYPE:
                yield {**record, name: value}
    for role in ("user", "assistant", "tool", "system", "", None, 1):
        for content in ("x", [], [{"type": "text", "text": "a"}], [{"type": "text"}], [1]):
            yield {"type": "message", **good, "role": role, "content": content}
            yield {"type": "message", **good, "role": role, "content": content, "toolCallId": "c"}
    call = {"type": "tool_call", "id": "c", "name": "n", "input": {}}
    for part in (call, {**call, "id": 1}, {"type": "thinking"}, {"type": "image"}, {"x": 1}):
        yield {"type": "message", **good, "role": "assistant", "content": [part]}


def _odd_kept_records() -> Iterator[dict[str, Any]]:
    """A valid ``native`` record (an agent's line an import kept), then that record with each of
    its fields missing or holding a value of each JSON type, and with a parentId or an id."""
    for record in (
        {"type": "native", "key": "k", "at": "00000003", "text": "{}", "ts": TS},
        {"type": "native", "key": "k", "at": None, "base64": "/w==", "ts": TS},
    ):
        yield record
        for name in [*record, "text", "base64", "parentId", "id"]:
            yield {k: v for k, v in record.items() if k != name}
            for value in VALUES_OF_EVERY_TYPE:
                yield {**record, name: value}


def test_every_odd_field_of_every_kind_is_read_as_the_careful_path_reads_it() -> None:
    good = [entry(f"{n:08x}", f"{n - 1:08x}" if n else None) for n in range(10)]
    for number, record in enumerate([*_odd_records(), *_odd_kept_records()]):
        record = {**record, "id": f"odd{number}"} if record.get("id") == "odd" else record
        line = orjson.dumps(record)
        _assert_read_alike(b"\n".join([HEADER, *good, line, *good[:2], line]) + b"\n")


def test_records_a_writer_checked_are_indexed_as_the_careful_path_indexes_them() -> None:
    """An import's batch passed ``schema.kind_error`` before it was written: the tree takes it
    without checking the fields again, and must come out as if it had."""
    good = [codec.decode(entry(f"{n:08x}", f"{n - 1:08x}" if n else None)) for n in range(10)]
    header = codec.decode(HEADER)
    accepted = [r for r in [*_odd_records(), *_odd_kept_records()] if schema.kind_error(r) is None]
    accepted += [{"type": "compaction", "id": "c", "parentId": "odd", "ts": TS, "summary": "s",
                  "firstKeptId": "00000002"}, {"type": "newer", "id": "n", "parentId": None,
                  "ts": TS}, {"type": "newer-meta", "ts": TS}]  # fmt: skip
    assert len(accepted) > 40
    for number, record in enumerate(accepted):
        ident = f"odd{number}"
        record = {**record, "id": ident} if "id" in record and "parentId" in record else record
        records = [header, *good, record, *good[:2], {**good[3], "id": f"after{number}"}]
        checked, careful = tree.Tree(), tree.Tree()
        checked.add_records(records, checked=True)
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(tree, "_add_fast", _careful_only)
            careful.add_records(records)
        _assert_trees_alike(checked.finish(), careful.finish())


def test_paths_and_lines_across_far_forks_later_parents_and_meta_records(tmp_path: Path) -> None:
    lines = [HEADER]
    for n in range(6000):
        parent = f"{n - 1:08x}" if n else None
        if n == 5000:
            parent = "00000001"  # a fork 5,000 entries back
        if n == 5500:
            parent = "0000ffff"  # a parent written later in the file
        lines.append(entry(f"{n:08x}", parent))
        if n % 700 == 3:
            lines.append(orjson.dumps({"type": "leaf", "target": f"{n:08x}", "ts": TS}))
        if n % 1300 == 5:
            lines.append(b"{broken")
        if n % 900 == 107:  # an agent's line an import kept, then another kept at no entry
            native = {"type": "native", "key": f"k{n}", "at": f"{n:08x}", "text": "{}", "ts": TS}
            lines.append(orjson.dumps(native))
            lines.append(orjson.dumps({**native, "key": f"k{n}b", "at": None}))
    lines.append(entry("0000ffff", "00000010", role="assistant"))
    lines.insert(40, entry("00000020", "00000003"))  # a duplicate id: not indexed
    data = b"\n".join(lines) + b"\n"
    found = _assert_read_alike(data)
    assert found is not None
    assert [p.what for p in found.problems if "repeats" in p.what] == ["repeats the id of line 36"]

    numbers: dict[str, int] = {}
    for number, line in enumerate(data.split(b"\n")[:-1], 1):
        record = codec.decode_line(line)
        if type(record) is dict and "parentId" in record:
            numbers.setdefault(record["id"], number)
    assert found.lines == numbers
    for ident in found.entries:
        walk, node = [], ident
        while node is not None:
            walk.append(node)
            node = found.entries[node]["parentId"]
        assert found.path(ident) == walk[::-1], ident
    assert found.path("00001388")[:3] == ["00000000", "00000001", "00001388"]
    assert found.path("0000157c")[-3:] == ["00000010", "0000ffff", "0000157c"]


def test_loading_leaves_the_collector_as_it_found_it(tmp_path: Path) -> None:
    session = Session.create(tmp_path, store_dir=tmp_path / "store", snapshots=False)
    session.append.user("hello")
    assert gc.isenabled()
    Session.open(tmp_path, session=session.id, store_dir=tmp_path / "store")
    assert gc.isenabled() and gc.get_freeze_count() == 0
    gc.freeze()  # a host program's own frozen objects stay frozen
    try:
        frozen = gc.get_freeze_count()
        Session.open(tmp_path, session=session.id, store_dir=tmp_path / "store")
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()
    gc.disable()  # and a host that paused the collector finds it paused
    try:
        Session.open(tmp_path, session=session.id, store_dir=tmp_path / "store")
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_the_deepest_line_read_is_one_that_can_be_written_back() -> None:
    deepest = b"[" * codec.MAX_DEPTH + b"]" * codec.MAX_DEPTH
    assert codec.encode({"x": codec.decode(deepest)[0]}) is not None  # room for one more level
    assert codec.dumps(codec.decode(deepest)) == deepest.decode()
    deeper = b"[" + deepest + b"]"
    assert isinstance(codec.decode_line(deeper), codec.Unparsable)
    with pytest.raises(codec.TooDeepError):
        codec.decode(b'{"a":' + deepest + b"}")
