"""Line <-> record. The only module that imports orjson."""

from __future__ import annotations

import re
from typing import Any

import orjson

from convgit.errors import ConvgitError

# orjson writes at most 255 levels of nesting: a deeper record could be read but never shown
MAX_DEPTH = 255
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"')
_BRACKET = re.compile(rb"[\[\]{}]")


class TooDeepError(ValueError):
    """A line nested deeper than convgit can write back."""


def encode(record: dict[str, Any]) -> bytes:
    """One record as one whole line, newline included (written with a single write)."""
    return orjson.dumps(record) + b"\n"


def decode(line: bytes | str) -> Any:
    """Parse one line; raises ValueError on anything that is not JSON convgit can write back."""
    value = orjson.loads(line)
    raw = line.encode() if isinstance(line, str) else line
    if raw.count(b"[") + raw.count(b"{") > MAX_DEPTH and _depth(raw) > MAX_DEPTH:
        raise TooDeepError(f"nested deeper than {MAX_DEPTH} levels")
    return value


class Unparsable:
    """A line that is not JSON (or not UTF-8); ``raw`` keeps its bytes for the quarantine."""

    __slots__ = ("raw", "reason")

    def __init__(self, raw: bytes, reason: str) -> None:
        self.raw = raw
        self.reason = reason


def decode_lines(lines: list[bytes], first: int) -> list[tuple[int, Any]]:
    """Parse many lines, numbered from ``first``; a bad line becomes an ``Unparsable``. The
    loop is ``decode`` inlined: loading a million lines must cost little more than parsing."""
    loads = orjson.loads
    out: list[tuple[int, Any]] = []
    append = out.append
    for number, line in enumerate(lines, first):
        try:
            value = loads(line)
        except ValueError as exc:
            append((number, Unparsable(line, _why_unparsable(line, exc))))
            continue
        if line.count(b"[") + line.count(b"{") > MAX_DEPTH and _depth(line) > MAX_DEPTH:
            append((number, Unparsable(line, f"is nested deeper than {MAX_DEPTH} levels")))
            continue
        append((number, value))
    return out


def _why_unparsable(line: bytes, exc: ValueError) -> str:
    if not line.strip():
        return "is empty"
    if b"\x00" in line:
        return "contains NUL bytes"
    try:
        line.decode("utf-8")
    except UnicodeDecodeError:
        return "is not valid UTF-8"
    return f"is not valid JSON ({str(exc).split(':')[0]})"


def _depth(raw: bytes) -> int:
    deepest = depth = 0
    for bracket in _BRACKET.findall(_STRING.sub(b"", raw)):
        depth += 1 if bracket in (b"[", b"{") else -1
        deepest = max(deepest, depth)
    return deepest


def dumps(value: Any, *, pretty: bool = False) -> str:
    """Machine output for ``--json``."""
    option = orjson.OPT_INDENT_2 if pretty else 0
    try:
        return orjson.dumps(value, option=option).decode()
    except TypeError as exc:
        raise ConvgitError(f"This value cannot be written as JSON ({exc}).") from None
