"""What every record kind's declaration is made of: a field table (field -> accepted JSON types,
required) and the one check of a raw record against it; and the two values every record carries,
its ``ts`` and, for entries, its id."""

from __future__ import annotations

import os
from datetime import datetime, timezone
from typing import Any

STR = (str,)
STR_OR_NULL = (str, type(None))
ANY = (object,)
FieldSpec = tuple[tuple[type, ...], bool]
ENTRY_ID_BYTES = 4
SESSION_ID_BYTES = 6


def now() -> str:
    """ISO 8601 UTC with milliseconds, as every ``ts`` is written."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def new_id(taken: Any = (), *, size: int = ENTRY_ID_BYTES) -> str:
    """A random lowercase hex id of ``size`` bytes (entries ``ENTRY_ID_BYTES``, sessions
    ``SESSION_ID_BYTES``) not in ``taken`` (anything supporting ``in``)."""
    while True:
        candidate = os.urandom(size).hex()  # not `secrets`: it costs every start a hashlib import
        if candidate not in taken:
            return candidate


def fields_error(record: dict[str, Any], spec: dict[str, FieldSpec]) -> str | None:
    for name, (types, required) in spec.items():
        if name not in record:
            if required:
                return f"lacks the field '{name}'"
            continue
        value = record[name]
        if types is ANY:
            continue
        # bool is an int in Python; JSON true is never a valid number or string here
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
            return f"has a '{name}' of the wrong type ({_json_type(value)})"
    return None


def _json_type(value: Any) -> str:
    names = {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}
    return names.get(type(value), "number")
