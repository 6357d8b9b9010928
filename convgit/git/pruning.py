"""Letting snapshot commits go, in git: the kept commits re-parented onto their nearest kept
ancestor (trees, messages, authors and dates byte for byte; only the parent lines change), and
the objects that nothing reaches any more deleted, loose or packed.

Only objects convgit's refs reached before are ever candidates, and a candidate is deleted only
when nothing reaches it now: no ref (the user's, the stash, convgit's own), no reflog, no index
of any worktree, no private index of convgit's (``protect``). An object git wrote or freshened
since the walk began (a user's ``git add`` of the same bytes) is left where it is, as git's own
gc does. A pack is rewritten without the candidates (the new pack is in place before the old
one goes); packs git was told to keep (``.keep``, promisor and cruft packs) are never touched.
No conversation here: which commits are kept is the caller's business.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Collection, Iterable, Mapping
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path

from convgit.base import faults
from convgit.git.run import Git

PACK_OVERHEAD = 12 + 20 + 1072 + 40  # a pack's header and trailer, an index's fan-out and trailer


def graph(git: Git, tips: Collection[str]) -> tuple[list[str], dict[str, list[str]]]:
    """Every commit reachable from ``tips``, parents before children, and each one's parents."""
    if not tips:
        return [], {}
    listed = git.run(
        "rev-list", "--topo-order", "--reverse", "--parents", "--stdin",
        stdin="".join(f"{tip}\n" for tip in sorted(tips)).encode(),
    ).stdout  # fmt: skip
    order: list[str] = []
    parents: dict[str, list[str]] = {}
    for line in os.fsdecode(listed).splitlines():
        commit, *above = line.split()
        order.append(commit)
        parents[commit] = above
    return order, parents


@dataclass
class Rebased:
    """The commits a re-parenting gives: old id -> new id (only those whose parents changed)."""

    commits: dict[str, str] = field(default_factory=dict)


def rebase(
    git: Git, order: list[str], parents: Mapping[str, list[str]], kept: Collection[str],
    *, write: bool,
) -> Rebased:  # fmt: skip
    """Give each kept commit, as its parents, its nearest kept ancestors (new ids), keeping its
    tree and every other byte; ``write`` False: nothing is written, the ids are git's all the
    same. Commits that are not kept get no new commit."""
    done = Rebased()
    above: dict[str, list[str]] = {}  # a commit let go -> the nearest kept ancestors (new ids)
    raw: dict[str, bytes] = {}
    with git.objects() as objects:
        for commit in order:
            before = parents.get(commit, [])
            nearest: list[str] = []
            for parent in before:
                for new in [done.commits.get(parent, parent)] if parent in kept else above[parent]:
                    if new not in nearest:
                        nearest.append(new)
            if commit not in kept:
                above[commit] = nearest
            elif nearest != before:
                found = objects.read(commit)
                assert found is not None and found[1] == "commit", f"{commit} is a commit"
                head, sep, message = found[2].partition(b"\n\n")
                lines = [line for line in head.split(b"\n") if not line.startswith(b"parent ")]
                lines[1:1] = [b"parent " + p.encode() for p in nearest]
                data = b"\n".join(lines) + sep + message
                done.commits[commit] = _hash(git, data)
                raw[done.commits[commit]] = data
    if write and raw:
        _write_commits(git, raw)
    return done


def _hash(git: Git, data: bytes) -> str:
    """The id git gives the commit ``data`` (git's own format, hashed here)."""
    import hashlib

    algorithm = hashlib.sha256 if git.hash_len == 32 else hashlib.sha1
    return algorithm(b"commit %d\0" % len(data) + data).hexdigest()


def _write_commits(git: Git, raw: Mapping[str, bytes]) -> None:
    """Write the commits ``raw`` (id -> bytes) in one git process."""
    with tempfile.TemporaryDirectory(prefix="convgit-gc-") as folder:
        names = []
        for oid, data in raw.items():
            path = Path(folder) / oid
            path.write_bytes(data)
            names.append(str(path))
        made = git.run(
            "hash-object", "-w", "-t", "commit", "--stdin-paths",
            stdin="".join(f"{name}\n" for name in names).encode(),
        ).stdout  # fmt: skip
    written = os.fsdecode(made).split()
    if written != list(raw):
        raise AssertionError("git gave other ids to the re-parented commits")


def objects_of(git: Git, tips: Iterable[str], *, walk: bool = True) -> set[str]:
    """Every object reachable from ``tips`` (with ``walk`` False: the commits themselves and
    their trees' objects, not their ancestors)."""
    listed = sorted(set(tips))
    if not listed:
        return set()
    args = ["rev-list", "--objects", "--stdin", *([] if walk else ["--no-walk"])]
    found = git.run(*args, stdin="".join(f"{t}\n" for t in listed).encode()).stdout
    width = 2 * git.hash_len
    return {os.fsdecode(line[:width]) for line in found.splitlines() if line}


def protected(git: Git, private_indexes: Iterable[Path]) -> set[str]:
    """Every object something reaches now: refs (the user's and convgit's), reflogs, the index
    of each worktree, and the blobs of convgit's private indexes (their stat cache names them)."""
    return objects_of_everything(git) | index_blobs(git, private_indexes)


def index_blobs(git: Git, indexes: Iterable[Path]) -> set[str]:
    """The blobs the index files ``indexes`` name."""
    found: set[str] = set()
    for index in indexes:
        listed = git.run("ls-files", "--stage", index=index, check=False)
        for line in os.fsdecode(listed.stdout).splitlines():
            parts = line.split(" ", 2)
            if len(parts) == 3:
                found.add(parts[1])
    return found


def objects_of_everything(git: Git) -> set[str]:
    listed = git.run(
        "rev-list", "--objects", "--all", "--reflog", "--indexed-objects", check=False
    ).stdout
    width = 2 * git.hash_len
    return {os.fsdecode(line[:width]) for line in listed.splitlines() if line}


def disk_sizes(git: Git, oids: Collection[str], *, packed: bool = False) -> dict[str, int]:
    """The bytes each object takes on disk: a loose object its file's blocks, a packed one its
    bytes in the pack and its line of the pack's index (``packed``: every object as if it were
    packed). Objects git does not have are left out."""
    if not oids:
        return {}
    sizes: dict[str, int] = {}
    objects = git.common_dir / "objects"
    asked = "".join(f"{oid}\n" for oid in sorted(oids)).encode()
    listed = git.run(
        "cat-file", "--batch-check=%(objectname) %(objectsize:disk)", stdin=asked
    ).stdout
    for line in os.fsdecode(listed).splitlines():
        oid, _, size = line.partition(" ")
        if not size.isdigit():
            continue  # "missing"
        try:
            if packed:
                raise FileNotFoundError
            stat = os.stat(objects / oid[:2] / oid[2:])
        except OSError:
            sizes[oid] = int(size) + git.hash_len + 8
        else:
            sizes[oid] = stat.st_blocks * 512
    return sizes


def own_bytes(git: Git) -> int:
    """About how many bytes the objects only convgit's refs reach take on disk, counted as
    ``disk_sizes`` counts them (``rev-list`` from convgit's refs, less what the user's refs
    and HEAD reach)."""
    listed = git.run("for-each-ref", "--format=%(objectname) %(refname)").stdout
    ours: set[str] = set()
    theirs: set[str] = set()
    for line in os.fsdecode(listed).splitlines():
        oid, _, name = line.partition(" ")
        (ours if name.startswith("refs/convgit/") else theirs).add(oid)
    if not ours:
        return 0
    head = os.fsdecode(git.run("rev-parse", "--verify", "-q", "HEAD", check=False).stdout).strip()
    theirs |= {head} if head else set()
    revs = "".join([*(f"{o}\n" for o in sorted(ours)), *(f"^{t}\n" for t in sorted(theirs))])
    found = git.run("rev-list", "--objects", "--stdin", stdin=revs.encode()).stdout
    width = 2 * git.hash_len
    oids = {os.fsdecode(line[:width]) for line in found.splitlines() if line}
    return sum(disk_sizes(git, oids).values())


@dataclass
class Dropped:
    """What ``drop`` deleted: objects and bytes; ``left``: candidates it left where they are
    (freshened since the walk, or in a pack git keeps)."""

    objects: int = 0
    left: int = 0
    packs_rewritten: int = 0


def drop(git: Git, doomed: Collection[str], since: float) -> Dropped:
    """Delete the objects ``doomed`` (nothing reaches them; the caller checked): loose files
    unlinked, packs rewritten without them. Anything written or freshened after ``since``
    (a time.time()) stays."""
    done = Dropped()
    if not doomed:
        return done
    wanted = set(doomed)
    objects = git.common_dir / "objects"
    for oid in sorted(wanted):
        path = objects / oid[:2] / oid[2:]
        try:
            if path.stat().st_mtime > since:
                done.left += 1
                continue
            path.unlink()
        except OSError:
            continue
        done.objects += 1
        faults.point("gc:dropped-loose")
    for index in sorted((objects / "pack").glob("pack-*.idx")):
        pack = index.with_suffix(".pack")
        listed = git.run("show-index", stdin=index.read_bytes(), check=False).stdout
        inside = {os.fsdecode(line.split()[1]) for line in listed.splitlines() if line.strip()}
        hit = inside & wanted
        if not hit:
            continue
        kept_by_git = any(index.with_suffix(s).exists() for s in (".keep", ".promisor", ".mtimes"))
        try:
            fresh = pack.stat().st_mtime > since
        except OSError:
            continue
        if kept_by_git or fresh:
            done.left += len(hit)
            continue
        rest = sorted(inside - hit)
        if rest:
            git.run(
                "pack-objects", "-q", str(objects / "pack" / "pack"),
                stdin="".join(f"{oid}\n" for oid in rest).encode(),
            )  # fmt: skip
        faults.point("gc:repacked")
        for suffix in (".idx", ".pack", ".rev", ".bitmap"):  # the index first: git then skips it
            with suppress(OSError):
                os.unlink(index.with_suffix(suffix))
            faults.point("gc:pack-file-gone")
        done.objects += len(hit)
        done.packs_rewritten += 1
    if done.packs_rewritten and (objects / "pack" / "multi-pack-index").exists():
        git.run("multi-pack-index", "write", check=False)
    graphs = objects / "info"
    if done.objects and ((graphs / "commit-graph").exists() or (graphs / "commit-graphs").exists()):
        git.run("commit-graph", "write", "--reachable", check=False)
    return done


def pack(git: Git, oids: Collection[str]) -> None:
    """Pack ``oids`` (loose objects convgit just wrote) and delete their loose copies."""
    if not oids:
        return
    objects = git.common_dir / "objects"
    git.run(
        "pack-objects", "-q", str(objects / "pack" / "pack"),
        stdin="".join(f"{oid}\n" for oid in sorted(oids)).encode(),
    )  # fmt: skip
    for oid in oids:
        with suppress(OSError):
            os.unlink(objects / oid[:2] / oid[2:])


def now() -> float:
    """The time ``drop`` compares against: a second back, for file systems with coarse times."""
    return time.time() - 1
