"""The pieces every importer shares (convgit.agents.reading): reading an agent's JSONL with
its quirks, ids that survive a re-read, keeping the exact text, skipping what is there, and
continuing from a saved offset."""

from __future__ import annotations

import orjson
import pytest

from convgit.agents import reading, registry
from convgit.agents.reading import Cursor, Known, Record
from convgit.base.errors import UsageError


def _texts(read: reading.Read) -> list[tuple[int, int, bytes]]:
    return [(r.line, r.index, r.raw) for r in read.records]


def test_two_objects_on_one_line_are_two_records_with_their_exact_text() -> None:
    data = b'{"a": 1}{"b":  2}\n{"c":3}\n'
    read = reading.read_jsonl(data)
    assert _texts(read) == [(1, 0, b'{"a": 1}'), (1, 1, b'{"b":  2}'), (2, 0, b'{"c":3}')]
    assert [r.value for r in read.records] == [{"a": 1}, {"b": 2}, {"c": 3}]
    assert read.offset == len(data) and read.line == 2 and read.torn is None


def test_a_torn_last_line_is_left_for_the_next_read() -> None:
    data = b'{"a":1}\n{"b":2}{"c":'
    read = reading.read_jsonl(data)
    assert _texts(read) == [(1, 0, b'{"a":1}')]
    assert read.offset == len(b'{"a":1}\n') and read.torn == 2


def test_a_last_line_without_newline_that_is_whole_is_taken() -> None:
    read = reading.read_jsonl(b'{"a":1}\n{"b":2}')
    assert [r.value for r in read.records] == [{"a": 1}, {"b": 2}]
    assert read.torn is None and read.offset == 15


def test_reading_in_pieces_finds_the_same_records_as_reading_once() -> None:
    """Every cut of the file, mid-line and mid-object included: what each read takes, then
    the next read from where it stopped, is what one read of the whole file takes."""
    data = b'{"a":1}{"b":2}\n\n{"c":"\\u00e9"}\r\nnot json\n{"d":[1,2]}\n{"e":4}'
    whole = _texts(reading.read_jsonl(data))
    for cut in range(len(data) + 1):
        first = reading.read_jsonl(data[:cut])
        cursor = Cursor(first.offset, first.line, first.index)
        second = reading.read_jsonl(data[first.offset :], cursor)
        assert _texts(first) + _texts(second) == whole, cut


def _read_each_line(data: bytes, cursor: Cursor) -> reading.Read:
    """``read_jsonl`` the careful way: each line found, parsed and judged on its own."""
    records: list[Record] = []
    line, index, start = cursor.line, cursor.index, 0
    while True:
        end = data.find(b"\n", start)
        last = end < 0
        piece = data[start:] if last else data[start:end]
        piece = piece[:-1] if piece.endswith(b"\r") else piece
        if piece.strip():
            found = reading._line_records(piece, line + 1, index)
            if last and any(r.problem in reading._TORN for r in found):
                return reading.Read(records, cursor.offset + start, line, index, torn=line + 1)
            records.extend(found)
            index += len(found)
        if last:
            return reading.Read(records, cursor.offset + len(data), line, index)
        start = end + 1
        line, index = line + 1, 0


ODD_LINES = [
    b'{"a":1}',
    b"",
    b"  \t",
    b"\r",
    b'{"a":1}\r',
    b'{"a": 1}{"b":  2}',
    b'{"a":1} {"b":',
    b"not json",
    b'{"a":',
    b'{"a":\r',
    b"\xff\xfe",
    b'{"t":"\xc3\xa9"}',
    b'{"a":NaN}',
    b"[1, 2]",
    b"null",
    b'{"x":' + b"[" * 300 + b"]" * 300 + b"}",
    b'{"x":' + b"[" * 253 + b"]" * 253 + b"}",
    b'{"x":"' + b"{" * 600 + b'"}',
]


def test_reading_a_file_at_once_equals_reading_each_line_on_its_own() -> None:
    for odd in ODD_LINES:
        for other in ODD_LINES:
            for data in (odd + b"\n" + other, odd + b"\n" + other + b"\n", odd + b"\n\n" + other):
                for cursor in (Cursor(), Cursor(100, 7, 2)):
                    fast, careful = (
                        reading.read_jsonl(data, cursor),
                        _read_each_line(data, cursor),
                    )
                    assert fast == careful, (data, cursor)


def test_lines_that_are_not_records_are_records_with_a_problem() -> None:
    data = b'[1, 2]\nnot json\n{"ok":1} trailing\n\xff\xfe\n{"a":NaN}\n'
    read = reading.read_jsonl(data)
    problems = [(r.line, r.problem) for r in read.records if r.value is None]
    assert problems == [
        (1, "is not a JSON object"),
        (2, "is not JSON"),
        (3, "is not JSON"),
        (4, "is not UTF-8"),
        (5, "is not JSON"),
    ]
    assert read.records[2].value == {"ok": 1} and read.records[3].raw == b"trailing"
    assert read.records[4].text is None and read.records[4].raw == b"\xff\xfe"


def test_a_line_nested_too_deep_to_write_back_is_a_problem() -> None:
    deep = b"[" * 300 + b"]" * 300
    read = reading.read_jsonl(b'{"x":' + deep + b"}\n")
    assert read.records[0].value is None and "nested deeper" in str(read.records[0].problem)


def test_entry_ids_are_safe_references_and_stable() -> None:
    uuid = "2b6fd122-5bd8-4e0f-9a40-63a8e36b5a11"
    assert reading.entry_id(uuid) == uuid
    for odd in ("ROOT", "root", "a b", "x~1", "@", "", "HEAD", "ü"):
        made = reading.entry_id(odd)
        assert made == reading.entry_id(odd)
        assert made not in ("root", "head") and made.isascii() and made == made.lower()
        assert all(c.isalnum() or c in "-_" for c in made) and made[0].isalnum()
    assert reading.entry_id("a1b2c3d4", scope="s1") == "a1b2c3d4-s1"
    assert reading.part_id(uuid, 1) == uuid and reading.part_id(uuid, 2) == uuid + "_2"


def test_derived_ids_follow_place_and_text() -> None:
    one = Record(3, 0, b'{"x":1}', {"x": 1})
    assert reading.derived_id(one) == reading.derived_id(Record(3, 0, b'{"x":1}', {"x": 1}))
    assert reading.derived_id(one) != reading.derived_id(Record(4, 0, b'{"x":1}', {"x": 1}))
    assert reading.derived_id(one) != reading.derived_id(Record(3, 0, b'{"x":2}', {"x": 2}))
    assert reading.derived_id(Record(3, 1, b"{}", {})).startswith("l3x1-")


def test_originals_are_kept_exactly_as_text_or_base64() -> None:
    record = Record(1, 0, '{"t": "é" }'.encode(), {"t": "é"})
    field = reading.native_field(record, "k1")
    assert field == {"key": "k1", "text": '{"t": "é" }'}
    assert reading.kept_text(field) == record.raw
    odd = Record(2, 0, b"\xff{}", None, "is not UTF-8")
    kept = reading.kept_record(odd, "k2", "e1", "2026-01-01T00:00:00.000Z")
    assert kept["type"] == "native" and kept["at"] == "e1" and "text" not in kept
    assert reading.kept_text(kept) == b"\xff{}"
    # what is kept survives the session file's own encoding
    assert reading.kept_text(orjson.loads(orjson.dumps(kept))) == b"\xff{}"


def test_fresh_skips_what_the_session_has_and_keeps_other_text_beside_it() -> None:
    entry = {"type": "message", "id": "u1", "parentId": None, "ts": "t", "role": "user"}
    entry |= {"content": "hi", "native": {"key": "u1", "text": '{"uuid":"u1"}'}}
    kept = {"type": "native", "key": "p1", "at": "u1", "text": '{"p":1}', "ts": "t"}
    known = Known({"u1": entry}, {"p1": kept})
    again = dict(entry, native={"key": "u1", "text": '{"uuid":"u1","more":1}'})
    new = {"type": "native", "key": "p2", "at": "u1", "text": "{}", "ts": "t"}
    records, skipped = reading.fresh([entry, kept, again, new, {"type": "leaf"}], known)
    assert skipped == 3
    assert [r.get("key") for r in records] == [records[0]["key"], "p2", None]
    assert records[0]["key"].startswith("u1@") and records[0]["at"] == "u1"
    assert records[0]["text"] == '{"uuid":"u1","more":1}'
    assert reading.fresh([again], Known({"u1": entry}, {records[0]["key"]: records[0]}))[0] == []


def test_an_import_continues_only_where_the_file_still_starts_as_it_did() -> None:
    data = b'{"a":1}\n{"b":2}\n'
    saved = reading.checkpoint("x", "/f", Cursor(8, 1, 0, {"n": 1}), data, data[:8])
    assert reading.resume(saved, len(data), data, data[:8]) == Cursor(8, 1, 0, {"n": 1})
    assert reading.resume(saved, len(data), data, b'{"a":2}\n') is None  # rewritten
    assert reading.resume(saved, len(data), b'{"z":0}\n', data[:8]) is None  # another file
    assert reading.resume(saved, 4, data, data[:8]) is None  # shorter than the offset
    assert reading.resume(None, len(data), data, b"") is None


def test_a_json_document_gives_each_element_of_a_list_with_its_text() -> None:
    data = (
        b'{"sessionId": "s",\n "messages": [\n  {"id": "m1", "t": [1, {"x": "]"}]},\n'
        b'  {"id":"m2"}\n ],\n "end": 1}'
    )
    value, items = reading.read_document(data, "messages")
    assert value["sessionId"] == "s" and value["end"] == 1
    assert [(r.line, r.index, r.raw) for r in items] == [
        (3, 0, b'{"id": "m1", "t": [1, {"x": "]"}]}'),
        (4, 1, b'{"id":"m2"}'),
    ]
    with pytest.raises(ValueError):
        reading.read_document(b"[1]", "messages")


def test_an_unknown_agent_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="claude-code"):
        registry.importer("no-such-agent")
