"""``Conversation``: the conversation track of one session, its file and the index read from it
(``tree``), and the one way records are written to it (``write``).

Promises kept here:
* a write builds on the leaf this Conversation last saw (``built_on``); if another process
  moved it since, a write whose records build on the leaf is refused (``LeafMovedError``)
  unless forced;
* a reading method refuses a file fsck rejects (``check``), as reading commands do.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from convgit import schema
from convgit.base.errors import LeafMovedError, UnsupportedVersionError
from convgit.conversation import appending, tree
from convgit.store import load, sessions

if TYPE_CHECKING:
    from convgit.conversation import replay
    from convgit.schema import Entry
    from convgit.store.location import StoreLocation


class Conversation:
    """One session's conversation file, its index (``tree``) and the leaf writes build on."""

    def __init__(self, location: StoreLocation, sid: str, *, fsync: bool = False) -> None:
        self.location = location
        self.id = sid
        self.file = sessions.session_file(location, sid, fsync=fsync)
        self.tree = tree.Tree()
        self.built_on: str | None = None  # the leaf the next append builds on

    def reload(self) -> None:
        """Read the whole file again; the leaf writes build on becomes the active one."""
        self.file, self.tree = load.session_again(self.file, self.id)
        self.built_on = self.tree.leaf

    # -- reading --------------------------------------------------------------------------------

    @property
    def name(self) -> str | None:
        """The session's display name (``moves.rename`` sets it)."""
        return self.tree.name

    @property
    def leaf(self) -> str | None:
        return self.tree.leaf

    def check(self) -> None:
        """Refuse a session whose file fsck rejects (CorruptStoreError), as reading commands do."""
        self.tree.check(f"Session {self.id}")

    def resolve(self, ref: str) -> str:
        self.check()
        return self.tree.resolve(ref)

    def entry(self, ref: str) -> Entry:
        return schema.entry_from_wire(self.tree.entries[self.resolve(ref)])

    def path(self, ref: str | None = None) -> list[Entry]:
        """The entries from the root to ``ref`` (default: the active leaf)."""
        return [schema.entry_from_wire(self.tree.entries[i]) for i in self.path_ids(ref)]

    def path_ids(self, ref: str | None = None) -> list[str]:
        """The ids from the root to ``ref`` (default: the active leaf)."""
        self.check()
        return self.tree.path(None if ref is None else self.resolve(ref))

    def all_entries(self) -> list[Entry]:
        """Every entry, in file order."""
        self.check()
        return [schema.entry_from_wire(r) for r in self.tree.entries.values()]

    def context(self, ref: str | None = None) -> replay.Context:
        """What the model is sent at ``ref`` (default: the active leaf); see ``replay``."""
        from convgit.conversation import replay

        self.check()
        return replay.replay(self.tree, None if ref is None else self.resolve(ref))

    def record(self, ident: str) -> dict[str, Any]:
        """Entry ``ident`` as written in the file (a copy), with its ``label`` when it has one."""
        record = dict(self.tree.entries[ident])
        label = self.tree.labels.get(ident)
        if label is not None:
            record["label"] = label
        return record

    def records(self, ref: str | None = None) -> list[dict[str, Any]]:
        """The records from the root to ``ref`` (default: the active leaf), as written."""
        return [self.tree.entries[i] for i in self.path_ids(ref)]

    def children(self) -> dict[str | None, list[str]]:
        """Each entry's children (the roots under ``None``), in file order."""
        return self.tree.children

    def header(self) -> dict[str, Any]:
        """The session file's header record ({} for a file without one)."""
        return self.tree.header or {}

    def kept(self) -> dict[str, dict[str, Any]]:
        """An agent's own records kept beside the entries, by key, for its exporter."""
        return self.tree.kept

    def labelled(self, name: str) -> list[str]:
        """The entries labelled ``name`` (one, unless an older writer labelled several)."""
        return [ident for ident, label in self.tree.labels.items() if label == name]

    # -- writing --------------------------------------------------------------------------------

    def write(
        self,
        build: Callable[[], list[dict[str, Any]]],
        *,
        builds_on_leaf: bool,
        force: bool = False,
        checked: bool = False,
    ) -> list[dict[str, Any]]:
        """Under the lock: take in others' lines, check the leaf (when the records ``build``
        makes build on it), append them and return them. ``checked``: ``build`` refuses any
        record that ``schema.kind_error`` finds wrong, so the tree does not check their fields
        again."""
        found = self.tree
        self.check()
        if found.read_from_version is not None:
            raise UnsupportedVersionError(
                f"Session {self.id} is in format v{found.read_from_version}, which this convgit"
                f" reads but does not append to (it writes v{schema.FORMAT_VERSION}); nothing"
                " was written.",
                "fork it into a new session (`convgit fork REF --new-session`) to go on",
            )
        with self.file.appending() as appender:
            news = appender.news
            if news.records:
                found.add_records(news.records, news.first)
                found.finish(since=news.first)
                self.check()
            if builds_on_leaf and not force and found.leaf != self.built_on:
                raise LeafMovedError(
                    f"Another process moved the active leaf from {self.built_on} to "
                    f"{found.leaf} since this session was read.",
                    "refresh (reopen) and try again, or append anyway with force",
                )
            records = build()
            number = self.file.lines + 1
            appender.write(records)
        found.add_records(records, number, checked=checked)
        self.built_on = found.leaf
        return records

    def new_entry(
        self,
        kind: str,
        parent: str | None,
        made: Iterable[dict[str, Any]] = (),
        **fields: Any,
    ) -> dict[str, Any]:
        """A record of ``kind`` under ``parent`` with the time now and an id fresh in the
        session and among ``made`` (the records of the same write)."""
        record: dict[str, Any] = {
            "type": kind,
            "id": appending.fresh_id(self.tree.entries, {r["id"]: r for r in made}),
            "parentId": parent,
            "ts": schema.now(),
        }
        record.update(fields)
        return record
