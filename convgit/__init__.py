"""convgit: a conversation tree beside git snapshots of the files. Branching is not rollback."""

from convgit.errors import (
    AmbiguousRefError,
    ConvgitError,
    CorruptStoreError,
    InvalidEntryError,
    LeafMovedError,
    NotFoundError,
    NoWorkspaceError,
    RefusedError,
    RunInterruptedError,
    UsageError,
)
from convgit.session import Session

__all__ = [
    "AmbiguousRefError",
    "ConvgitError",
    "CorruptStoreError",
    "InvalidEntryError",
    "LeafMovedError",
    "NoWorkspaceError",
    "NotFoundError",
    "RefusedError",
    "RunInterruptedError",
    "Session",
    "UsageError",
]
__version__ = "0.1.0"
