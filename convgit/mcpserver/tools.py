"""The MCP server's tools, as plain functions: each reads the store (nothing is written: no
entry, ref or file of the working tree) and answers in text that says both tracks, where the
conversation is (the context) and what the files are (the snapshots). The server
(``convgit.mcpserver.server``) hands them to the SDK; a ``ConvgitError`` is the tool's error,
in its one sentence."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from convgit.base.errors import ConvgitError, NotFoundError, UsageError
from convgit.session import Session

MAX_BYTES = 100_000  # of a diff or a file a tool returns; the rest is cut, and said so
MAX_RESULTS = 50


@dataclass(frozen=True)
class Place:
    """Where the server runs: the folder it was started in and the store given (if any)."""

    directory: Path
    store: Path | None = None

    def session(self, ref: str | None) -> Session:
        return Session.open(self.directory, session=ref or None, store_dir=self.store)

    def location(self) -> Any:
        from convgit.store.location import locate

        return locate(self.directory, self.store)


def list_sessions(place: Place) -> str:
    """Every session of the store: id, name, agent, entries, when it started."""
    from convgit.store.sessions import rows

    found = rows(place.location())
    if not found:
        return "no sessions in this store"
    lines = []
    current = None
    for row in found:
        name = f" [{row['name']}]" if row.get("name") else ""
        mark = " (current)" if row.get("current") else ""
        agent = row.get("agent") or "convgit"
        lines.append(
            f"{row['id']}{name}{mark}: {agent}, {row['entries']} entries, started"
            f" {str(row.get('created') or '?')[:16].replace('T', ' ')}, leaf {row.get('leaf')}"
        )
        current = row["id"] if row.get("current") else current
    lines.append(
        "context: each session has its own; files: a session with snapshots has one per turn"
        + (f"; the current session is {current}" if current else "")
    )
    return "\n".join(lines)


def search(
    place: Place,
    words: list[str],
    *,
    agent: str | None = None,
    session: str | None = None,
    file: str | None = None,
    since: str | None = None,
    until: str | None = None,
    role: str | None = None,
    branch: bool = False,
    limit: int = 20,
    all_stores: bool = False,
) -> str:
    """The entries whose words hold every one of ``words`` (see ``convgit search``)."""
    from convgit.search import query, stores, texts, times

    if role is not None and role not in texts.KINDS:
        raise UsageError(f"role takes {', '.join(texts.KINDS)}, not {role!r}.")
    if not words and not (agent or session or file or since or until or role):
        raise UsageError("Give the words to search for, or a filter (file, agent, since...).")
    filters = query.Filters(
        agent=agent,
        since=None if since is None else times.moment(since, "since"),
        until=None if until is None else times.moment(until, "until", until=True),
        role=role,
        branch=branch,
    )
    here = place.location()
    cwd = place.directory.resolve()
    found = stores.search(
        stores.every_store(here) if all_stores else [here],
        words,
        filters,
        sessions=[session] if session else [],
        file=None if file is None else lambda location: stores.path_in(location, file, cwd),
        limit=max(1, min(limit, MAX_RESULTS)),
        many=all_stores,
    )
    if not found.results:
        return "nothing found"
    lines = []
    for r in found.results:
        name = f" [{r.name}]" if r.name else ""
        where = {"label": "its label: ", "name": "its session's name: "}.get(r.found_in, "")
        shown = r.label if r.found_in == "label" else r.name if r.found_in == "name" else r.snippet
        lines.append(
            f"entry {r.short} of session {r.short_session}{name} ({r.agent or 'convgit'},"
            f" {r.ts[:16].replace('T', ' ')}, {r.kind or 'entry'}): {where}{shown}"
        )
        if r.files is None:
            files = "files: no snapshot at this entry"
        elif r.files:
            files = "files: its snapshot changed " + ", ".join(r.files[:20])
            files += f" and {len(r.files) - 20} more" if len(r.files) > 20 else ""
        else:
            files = "files: its snapshot changed nothing known"
        lines.append(f"  {files}; show it: show_entry(entry={r.short!r}, session={r.session!r})")
    if found.more:
        lines.append(f"more were found: ask with a larger limit (now {limit}) or narrow it")
    lines.append(
        "context: each entry is in its session's tree, where the active path is what the model"
        " is sent next (show_entry says whether an entry is on it; branch=true keeps only those)"
    )
    return "\n".join(lines)


def show_entry(place: Place, entry: str, session: str | None = None) -> str:
    """One entry in full, where it is in the conversation, and its files."""
    from convgit.text import readable

    s = place.session(session)
    ident = s.conversation.resolve(entry)
    snap = s.track.sidecar.snapshots.get(ident)
    parent = s.conversation.tree.entries[ident]["parentId"]
    previous = s.track.nearest_snapshot(parent) if snap is not None and parent else None
    gone = s.track.sidecar.let_go.get(ident)
    lines = readable.entry_lines(
        s.view(),
        ident,
        snapshot=snap,
        previous=previous,
        children=s.conversation.children().get(ident, []),
        let_go=gone.day if gone is not None and snap is None else None,
    )
    return "\n".join([f"session {s.id}", *lines, *_both_tracks(s, ident)])


def tree_around(
    place: Place, entry: str | None = None, session: str | None = None, above: int = 10
) -> str:
    """The path down to an entry (its last ``above`` entries) and the branches below it."""
    from convgit.text import render

    s = place.session(session)
    view = s.view()
    ident = s.conversation.resolve(entry or "@")
    path = s.conversation.path_ids(ident)
    active = set(s.conversation.path_ids())
    children = s.conversation.children()
    shown = path[-max(1, above) :]
    lines = [f"session {s.id}: the path to {view.short_id(ident)}"]
    if len(path) > len(shown):
        lines.append(f"  ({len(path) - len(shown)} entries above)")
    for node in shown:
        lines.append("  " + render.entry_line(view, node, on_path=node in active).plain)
    below = children.get(ident, [])
    if below:
        lines.append(f"below {view.short_id(ident)} ({len(below)} branches):")
        for child in below:
            leaf = s.conversation.tree.newest_leaf(child)
            line = render.entry_line(view, child, on_path=child in active).plain
            deep = f" … down to {view.short_id(leaf)}" if leaf != child else ""
            lines.append(f"  {line}{deep}")
    lines.append("(◆: a snapshot of the files; ← context: the active leaf)")
    return "\n".join([*lines, *_both_tracks(s, ident)])


def diff(
    place: Place, from_entry: str, to_entry: str | None = None, session: str | None = None
) -> str:
    """git's diff from one entry's files (its snapshot) to another's, or to the files now."""
    s = place.session(session)
    shown, changes = s.snapshots.git_diff(from_entry, to_entry, patch=True)
    text = _cut(shown).decode("utf-8", "replace")
    head = (
        f"files: from the snapshot of {from_entry} to "
        + (f"the snapshot of {to_entry}" if to_entry else "the working tree now")
        + f": {len(changes)} file(s) differ"
    )
    alone = [c.path for c in changes if c.status == "left alone"]
    if alone:
        head += f"; left alone (one side does not know them): {', '.join(alone)}"
    context = "context: a diff changes nothing; the conversation stays where it is"
    return "\n".join([head, context, "", text or "(no difference)"])


def file_at(place: Place, path: str, entry: str = "@", session: str | None = None) -> str:
    """A file's content as an entry's snapshot (or the nearest above it) holds it."""
    from convgit.git.restore.plan import relative_paths

    s = place.session(session)
    ident = s.conversation.resolve(entry)
    snap = s.track.nearest_snapshot(ident)
    if snap is None:
        raise NotFoundError(f"No snapshot holds the files at {entry} or above it.")
    (wanted,) = relative_paths([path])
    ws = s.track.workspace()
    try:
        data = ws.git("cat-file", "blob", f"{snap.tree_id}:{wanted}")
    except ConvgitError:
        raise NotFoundError(
            f"The snapshot of {snap.entry} holds no file {wanted}.",
            f"diff(from_entry={snap.entry!r}) lists its files",
        ) from None
    try:
        same = (ws.root / wanted).read_bytes() == data
        here = "the same now" if same else "different now"
    except OSError:
        here = "absent from the working tree now"
    whose = "its own" if snap.entry == ident else f"the nearest above it, {snap.entry}'s"
    head = f"files: {wanted} as {whose} snapshot holds it ({len(data)} bytes; {here})"
    try:
        body = _cut(data).decode("utf-8")
    except UnicodeDecodeError:
        body = f"(binary: {len(data)} bytes)"
    return "\n".join([head, *_context(s, ident), "", body])


def restore_dry_run(
    place: Place, entry: str, session: str | None = None, paths: list[str] | None = None
) -> str:
    """What `convgit restore ENTRY` would change in the working tree; nothing is changed."""
    from convgit.text import render

    s = place.session(session)
    result = s.restoring.restore(entry, paths=paths or None, dry_run=True)
    lines = render.restore_words(result)
    lines.append(
        f"nothing was changed (a dry run); `convgit restore {entry}` would change the files,"
        " saving them first so that `convgit restore --undo` brings them back"
    )
    lines.append("context: a restore never moves the conversation; it tells the model in a note")
    return "\n".join(lines)


def _both_tracks(s: Session, ident: str) -> list[str]:
    return [*_context(s, ident), *_files(s, ident)]


def _context(s: Session, ident: str) -> list[str]:
    leaf = s.conversation.tree.leaf
    short = s.view().short_id
    if ident == leaf:
        return [f"context: {short(ident)} is the active leaf (what the model is sent next)"]
    if ident in set(s.conversation.path_ids()):
        above = f"above the leaf {short(str(leaf))}"
        return [f"context: {short(ident)} is on the active path, {above}"]
    return [f"context: {short(ident)} is on a branch; the active leaf is {short(str(leaf))}"]


def _files(s: Session, ident: str) -> list[str]:
    snap = s.track.nearest_snapshot(ident)
    short = s.view().short_id
    if snap is None:
        return ["files: no snapshot at or above this entry"]
    whose = "its own snapshot" if snap.entry == ident else f"the snapshot of {short(snap.entry)}"
    return [f"files: at this entry, {whose} (commit {snap.commit[:12]}, {snap.files} files)"]


def _cut(data: bytes) -> bytes:
    if len(data) <= MAX_BYTES:
        return data
    return data[:MAX_BYTES] + f"\n… cut: {len(data) - MAX_BYTES} more bytes".encode()
