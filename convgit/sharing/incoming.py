"""Bringing a remote's copy of a session into the store: merged into the session here
(``merge_into``), or, for a session this clone does not have, made from it (``create_from``).

Order, so that a command killed anywhere leaves every file valid and the next run finishes the
job: the session file's new lines first (under its lock, checked against the tree as it is
then), then the snapshot refs (which keep the fetched commits from git gc), then the sidecar's
records. A new session's refs and sidecar come before its ``<sid>.jsonl``: a session is where its
file is, and a file written whole by a rename.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from convgit import schema
from convgit.base import codec, faults
from convgit.conversation import tree
from convgit.session import Session
from convgit.sharing import merge, session_commit
from convgit.sharing.transport import set_refs
from convgit.store import jsonl
from convgit.store.location import StoreLocation
from convgit.store.sidecar import Sidecar
from convgit.workspace import Workspace


@dataclass
class Merged:
    """What a merge brought: new entries, snapshots and entries whose snapshot differs."""

    entries: int = 0
    snapshots: int = 0
    differ: int = 0


def _present(git: Workspace, commits: list[str]) -> set[str]:
    asked = "".join(f"{c}\n" for c in commits).encode()
    listed = git.run("cat-file", "--batch-check", stdin=asked).stdout.decode().splitlines()
    return {c for c, line in zip(commits, listed, strict=False) if not line.endswith("missing")}


def _keep_present(git: Workspace, plan: merge.Plan) -> None:
    """Only the snapshots whose commits were fetched (a remote that lost one is no reason to
    record it here)."""
    present = _present(git, [r["commit"] for r in plan.snapshots])
    plan.snapshots = [r for r in plan.snapshots if r["commit"] in present]
    plan.refs = {name: c for name, c in plan.refs.items() if c in present}


def merge_into(session: Session, git: Workspace, remote: str, commit: str) -> Merged:
    """Merge the copy of ``session`` that session commit ``commit`` carries (see ``merge``)."""
    data, side = session_commit.read(git, commit)
    there, their_sidecar = merge.read_copy(data, side, session.id, remote)
    session.reload()
    done = Merged()
    session.conversation.check()
    if any(i not in session.conversation.tree.entries for i in there.entries) or there.labels:
        with session.conversation.file.appending() as appender:
            news = appender.news
            if news.records:
                session.conversation.tree.add_records(news.records, news.first)
                session.conversation.tree.finish(since=news.first)
                session.conversation.check()
            plan = merge.entries(session.conversation.tree, there, session.id, remote)
            if plan.records:
                faults.point("share:merging")
                appender.write(plan.records)
        done.entries = len(plan.entries)
        session.reload()
    plan = merge.Plan()
    merge.snapshots(
        plan,
        session.track.sidecar,
        their_sidecar,
        set(session.conversation.tree.entries),
        session.id,
    )
    _keep_present(git, plan)
    if plan.snapshots:
        set_refs(git, plan.refs)
        faults.point("share:merge-refs")
        session.track.file.append(plan.snapshots)
        session.reload()
    done.snapshots, done.differ = len(plan.snapshots), len(plan.differ)
    return done


def create_from(
    location: StoreLocation, git: Workspace, sid: str, remote: str, commit: str
) -> Merged:
    """Make session ``sid`` here from the copy session commit ``commit`` carries."""
    data, side = session_commit.read(git, commit)
    data = session_commit.whole_lines(data)
    there, their_sidecar = merge.read_copy(data, side, sid, remote)
    plan = merge.Plan()
    merge.snapshots(plan, Sidecar(), their_sidecar, set(there.entries), sid)
    _keep_present(git, plan)
    path = location.session_path(sid)
    with jsonl.exclusive(location.lock_path(sid), f"session {sid}"):
        if path.exists():
            return Merged()
        set_refs(git, plan.refs)
        location.sessions.mkdir(parents=True, exist_ok=True)
        records = [schema.sidecar_switch(their_sidecar.enabled), *plan.snapshots]
        _write_whole(location.sidecar_path(sid), b"".join(map(codec.encode_names, records)))
        faults.point("share:creating")
        _write_whole(path, data)
    return Merged(len(there.entries), len(plan.snapshots))


def _write_whole(path: os.PathLike[str], data: bytes) -> None:
    """Write ``data`` as the file at ``path`` by a rename (a reader sees all of it or none)."""
    temporary = f"{os.fspath(path)}.incoming"
    with open(temporary, "wb") as written:
        written.write(data)
        written.flush()
        os.fsync(written.fileno())
    os.replace(temporary, path)


def entries_behind(here: tree.Tree, data: bytes) -> int:
    """How many entries of a remote's copy (its session file's bytes) are not here."""
    there = parse_copy(data)
    return sum(1 for ident in there.entries if ident not in here.entries)


def parse_copy(data: bytes) -> tree.Tree:
    """A remote's copy of a session file as a tree (not checked: only its ids are read)."""
    lines = jsonl.parse_lines(data)
    return tree.build_records(lines.records, lines.first)
