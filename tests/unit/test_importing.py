"""What every importer shares (convgit/agents/reading.py), on bytes in memory: reading JSONL
a record at a time, the ids made from an agent's ids, the exact text kept, what a session
already has, and where an import continues. No file, no store, no process."""

from __future__ import annotations

import pytest

from convgit.agents.reading import (
    Cursor,
    Known,
    derived_id,
    entry_id,
    fresh,
    kept_record,
    kept_text,
    native_field,
    read_jsonl,
    resume,
)
from convgit.agents.registry import importer
from convgit.base.errors import UsageError

# -- reading -------------------------------------------------------------------------------------


def test_a_last_line_cut_mid_write_is_left_for_the_next_read() -> None:
    data = b'{"a": 1}\n{"b": 2}\n{"c": '
    read = read_jsonl(data)
    assert [r.value for r in read.records] == [{"a": 1}, {"b": 2}]
    assert (read.offset, read.line, read.torn) == (18, 2, 3)
    later = read_jsonl(b'{"c": 3}\n', Cursor(read.offset, read.line, read.index))
    assert [(r.line, r.value) for r in later.records] == [(3, {"c": 3})]
    assert later.offset == 18 + 9


def test_a_last_line_without_newline_that_is_whole_json_is_taken() -> None:
    read = read_jsonl(b'{"a": 1}\n{"b": 2}')
    assert [r.value for r in read.records] == [{"a": 1}, {"b": 2}]
    assert read.torn is None and read.offset == 17
    assert read.index == 1  # the line is still open: its next object is the second


def test_several_objects_on_one_line_are_several_records_of_that_line() -> None:
    (first, second) = read_jsonl(b'{"a": 1}{"b": 2}\n').records
    assert (first.line, first.index, first.raw) == (1, 0, b'{"a": 1}')
    assert (second.line, second.index, second.raw) == (1, 1, b'{"b": 2}')
    mixed = read_jsonl(b'{"a": 1} [2] and then no JSON\n').records
    assert [(r.index, r.raw, r.problem) for r in mixed] == [
        (0, b'{"a": 1}', None),
        (1, b"[2]", "is not a JSON object"),
        (2, b"and then no JSON", "is not JSON"),
    ]


def test_a_crlf_line_end_is_no_part_of_the_record_and_blank_lines_are_skipped() -> None:
    records = read_jsonl(b'{"a": 1}\r\n\n  \n{"b": 2}\r\n').records
    assert [(r.line, r.raw) for r in records] == [(1, b'{"a": 1}'), (4, b'{"b": 2}')]


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        (b"not json at all", "is not JSON"),
        (b"[1, 2]", "is not a JSON object"),
        (b'"text"', "is not a JSON object"),
        (b'{"a": "\xff"}', "is not UTF-8"),
        (b'{"a":' * 300 + b"1" + b"}" * 300, "is nested deeper than 254 levels"),
    ],
    ids=["text", "array", "string", "latin-1", "deep"],
)
def test_a_line_that_is_no_object_is_one_record_saying_why_with_its_bytes(
    line: bytes, problem: str
) -> None:
    (record,) = read_jsonl(line + b"\n").records
    assert record.value is None and record.problem is not None
    assert record.problem.startswith(problem)
    assert record.raw == line


# -- ids -----------------------------------------------------------------------------------------


def test_an_agents_id_is_kept_when_it_is_a_safe_reference() -> None:
    assert entry_id("7f3a-b2_c") == "7f3a-b2_c"
    assert entry_id("7f3a", scope="s2") == "7f3a-s2"


@pytest.mark.parametrize("native", ["Has Capitals", "../x", "a/b", "", "root", "head", "x" * 200])
def test_an_unsafe_or_reserved_id_becomes_a_digest_the_same_each_time(native: str) -> None:
    made = entry_id(native)
    assert made != native and made.startswith("n") and len(made) == 21
    assert entry_id(native) == made
    assert entry_id(native + "!") != made


def test_a_record_without_id_gets_its_place_and_a_digest_of_its_text() -> None:
    (one, two) = read_jsonl(b'{"a": 1}{"a": 2}\n').records
    assert derived_id(one).startswith("l1-") and derived_id(two).startswith("l1x1-")
    (again,) = read_jsonl(b'{"a": 1}\n').records
    assert derived_id(again) == derived_id(one)  # the same record read again
    (rewritten,) = read_jsonl(b'{"a": 9}\n').records
    assert derived_id(rewritten) != derived_id(one)  # a rewritten line does not pass for it


# -- the exact text kept -------------------------------------------------------------------------


def test_the_exact_bytes_are_kept_as_text_or_when_not_utf8_as_base64() -> None:
    (plain,) = read_jsonl(b'{"a": "caf\xc3\xa9"}\n').records
    (broken,) = read_jsonl(b'{"a": "\xff\xfe"}\n').records
    field = native_field(plain, "k1")
    assert field == {"key": "k1", "text": '{"a": "café"}'}
    kept = kept_record(broken, "k2", at="e1", ts="2026-12-01T00:00:00Z")
    assert "text" not in kept and kept_text(kept) == b'{"a": "\xff\xfe"}'
    assert kept_text(field) == plain.raw


# -- what the session has ------------------------------------------------------------------------


def _entry(ident: str, text: str) -> dict[str, object]:
    return {
        "type": "message", "id": ident, "parentId": None, "role": "user", "content": "q",
        "ts": "2026-12-01T00:00:00Z", "native": {"key": ident, "text": text},
    }  # fmt: skip


def test_fresh_drops_what_the_session_has_and_counts_it() -> None:
    known = Known(entries={"e1": _entry("e1", "line one")})
    out, skipped = fresh([_entry("e1", "line one"), _entry("e2", "line two")], known)
    assert [r["id"] for r in out] == ["e2"] and skipped == 1


def test_a_known_record_come_back_with_other_text_is_kept_beside_once() -> None:
    known = Known(entries={"e1": _entry("e1", "line one")})
    out, skipped = fresh([_entry("e1", "line one, rewritten")], known)
    assert skipped == 1
    (alternate,) = out
    assert alternate["type"] == "native" and alternate["at"] == "e1"
    assert alternate["text"] == "line one, rewritten"
    assert str(alternate["key"]).startswith("e1@")
    again = Known(entries=known.entries, kept={str(alternate["key"]): alternate})
    assert fresh([_entry("e1", "line one, rewritten")], again) == ([], 1)  # kept once


# -- where an import continues -------------------------------------------------------------------


def test_an_import_continues_only_where_the_file_still_starts_as_it_did() -> None:
    from convgit.agents.reading import checkpoint

    data = b'{"a": 1}\n{"b": 2}\n'
    saved = checkpoint("pi", "f.jsonl", Cursor(9, 1, 0, {"s": 1}), data[:9], data[:9])
    assert resume(saved, len(data), data, data[:9]) == Cursor(9, 1, 0, {"s": 1})
    assert resume(saved, 5, data, data[:9]) is None  # the file is shorter now
    changed = b'{"a": 7}\n{"b": 2}\n'
    assert resume(saved, len(changed), changed, changed[:9]) is None
    assert resume(None, len(data), data, data[:9]) is None


def test_an_agent_with_no_importer_is_told_the_known_ones() -> None:
    with pytest.raises(UsageError, match="no importer for 'cursor': use one of claude-code"):
        importer("cursor")
    assert importer("pi").agent == "pi"
