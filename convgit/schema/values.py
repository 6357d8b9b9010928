"""The entries of the tree, declared once: a frozen dataclass per kind this version knows, from
which its wire names and its field table are derived; ``Unknown`` for the other kinds, and
``entry_from_wire`` from a validated raw record.

How a field is written follows from its declaration: its wire key is its name in camelCase
(``wire(key=...)`` where it is not); a field with no default, or a default that is not None, is
required; a field whose default is None is optional (None: not written), unless declared
``wire(null=True)``: required, and written as null when it is None. Its JSON types are its
annotation's (Any: any).

The field tables ``kind_error`` checks raw records against (``entry_fields``) are derived from
these classes by ``field_tables_source`` and kept as a module, checked against the derivation
(tests/unit/test_schema_declared.py): a hook checks entries at every turn, and importing this
module (defining the dataclasses) costs a start 7 to 15 ms of CPU (measured on 2 loaded cores)
that it would then pay for the checks alone."""

from __future__ import annotations

import types
import typing
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar

from convgit.schema.content import text_of, tool_calls_of
from convgit.schema.fields import ANY, FieldSpec


def wire(default: Any = None, *, key: str | None = None, null: bool = False) -> Any:
    """A field written under ``key`` (else its name in camelCase); ``null``: required on the
    wire though its default is None, written as null when None."""
    return field(default=default, metadata={"key": key, "null": null})


@dataclass(frozen=True)
class Entry:
    """A tree entry. ``extra`` keeps unknown fields so rewriting never loses them."""

    kind: ClassVar[str] = ""

    id: str
    parent_id: str | None
    ts: str
    extra: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def type(self) -> str:
        return self.kind

    def to_wire(self) -> dict[str, Any]:
        record: dict[str, Any] = {"type": self.type}
        for attr, (key, required) in _WIRE[type(self)].items():
            value = getattr(self, attr)
            if value is not None or required:
                record[key] = value
        record.update(self.extra)
        return record


@dataclass(frozen=True)
class Message(Entry):
    kind: ClassVar[str] = "message"
    role: str = "user"
    content: str | list[dict[str, Any]] = ""
    tool_call_id: str | None = None
    is_error: bool | None = None

    @property
    def text(self) -> str:
        """The message's text parts joined (what a person reads in a listing)."""
        return text_of({"content": self.content})

    @property
    def tool_calls(self) -> list[dict[str, Any]]:
        return tool_calls_of({"content": self.content})


@dataclass(frozen=True)
class ModelChange(Entry):
    kind: ClassVar[str] = "model"
    provider: str = ""
    model: str = ""


@dataclass(frozen=True)
class ThinkingLevel(Entry):
    kind: ClassVar[str] = "thinking"
    level: str | int | None = wire(null=True)


@dataclass(frozen=True)
class Compaction(Entry):
    kind: ClassVar[str] = "compaction"
    summary: str = ""
    first_kept_id: str | None = wire(null=True)


@dataclass(frozen=True)
class BranchSummary(Entry):
    kind: ClassVar[str] = "branch_summary"
    from_id: str = ""
    summary: str = ""


@dataclass(frozen=True)
class Note(Entry):
    kind: ClassVar[str] = "note"
    text: str = ""
    source: str | None = None
    saved: str | None = None  # a restore's note: the saved state of the newest restore it tells


@dataclass(frozen=True)
class SystemPrompt(Entry):
    """The system prompt the model is sent from this entry on down its path (None: none)."""

    kind: ClassVar[str] = "system"
    text: str | None = wire(null=True)


@dataclass(frozen=True)
class Custom(Entry):
    kind: ClassVar[str] = "custom"
    custom_kind: str = wire("", key="kind")
    data: Any = None


@dataclass(frozen=True)
class Unknown(Entry):
    """A kind this version does not know: kept byte-for-byte in the file, ignored by replay."""

    unknown_type: str = ""

    @property
    def type(self) -> str:
        return self.unknown_type


ENTRY_CLASSES: dict[str, type[Entry]] = {
    cls.kind: cls
    for cls in (
        Message,
        ModelChange,
        ThinkingLevel,
        SystemPrompt,
        Compaction,
        BranchSummary,
        Note,
        Custom,
    )
}


def _wire_fields(cls: type[Entry]) -> dict[str, tuple[str, bool]]:
    """Each field of ``cls`` as the wire has it, in the order written: attribute -> (key,
    required: written even when None)."""
    return {
        declared.name: (
            declared.metadata.get("key") or _camel(declared.name),
            declared.default is not None or bool(declared.metadata.get("null")),
        )
        for declared in fields(cls)
        if declared.name != "extra"
    }


def _camel(name: str) -> str:
    first, *rest = name.split("_")
    return first + "".join(word.title() for word in rest)


_DECLARED: list[type[Entry]] = [Entry, *ENTRY_CLASSES.values()]
_WIRE = {cls: _wire_fields(cls) for cls in _DECLARED}
_WIRE[Unknown] = _WIRE[Entry]  # its own type is written as ``type``, its fields kept in ``extra``
_KEYS = {cls: {"type", *(key for key, _ in _WIRE[cls].values())} for cls in _DECLARED}


def entry_from_wire(record: dict[str, Any]) -> Entry:
    """Build the value for a validated raw tree record."""
    cls = ENTRY_CLASSES.get(record["type"])
    if cls is None:
        extra = {k: v for k, v in record.items() if k not in _KEYS[Entry]}
        return Unknown(record["id"], record["parentId"], record["ts"], extra, record["type"])
    kwargs = {attr: record[key] for attr, (key, _) in _WIRE[cls].items() if key in record}
    extra = {k: v for k, v in record.items() if k not in _KEYS[cls]}
    return cls(**kwargs, extra=extra)


def field_tables() -> tuple[dict[str, FieldSpec], dict[str, dict[str, FieldSpec]]]:
    """The field tables derived from the declarations: the fields every entry has, and each
    kind's own (wire key -> (JSON types, required)); an optional field's None is no JSON type
    (it stands for "not written")."""
    tables = {}
    for cls in _DECLARED:
        hints = typing.get_type_hints(cls)
        table: dict[str, FieldSpec] = {}
        for attr, (key, required) in _WIRE[cls].items():
            json_types = _json_types(hints[attr])
            if not required and type(None) in json_types:
                json_types = tuple(t for t in json_types if t is not type(None))
            table[key] = (json_types, required)
        tables[cls] = table
    common = tables[Entry]
    own = {
        cls.kind: {key: spec for key, spec in tables[cls].items() if key not in common}
        for cls in ENTRY_CLASSES.values()
    }
    return common, own


def _json_types(hint: Any) -> tuple[type, ...]:
    """The JSON values an annotation admits: Any is any; ``list[...]`` is a list."""
    if hint is Any:
        return ANY
    union = isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union
    return tuple(
        typing.get_origin(arg) or arg for arg in (typing.get_args(hint) if union else (hint,))
    )


def field_tables_source() -> str:
    """``entry_fields``'s text: the derived tables written as a module."""
    common, own = field_tables()
    lines = [
        '"""The field tables of the entries of the tree, derived from their declarations',
        "(``convgit.schema.values``) by ``values.field_tables_source``: do not edit; after a",
        "change to an entry's dataclass, write this file again with ``python -m",
        'convgit.schema.values``. tests/unit/test_schema_declared.py checks it."""',
        "",
        "from convgit.schema.fields import ANY, FieldSpec",
        "",
        f"COMMON_TREE_FIELDS: dict[str, FieldSpec] = {_table_source(common)}",
        "TREE_FIELDS: dict[str, dict[str, FieldSpec]] = {",
        *(f"    {kind!r}: {_table_source(table)}," for kind, table in own.items()),
        "}",
    ]
    return "\n".join(lines) + "\n"


def _table_source(table: dict[str, FieldSpec]) -> str:
    specs = (
        f"{key!r}: ({_types_source(types)}, {required})" for key, (types, required) in table.items()
    )
    return "{" + ", ".join(specs) + "}"


def _types_source(json_types: tuple[type, ...]) -> str:
    if json_types is ANY:
        return "ANY"
    names = ["type(None)" if t is type(None) else t.__name__ for t in json_types]
    return "(" + ", ".join(names) + ("," if len(names) == 1 else "") + ")"


if __name__ == "__main__":  # python -m convgit.schema.values: write entry_fields.py again
    from pathlib import Path

    Path(__file__).with_name("entry_fields.py").write_text(field_tables_source())
