"""A session's conversation as values, for what shows entries (render, reports, the page)."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from functools import cached_property
from typing import Any

from convgit.base.valueclass import valueclass
from convgit.conversation.shortids import ShortIds


@valueclass(frozen=True)
class SessionView:
    """The records by id, labels, the active leaf and the entries that have a snapshot."""

    id: str
    name: str | None
    entries: Mapping[str, dict[str, Any]]
    labels: Mapping[str, str]
    leaf: str | None
    snapshots: Collection[str]

    @cached_property
    def _short_ids(self) -> ShortIds:
        return ShortIds(self.entries)

    def short_id(self, ident: str) -> str:
        """How ``ident`` is shown where people read: its short id among this session's
        entries (``ShortIds``: 8 characters, more where another id shares them)."""
        return self._short_ids.short(ident)
