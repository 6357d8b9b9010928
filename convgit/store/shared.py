"""The sessions shared one by one (``convgit share``): ``<store>/shared``, one id a line. Read
here, in the store, because ``gc`` keeps a shared session's snapshots until a remote has them;
``convgit.sharing`` writes it."""

from __future__ import annotations

import os

from convgit.store.location import StoreLocation


def _listed(location: StoreLocation) -> set[str]:
    try:
        with open(location.root / "shared", encoding="utf-8") as read:
            return {line.strip() for line in read if line.strip()}
    except FileNotFoundError:
        return set()


def shared_ids(location: StoreLocation) -> list[str]:
    """The sessions shared, sorted (a session gone from the store is left out)."""
    return sorted(sid for sid in _listed(location) if location.session_path(sid).exists())


def set_shared(location: StoreLocation, sid: str, shared: bool) -> bool:
    """Share ``sid`` (or stop sharing it); False when it already was (or was not)."""
    listed = _listed(location)
    if (sid in listed) == shared:
        return False
    listed = listed | {sid} if shared else listed - {sid}
    location.root.mkdir(parents=True, exist_ok=True)
    path = location.root / "shared"
    temporary = path.with_name("shared.tmp")
    temporary.write_text("".join(f"{s}\n" for s in sorted(listed)), encoding="utf-8")
    os.replace(temporary, path)
    return True
