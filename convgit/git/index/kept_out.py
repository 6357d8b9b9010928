"""What no snapshot holds and no restore touches: convgit's own store when it lives inside the
working tree (under any name), and any folder named ``.convgit``."""

from __future__ import annotations

from convgit.git.plumbing.paths import folders_above

STORE_NAME = ".convgit"  # a folder of this name is a convgit store, wherever it is
STORE_REASON = "convgit's store"


class KeptOut:
    """The folders no snapshot holds and no restore touches: convgit's store inside the
    working tree (``add``), and any folder named ``.convgit``."""

    def __init__(self) -> None:
        self.folders: tuple[bytes, ...] = ()

    def add(self, folder: bytes) -> None:
        self.folders = (*self.folders, folder)

    def above(self, path: bytes) -> bytes | None:
        """The kept-out folder (relative to the root) that holds ``path``, if any."""
        for folder in self.folders:
            if path.startswith(folder + b"/"):
                return folder
        if STORE_NAME.encode() in path:
            for folder in folders_above(path):
                if folder.rpartition(b"/")[2] == STORE_NAME.encode():
                    return folder
        return None
