"""convgit: a conversation tree beside git snapshots of the files. Branching is not rollback."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from convgit.errors import (
    AmbiguousRefError,
    ConvgitError,
    CorruptStoreError,
    HostileSnapshotError,
    InvalidEntryError,
    LeafMovedError,
    NotAGeminiSessionError,
    NotAPiSessionError,
    NotARolloutError,
    NotFoundError,
    NoWorkspaceError,
    RefusedError,
    RestoreBlockedError,
    RunInterruptedError,
    StoreLockedError,
    UnsupportedVersionError,
    UsageError,
    WorkspaceError,
)

if TYPE_CHECKING:
    from convgit.session import Session

__all__ = [
    "AmbiguousRefError",
    "ConvgitError",
    "CorruptStoreError",
    "HostileSnapshotError",
    "InvalidEntryError",
    "LeafMovedError",
    "NoWorkspaceError",
    "NotAGeminiSessionError",
    "NotAPiSessionError",
    "NotARolloutError",
    "NotFoundError",
    "RefusedError",
    "RestoreBlockedError",
    "RunInterruptedError",
    "Session",
    "StoreLockedError",
    "UnsupportedVersionError",
    "UsageError",
    "WorkspaceError",
]
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    """``Session`` is imported when first asked for: a hook that never needs it starts lean."""
    if name == "Session":
        from convgit.session import Session

        return Session
    raise AttributeError(f"module 'convgit' has no attribute {name!r}")
