"""What the user chose to share and where: the sessions shared one by one (``convgit share``,
kept in ``<store>/shared`` by ``convgit.store.shared``) and ``[share]`` of config.toml
(``remote``: the remote ``push`` and ``fetch`` use when none is named; ``on_push``: ``git push``
sends the shared sessions too, through a pre-push hook)."""

from __future__ import annotations

from dataclasses import dataclass

from convgit.base.errors import CorruptStoreError
from convgit.store.location import StoreLocation, config_table
from convgit.store.shared import set_shared, shared_ids

KEYS = ("remote", "on_push")


@dataclass(frozen=True)
class ShareSettings:
    """``[share]`` of config.toml, checked."""

    remote: str | None = None
    on_push: bool = False

    @classmethod
    def of(cls, location: StoreLocation) -> ShareSettings:
        given = config_table(location, "share", KEYS)
        where = f"edit {location.root / 'config.toml'}"
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


__all__ = ["KEYS", "ShareSettings", "set_shared", "shared_ids"]
