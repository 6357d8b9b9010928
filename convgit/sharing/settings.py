"""What the user chose to share and where: the sessions shared one by one (``convgit share``,
kept in ``<store>/shared`` by ``convgit.store.shared``) and ``[share]`` of config.toml
(``remote``: the remote ``push`` and ``fetch`` use when none is named; ``on_push``: ``git push``
sends the shared sessions too, through a pre-push hook; ``notes``: the git notes of attribution
``push`` and ``fetch`` carry). ``[attribution]`` says what the git hooks write at a commit
(``git_ai``: a Git AI authorship log too; ``trailers``: the ``Convgit-`` trailers too)."""

from __future__ import annotations

from dataclasses import dataclass

from convgit.base.errors import CorruptStoreError
from convgit.git import names
from convgit.store.location import StoreLocation, config_table
from convgit.store.shared import set_shared, shared_ids

KEYS = ("remote", "on_push", "notes")
ATTRIBUTION_KEYS = ("git_ai", "trailers")


@dataclass(frozen=True)
class ShareSettings:
    """``[share]`` of config.toml, checked."""

    remote: str | None = None
    on_push: bool = False
    notes: tuple[str, ...] | None = None  # the names of ``names.NOTES``; None: not set

    @classmethod
    def of(cls, location: StoreLocation) -> ShareSettings:
        given = config_table(location, "share", KEYS)
        where = f"edit {location.root / 'config.toml'}"
        notes = given.get("notes")
        if notes is not None and (
            not isinstance(notes, list) or any(n not in names.NOTES for n in notes)
        ):
            raise CorruptStoreError(
                f"config.toml sets [share] notes to {notes!r}; it must be a list of"
                f" {' and '.join(repr(n) for n in names.NOTES)}.",
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
        chosen = None if notes is None else tuple(notes)
        return cls(remote.strip() if remote else None, on_push, chosen)

    def note_refs(self, location: StoreLocation) -> list[str]:
        """The git note refs ``push`` and ``fetch`` carry: ``[share] notes``, else those the
        hooks write (Agent Trace's, and Git AI's with ``[attribution] git_ai = true``)."""
        if self.notes is not None:
            chosen = list(self.notes)
        else:
            chosen = ["agent-trace", *(["ai"] if AttributionSettings.of(location).git_ai else [])]
        return [names.NOTES[name] for name in names.NOTES if name in chosen]


@dataclass(frozen=True)
class AttributionSettings:
    """``[attribution]`` of config.toml, checked: what the git hooks write at a commit beside
    the Agent Trace record (``git_ai``: a Git AI authorship log under ``refs/notes/ai``;
    ``trailers``: the ``Convgit-`` trailers in the message)."""

    git_ai: bool = False
    trailers: bool = False

    @classmethod
    def of(cls, location: StoreLocation) -> AttributionSettings:
        given = config_table(location, "attribution", ATTRIBUTION_KEYS)
        for key in ATTRIBUTION_KEYS:
            if type(given.get(key, False)) is not bool:
                raise CorruptStoreError(
                    f"config.toml sets [attribution] {key} to {given[key]!r}; it must be true"
                    " or false.",
                    f"edit {location.root / 'config.toml'}",
                )
        return cls(given.get("git_ai", False), given.get("trailers", False))


__all__ = ["KEYS", "AttributionSettings", "ShareSettings", "set_shared", "shared_ids"]
