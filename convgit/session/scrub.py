"""What redaction replaces, as pure functions over text, bytes and records (no file, no git).

Each match of a pattern becomes ``[redacted]``. A record keeps its shape: in a session's own
lines the fields that make the tree (ids, parents, times, tool call ids, kinds and roles) are
never rewritten, and a pattern that matches one of them is refused rather than half applied;
every other string is scrubbed, object keys included, and text kept as base64 (an agent's
record that was not UTF-8, a quarantined line) is decoded, scrubbed and encoded again.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from convgit.base import codec
from convgit.base.errors import RefusedError, UsageError
from convgit.session import detector

REPLACEMENT = "[redacted]"

# Fields of a session's lines that make the tree and its references: never rewritten.
_TREE_KEYS = frozenset(
    {"type", "id", "parentId", "ts", "fromId", "firstKeptId", "toolCallId", "role", "isError"}
)
_META_KEYS = frozenset({"type", "ts", "target", "key", "at", "in", "agent", "source", "offset"})
_META_KEYS |= {"line", "index", "check"}
_HEADER_KEYS = frozenset({"type", "v", "id", "created", "forkedFrom", "agent", "agentSession"})
_PART_KEYS = frozenset({"type"})  # and a tool call's ``id``


def user_pattern(source: str) -> re.Pattern[str]:
    """A regular expression a user gave, compiled; one that Python's ``re`` refuses, whatever
    the way (a syntax error, a repetition count too large, nesting too deep), is one sentence
    and a usage error. The sentence never quotes the pattern: it may be the secret itself."""
    try:
        return re.compile(source)
    except re.error as exc:
        reason = str(exc)
    except (OverflowError, RecursionError, ValueError) as exc:
        reason = str(exc) if not isinstance(exc, RecursionError) else "it nests too deep"
    raise UsageError(f"The pattern is not a regular expression Python can use: {reason}.")


class Scrubber:
    """What is replaced: one compiled pattern, or with ``secrets`` what the secret detector
    finds (``detector``); and what it is called in reports (never the pattern's text, which
    may be the secret itself)."""

    def __init__(self, pattern: str | None, *, secrets: bool = False) -> None:
        if (pattern is None) == (not secrets):
            raise UsageError("Give a PATTERN or --secrets (one of them).", "convgit redact --help")
        self.pattern = None if secrets else user_pattern(str(pattern))
        if self.pattern is not None and self.pattern.fullmatch(""):
            raise UsageError("The pattern matches the empty string: it would match everywhere.")
        self.builtin = secrets
        self.described = "the secret detector" if secrets else "the pattern"

    def text(self, value: str) -> tuple[str, int]:
        """``value`` with every non-empty match replaced, and how many there were."""
        if self.pattern is None:
            found = detector.hits(value)
            if not found:
                return value, 0
            parts, at = [], 0
            for hit in found:
                parts += [value[at : hit.start], REPLACEMENT]
                at = hit.end
            return "".join([*parts, value[at:]]), len(found)
        count = 0

        def replace(match: re.Match[str]) -> str:
            nonlocal count
            if not match.group():
                return ""
            count += 1
            return REPLACEMENT

        if not self.pattern.search(value):
            return value, 0
        return self.pattern.sub(replace, value), count

    def data(self, raw: bytes) -> tuple[bytes, int]:
        """``raw`` scrubbed as text: UTF-8, bytes that are not kept as they are."""
        text, count = self.text(raw.decode("utf-8", "surrogateescape"))
        return (text.encode("utf-8", "surrogateescape"), count) if count else (raw, 0)

    def found(self, raw: bytes) -> bool:
        return self.data(raw)[1] > 0


@dataclass
class Scrubbed:
    """A record after scrubbing: the new value, the matches replaced and the fields they were in."""

    value: Any
    matches: int
    fields: list[str]


def _value(scrub: Scrubber, value: Any, keep: Callable[[str], bool], field: str) -> Scrubbed:
    """Scrub every string in a JSON value but the object keys ``keep`` names (and their values)."""
    if isinstance(value, str):
        text, count = scrub.text(value)
        return Scrubbed(text, count, [field] if count else [])
    if isinstance(value, list):
        parts = [_value(scrub, item, keep, field) for item in value]
        return _joined([p.value for p in parts], parts)
    if not isinstance(value, dict):
        return Scrubbed(value, 0, [])
    out: dict[str, Any] = {}
    found: list[Scrubbed] = []
    for key, item in value.items():
        if keep(key):
            out[key] = item
            continue
        new_key, count = scrub.text(key)
        while new_key in out or (new_key != key and new_key in value):
            new_key += "'"  # two keys redacted alike stay two keys
        if key == "base64" and isinstance(item, str):
            done = _base64(scrub, item, field)
        else:
            done = _value(scrub, item, keep, field if field else key)
        out[new_key] = done.value
        found.append(Scrubbed(None, done.matches + count, done.fields or ([key] * bool(count))))
    return _joined(out, found)


def _joined(value: Any, parts: list[Scrubbed]) -> Scrubbed:
    fields = list(dict.fromkeys(f for p in parts for f in p.fields))
    return Scrubbed(value, sum(p.matches for p in parts), fields)


def _base64(scrub: Scrubber, text: str, field: str) -> Scrubbed:
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        new, count = scrub.text(text)
        return Scrubbed(new, count, [field or "base64"] if count else [])
    new_raw, count = scrub.data(raw)
    if not count:
        return Scrubbed(text, 0, [])
    return Scrubbed(base64.b64encode(new_raw).decode(), count, [field or "base64"])


def session_line(scrub: Scrubber, record: Any, number: int) -> Scrubbed:
    """One parsed line of a session file (line 1 is the header), its tree fields kept. Refused
    (nothing is written) when the pattern matches one of them."""
    if not isinstance(record, dict):
        return Scrubbed(record, 0, [])
    kind = record.get("type")
    if number == 1 and kind == "session":
        keys = _HEADER_KEYS
    elif "parentId" in record:
        keys = _TREE_KEYS
    elif kind == "redaction":
        return Scrubbed(record, 0, [])
    else:
        keys = _META_KEYS
    for key in keys & record.keys():
        if scrub.text(codec.dumps(record[key]))[1]:
            where = f"entry {record['id']}" if "id" in record and key != "id" else f"line {number}"
            raise RefusedError(
                f"{scrub.described.capitalize()} matches the '{key}' field of {where}; redact keeps"
                " every id, parent, time and tool call id, and rewrote nothing.",
                "use a pattern that matches only text",
            )
    if keys is _TREE_KEYS and record.get("type") == "message":
        return _message(scrub, record)
    return _value(scrub, record, keys.__contains__, "")


def _message(scrub: Scrubber, record: dict[str, Any]) -> Scrubbed:
    """A message: its parts keep their kinds and a tool call its id."""
    content = record["content"]
    if isinstance(content, list):
        for part in content:
            call = isinstance(part, dict) and part.get("type") == "tool_call"
            if call and scrub.text(str(part.get("id")))[1]:
                raise RefusedError(
                    f"{scrub.described.capitalize()} matches the id of tool call"
                    f" {part.get('id')} in entry {record['id']}; redact keeps every tool call"
                    " id, and rewrote nothing.",
                    "use a pattern that matches only text",
                )
    body = _value(scrub, content, _part_key, "content")
    rest = {key: value for key, value in record.items() if key != "content"}
    head = _value(scrub, rest, _TREE_KEYS.__contains__, "")
    items = list(head.value.items())
    items.insert(list(record).index("content"), ("content", body.value))
    return _joined(dict(items), [body, head])


def _part_key(key: str) -> bool:
    return key in _PART_KEYS or key == "id"


_SIDECAR_KEYS = frozenset(
    {"type", "ts", "entry", "commit", "tree", "before", "files", "enabled", "undo", "changed"}
)


def sidecar_line(scrub: Scrubber, raw: bytes, number: int) -> tuple[bytes, int]:
    """A line of the snapshot records: the entries, commits and trees it names are kept (a
    pattern that matches one is refused); paths and other text are scrubbed."""
    try:
        record = codec.decode(raw)
    except ValueError:
        return scrub.data(raw)
    if not isinstance(record, dict):
        return any_line(scrub, raw)
    for key in _SIDECAR_KEYS & record.keys():
        if scrub.text(codec.dumps(record[key]))[1]:
            raise RefusedError(
                f"{scrub.described.capitalize()} matches the '{key}' field of line {number} of"
                " the snapshot records; redact keeps the entries and commits they name, and"
                " rewrote nothing.",
                "use a pattern that matches only text",
            )
    done = _value(scrub, record, _SIDECAR_KEYS.__contains__, "")
    return (codec.dumps(done.value).encode(), done.matches) if done.matches else (raw, 0)


def any_line(scrub: Scrubber, raw: bytes) -> tuple[bytes, int]:
    """A line of a file kept beside a session (its quarantine, a backup of it): a JSON object
    has every string scrubbed (base64 text decoded first); anything else is scrubbed as text."""
    try:
        record = codec.decode(raw)
    except ValueError:
        return scrub.data(raw)
    if not isinstance(record, (dict, list, str)):
        return scrub.data(raw)
    done = _value(scrub, record, lambda key: False, "")
    if not done.matches:
        return raw, 0
    return codec.dumps(done.value).encode(), done.matches


def lines(scrub: Scrubber, data: bytes) -> tuple[bytes, int]:
    """A whole file of lines, each scrubbed by ``any_line``; the line ends are kept."""
    out, total = [], 0
    for piece in data.split(b"\n"):
        body, cr = (piece[:-1], b"\r") if piece.endswith(b"\r") else (piece, b"")
        new, count = any_line(scrub, body) if body.strip() else (body, 0)
        out.append(new + cr)
        total += count
    return (b"\n".join(out), total) if total else (data, 0)
