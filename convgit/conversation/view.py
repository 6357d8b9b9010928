"""A session's conversation as values, for what shows entries (render, reports, the page)."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class SessionView:
    """The records by id, labels, the active leaf and the entries that have a snapshot."""

    id: str
    name: str | None
    entries: Mapping[str, dict[str, Any]]
    labels: Mapping[str, str]
    leaf: str | None
    snapshots: Collection[str]
