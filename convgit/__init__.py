"""convgit: a conversation tree beside git snapshots of the files. Branching is not rollback."""

from __future__ import annotations

from convgit.base.errors import (
    AccessDeniedError,
    AmbiguousRefError,
    ConvgitError,
    CorruptStoreError,
    HostileSnapshotError,
    InvalidEntryError,
    LeafMovedError,
    NotACopilotSessionError,
    NotAGeminiSessionError,
    NotAnOpenCodeSessionError,
    NotAPiSessionError,
    NotAQwenSessionError,
    NotARolloutError,
    NotFoundError,
    NoWorkspaceError,
    RefusedError,
    RestoreBlockedError,
    RestoreIncompleteError,
    RunInterruptedError,
    SnapshotSkippedError,
    StoppedError,
    StoreLockedError,
    UnjudgeableRepositoryError,
    UnsupportedVersionError,
    UsageError,
    WorkspaceError,
)

# typing is not imported at run time: a hook's thin client (``convgit.agents.live.client``)
# starts with this package, and typing with what it imports would double its start
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from convgit.session import Session
    from convgit.store.sessions import list_sessions

__all__ = [
    "AccessDeniedError",
    "AmbiguousRefError",
    "ConvgitError",
    "CorruptStoreError",
    "HostileSnapshotError",
    "InvalidEntryError",
    "LeafMovedError",
    "NoWorkspaceError",
    "NotACopilotSessionError",
    "NotAGeminiSessionError",
    "NotAPiSessionError",
    "NotAQwenSessionError",
    "NotARolloutError",
    "NotAnOpenCodeSessionError",
    "NotFoundError",
    "RefusedError",
    "RestoreBlockedError",
    "RestoreIncompleteError",
    "RunInterruptedError",
    "Session",
    "SnapshotSkippedError",
    "StoppedError",
    "StoreLockedError",
    "UnjudgeableRepositoryError",
    "UnsupportedVersionError",
    "UsageError",
    "WorkspaceError",
    "list_sessions",
]
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    """``Session`` and ``list_sessions`` are imported when first asked for: a hook that never
    needs them starts lean."""
    if name == "Session":
        from convgit.session import Session

        return Session
    if name == "list_sessions":
        from convgit.store.sessions import list_sessions

        return list_sessions
    raise AttributeError(f"module 'convgit' has no attribute {name!r}")
