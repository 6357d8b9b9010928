"""A session commit: the commit that carries a shared session's file and sidecar through git.

Its tree holds ``session.jsonl`` (the conversation track, as the file is) and ``files.jsonl``
(the sidecar); its parents are the session commit made before here and the remote's one that
was merged, so each push is a fast-forward of the remote's ref and sends only the new blobs.
A torn last line (a writer killed mid-line) stays home: only whole lines are carried.
"""

from __future__ import annotations

import os

from convgit.git import names
from convgit.store import jsonl
from convgit.store.location import StoreLocation
from convgit.workspace import Workspace

FILE = "session.jsonl"
SIDECAR = "files.jsonl"


def whole_lines(data: bytes) -> bytes:
    """``data`` up to its last newline."""
    return data[: data.rfind(b"\n") + 1]


def _blob(git: Workspace, data: bytes) -> str:
    return os.fsdecode(git.run("hash-object", "-w", "--stdin", stdin=data).stdout).strip()


def contents(location: StoreLocation, sid: str) -> tuple[bytes, bytes]:
    """The bytes a session commit of ``sid`` carries now: its file and its sidecar, whole
    lines only."""
    own = whole_lines(jsonl.read_bytes(location.session_path(sid)))
    side = location.sidecar_path(sid)
    files = whole_lines(jsonl.read_bytes(side, "sidecar")) if side.exists() else b""
    return own, files


def build(git: Workspace, carried: tuple[bytes, bytes], sid: str, parents: list[str]) -> str:
    """A session commit of ``carried`` (``contents``) with ``parents`` (the first of them
    returned as it is when it carries the same files and is the only one). Its blobs are the
    first objects written: what was scanned is what is carried."""
    own, files = carried
    listing = f"100644 blob {_blob(git, files)}\t{SIDECAR}\n100644 blob {_blob(git, own)}\t{FILE}\n"
    tree = os.fsdecode(git.run("mktree", stdin=listing.encode()).stdout).strip()
    if len(parents) == 1 and tree_of(git, parents[0]) == tree:
        return parents[0]
    message = names.commit_message(f"convgit session {sid}", session=sid)
    return git.commit_tree(tree, parents, message)


def tree_of(git: Workspace, commit: str) -> str:
    return os.fsdecode(git.run("rev-parse", f"{commit}^{{tree}}").stdout).strip()


def read(git: Workspace, commit: str) -> tuple[bytes, bytes]:
    """The session file and the sidecar a session commit carries."""
    own = git.run("cat-file", "blob", f"{commit}:{FILE}").stdout
    files = git.run("cat-file", "blob", f"{commit}:{SIDECAR}", check=False)
    return own, files.stdout if files.returncode == 0 else b""


def is_ancestor(git: Workspace, older: str, newer: str) -> bool:
    """True when ``older`` is ``newer`` or one of its ancestors."""
    done = git.run("merge-base", "--is-ancestor", older, newer, check=False)
    return done.returncode == 0
