"""Line <-> record. The only module that imports orjson."""

from __future__ import annotations

import re
from typing import Any

import orjson

from convgit.errors import ConvgitError

DecodeError = orjson.JSONDecodeError
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
