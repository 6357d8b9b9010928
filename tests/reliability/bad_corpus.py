"""The corpus of hostile session files in ``fixtures/bad/``, as code.

Every file there is made here from one clean session (``BASE``) by one defect, and described
in ``manifest.json`` (what ``fsck``, the reading commands and ``repair`` must do) and in
``README.md``. The test suite checks that the committed files are exactly what this module
makes, so edit this module and regenerate, never the files:

    python tests/reliability/bad_corpus.py

Stdlib only, no convgit import: the expectations are written down by hand, not computed by the
code under test. The only computed part is the quarantine set, by a tiny independent oracle
(``_fallout``): a defective line, plus every entry below a defective entry, plus every meta
record that points at one of those.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SID = "bad0000000"
ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "fixtures" / "bad"
MANIFEST = CORPUS / "manifest.json"
README = CORPUS / "README.md"
NOT_FIXTURES = {"README.md", "manifest.json"}


def ts(second: int) -> str:
    return f"2025-01-01T00:00:{second:02d}.000Z"


# A session with every entry kind and every meta record, a tool call and its result, a
# compaction, and a fork at the root (so a defect on one branch leaves the other intact).
#   line  2 a1000001 user (root)
#   line  3 a1000002 model            line 12 a100000a branch_summary (fork off a1000001)
#   line  4 a1000003 thinking         line 13 a100000b note
#   line  5 a1000004 assistant+call   line 14 a100000c custom
#   line  6 a1000005 tool result      line 15 a100000d user
#   line  7 a1000006 assistant        line 16 leaf -> a1000009
#   line  8 label a1000006 "fixed"    line 17 name
#   line  9 a1000007 user
#   line 10 a1000008 compaction (keeps from a1000006)
#   line 11 a1000009 assistant
BASE: list[dict[str, Any]] = [
    {"type": "session", "v": 1, "id": SID, "created": ts(0), "cwd": "/home/user/project"},
    {
        "type": "message",
        "id": "a1000001",
        "parentId": None,
        "ts": ts(1),
        "role": "user",
        "content": "Fix the failing test in parser.py",
    },
    {
        "type": "model",
        "id": "a1000002",
        "parentId": "a1000001",
        "ts": ts(2),
        "provider": "anthropic",
        "model": "claude-x",
    },
    {"type": "thinking", "id": "a1000003", "parentId": "a1000002", "ts": ts(3), "level": "high"},
    {
        "type": "message",
        "id": "a1000004",
        "parentId": "a1000003",
        "ts": ts(4),
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Let me read it."},
            {"type": "tool_call", "id": "call-1", "name": "read", "input": {"path": "parser.py"}},
        ],
    },
    {
        "type": "message",
        "id": "a1000005",
        "parentId": "a1000004",
        "ts": ts(5),
        "role": "tool",
        "toolCallId": "call-1",
        "isError": False,
        "content": "def parse(): ...",
    },
    {
        "type": "message",
        "id": "a1000006",
        "parentId": "a1000005",
        "ts": ts(6),
        "role": "assistant",
        "content": "Fixed: the loop stopped one item early.",
    },
    {"type": "label", "target": "a1000006", "label": "fixed", "ts": ts(7)},
    {
        "type": "message",
        "id": "a1000007",
        "parentId": "a1000006",
        "ts": ts(8),
        "role": "user",
        "content": "Now add a test.",
    },
    {
        "type": "compaction",
        "id": "a1000008",
        "parentId": "a1000007",
        "ts": ts(9),
        "summary": "The user asked for a fix; it was made.",
        "firstKeptId": "a1000006",
    },
    {
        "type": "message",
        "id": "a1000009",
        "parentId": "a1000008",
        "ts": ts(10),
        "role": "assistant",
        "content": "Added test_parse_edges.",
    },
    {
        "type": "branch_summary",
        "id": "a100000a",
        "parentId": "a1000001",
        "ts": ts(11),
        "fromId": "a1000009",
        "summary": "The off-by-one fix works.",
    },
    {
        "type": "note",
        "id": "a100000b",
        "parentId": "a100000a",
        "ts": ts(12),
        "text": "files were restored to the snapshot of a1000006",
        "source": "restore",
    },
    {
        "type": "custom",
        "id": "a100000c",
        "parentId": "a100000b",
        "ts": ts(13),
        "kind": "editor-state",
        "data": {"cursor": [3, 14]},
    },
    {
        "type": "message",
        "id": "a100000d",
        "parentId": "a100000c",
        "ts": ts(14),
        "role": "user",
        "content": "Try another approach.",
    },
    {"type": "leaf", "target": "a1000009", "ts": ts(15)},
    {"type": "name", "name": "parser fix", "ts": ts(16)},
]
BASE_LINES = len(BASE)  # 17
BASE_PATH = [f"a100000{n}" for n in range(1, 10)]  # the active path of the clean session


def line(record: Any) -> bytes:
    """One record as convgit writes it: compact JSON, UTF-8 (no trailing newline here)."""
    return json.dumps(record, separators=(",", ":"), ensure_ascii=False).encode()


def base_lines() -> list[bytes]:
    return [line(r) for r in BASE]


def base_bytes() -> bytes:
    return b"".join(x + b"\n" for x in base_lines())


@dataclass
class Case:
    """One fixture: its bytes and what convgit must do with it."""

    name: str
    defect: str
    content: bytes
    fsck: int = 3  # exit code of `convgit fsck`
    read: int = 3  # exit code of log, tree, context and show @
    repair: str = "ok"  # "ok": repair succeeds; "refuse": exit 3, file untouched
    errors: list[int] = field(default_factory=list)  # lines fsck must name as errors
    warnings: list[int] = field(default_factory=list)  # lines fsck must warn about (tolerances)
    quarantine: list[int] = field(default_factory=list)  # exactly the lines repair moves
    new_header: bool = False  # repair must write a fresh header line
    read_exceptions: dict[str, int] = field(default_factory=dict)  # command -> exit code
    replays_like_base: bool = False  # `log --json` gives the clean session's active path
    note: str = ""

    def manifest(self) -> dict[str, Any]:
        value: dict[str, Any] = {
            "defect": self.defect,
            "fsck": self.fsck,
            "read": self.read,
            "repair": self.repair,
            "errors": self.errors,
            "warnings": self.warnings,
            "quarantine": self.quarantine,
            "new_header": self.new_header,
            "replays_like_base": self.replays_like_base,
        }
        if self.read_exceptions:
            value["read_exceptions"] = self.read_exceptions
        if self.note:
            value["note"] = self.note
        return value


CASES: list[Case] = []


def case(fn: Callable[[], Case]) -> Callable[[], Case]:
    CASES.append(fn())
    return fn


# -- helpers to make one defect -------------------------------------------------------------


def with_lines(lines: list[bytes], end: bytes = b"\n") -> bytes:
    return b"".join(x + end for x in lines)


def replaced(number: int, new: bytes) -> list[bytes]:
    """The base with line ``number`` (1-based) replaced by ``new``."""
    lines = base_lines()
    lines[number - 1] = new
    return lines


def changed(number: int, **fields: Any) -> list[bytes]:
    """The base with fields of line ``number`` changed (a value of ``...`` removes the field)."""
    record = dict(BASE[number - 1])
    for key, value in fields.items():
        if value is ...:
            del record[key]
        else:
            record[key] = value
    return replaced(number, line(record))


def inserted(number: int, *new: bytes) -> list[bytes]:
    """The base with ``new`` lines inserted so the first of them is line ``number``."""
    lines = base_lines()
    lines[number - 1 : number - 1] = list(new)
    return lines


def appended(*new: bytes) -> list[bytes]:
    return [*base_lines(), *new]


def _fallout(lines: list[bytes], bad: set[int]) -> list[int]:
    """The lines a faithful repair moves: ``bad`` lines, entries whose parent is not a kept
    entry (transitively), and meta records that point at an entry that is not kept."""
    records: dict[int, Any] = {}
    for number, raw in enumerate(lines, 1):
        try:
            records[number] = json.loads(raw)
        except (ValueError, RecursionError):
            records[number] = None
    moved = set(bad)
    while True:
        kept: set[str] = set()
        for number, record in records.items():
            if number in moved or not isinstance(record, dict):
                continue
            if "parentId" in record and isinstance(record.get("id"), str):
                kept.add(record["id"])
        grew = False
        for number, record in records.items():
            if number in moved or not isinstance(record, dict):
                continue
            parent = record.get("parentId")
            target = record.get("target") if "parentId" not in record else None
            if (parent is not None and parent not in kept) or (
                target is not None and target not in kept
            ):
                moved.add(number)
                grew = True
        if not grew:
            return sorted(moved)


def fatal(
    name: str,
    defect: str,
    lines: list[bytes],
    bad: list[int],
    *,
    errors: list[int] | None = None,
    **extra: Any,
) -> Case:
    """A defect fsck must refuse and repair must fix by moving ``bad`` (and its fallout)."""
    return Case(
        name,
        defect,
        with_lines(lines),
        errors=bad if errors is None else errors,
        quarantine=_fallout(lines, set(bad)),
        **extra,
    )


def wrong_type(number: int, field_name: str, value: Any, what: str) -> Case:
    kind = BASE[number - 1]["type"]
    return fatal(
        f"wrong-type-{kind}-{field_name}.jsonl",
        f"line {number}: the {kind} record's `{field_name}` is {what}",
        changed(number, **{field_name: value}),
        [number],
    )


# -- bytes that are not JSON objects -----------------------------------------------------------

TRUNCATED = b'{"type":"message","id":"a10000f1","parentId":"a1000006","ts":"2025-01-01T00:0'


@case
def _() -> Case:
    return fatal(
        "unparsable-middle-line.jsonl",
        "line 9 is cut off mid-record (not JSON), with valid lines after it",
        inserted(9, TRUNCATED),
        [9],
    )


@case
def _() -> Case:
    return fatal("blank-line.jsonl", "line 9 is empty", inserted(9, b""), [9])


@case
def _() -> Case:
    return fatal(
        "whitespace-only-line.jsonl",
        "line 9 holds only spaces and a tab",
        inserted(9, b"  \t  "),
        [9],
    )


@case
def _() -> Case:
    nul = b'{"type":"note","id":"a10000f1",\x00\x00\x00\x00"parentId":"a1000006"}'
    return fatal("nul-bytes.jsonl", "line 9 has NUL bytes inside a record", inserted(9, nul), [9])


@case
def _() -> Case:
    raw = line(
        {
            "type": "message",
            "id": "a10000f1",
            "parentId": "a1000006",
            "ts": ts(20),
            "role": "user",
            "content": "caf-",
        }
    ).replace(b"caf-", b"caf\xe9")  # Latin-1, not UTF-8: must be quarantined as base64
    return fatal("invalid-utf8.jsonl", "line 9 has a Latin-1 byte (0xE9)", inserted(9, raw), [9])


@case
def _() -> Case:
    raw = line(
        {
            "type": "message",
            "id": "a10000f1",
            "parentId": "a1000006",
            "ts": ts(20),
            "role": "user",
            "content": "SURROGATE",
        }
    ).replace(b"SURROGATE", b"\\ud800")
    return fatal(
        "lone-surrogate-escape.jsonl",
        "line 9 has a `\\ud800` escape: a lone surrogate, not a character",
        inserted(9, raw),
        [9],
    )


@case
def _() -> Case:
    raw = b"[" + line(BASE[8] | {"id": "a10000f1"}) + b"]"
    return fatal("json-array-line.jsonl", "line 9 is a JSON array", inserted(9, raw), [9])


@case
def _() -> Case:
    return fatal("json-scalar-line.jsonl", "line 9 is the number 42", inserted(9, b"42"), [9])


@case
def _() -> Case:
    return fatal(
        "json-string-line.jsonl", 'line 9 is a JSON string "hello"', inserted(9, b'"hello"'), [9]
    )


@case
def _() -> Case:
    return fatal("json-null-line.jsonl", "line 9 is JSON null", inserted(9, b"null"), [9])


@case
def _() -> Case:
    raw = line(BASE[13] | {"id": "a10000f1", "data": "NAN"}).replace(b'"NAN"', b"NaN")
    return fatal("nan-literal.jsonl", "line 9 has a bare NaN (not JSON)", inserted(9, raw), [9])


def deep_custom(depth: int) -> bytes:
    """A custom entry (the new leaf) whose ``data`` is ``depth`` nested arrays."""
    raw = line(
        {"type": "custom", "id": "a10000f1", "parentId": "a100000d", "ts": ts(20), "kind": "deep"}
    )
    return raw[:-1] + b',"data":' + b"[" * depth + b"]" * depth + b"}"


@case
def _() -> Case:
    return fatal(
        "deep-nesting.jsonl",
        "line 18 (the leaf) is a custom entry whose data nests 5,000 arrays deep",
        appended(deep_custom(5000)),
        [18],
        note="100,000 levels (a parser crash) is built at test time, in a subprocess",
    )


@case
def _() -> Case:
    return fatal(
        "deep-nesting-300-levels.jsonl",
        "line 18 (the leaf) nests 300 arrays deep: the parser takes it (limit 1,024 in orjson"
        " >= 3.9.15), but convgit's writer cannot write it back (orjson.dumps stops at 255)",
        appended(deep_custom(300)),
        [18],
    )


# -- the header -------------------------------------------------------------------------------


@case
def _() -> Case:
    return Case(
        "missing-header.jsonl",
        "there is no header: line 1 is the first entry (a valid user message)",
        with_lines(base_lines()[1:]),
        errors=[1],
        quarantine=[],
        new_header=True,
        note="repair must write a new header and keep every entry",
    )


@case
def _() -> Case:
    cut = line(BASE[0])[:30]
    return fatal(
        "unparsable-header.jsonl",
        "line 1, the header, is cut off mid-record",
        replaced(1, cut),
        [1],
        new_header=True,
    )


@case
def _() -> Case:
    return fatal(
        "header-not-an-object.jsonl",
        "line 1 is a JSON array instead of the header object",
        replaced(1, b'["session",1]'),
        [1],
        new_header=True,
    )


@case
def _() -> Case:
    return Case(
        "future-version.jsonl",
        'the header says `"v": 2`, a format this convgit does not know',
        with_lines(changed(1, v=2)),
        repair="refuse",
        note="refused with 'upgrade convgit'; repair must not touch a newer file",
    )


@case
def _() -> Case:
    return Case(
        "header-version-zero.jsonl",
        'the header says `"v": 0`, a format version that never existed',
        with_lines(changed(1, v=0)),
        repair="refuse",
        note="an unknown version is refused like a future one (SPEC section 3)",
    )


@case
def _() -> Case:
    return fatal(
        "wrong-type-session-v-boolean.jsonl",
        'the header says `"v": true` (JSON true is not the number 1)',
        changed(1, v=True),
        [1],
        new_header=True,
    )


for _field, _value, _what in [
    ("v", "1", 'the string "1"'),
    ("id", 42, "a number"),
    ("created", 20250101, "a number"),
    ("cwd", ["/home/user/project"], "an array"),
    ("forkedFrom", "a1000001", "a string, not an object"),
]:
    CASES.append(
        fatal(
            f"wrong-type-session-{_field}.jsonl",
            f"line 1: the header's `{_field}` is {_what}",
            changed(1, **{_field: _value}),
            [1],
            new_header=True,
        )
    )


@case
def _() -> Case:
    return fatal(
        "second-header.jsonl",
        "line 9 is a second session header",
        inserted(9, line(BASE[0])),
        [9],
    )


@case
def _() -> Case:
    return Case(
        "header-id-mismatch.jsonl",
        "the header names session `other00000`, not the file's `bad0000000` (a renamed copy)",
        with_lines(changed(1, id="other00000")),
        fsck=0,
        read=0,
        warnings=[1],
        replays_like_base=True,
        note="tolerance: warned about, read as the file's session",
    )


@case
def _() -> Case:
    return Case(
        "header-only.jsonl",
        "nothing but the header: a session with no entries",
        with_lines(base_lines()[:1]),
        fsck=0,
        read=0,
        read_exceptions={"show": 1},
        note="valid; `show @` exits 1 (there is no entry), like any empty session",
    )


@case
def _() -> Case:
    return Case(
        "empty-file.jsonl",
        "0 bytes: not even a header (a crash between create and the first write)",
        b"",
        new_header=True,
        note="fsck names 'the file' (there is no line); repair writes a header",
    )


# -- wrong field types, everywhere a field exists ------------------------------------------------

CASES.extend(
    [
        wrong_type(7, "id", 42, "a number"),
        wrong_type(9, "parentId", 7, "a number"),
        wrong_type(13, "ts", 1735689612, "a number (epoch seconds)"),
        wrong_type(9, "role", 1, "a number"),
        wrong_type(9, "content", {"text": "Now add a test."}, "an object"),
        wrong_type(6, "toolCallId", 1, "a number"),
        wrong_type(6, "isError", "false", 'the string "false"'),
        wrong_type(3, "provider", None, "null"),
        wrong_type(3, "model", 4, "a number"),
        wrong_type(4, "level", {"effort": "high"}, "an object"),
        wrong_type(10, "summary", ["A fix was made."], "an array"),
        wrong_type(10, "firstKeptId", 6, "a number"),
        wrong_type(12, "fromId", None, "null"),
        wrong_type(12, "summary", 1, "a number"),
        wrong_type(13, "text", None, "null"),
        wrong_type(13, "source", 1, "a number"),
        wrong_type(14, "kind", 7, "a number"),
        wrong_type(16, "target", 9, "a number"),
        wrong_type(16, "ts", None, "null"),
        wrong_type(8, "target", None, "null"),
        wrong_type(8, "label", 5, "a number"),
        wrong_type(17, "name", ["parser", "fix"], "an array"),
        wrong_type(13, "type", 5, "a number"),
    ]
)


@case
def _() -> Case:
    return fatal(
        "wrong-type-content-part.jsonl",
        "line 5: a content part of the assistant message is the number 42",
        changed(5, content=[{"type": "text", "text": "Let me read it."}, 42]),
        [5],
    )


@case
def _() -> Case:
    call = {"type": "tool_call", "id": 1, "name": "read", "input": {}}
    return fatal(
        "wrong-type-tool-call-id.jsonl",
        "line 5: the tool_call part's `id` is a number",
        changed(5, content=[call]),
        [5],
    )


@case
def _() -> Case:
    return fatal(
        "missing-field-parentId.jsonl",
        "line 9: a user message with no `parentId` key at all",
        changed(9, parentId=...),
        [9],
    )


@case
def _() -> Case:
    return fatal(
        "missing-field-toolCallId.jsonl",
        "line 6: a tool result with no `toolCallId`",
        changed(6, toolCallId=...),
        [6],
    )


@case
def _() -> Case:
    return fatal("empty-id.jsonl", 'line 14: `"id": ""`', changed(14, id=""), [14])


@case
def _() -> Case:
    return fatal("unknown-role.jsonl", 'line 9: `"role": "system"`', changed(9, role="system"), [9])


@case
def _() -> Case:
    return fatal(
        "meta-record-with-parent.jsonl",
        "line 16: a leaf record that carries a parentId",
        changed(16, parentId="a1000008"),
        [16],
    )


# -- the tree -------------------------------------------------------------------------------------


def _entry(ident: str, parent: str | None, second: int, content: str = "...") -> dict[str, Any]:
    return {
        "type": "message",
        "id": ident,
        "parentId": parent,
        "ts": ts(second),
        "role": "user",
        "content": content,
    }


@case
def _() -> Case:
    return fatal(
        "self-parent.jsonl",
        "line 18: an entry that is its own parent",
        appended(line(_entry("a10000f1", "a10000f1", 20))),
        [18],
    )


@case
def _() -> Case:
    size = 50
    ids = [f"c{n:07x}" for n in range(size)]
    cycle = [line(_entry(ids[n], ids[(n + 1) % size], 20)) for n in range(size)]
    tail = line(_entry("d0000001", ids[0], 21, "hangs off the cycle"))
    return fatal(
        "long-cycle.jsonl",
        f"lines 18-{17 + size}: {size} entries whose parents form one loop,"
        f" and line {18 + size} hangs off it",
        appended(*cycle, tail),
        list(range(18, 18 + size)),
        errors=[18],
    )


@case
def _() -> Case:
    return fatal(
        "missing-parent.jsonl",
        "line 9: an entry whose parent `deadbeef` is nowhere; line 10 is its child",
        inserted(
            9,
            line(_entry("a10000f1", "deadbeef", 20)),
            line(_entry("a10000f2", "a10000f1", 21)),
        ),
        [9],
    )


@case
def _() -> Case:
    twin = BASE[6] | {"parentId": "a100000d", "content": "A different reply with the same id."}
    return fatal(
        "duplicate-ids-conflicting.jsonl",
        "line 18 reuses the id a1000006 of line 7, with other content and another parent",
        appended(line(twin)),
        [18],
    )


@case
def _() -> Case:
    return fatal(
        "duplicate-ids-identical.jsonl",
        "line 18 is a byte-identical copy of line 15 (an append written twice)",
        appended(base_lines()[14]),
        [18],
    )


@case
def _() -> Case:
    return fatal(
        "leaf-points-nowhere.jsonl",
        "line 18: a leaf record whose target `ffffffff` does not exist",
        appended(line({"type": "leaf", "target": "ffffffff", "ts": ts(20)})),
        [18],
    )


@case
def _() -> Case:
    return fatal(
        "label-on-missing-entry.jsonl",
        "line 18: a label on `ffffffff`, which does not exist",
        appended(line({"type": "label", "target": "ffffffff", "label": "lost", "ts": ts(20)})),
        [18],
    )


@case
def _() -> Case:
    return fatal(
        "compaction-keeps-missing.jsonl",
        "line 10: a compaction whose firstKeptId `ffffffff` does not exist",
        changed(10, firstKeptId="ffffffff"),
        [10],
    )


@case
def _() -> Case:
    return fatal(
        "compaction-keeps-non-ancestor.jsonl",
        "line 10: a compaction whose firstKeptId a100000b exists, but on another branch",
        changed(10, firstKeptId="a100000b"),
        [10],
        note="context cannot replay it, so fsck must say so and repair must fix it",
    )


@case
def _() -> Case:
    result = {
        "type": "message",
        "id": "a10000f1",
        "parentId": "a100000d",
        "ts": ts(20),
        "role": "tool",
        "toolCallId": "call-404",
        "isError": False,
        "content": "an answer to a call nobody made",
    }
    return Case(
        "tool-result-without-call.jsonl",
        "line 18: a tool result for call-404, which no assistant message made",
        with_lines(appended(line(result))),
        fsck=0,
        read=0,
        warnings=[18],
        note="tolerance: replay drops the orphan result",
    )


@case
def _() -> Case:
    future = {
        "type": "checkpoint",
        "id": "a10000f1",
        "parentId": "a100000d",
        "ts": ts(20),
        "payload": {"weights": "sha256:00"},
    }
    return Case(
        "unknown-entry-type.jsonl",
        "line 18: a tree entry of a type this version does not know (`checkpoint`)",
        with_lines(appended(line(future))),
        fsck=0,
        read=0,
        note="valid: unknown types are kept and not replayed (forward compatibility)",
    )


@case
def _() -> Case:
    future = {"type": "pin", "target": "a1000006", "ts": ts(20)}
    return Case(
        "unknown-meta-record.jsonl",
        "line 18: a meta record (no parentId, no id) of a type this version does not know",
        with_lines(appended(line(future))),
        fsck=0,
        read=0,
        replays_like_base=True,
        note="forward compatibility: a newer writer's meta record must not break an older reader",
    )


# -- line ends and the end of the file ------------------------------------------------------------


@case
def _() -> Case:
    return Case(
        "crlf-line-ends.jsonl",
        "every line ends with CRLF (the file went through a Windows editor)",
        with_lines(base_lines(), b"\r\n"),
        fsck=0,
        read=0,
        warnings=list(range(1, BASE_LINES + 1)),
        replays_like_base=True,
        note="tolerance: read as LF",
    )


@case
def _() -> Case:
    return Case(
        "bom.jsonl",
        "the file starts with a UTF-8 byte-order mark",
        b"\xef\xbb\xbf" + base_bytes(),
        fsck=0,
        read=0,
        warnings=[1],
        replays_like_base=True,
        note="tolerance; repair may rewrite the file without the mark",
    )


@case
def _() -> Case:
    torn = line(_entry("a10000f1", "a1000009", 20, "half a line"))[:40]
    return Case(
        "torn-last-line.jsonl",
        "line 18 stops mid-record with no newline (a writer died mid-write)",
        base_bytes() + torn,
        fsck=0,
        read=0,
        warnings=[18],
        quarantine=[18],
        replays_like_base=True,
        note="tolerance: readers ignore it; repair and the next append move it to the quarantine",
    )


@case
def _() -> Case:
    return Case(
        "nul-block-at-end.jsonl",
        "the file ends in 512 NUL bytes and no newline (a power loss on ext4/XFS)",
        base_bytes() + b"\x00" * 512,
        fsck=0,
        read=0,
        warnings=[18],
        quarantine=[18],
        replays_like_base=True,
        note="a torn last line made of zeros",
    )


@case
def _() -> Case:
    return Case(
        "last-line-without-newline.jsonl",
        "the last record (line 17) is complete but its newline is missing",
        base_bytes()[:-1],
        fsck=0,
        read=0,
        warnings=[17],
        replays_like_base=True,
        note="tolerance: the next writer adds the newline",
    )


CASES.sort(key=lambda c: c.name)


# -- writing the corpus ---------------------------------------------------------------------------


def manifest() -> dict[str, Any]:
    return {c.name: c.manifest() for c in CASES}


def manifest_text() -> str:
    return json.dumps(manifest(), indent=2, ensure_ascii=False) + "\n"


def readme_text() -> str:
    def outcome(c: Case) -> tuple[str, str, str]:
        fsck = "0 (warns)" if c.fsck == 0 and c.warnings else str(c.fsck)
        read = str(c.read) + "".join(f", `{k}` {v}" for k, v in c.read_exceptions.items())
        if c.repair == "refuse":
            fix = "refused (exit 3, untouched)"
        elif c.quarantine:
            fix = "moves line" + ("s " if len(c.quarantine) > 1 else " ") + _ranges(c.quarantine)
        else:
            fix = "nothing to move"
        if c.new_header:
            fix += ", new header"
        return fsck, read, fix

    rows = []
    for c in CASES:
        fsck, read, fix = outcome(c)
        note = f"; {c.note}" if c.note else ""
        rows.append(f"| `{c.name}` | {c.defect}{note} | {fsck} | {read} | {fix} |")
    return README_HEAD + "\n".join(rows) + "\n" + README_TAIL


def _ranges(numbers: list[int]) -> str:
    out: list[str] = []
    start = prev = numbers[0]
    for n in [*numbers[1:], None]:
        if n is not None and n == prev + 1:
            prev = n
            continue
        out.append(str(start) if start == prev else f"{start}-{prev}")
        if n is not None:
            start = prev = n
    return ", ".join(out)


README_HEAD = """\
# Hostile session files

One defect per file, each made from one clean session (17 lines: every entry kind, every meta
record, a tool call and its result, a compaction and a fork at the root) by
`tests/reliability/bad_corpus.py`. **Do not edit these files by hand**: edit that module and
run `python tests/reliability/bad_corpus.py`; a test fails when the files, `manifest.json` or
this table differ from what it makes.

Every file is used as `sessions/bad0000000.jsonl` of a fresh store (its header says
`bad0000000`) and `tests/test_bad_corpus.py` checks, through the CLI:

* `convgit fsck` exits 3 and names every line listed in the manifest's `errors`, or exits 0
  for a tolerance and names the `warnings` lines;
* `log`, `tree`, `context` and `show @` exit 3 with one sentence on stderr (`convgit: ...`,
  an optional `  hint:` line) that names a bad line and `convgit repair`, and nothing on
  stdout; for a tolerance they exit 0; never a traceback;
* none of those changes a byte in `sessions/`;
* `convgit repair` exits 0, keeps the original byte for byte as `bad0000000.jsonl.bak-<time>`,
  moves exactly the `quarantine` lines (the bad lines, the entries below a bad entry, the meta
  records pointing at them) to `bad0000000.quarantine.jsonl` with their exact bytes, keeps
  every other line byte for byte, and leaves a file `fsck` accepts and `convgit user` appends
  to; or, for `refuse`, exits 3 and touches nothing.

Tolerances (fsck exits 0 with a warning, readers carry on): a torn last line, a leading
byte-order mark, CRLF line ends, a tool result whose call is nowhere, a complete last record
without its newline, a header naming another session id. `header-only.jsonl` and
`unknown-entry-type.jsonl` are not defects at all: they are here to prove convgit does not
refuse valid files that look odd.

| file | defect | fsck | log/tree/context/show | repair |
|---|---|---|---|---|
"""

README_TAIL = """
Made at test time instead (too big, or not a file that git can hold), in
`tests/reliability/test_hostile_session_files.py`:

| case | defect | expected |
|---|---|---|
| 50 MB line | an unparsable 50 MB line in the middle | 3; repair moves it intact |
| 50 MB message | a valid user message of 50 MB | 0; read in full |
| 100,000 levels | a line nesting 100,000 objects deep | 3 like any bad line, no crash |
| directory | `sessions/bad0000000.jsonl` is a directory | 3, one sentence; repair refused |
| unreadable | mode 000, and convgit may not read it | 3, one sentence; repair refused |
| FIFO | a named pipe with no writer | 3 at once (no hang); repair refused |

"Unreadable" is honest even as root (where mode 000 stops nothing): the test drops the
process's effective uid to `nobody` for the duration of the commands, in a folder `nobody`
may enter, and skips (saying why) only when it cannot drop privileges or the file system
still grants the read. The 100,000-level and FIFO cases run `python -m convgit` in a
subprocess (with a timeout), since a crash or a hang there would take the test run with it.

Known failures are marked `xfail(strict=True)` in the tests with the bug they show, so the
suite stays green and flips when the bug is fixed.
"""


def write(folder: Path = CORPUS) -> None:
    """(Re)make the corpus in ``folder``: every fixture, the manifest and the README."""
    folder.mkdir(parents=True, exist_ok=True)
    names = {c.name for c in CASES}
    for stale in folder.iterdir():
        if stale.suffix == ".jsonl" and stale.name not in names:
            stale.unlink()
    for c in CASES:
        (folder / c.name).write_bytes(c.content)
    (folder / MANIFEST.name).write_text(manifest_text())
    (folder / README.name).write_text(readme_text())


if __name__ == "__main__":
    write(Path(sys.argv[1]) if len(sys.argv) > 1 else CORPUS)
    print(f"wrote {len(CASES)} files to {CORPUS if len(sys.argv) < 2 else sys.argv[1]}")
