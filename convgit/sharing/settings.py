"""What the user chose to share and where: the sessions shared one by one (``convgit share``,
kept in ``<store>/shared``, one id a line) and ``[share]`` of config.toml (``remote``: the remote
``push`` and ``fetch`` use when none is named; ``on_push``: ``git push`` sends the shared
sessions too, through a pre-push hook)."""

from __future__ import annotations

import os
from dataclasses import dataclass

from convgit.base.errors import CorruptStoreError
from convgit.store.location import StoreLocation, load_config

KEYS = ("remote", "on_push")


@dataclass(frozen=True)
class ShareSettings:
    """``[share]`` of config.toml, checked."""

    remote: str | None = None
    on_push: bool = False

    @classmethod
    def of(cls, location: StoreLocation) -> ShareSettings:
        given = load_config(location).get("share", {})
        where = f"edit {location.root / 'config.toml'}"
        if not isinstance(given, dict):
            raise CorruptStoreError("config.toml's [share] is not a table.", where)
        unknown = sorted(set(given) - set(KEYS))
        if unknown:
            raise CorruptStoreError(
                f"config.toml's [share] has {unknown[0]!r}, which is no setting of it"
                f" (they are {', '.join(KEYS)}).",
                where,
            )
        remote = given.get("remote")
        if remote is not None and (not isinstance(remote, str) or not remote.strip()):
            raise CorruptStoreError(
                f"config.toml sets [share] remote to {remote!r}; it must be a remote's name.", where
            )
        on_push = given.get("on_push", False)
        if type(on_push) is not bool:
            raise CorruptStoreError(
                f"config.toml sets [share] on_push to {on_push!r}; it must be true or false.",
                where,
            )
        return cls(remote.strip() if remote else None, on_push)


def _path(location: StoreLocation) -> str:
    return str(location.root / "shared")


def shared_ids(location: StoreLocation) -> list[str]:
    """The sessions shared, sorted (a session gone from the store is left out)."""
    try:
        with open(_path(location), encoding="utf-8") as read:
            listed = {line.strip() for line in read if line.strip()}
    except FileNotFoundError:
        return []
    return sorted(sid for sid in listed if location.session_path(sid).exists())


def set_shared(location: StoreLocation, sid: str, shared: bool) -> bool:
    """Share ``sid`` (or stop sharing it); False when it already was (or was not)."""
    try:
        with open(_path(location), encoding="utf-8") as read:
            listed = {line.strip() for line in read if line.strip()}
    except FileNotFoundError:
        listed = set()
    if (sid in listed) == shared:
        return False
    listed = listed | {sid} if shared else listed - {sid}
    location.root.mkdir(parents=True, exist_ok=True)
    temporary = _path(location) + ".tmp"
    with open(temporary, "w", encoding="utf-8") as written:
        written.write("".join(f"{s}\n" for s in sorted(listed)))
    os.replace(temporary, _path(location))
    return True
