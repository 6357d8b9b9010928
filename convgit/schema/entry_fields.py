"""The field tables of the entries of the tree, derived from their declarations
(``convgit.schema.values``) by ``values.field_tables_source``: do not edit; after a
change to an entry's dataclass, write this file again with ``python -m
convgit.schema.values``. tests/unit/test_schema_declared.py checks it."""

from convgit.schema.fields import ANY, FieldSpec

COMMON_TREE_FIELDS: dict[str, FieldSpec] = {
    "id": ((str,), True),
    "parentId": ((str, type(None)), True),
    "ts": ((str,), True),
}
TREE_FIELDS: dict[str, dict[str, FieldSpec]] = {
    "message": {
        "role": ((str,), True),
        "content": ((str, list), True),
        "toolCallId": ((str,), False),
        "isError": ((bool,), False),
    },
    "model": {"provider": ((str,), True), "model": ((str,), True)},
    "thinking": {"level": ((str, int, type(None)), True)},
    "system": {"text": ((str, type(None)), True)},
    "compaction": {"summary": ((str,), True), "firstKeptId": ((str, type(None)), True)},
    "branch_summary": {"fromId": ((str,), True), "summary": ((str,), True)},
    "note": {"text": ((str,), True), "source": ((str,), False), "saved": ((str,), False)},
    "custom": {"kind": ((str,), True), "data": (ANY, False)},
}
