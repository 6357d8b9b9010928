"""The session file's format versions, beside its loader (``load``): a session file says its
version in its header (``"v"``, ``schema.FORMAT_VERSION`` for every file this convgit writes);
``MIGRATIONS`` holds, for each older version, the step that brings its records to the next one,
and ``migrate`` applies the steps on read, in memory. The file itself is never rewritten: a
session read through a migration is read, never appended to (``Conversation.write`` refuses),
so no file holds records of two versions. A version with no steps to the current one is left as
it is, and the tree refuses it (``UnsupportedVersionError``).

No older version exists yet: every file convgit has written is v1, so the table is empty. A
change of the format adds the step from the version before it here, with a fixture of that
version read through it (tests/unit/test_migrations.py shows how)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from convgit.schema import FORMAT_VERSION

# version -> the step from it to the next version: the records (the header first) in, the
# records of the next version out; the header's "v" is set by ``migrate``
Step = Callable[[list[Any]], list[Any]]
MIGRATIONS: dict[int, Step] = {}


def version_of(records: list[Any]) -> int | None:
    """The format version the first record (a session header) says, or None."""
    header = records[0] if records else None
    if type(header) is not dict or header.get("type") != "session":
        return None
    version = header.get("v")
    return version if type(version) is int else None


def migrate(
    records: list[Any], steps: dict[int, Step] | None = None
) -> tuple[list[Any], int | None]:
    """``records`` of an older version brought to ``FORMAT_VERSION`` through ``steps``
    (``MIGRATIONS``), and the version the file said; (``records``, None) when there is nothing
    to do or no way from that version to the current one."""
    table = MIGRATIONS if steps is None else steps
    said = version_of(records)
    if (
        said is None
        or said >= FORMAT_VERSION
        or any(v not in table for v in range(said, FORMAT_VERSION))
    ):
        return records, None
    for version in range(said, FORMAT_VERSION):
        records = table[version](records)
        records = [{**records[0], "v": version + 1}, *records[1:]]
    return records, said
