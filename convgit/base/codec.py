"""Line <-> record. The only module that imports orjson."""

from __future__ import annotations

import re
from itertools import compress, count
from typing import Any

import orjson

from convgit.base.errors import ConvgitError

# orjson writes at most 254 levels of nesting: a deeper record could be read but never shown
MAX_DEPTH = 254
# a JSON text nested deeper than MAX_DEPTH opens and closes more than MAX_DEPTH brackets
_SHALLOW = 2 * MAX_DEPTH + 1
_TOO_DEEP = f"is nested deeper than {MAX_DEPTH} levels"


class TooDeepError(ValueError):
    """A line nested deeper than convgit can write back."""


def encode(record: dict[str, Any]) -> bytes:
    """One record as one whole line, newline included (written with a single write); text that
    is not UTF-8 raises TypeError."""
    return orjson.dumps(record) + b"\n"


def encode_names(record: dict[str, Any]) -> bytes:
    """``encode`` for records that carry file names: a name that is not UTF-8 is written as
    ``shown`` writes it."""
    try:
        return orjson.dumps(record) + b"\n"
    except TypeError:
        return orjson.dumps(_shown_in(record)) + b"\n"


_ESCAPED = re.compile(r"\\x([89a-f][0-9a-f])")


def shown(text: str) -> str:
    """``text`` as convgit writes it (JSON, records, the terminal): unchanged when it is UTF-8;
    a file name that is not (read from the file system with surrogateescape) gets each byte
    that is not part of valid UTF-8 written as ``\\xHH``."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raw = text.encode("utf-8", "surrogateescape" if _escapable(text) else "backslashreplace")
        return raw.decode("utf-8", "backslashreplace")
    return text


def unshown(text: str) -> str:
    """The file name ``shown`` wrote as ``text`` (only for text ``shown`` changed)."""
    return _ESCAPED.sub(lambda m: chr(0xDC00 + int(m[1], 16)), text)


def _escapable(text: str) -> bool:
    return all(not 0xD800 <= ord(c) < 0xDC80 and not 0xDD00 <= ord(c) < 0xE000 for c in text)


def _shown_in(value: Any) -> Any:
    if isinstance(value, str):
        return shown(value)
    if isinstance(value, dict):
        return {shown(k) if isinstance(k, str) else k: _shown_in(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_shown_in(v) for v in value]
    return value


def decode(line: bytes | str) -> Any:
    """Parse one line; raises ValueError on anything that is not JSON convgit can write back."""
    value = orjson.loads(line)
    if _too_deep(line.encode() if isinstance(line, str) else line, value):
        raise TooDeepError(f"nested deeper than {MAX_DEPTH} levels")
    return value


class Unparsable:
    """A line that is not JSON (or not UTF-8); ``raw`` keeps its bytes for the quarantine."""

    __slots__ = ("raw", "reason")

    def __init__(self, raw: bytes, reason: str) -> None:
        self.raw = raw
        self.reason = reason


def decode_line(line: bytes) -> Any:
    """One line as a reader takes it: its value, or an ``Unparsable`` saying what is wrong."""
    try:
        return decode(line)
    except TooDeepError:
        return Unparsable(line, _TOO_DEEP)
    except ValueError as exc:
        return Unparsable(line, _why_unparsable(line, exc))


def decode_lines(lines: list[bytes]) -> list[Any]:
    """``[decode_line(line) for line in lines]``, at the cost of little more than parsing: the
    lines go through one ``map``, which stops at a bad line and resumes after it, and only
    lines long enough to nest too deep are looked at for depth."""
    loads = orjson.loads
    out: list[Any] = []
    remaining = iter(lines)
    while True:
        try:
            out.extend(map(loads, remaining))
        except ValueError:  # the line after the last one parsed is the bad one
            out.append(decode_line(lines[len(out)]))
            continue
        break
    if max(map(len, lines), default=0) > _SHALLOW:
        for number in compress(count(), map(_SHALLOW.__lt__, map(len, lines))):
            line = lines[number]
            if not isinstance(out[number], Unparsable) and _too_deep(line, out[number]):
                out[number] = Unparsable(line, _TOO_DEEP)
    return out


def _too_deep(raw: bytes, value: Any) -> bool:
    """True when ``value`` (parsed from ``raw``) nests deeper than ``MAX_DEPTH``: only a line
    with that many brackets can, and then its containers are walked (not its text, whose
    strings may hold any number of brackets)."""
    if raw.count(b"[") + raw.count(b"{") <= MAX_DEPTH or type(value) not in (dict, list):
        return False
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            return True
        for child in node.values() if type(node) is dict else node:
            if type(child) is dict or type(child) is list:
                stack.append((child, depth + 1))
    return False


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


def dumps(value: Any, *, pretty: bool = False) -> str:
    """Machine output for ``--json``."""
    option = orjson.OPT_INDENT_2 if pretty else 0
    try:
        try:
            return orjson.dumps(value, option=option).decode()
        except TypeError:
            return orjson.dumps(_shown_in(value), option=option).decode()
    except TypeError as exc:
        raise ConvgitError(f"This value cannot be written as JSON ({exc}).") from None
