"""Rewriting commits whose files hold what must go, for redaction: every blob the caller's scrub
changes is replaced, and so is every tree above it and every commit whose tree or parents
changed, down to the refs (``move_refs``). Commits, trees and paths only: what to scrub is the
caller's business. A commit keeps its message, author, committer and dates byte for byte (only
its tree and parent lines change); objects are written by git (`git hash-object -w`), refs moved
by ``Workspace.set_ref``. The old objects stay in the repository until git's gc prunes them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from convgit.git.plumbing.objects import GITLINK, TREE

if TYPE_CHECKING:
    from convgit.git.plumbing.objects import Objects
    from convgit.workspace import Workspace

Scrub = Callable[[bytes], "bytes | None"]  # the new content of a file, or None: unchanged


@dataclass
class Rewritten:
    """What a rewrite changed: commits and their root trees (old id -> new id), the paths
    scrubbed in each new commit's tree, and the refs moved (ref -> new commit)."""

    commits: dict[str, str] = field(default_factory=dict)
    trees: dict[str, str] = field(default_factory=dict)
    paths: dict[str, list[str]] = field(default_factory=dict)
    refs: dict[str, str] = field(default_factory=dict)
    blobs: dict[str, str] = field(default_factory=dict)


class _Rewriter:
    def __init__(self, ws: Workspace, objects: Objects, scrub: Scrub, write: bool) -> None:
        self.ws, self.objects, self.scrub, self.write = ws, objects, scrub, write
        self.blobs: dict[str, str] = {}  # old -> new, for blobs that change
        self.seen_blobs: set[str] = set()
        self.trees: dict[str, tuple[str, list[str]]] = {}  # old -> (new, paths scrubbed)

    def _store(self, kind: str, data: bytes) -> str:
        if not self.write:  # a dry run: the id git would give, without writing
            args = ["hash-object", "-t", kind, "--stdin"]
        else:
            args = ["hash-object", "-w", "-t", kind, "--stdin"]
        if kind == "blob":
            args.append("--no-filters")
        return self.ws.git(*args, stdin=data).decode().strip()

    def blob(self, oid: str) -> str:
        if oid in self.seen_blobs:
            return self.blobs.get(oid, oid)
        self.seen_blobs.add(oid)
        found = self.objects.read(oid)
        if found is None or found[1] != "blob":
            return oid  # a missing object: nothing to scrub in it
        new = self.scrub(found[2])
        if new is None or new == found[2]:
            return oid
        self.blobs[oid] = made = self._store("blob", new)
        return made

    def tree(self, oid: str) -> tuple[str, list[str]]:
        """The id of tree ``oid`` with its files scrubbed, and the paths that were."""
        if oid in self.trees:
            return self.trees[oid]
        found = self.objects.read(oid)
        if found is None or found[1] != "tree":
            self.trees[oid] = (oid, [])
            return self.trees[oid]
        raw, size = found[2], len(oid) // 2
        out, paths, at = bytearray(), [], 0
        while at < len(raw):
            space = raw.index(b" ", at)
            end = raw.index(b"\0", space)
            mode = int(raw[at:space], 8)
            name = raw[space + 1 : end]
            entry = raw[end + 1 : end + 1 + size].hex()
            if mode == TREE:
                new, below = self.tree(entry)
                paths += [f"{name.decode(errors='replace')}/{p}" for p in below]
            elif mode == GITLINK:
                new = entry
            else:
                new = self.blob(entry)
                if new != entry:
                    paths.append(name.decode(errors="replace"))
            out += raw[at : end + 1] + bytes.fromhex(new)
            at = end + 1 + size
        made = oid if bytes(out) == raw else self._store("tree", bytes(out))
        self.trees[oid] = (made, paths)
        return self.trees[oid]

    def commit(self, oid: str, parents: Mapping[str, str]) -> tuple[str, str, str, list[str]]:
        """(new commit id, old tree, new tree, paths) of commit ``oid``, its parents mapped."""
        found = self.objects.read(oid)
        assert found is not None and found[1] == "commit", f"{oid} is a commit git listed"
        head, sep, message = found[2].partition(b"\n\n")
        lines = head.split(b"\n")
        old_tree = lines[0].split(b" ", 1)[1].decode()
        new_tree, paths = self.tree(old_tree)
        changed = new_tree != old_tree
        for n, line in enumerate(lines):
            if n == 0:
                lines[0] = b"tree " + new_tree.encode()
            elif line.startswith(b"parent "):
                parent = line.split(b" ", 1)[1].decode()
                if parents.get(parent, parent) != parent:
                    lines[n] = b"parent " + parents[parent].encode()
                    changed = True
        if not changed:
            return oid, old_tree, old_tree, paths
        made = self._store("commit", b"\n".join(lines) + sep + message)
        return made, old_tree, new_tree, paths


def rewrite(
    ws: Workspace, refs: Mapping[str, str], scrub: Scrub, *, write: bool = True
) -> Rewritten:
    """Rewrite every commit reachable from ``refs`` (ref -> commit) whose files ``scrub``
    changes, or whose parents were rewritten, parents first; ``move_refs`` then moves the refs
    (after the caller has recorded the new ids). With ``write`` False nothing is written: the
    result says what would change (the ids are those git would give)."""
    done = Rewritten()
    tips = sorted(set(refs.values()))
    if not tips:
        return done
    listed = ws.git("rev-list", "--topo-order", "--reverse", "--parents", *tips)
    with ws.objects() as objects:
        rewriter = _Rewriter(ws, objects, scrub, write)
        for line in listed.decode().splitlines():
            oid = line.split()[0]
            new, old_tree, new_tree, paths = rewriter.commit(oid, done.commits)
            if new != oid:
                done.commits[oid] = new
                done.trees[old_tree] = new_tree
                done.paths[new] = paths
        done.blobs = dict(rewriter.blobs)
    for ref, commit in sorted(refs.items()):
        if commit in done.commits:
            done.refs[ref] = done.commits[commit]
    return done


def move_refs(ws: Workspace, done: Rewritten) -> None:
    """Point each ref ``rewrite`` names at its new commit."""
    for ref, commit in done.refs.items():
        ws.set_ref(ref, commit)
