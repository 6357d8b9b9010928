"""Packing convgit's own loose objects: those reachable from ``refs/convgit/`` and from none
of the user's refs. The user's objects are never packed or touched. It walks the snapshots'
history: run it away from the commands a user waits on (``convgit.workspace.background`` does).
"""

from __future__ import annotations

import os
from contextlib import suppress

from convgit.git.names import PREFIX
from convgit.git.plumbing.run import Git


def pack_own(git: Git, *, threshold: int) -> bool:
    """Pack convgit's own loose objects once there are more than ``threshold`` of them, and
    delete their loose copies. True when it packed."""
    own = _own_loose(git)
    if not own or len(own) <= threshold:
        return False
    objects = git.common_dir / "objects"
    git.run("pack-objects", "-q", str(objects / "pack" / "pack"), stdin=b"\n".join(own) + b"\n")
    for oid in own:  # now in the pack: git reads them from there
        with suppress(OSError):
            os.unlink(objects / os.fsdecode(oid[:2]) / os.fsdecode(oid[2:]))
    return True


def _own_loose(git: Git) -> list[bytes]:
    """The loose objects reachable from convgit's refs and not from the user's."""
    listed = git.run("for-each-ref", "--format=%(objectname) %(refname)").stdout
    ours: list[bytes] = []
    theirs: list[bytes] = []
    for line in listed.splitlines():
        oid, _, name = line.partition(b" ")
        (ours if name.startswith(PREFIX.encode()) else theirs).append(oid)
    if not ours:
        return []
    head = git.run("rev-parse", "--verify", "-q", "HEAD", check=False).stdout.strip()
    theirs += [head] if head else []
    revs = b"".join([*(oid + b"\n" for oid in ours), *(b"^" + oid + b"\n" for oid in theirs)])
    # aggressive edges: the trees of the user's tips count as theirs, though no snapshot
    # descends from a user's commit (lines starting with "-" name those tips)
    found = git.run(
        "rev-list", "--objects-edge-aggressive", "--unpacked", "--stdin", stdin=revs
    ).stdout  # fmt: skip
    return [line[: 2 * git.hash_len] for line in found.splitlines() if line[:1] != b"-"]
