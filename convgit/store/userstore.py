"""convgit's per-user folder (``$XDG_DATA_HOME/convgit``, else ``~/.local/share/convgit``):
the stores of folders outside git that an agent's hooks recorded (one per folder, made at its
first turn, so no ``.convgit`` is left in every folder the agent runs in), the backups of
settings files that belong to no project (the user's own), and what a hook could not write
in its store. Nothing here starts a process or imports more than the standard library."""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping
from pathlib import Path

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def data_dir(env: Mapping[str, str] = os.environ) -> Path:
    """The per-user folder of convgit."""
    base = env.get("XDG_DATA_HOME")
    if not base or not os.path.isabs(base):
        base = os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(base) / "convgit"


def key(path: Path) -> str:
    """A file name for ``path``: its last part, readable, and a hash of the whole."""
    name = _UNSAFE.sub("-", path.name).strip("-.")[:40] or "root"
    return f"{name}-{hashlib.sha1(str(path).encode()).hexdigest()[:12]}"


def folder_store(folder: Path) -> Path:
    """The store of ``folder`` (outside git) in the per-user folder."""
    return data_dir() / "folders" / key(folder)


def backups() -> Path:
    return data_dir() / "backups"
