"""The wire schema, declared once: every record kind of ``<sid>.jsonl`` (the header, entries and
meta records: ``conversation``, and as values ``values``), of ``<sid>.files.jsonl`` (the
sidecar: ``sidecar``) and of the quarantine files (``quarantine``); the builders writers use; and
``text_of`` / ``tool_calls_of``, the one reading of a message's content (``content``).

Records are pure values; identity and order are the store's business. On the wire a record is a
JSON object with camelCase keys; here an entry is also a frozen dataclass, its kind's one
declaration: its wire names and its field table (``TREE_FIELDS``, kept in ``entry_fields``) are
derived from it. The ``*_FIELDS`` tables are the schema ``kind_error`` checks raw records
against without building objects. Unknown
kinds and unknown fields are kept (``Unknown``, ``extra``) so a newer writer's records survive an
older reader. Callers import from here; the submodules split the schema by file.
"""

from typing import TYPE_CHECKING, Any

from convgit.schema.content import message_parts_error, text_of, tool_call_ids, tool_calls_of
from convgit.schema.conversation import (
    FORMAT_VERSION,
    HEADER_FIELDS,
    META_FIELDS,
    ROLES,
    agent_session,
    header,
    kind_error,
    label,
    leaf,
    redaction,
    session_name,
)
from convgit.schema.entry_fields import COMMON_TREE_FIELDS, TREE_FIELDS
from convgit.schema.fields import (
    ENTRY_ID_BYTES,
    SESSION_ID_BYTES,
    FieldSpec,
    fields_error,
    new_id,
    now,
)
from convgit.schema.quarantine import QUARANTINE_FIELDS, quarantined
from convgit.schema.sidecar import (
    SIDECAR_CHECKED,
    SIDECAR_FIELDS,
    pruned,
    rebased,
    rebuilt_restore,
    restore,
    restored,
    sidecar_record,
    sidecar_switch,
    snapshot,
    snapshot_failed,
    snapshot_skipped,
    told,
)

if TYPE_CHECKING:  # the entries as values: imported when first asked for (a hook never is)
    from convgit.schema.values import (
        ENTRY_CLASSES,
        BranchSummary,
        Compaction,
        Custom,
        Entry,
        Message,
        ModelChange,
        Note,
        SystemPrompt,
        ThinkingLevel,
        Unknown,
        entry_from_wire,
    )

__all__ = [
    "COMMON_TREE_FIELDS",
    "ENTRY_CLASSES",
    "ENTRY_ID_BYTES",
    "FORMAT_VERSION",
    "HEADER_FIELDS",
    "META_FIELDS",
    "QUARANTINE_FIELDS",
    "ROLES",
    "SESSION_ID_BYTES",
    "SIDECAR_CHECKED",
    "SIDECAR_FIELDS",
    "TREE_FIELDS",
    "BranchSummary",
    "Compaction",
    "Custom",
    "Entry",
    "FieldSpec",
    "Message",
    "ModelChange",
    "Note",
    "SystemPrompt",
    "ThinkingLevel",
    "Unknown",
    "agent_session",
    "entry_from_wire",
    "fields_error",
    "header",
    "kind_error",
    "label",
    "leaf",
    "message_parts_error",
    "new_id",
    "now",
    "pruned",
    "quarantined",
    "rebased",
    "rebuilt_restore",
    "redaction",
    "restore",
    "restored",
    "session_name",
    "sidecar_record",
    "sidecar_switch",
    "snapshot",
    "snapshot_failed",
    "snapshot_skipped",
    "text_of",
    "told",
    "tool_call_ids",
    "tool_calls_of",
]


_VALUES = frozenset(
    {
        "ENTRY_CLASSES",
        "BranchSummary",
        "Compaction",
        "Custom",
        "Entry",
        "Message",
        "ModelChange",
        "Note",
        "SystemPrompt",
        "ThinkingLevel",
        "Unknown",
        "entry_from_wire",
    }
)


def __getattr__(name: str) -> Any:
    """The entries as values (``values``), imported when first asked for: reading and appending
    records, as a hook does, never builds one, and their dataclasses cost every start."""
    if name in _VALUES:
        from convgit.schema import values

        return getattr(values, name)
    raise AttributeError(f"module 'convgit.schema' has no attribute {name!r}")
