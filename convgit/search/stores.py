"""A search of one store, or of every store convgit has written on this machine (``--all-stores``:
the per-user list, ``convgit.store.userstore.stores``): each store's index brought up to date,
queried, and the results of all of them merged, newest first."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from convgit.base.errors import ConvgitError, NotFoundError
from convgit.search import index, query
from convgit.store import userstore
from convgit.store.location import StoreLocation, find_git, locate


@dataclass
class Searched:
    """What a search found, and what bringing each index up to date did."""

    results: list[query.Result] = field(default_factory=list)
    more: bool = False
    indexes: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self, terms: Sequence[str], filters: query.Filters) -> dict[str, Any]:
        return {
            "query": list(terms),
            "filters": filters.to_json(),
            "results": [r.to_json() for r in self.results],
            "more": self.more,
            "indexes": self.indexes,
        }


def every_store(here: StoreLocation | None) -> list[StoreLocation]:
    """The stores of the per-user list (with ``here`` first, when it has sessions)."""
    found = [] if here is None else [here]
    for root in userstore.stores():
        if here is None or root != here.root.resolve():
            found.append(_located(root))
    return found


def _located(root: Path) -> StoreLocation:
    """The store at ``root`` with its repository, as ``locate`` finds it from its folder."""
    folder = root.parent.parent if root.name == "convgit" and root.parent.name == ".git" else None
    if root.name == ".convgit":
        folder = root.parent
    if folder is not None:
        with suppress(ConvgitError, OSError):
            found = locate(folder)
            if found.root.resolve() == root:
                return found
    git = find_git(root.parent) if root.name == "convgit" else None
    return StoreLocation(
        root, git if git is not None and git.common_dir / "convgit" == root else None
    )


def search(
    locations: Sequence[StoreLocation],
    terms: Sequence[str],
    filters: query.Filters,
    *,
    sessions: Sequence[str] = (),
    file: Callable[[StoreLocation], str | None] | None = None,
    limit: int = 20,
    reindex: bool = False,
    many: bool = False,
) -> Searched:
    """Search ``locations``. ``sessions``: references (ids, prefixes, names) that ``filters``
    narrows to, resolved in each store (with ``many``, a store where none resolves is left
    out; with one store, a reference that names none is refused). ``file``: the path
    ``--file`` names, as each store's repository writes it."""
    searched = Searched()
    found: list[query.Result] = []
    for location in locations:
        try:
            _search_one(
                location, terms, filters, searched, found,
                sessions=sessions, file=file, limit=limit, reindex=reindex, many=many,
            )  # fmt: skip
        except (ConvgitError, OSError) as exc:
            if not many:
                raise
            why = exc.message if isinstance(exc, ConvgitError) else exc.strerror or str(exc)
            searched.indexes.append(  # one store that cannot be read leaves the others
                {"store": str(location.root), "rebuilt": False, "why": f"left out: {why}",
                 "sessions": 0, "entries": 0, "snapshots": 0}
            )  # fmt: skip
    found.sort(key=lambda r: (r.ts, r.order), reverse=True)
    searched.more = searched.more or len(found) > limit
    searched.results = found[:limit]
    if sessions and many and not searched.indexes:
        raise NotFoundError(f"No store has a session {sessions[0]!r}.", "convgit sessions")
    return searched


def _search_one(
    location: StoreLocation,
    terms: Sequence[str],
    filters: query.Filters,
    searched: Searched,
    found: list[query.Result],
    *,
    sessions: Sequence[str],
    file: Callable[[StoreLocation], str | None] | None,
    limit: int,
    reindex: bool,
    many: bool,
) -> None:
    """Search one store: its index brought up to date (said in ``searched.indexes``), its
    results added to ``found``."""
    chosen = _sessions(location, sessions, many)
    if chosen == ():
        return
    if not location.sessions.is_dir():
        return
    db, done = index.fresh(location, reindex=reindex)
    try:
        narrowed = query.Filters(
            agent=filters.agent,
            sessions=chosen,
            file=file(location) if file is not None else filters.file,
            since=filters.since,
            until=filters.until,
            role=filters.role,
            branch=filters.branch,
        )
        results, more = query.search(db, location, terms, narrowed, limit, store_option=many)
    finally:
        db.close()
    searched.indexes.append(
        {
            "store": str(location.root),
            "rebuilt": done.rebuilt,
            "why": done.why,
            "sessions": done.sessions,
            "entries": done.entries,
            "snapshots": done.snapshots,
        }
    )
    found += results
    searched.more = searched.more or more


def _sessions(location: StoreLocation, refs: Sequence[str], many: bool) -> tuple[str, ...] | None:
    """The ids ``refs`` name in ``location`` (None: no such filter; () with ``many``: none
    here)."""
    if not refs:
        return None
    from convgit.store.sessions import find_session  # here: reads every header to find names

    ids = []
    for ref in refs:
        try:
            ids.append(find_session(location, ref))
        except ConvgitError:
            if not many:
                raise
    return tuple(ids) if ids else ()


def path_in(location: StoreLocation, given: str, cwd: Path) -> str:
    """``given`` as the repository of ``location`` writes paths: relative to the directory the
    command runs in when that is inside its working tree (as git takes a path), else as given."""
    git = location.git
    top = git.worktree.resolve() if git is not None and git.worktree is not None else None
    if top is not None and (cwd == top or top in cwd.parents):
        joined = os.path.normpath(cwd / given)
        if joined == str(top) or joined.startswith(str(top) + os.sep):
            return Path(joined).relative_to(top).as_posix()
    return Path(os.path.normpath(given)).as_posix()
