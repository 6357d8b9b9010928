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


def stores_list() -> Path:
    """The stores convgit has written on this machine, one folder a line (``search
    --all-stores`` searches them)."""
    return data_dir() / "stores"


def remember_store(root: Path) -> None:
    """Add the store at ``root`` to ``stores_list`` when it is not there yet (one whole line,
    appended). A list that cannot be written only costs ``--all-stores`` that store."""
    line = os.fsencode(str(root.resolve())) + b"\n"
    listed = stores_list()
    try:
        if line in _lines(listed):
            return
        listed.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(listed, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line)
        finally:
            os.close(fd)
    except OSError:
        pass


def stores() -> list[Path]:
    """The stores of ``stores_list`` that still hold sessions, in the order they were added."""
    found: list[Path] = []
    for line in _lines(stores_list()):
        folder = Path(os.fsdecode(line.rstrip(b"\n")))
        if line.endswith(b"\n") and folder not in found and (folder / "sessions").is_dir():
            found.append(folder)
    return found


def _lines(path: Path) -> list[bytes]:
    try:
        with open(path, "rb") as f:
            return f.readlines()
    except OSError:
        return []
