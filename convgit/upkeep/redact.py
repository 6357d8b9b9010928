"""Redaction: the one operation allowed to rewrite history. Every match of a pattern becomes
``[redacted]`` in a session's entries (text, tool input and output, summaries, an agent's kept
records), keeping every id, parent and the tree's shape, and in every file the store keeps of
the session: its quarantine, backups repair made, the snapshot records, its page (removed: it is
written again on demand) and the logs of side-by-side runs; the store's search index is deleted
(the next search rebuilds it from the files). No copy of the matched text is kept, and a
``redaction`` record says what was rewritten and when, never the text.

With ``snapshots``, the commits under ``refs/convgit/<sid>/`` (snapshots and saved states) whose
files hold a match are rewritten with those files scrubbed (``gitrewrite``), their refs moved,
the snapshot records pointed at the new commits, and the session's private index dropped; the
old objects stay in git until ``git gc --prune=now``.

Each file is written whole to a new file and renamed over the old one, under the session's locks
(the workspace's, the session file's and the snapshot records'), so a reader sees the old file or
the new one, and a writer that read the old one is told the file was replaced.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from convgit import schema
from convgit.base import codec
from convgit.base.errors import NoWorkspaceError, RefusedError
from convgit.conversation import tree
from convgit.git import names
from convgit.search import index as searchindex
from convgit.session import scrub
from convgit.store import jsonl

if TYPE_CHECKING:
    from convgit.session import Session
    from convgit.workspace.rewriting import Rewritten


@dataclass
class Found:
    """What redaction changed (or would change) in one session."""

    session: str
    entries: dict[str, list[str]] = field(default_factory=dict)  # entry -> fields rewritten
    lines: list[int] = field(default_factory=list)  # other lines of the session file
    matches: int = 0
    files: dict[str, int] = field(default_factory=dict)  # file of the store -> matches
    snapshots: dict[str, list[str]] = field(default_factory=dict)  # ref -> paths scrubbed
    page: str | None = None  # the page removed
    agent: str | None = None  # "<agent> session <id>" when it mirrors an agent's session

    @property
    def changed(self) -> bool:
        return bool(self.matches or self.files or self.snapshots or self.page)

    def to_json(self) -> dict[str, Any]:
        return {
            "session": self.session,
            "matches": self.matches,
            "entries": self.entries,
            "lines": self.lines,
            "files": self.files,
            "snapshots": self.snapshots,
            "page_removed": self.page,
        }


@dataclass
class RedactReport:
    """A redaction: each session's changes, the run logs scrubbed, and what still holds a
    match that this redaction did not cover (other sessions, files the user owns)."""

    dry_run: bool
    sessions: list[Found]
    runs: dict[str, int] = field(default_factory=dict)
    elsewhere: list[str] = field(default_factory=list)  # sentences
    working_tree: list[str] = field(default_factory=list)  # paths that still hold a match
    rewrote_commits: bool = False
    remotes: list[StaleCopy] = field(default_factory=list)  # what remotes still hold
    dropped: list[str] = field(default_factory=list)  # this clone's copies of shared history

    def to_json(self) -> dict[str, Any]:
        return {
            "dry_run": self.dry_run,
            "sessions": [s.to_json() for s in self.sessions],
            "runs": self.runs,
            "elsewhere": self.elsewhere,
            "working_tree": self.working_tree,
            "remotes": [c.to_json() for c in self.remotes],
            "dropped": self.dropped,
            "gc": bool(self.rewrote_commits or self.dropped) and not self.dry_run,
        }


@dataclass
class StaleCopy:
    """A remote's copy of a session that holds what this redaction removed: the remote's refs
    of the session as last fetched or pushed (ref -> commit), replaced by ``push --replace``."""

    remote: str
    session: str
    refs: dict[str, str]

    def to_json(self) -> dict[str, Any]:
        return {"remote": self.remote, "session": self.session, "refs": sorted(self.refs)}


def redact(
    sessions: list[Session],
    scrubber: scrub.Scrubber,
    *,
    snapshots: bool = False,
    dry_run: bool = False,
) -> RedactReport:
    """Redact every match of ``scrubber`` in ``sessions`` (all of one store); see the module."""
    report = RedactReport(dry_run, [])
    if not sessions:
        return report
    location = sessions[0].location
    with ExitStack() as held:
        for session in sessions:
            held.enter_context(_locks(session, snapshots))
        for session in sessions:  # every session readable before anything is rewritten
            lines = session.conversation.file.read()
            tree.build_records(list(lines.records), lines.first).check(f"Session {session.id}")
        rewritten = _rewrite_commits(sessions, scrubber, dry_run) if snapshots else None
        report.rewrote_commits = bool(rewritten and rewritten.commits)
        writes: dict[Path, bytes | None] = {}  # None: remove the file
        for session in sessions:  # every file planned before the first is written
            found, planned = _session(session, scrubber, rewritten)
            report.sessions.append(found)
            writes.update(planned)
        if not dry_run:
            for path, data in writes.items():
                if data is None:
                    path.unlink(missing_ok=True)
                else:
                    _replace(path, data)
            if rewritten is not None and rewritten.commits:
                _move(sessions, rewritten)
            # the search index holds the words the files held: it goes with them (the next
            # search rebuilds it from the files as they are now)
            searchindex.forget(location)
        _shared_copies(sessions, scrubber, rewritten, report)
    for session in sessions:
        session.reload()  # the files it had read were replaced
    report.runs = _scrub_folder(location.root / "runs", scrubber, dry_run)
    report.elsewhere = _elsewhere(sessions, scrubber, rewritten)
    if rewritten is not None:
        report.working_tree = _in_working_tree(sessions[0], scrubber, report)
    return report


@contextmanager
def _locks(session: Session, snapshots: bool) -> Iterator[None]:
    with ExitStack() as held:
        if snapshots:
            if session.location.git is None:
                raise NoWorkspaceError(
                    "--snapshots needs the git repository the snapshots are in, and this store"
                    " has none.",
                    "run convgit redact without --snapshots",
                )
            held.enter_context(session.track.lock())
        held.enter_context(session.conversation.file.lock())
        held.enter_context(session.track.file.lock())
        yield


def _rewrite_commits(sessions: list[Session], scrubber: scrub.Scrubber, dry_run: bool) -> Rewritten:
    from convgit.workspace import rewriting as gitrewrite

    ws = sessions[0].track.workspace()
    refs: dict[str, str] = {}
    for session in sessions:
        refs.update(ws.session_refs(session.id))

    def scrubbed(data: bytes) -> bytes | None:
        new, count = scrubber.data(data)
        return new if count else None

    return gitrewrite.rewrite(ws, refs, scrubbed, write=not dry_run)


def _move(sessions: list[Session], done: Rewritten) -> None:
    """Once the records name the new commits: move the refs, drop what keeps the old ones."""
    from convgit.workspace import rewriting as gitrewrite

    ws = sessions[0].track.workspace()
    gitrewrite.move_refs(ws, done)
    logs = ws.common_dir / "logs"
    for ref in done.refs:
        if (logs / ref).exists():  # core.logAllRefUpdates=always: the log keeps old commits
            ws.git("reflog", "expire", "--expire=now", "--expire-unreachable=now", ref)
    for session in sessions:
        for index in (session.location.root / "index").glob(f"{session.id}-*"):
            if "." not in index.name:
                ws.forget_index(index)  # it names the old blobs: rebuilt at the next snapshot


def _shared_copies(
    sessions: list[Session],
    scrubber: scrub.Scrubber,
    rewritten: Rewritten | None,
    report: RedactReport,
) -> None:
    """This clone's copies of shared history that hold what was redacted, dropped: the session
    commits under ``refs/convgit/_shared/`` (they carry old versions of the session file) and
    what was fetched from or pushed to each remote (``refs/convgit/_remote/<remote>/``). A
    remote whose copy held it is recorded as stale (``store.stale_copies``): it still has the
    text until ``push --replace``."""
    from convgit.store import stale_copies
    from convgit.workspace import rewriting as gitrewrite

    place = sessions[0].location.git
    if place is None or place.worktree is None:
        return
    ws = sessions[0].track.workspace()
    shared = ws.refs_under(names.SHARED_PREFIX)
    tracked = ws.refs_under(names.REMOTE_PREFIX)
    if not shared and not tracked:
        return

    seen: dict[bytes, bool] = {}  # a line of a session file -> it holds a match

    def in_session_file(data: bytes) -> bytes | None:
        """An old version of a session file, scrubbed (None: nothing to scrub). Each version
        is the one before with lines appended: a line is searched once, however many
        versions hold it."""
        for line in data.split(b"\n"):
            if line not in seen:
                seen[line] = bool(line.strip()) and scrub.any_line(scrubber, line)[1] > 0
            if seen[line]:
                return scrub.lines(scrubber, data)[0]
        return None

    def in_file(data: bytes) -> bytes | None:
        new, count = scrubber.data(data)
        return new if count else None

    for found in report.sessions:
        sid = found.session
        mine = {r: c for r, c in shared.items() if r == names.shared_ref(sid)}
        theirs: dict[str, dict[str, str]] = {}  # remote -> tracking ref -> commit
        carriers = dict(mine)  # session commits, here and as each remote had them
        files: dict[str, str] = {}  # snapshots and saved states as each remote had them
        for ref, commit in tracked.items():
            remote = ref[len(names.REMOTE_PREFIX) :].split("/", 1)[0]
            own = names.untracked_ref(remote, ref)
            if own == names.shared_ref(sid):
                carriers[ref] = commit
            elif own.startswith(names.session_prefix(sid)):
                files[ref] = commit
            else:
                continue
            theirs.setdefault(remote, {})[ref] = commit
        # an old version of the session file holds a match (one the redaction just took, or
        # one an earlier redaction took from the file but not from its copies)
        holding = set(gitrewrite.rewrite(ws, carriers, in_session_file, write=False).refs)
        if rewritten is not None:  # --snapshots: the remotes' snapshots and saved states too
            holding |= {r for r, c in files.items() if c in rewritten.commits}
            rest = {r: c for r, c in files.items() if r not in holding}
            holding |= set(gitrewrite.rewrite(ws, rest, in_file, write=False).refs)
        drop = {r: c for r, c in mine.items() if r in holding}
        for remote, refs in sorted(theirs.items()):
            if holding & set(refs):
                copy = {names.untracked_ref(remote, r): c for r, c in refs.items()}
                report.remotes.append(StaleCopy(remote, sid, copy))
                drop.update(refs)
                if not report.dry_run:
                    stale_copies.add(sessions[0].location, remote, sid, copy)
        report.dropped += sorted(drop)
        if drop and not report.dry_run:
            ws.delete_refs(drop)


def _session(
    session: Session, scrubber: scrub.Scrubber, rewritten: Rewritten | None
) -> tuple[Found, dict[Path, bytes | None]]:
    """What redaction changes in one session, and the files to write (None: to remove)."""
    found = Found(session.id)
    lines = session.conversation.file.read()
    built = tree.build_records(list(lines.records), lines.first)
    built.check(f"Session {session.id}")
    header = built.header or {}
    if header.get("agent"):
        found.agent = f"{header['agent']} session {header.get('agentSession')}"
    new_raw = _session_lines(scrubber, lines, found)
    if rewritten is not None:
        for ref, commit in rewritten.refs.items():
            within = names.within_session(ref, session.id)
            if within is not None:
                found.snapshots[within] = rewritten.paths.get(commit, [])
    sidecar = _sidecar(session, scrubber, rewritten, found)
    quarantined = _quarantine(lines, scrubber, found, session)
    others = _companions(session, scrubber, found)
    page = session.location.root / "pages" / f"{session.id}.html"
    if page.is_file() and (found.changed or scrubber.found(page.read_bytes())):
        found.page = str(page)
    if not found.changed:
        return found, {}
    record = schema.redaction(
        list(found.entries),
        found.matches + sum(found.files.values()),
        sorted(found.snapshots),
        "secrets" if scrubber.builtin else "pattern",
    )
    new_raw.append(codec.encode(record).rstrip(b"\n"))
    _check_shape(built, new_raw)
    writes: dict[Path, bytes | None] = {
        session.conversation.file.path: b"".join(x + b"\n" for x in new_raw)
    }
    if quarantined is not None:
        writes[session.conversation.file.quarantine_path] = quarantined
    if sidecar is not None:
        writes[session.track.file.path] = sidecar
    writes.update(others)
    if found.page is not None:
        writes[Path(found.page)] = None
    return found, writes


def _session_lines(scrubber: scrub.Scrubber, lines: jsonl.Lines, found: Found) -> list[bytes]:
    """The session file's lines scrubbed; a line with no match keeps its exact bytes."""
    out = []
    for number, (raw, record) in enumerate(zip(lines.raw, lines.records, strict=True), 1):
        done = scrub.session_line(scrubber, record, number)
        if not done.matches:
            out.append(raw)
            continue
        found.matches += done.matches
        if isinstance(record, dict) and "parentId" in record:
            found.entries[str(record["id"])] = done.fields
        else:
            found.lines.append(number)
        out.append(codec.dumps(done.value).encode())
    return out


def _check_shape(before: tree.Tree, new_raw: list[bytes]) -> None:
    """The rewritten file must be the same tree: every id, parent and the active leaf."""
    parsed = jsonl.parse_lines(b"".join(line + b"\n" for line in new_raw))
    after = tree.build_records(parsed.records, parsed.first)
    same = {i: r["parentId"] for i, r in before.entries.items()} == {
        i: r["parentId"] for i, r in after.entries.items()
    }
    if not same or after.leaf != before.leaf or after.fatal:
        raise RefusedError(
            "The redacted session would not be the same tree (ids, parents, active leaf); its"
            " file was not rewritten.",
            "report this with a pattern that shows it",
        )


def _sidecar(
    session: Session, scrubber: scrub.Scrubber, rewritten: Rewritten | None, found: Found
) -> bytes | None:
    """The snapshot records with rewritten commits and trees named by their new ids, and text
    (paths left out of a snapshot, paths restored) scrubbed; None when nothing changes."""
    path = session.track.file.path
    if not path.exists():
        return None
    data = jsonl.read_bytes(path, "snapshot records")
    renamed: dict[str, str] = {}
    if rewritten is not None:
        renamed = {**rewritten.commits, **rewritten.trees}
    out, changed, matches = [], False, 0
    for number, raw in enumerate(data.split(b"\n"), 1):
        new, count = scrub.sidecar_line(scrubber, raw, number) if raw.strip() else (raw, 0)
        if renamed and raw.strip():
            try:
                record = codec.decode(new)
            except ValueError:
                record = None
            if isinstance(record, dict):
                moved = {
                    k: renamed.get(v, v) if isinstance(v, str) else v for k, v in record.items()
                }
                if record.get("type") == "rebased" and isinstance(record.get("commits"), dict):
                    # gc's map of old commits to new: the new ones are what redaction rewrote
                    moved["commits"] = {k: renamed.get(v, v) for k, v in record["commits"].items()}
                if moved != record:
                    new = codec.dumps(moved).encode()
        changed |= new != raw
        matches += count
        out.append(new)
    if matches:
        found.files[path.name] = matches
    return b"\n".join(out) if changed else None


def _renamed(renamed: dict[str, str], value: Any) -> Any:
    return renamed.get(value, value) if isinstance(value, str) else value


def _quarantine(
    lines: jsonl.Lines, scrubber: scrub.Scrubber, found: Found, session: Session
) -> bytes | None:
    """The session's quarantine scrubbed, with a torn last line of the session file moved into
    it (scrubbed) as the next writer would; None when nothing changes."""
    path = session.conversation.file.quarantine_path
    data = path.read_bytes() if path.exists() else b""
    new, count = scrub.lines(scrubber, data)
    if lines.torn is not None and scrubber.found(lines.torn):
        torn, torn_count = scrubber.data(lines.torn)
        reason = "torn last line (a writer stopped mid-line), redacted"
        new += codec.encode(jsonl.quarantine_record(len(lines.raw) + 1, torn, reason))
        count += torn_count
    if count:
        found.files[path.name] = count
    return new if count else None


def _companions(session: Session, scrubber: scrub.Scrubber, found: Found) -> dict[Path, bytes]:
    """The other files of the session in the sessions folder (backups repair kept, the snapshot
    records' quarantine, a write repair left half done), scrubbed line by line."""
    folder = session.conversation.file.path.parent
    own = {
        session.conversation.file.path.name,
        session.conversation.file.quarantine_path.name,
        session.track.file.path.name,
    }
    out: dict[Path, bytes] = {}
    for path in sorted(folder.glob(f"{session.id}.*")):
        if path.name in own or not path.is_file():
            continue
        new, count = scrub.lines(scrubber, path.read_bytes())
        if count:
            found.files[path.name] = count
            out[path] = new
    return out


def _scrub_folder(folder: Path, scrubber: scrub.Scrubber, dry_run: bool) -> dict[str, int]:
    """Every file below ``folder`` (the logs of side-by-side runs) scrubbed as text."""
    done: dict[str, int] = {}
    if not folder.is_dir():
        return done
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and not p.is_symlink()):
        new, count = scrubber.data(path.read_bytes())
        if count:
            done[str(path)] = count
            if not dry_run:
                _replace(path, new)
    return done


def _elsewhere(
    sessions: list[Session], scrubber: scrub.Scrubber, rewritten: Rewritten | None
) -> list[str]:
    """Sentences for what still holds a match and was not in this redaction's scope."""
    location = sessions[0].location
    scope = {s.id for s in sessions}
    said = []
    others = [sid for sid in location.session_ids() if sid not in scope]
    for sid in others:
        files = sorted(location.sessions.glob(f"{sid}.*"))
        if any(p.is_file() and scrubber.found(p.read_bytes()) for p in files):
            said.append(f"session {sid} holds matches too: redact it with --session {sid} or --all")
    pages = location.root / "pages"
    for sid in others:
        page = pages / f"{sid}.html"
        if page.is_file() and scrubber.found(page.read_bytes()):
            said.append(f"the page {page} holds matches (session {sid})")
    if rewritten is not None and rewritten.blobs:
        ws = sessions[0].track.workspace()
        tips = {
            ref: commit
            for ref, commit in ws.convgit_refs().items()
            if names.session_of(ref) not in scope
        }
        if tips:
            reachable = set(ws.git("rev-list", "--objects", *set(tips.values())).split())
            kept = {oid.encode() for oid in rewritten.blobs} & reachable
            if kept:
                holders = sorted({_holder(ref) for ref in tips})
                said.append(
                    f"{len(kept)} file version(s) with matches are still in snapshots of other"
                    f" sessions ({', '.join(holders)}): redact those with --all"
                )
    return said


def _holder(ref: str) -> str:
    """Who keeps ``ref``: its session, or convgit's own folder it is in (``_trash``, ``_gc``)."""
    parsed = names.parse_ref(ref)
    return ref if parsed is None else parsed.owner


def _in_working_tree(session: Session, scrubber: scrub.Scrubber, report: RedactReport) -> list[str]:
    """The paths scrubbed in snapshots whose file in the working tree still holds a match."""
    git = session.location.git
    if git is None or git.worktree is None:
        return []
    paths = sorted({p for found in report.sessions for ps in found.snapshots.values() for p in ps})
    held = []
    for path in paths:
        target = git.worktree / path
        try:
            if target.is_file() and not target.is_symlink() and scrubber.found(target.read_bytes()):
                held.append(path)
        except OSError:
            continue
    return held


def _replace(path: Path, data: bytes) -> None:
    """Write ``data`` to a new file beside ``path`` and rename it over ``path``."""
    scratch = path.with_name(f".{path.name}.redact-{os.getpid()}")
    with open(scratch, "wb") as out:
        out.write(data)
        out.flush()
        os.fsync(out.fileno())
    os.replace(scratch, path)
