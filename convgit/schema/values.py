"""The entries of the tree as values: a frozen dataclass per kind this version knows, ``Unknown``
for the others, and ``entry_from_wire`` from a validated raw record."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from convgit.schema.content import text_of, tool_calls_of


@dataclass(frozen=True)
class Entry:
    """A tree entry. ``extra`` keeps unknown fields so rewriting never loses them."""

    kind: ClassVar[str] = ""
    _wire: ClassVar[dict[str, str]] = {}  # python attribute -> wire key, for kind fields

    id: str
    parent_id: str | None
    ts: str
    extra: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def type(self) -> str:
        return self.kind

    def to_wire(self) -> dict[str, Any]:
        record: dict[str, Any] = {
            "type": self.type,
            "id": self.id,
            "parentId": self.parent_id,
            "ts": self.ts,
        }
        for attr, key in self._wire.items():
            value = getattr(self, attr)
            if value is not None or key in _NULLABLE_REQUIRED:
                record[key] = value
        record.update(self.extra)
        return record


_NULLABLE_REQUIRED = {"firstKeptId", "label", "parentId", "text"}


@dataclass(frozen=True)
class Message(Entry):
    kind: ClassVar[str] = "message"
    _wire: ClassVar[dict[str, str]] = {
        "role": "role",
        "content": "content",
        "tool_call_id": "toolCallId",
        "is_error": "isError",
    }
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
    _wire: ClassVar[dict[str, str]] = {"provider": "provider", "model": "model"}
    provider: str = ""
    model: str = ""


@dataclass(frozen=True)
class ThinkingLevel(Entry):
    kind: ClassVar[str] = "thinking"
    _wire: ClassVar[dict[str, str]] = {"level": "level"}
    level: str | int | None = None


@dataclass(frozen=True)
class Compaction(Entry):
    kind: ClassVar[str] = "compaction"
    _wire: ClassVar[dict[str, str]] = {"summary": "summary", "first_kept_id": "firstKeptId"}
    summary: str = ""
    first_kept_id: str | None = None


@dataclass(frozen=True)
class BranchSummary(Entry):
    kind: ClassVar[str] = "branch_summary"
    _wire: ClassVar[dict[str, str]] = {"from_id": "fromId", "summary": "summary"}
    from_id: str = ""
    summary: str = ""


@dataclass(frozen=True)
class Note(Entry):
    kind: ClassVar[str] = "note"
    _wire: ClassVar[dict[str, str]] = {"text": "text", "source": "source"}
    text: str = ""
    source: str | None = None


@dataclass(frozen=True)
class SystemPrompt(Entry):
    """The system prompt the model is sent from this entry on down its path (None: none)."""

    kind: ClassVar[str] = "system"
    _wire: ClassVar[dict[str, str]] = {"text": "text"}
    text: str | None = None


@dataclass(frozen=True)
class Custom(Entry):
    kind: ClassVar[str] = "custom"
    _wire: ClassVar[dict[str, str]] = {"custom_kind": "kind", "data": "data"}
    custom_kind: str = ""
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


def entry_from_wire(record: dict[str, Any]) -> Entry:
    """Build the value for a validated raw tree record."""
    cls = ENTRY_CLASSES.get(record["type"])
    base = {"id", "parentId", "ts", "type"}
    if cls is None:
        extra = {k: v for k, v in record.items() if k not in base}
        return Unknown(record["id"], record["parentId"], record["ts"], extra, record["type"])
    known = base | set(cls._wire.values())
    kwargs = {attr: record.get(key) for attr, key in cls._wire.items() if key in record}
    extra = {k: v for k, v in record.items() if k not in known}
    return cls(record["id"], record["parentId"], record["ts"], extra, **kwargs)
