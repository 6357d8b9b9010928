"""Line <-> record. The only module that imports orjson."""

from __future__ import annotations

from typing import Any

import orjson

DecodeError = orjson.JSONDecodeError


def encode(record: dict[str, Any]) -> bytes:
    """One record as one whole line, newline included (written with a single write)."""
    return orjson.dumps(record) + b"\n"


def decode(line: bytes | str) -> Any:
    """Parse one line; raises DecodeError (a ValueError) on anything that is not JSON."""
    return orjson.loads(line)


def dumps(value: Any, *, pretty: bool = False) -> str:
    """Machine output for ``--json``."""
    option = orjson.OPT_INDENT_2 if pretty else 0
    return orjson.dumps(value, option=option).decode()
