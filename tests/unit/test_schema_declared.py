"""Each record kind is declared once (``convgit.schema``): an entry kind by its dataclass, from
which its wire names and its field table are derived; a meta, header, sidecar or quarantine
record by its field table, which its builder writes no name outside. In memory, no store."""

from __future__ import annotations

import dataclasses
from typing import Any

import orjson
import pytest

from convgit import schema
from convgit.schema import entry_fields, fields, values

TS = "2026-12-01T00:00:00.000Z"
# one value of each JSON type a field may hold, none of them the dataclass's default
SAMPLES: dict[type, Any] = {
    str: "s",
    int: 7,
    bool: True,
    list: [{"type": "text", "text": "t"}],
    dict: {"k": 1},
    object: {"any": [1]},
    type(None): None,
}


def test_the_entry_field_tables_are_the_ones_derived_from_the_dataclasses() -> None:
    """``entry_fields`` is what ``values.field_tables`` derives, key for key in order (a change
    to a dataclass without the tables written again fails here: ``python -m
    convgit.schema.values`` writes them)."""
    common, own = values.field_tables()
    assert list(entry_fields.COMMON_TREE_FIELDS.items()) == list(common.items())
    assert list(entry_fields.TREE_FIELDS) == list(own)
    for kind, table in own.items():
        assert list(entry_fields.TREE_FIELDS[kind].items()) == list(table.items()), kind
        for key, (types, _) in table.items():
            # "any JSON value" is one object, which fields_error tells by identity
            assert (types is fields.ANY) == (entry_fields.TREE_FIELDS[kind][key][0] is fields.ANY)
    assert schema.TREE_FIELDS is entry_fields.TREE_FIELDS


def _full_record(kind: str, pick: int) -> dict[str, Any]:
    """A record of ``kind`` with every declared field written, each of its ``pick``-th type."""
    record: dict[str, Any] = {"type": kind}
    for key, (types, _) in [*schema.COMMON_TREE_FIELDS.items(), *schema.TREE_FIELDS[kind].items()]:
        record[key] = SAMPLES[types[pick % len(types)]]
    if kind == "message":
        record["role"] = "tool"  # a tool result: the one role every field fits
    return record


@pytest.mark.parametrize("kind", sorted(schema.TREE_FIELDS))
@pytest.mark.parametrize("pick", [0, 1, 2])
def test_each_entry_kind_round_trips_every_field_through_the_wire(kind: str, pick: int) -> None:
    """Every field the schema checks a ``kind`` record for is an attribute of its value (none
    left in ``extra``), and is written back as it was, in the same order, byte for byte."""
    record = _full_record(kind, pick)
    assert schema.kind_error(record) is None, record
    entry = schema.entry_from_wire(record)
    assert type(entry).kind == kind and entry.extra == {}, entry.extra
    assert orjson.dumps(entry.to_wire()) == orjson.dumps(record)


def test_a_restore_note_keeps_the_saved_state_it_names_as_its_own_field() -> None:
    """The note a restore leaves names its saved state: ``Note.saved``, written as ``saved``."""
    record = {"type": "note", "id": "n1", "parentId": None, "ts": TS, "text": "t", "saved": "s1"}
    note = schema.entry_from_wire(record)
    assert isinstance(note, schema.Note) and note.saved == "s1" and note.extra == {}
    assert schema.Note("n2", None, TS, text="t", saved="s2").to_wire()["saved"] == "s2"


@pytest.mark.parametrize("cls", sorted(values.ENTRY_CLASSES.values(), key=lambda c: c.kind))
def test_an_entry_built_with_its_defaults_is_a_record_the_schema_accepts(cls: type) -> None:
    """A value left at its defaults (None where a field may be null) writes every required
    field, a null one as null, and no optional one."""
    entry = cls("e1", None, TS)
    record = entry.to_wire()
    assert schema.kind_error(record) is None, record
    required = [k for k, (_, needed) in schema.TREE_FIELDS[cls.kind].items() if needed]
    assert [k for k in record if k not in ("type", *schema.COMMON_TREE_FIELDS)] == required


@pytest.mark.parametrize("cls", [values.Entry, *values.ENTRY_CLASSES.values()])
def test_no_entry_kind_declares_a_name_twice(cls: type) -> None:
    """Each attribute has one wire key, no two the same, and none is ``type`` (the kind)."""
    attrs = [f.name for f in dataclasses.fields(cls) if f.name != "extra"]
    keys = [f.metadata.get("key") or _camel(f.name) for f in dataclasses.fields(cls)]
    assert len(set(attrs)) == len(attrs) and len(set(keys)) == len(keys)
    assert "type" not in keys


def _camel(name: str) -> str:
    first, *rest = name.split("_")
    return first + "".join(word.title() for word in rest)


SAVED = "refs/convgit/saved/x"
BUILT: list[tuple[dict[str, Any], dict[str, fields.FieldSpec]]] = [
    (
        schema.header("s1", "/w", {"session": "s0", "entry": "e0"}, ("pi", "p1")),
        schema.HEADER_FIELDS,
    ),
    *(
        (record, schema.META_FIELDS[record["type"]])
        for record in (
            schema.leaf("e1"),
            schema.label("e1", "x"),
            schema.label("e1", None),
            schema.session_name("n"),
            schema.redaction(["e1"], 2, [SAVED], "secrets"),
            schema.agent_session("pi", "p2", "e1", "resumed"),
        )
    ),
    *(
        (record, schema.SIDECAR_FIELDS[record["type"]])
        for record in (
            schema.sidecar_switch(True),
            schema.snapshot("e1", "c1", "t1", 3, [], replaces="c0", rules="r1"),
            schema.snapshot_failed("e1", "no"),
            schema.snapshot_skipped("e1", 6, 5),
            schema.restore(
                "e1",
                "b1",
                "c1",
                {"modified": 1},
                saved=None,
                paths=None,
                escaped=False,
                files=["a"],
                skipped=[],
                undo=False,
            ),
            schema.rebuilt_restore("b1", TS),
            schema.restored("b1"),
            schema.told("b1"),
            schema.rebased({"c0": "c1"}, TS),
            schema.pruned("e1", "c1", "snapshot", TS),
        )
    ),
    (schema.quarantined(3, b"{", "torn"), schema.QUARANTINE_FIELDS),
]


@pytest.mark.parametrize(("record", "table"), BUILT, ids=[r["type"] for r, _ in BUILT])
def test_each_builder_writes_only_the_fields_its_kind_declares(
    record: dict[str, Any], table: dict[str, fields.FieldSpec]
) -> None:
    """A meta, header, sidecar or quarantine record's builder writes no field its table does not
    declare, each of a declared type: the table is the kind's one declaration."""
    assert set(record) - {"type"} <= set(table), set(record) - {"type"} - set(table)
    assert fields.fields_error(record, table) is None
