"""What the user chose to share and where: the sessions shared one by one (``convgit share``,
kept in ``<store>/shared`` by ``convgit.store.shared``) and ``[share]`` of config.toml
(``remote``: the remote ``push`` and ``fetch`` use when none is named; ``on_push``: ``git push``
sends the shared sessions too, through a pre-push hook; ``notes``: the git notes of attribution
``push`` and ``fetch`` carry). ``[attribution]`` says what the git hooks write at a commit
(``git_ai``: a Git AI authorship log too; ``trailers``: the ``Convgit-`` trailers too)."""

from __future__ import annotations

from dataclasses import dataclass

from convgit.git import names
from convgit.store import config
from convgit.store.location import StoreLocation
from convgit.store.shared import set_shared, shared_ids


@dataclass(frozen=True)
class ShareSettings:
    """``[share]`` of config.toml, checked (``config.load``)."""

    remote: str | None
    on_push: bool
    notes: tuple[str, ...] | None  # the names of ``names.NOTES``; None: not set

    @classmethod
    def of(cls, location: StoreLocation) -> ShareSettings:
        given = config.load(location)
        remote, notes = given.value("share", "remote"), given.value("share", "notes")
        return cls(
            remote.strip() if remote else None,
            given.value("share", "on_push"),
            None if notes is None else tuple(notes),
        )

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

    git_ai: bool
    trailers: bool

    @classmethod
    def of(cls, location: StoreLocation) -> AttributionSettings:
        given = config.load(location)
        return cls(given.value("attribution", "git_ai"), given.value("attribution", "trailers"))


__all__ = ["AttributionSettings", "ShareSettings", "set_shared", "shared_ids"]
