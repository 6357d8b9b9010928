"""Whether objects convgit remembers without a ref are still in the repository.

convgit remembers some object ids beside its private index (the tree the index last gave, the
last snapshot made from it) so that a turn where nothing moved asks git nothing. No ref keeps
a tree that only ``status`` or ``diff`` wrote, and ``git gc --prune=now`` takes it: before such
an id is trusted it is checked here, and a missing one is rebuilt by the caller, never an
error. The check costs a ``stat`` while the object is loose (as git wrote it); once packed it
is asked of git once, and trusted while the set of packs stays the same (git removes a packed
object only by repacking, which changes the pack folder).
"""

from __future__ import annotations

import os

from convgit.git.plumbing.run import Git

_KEPT = 8  # ids remembered as packed: the index's tree and the last snapshot's, with room


def pack_identity(git: Git) -> str:
    """The pack folder's identity: it changes whenever a pack is added or removed."""
    try:
        info = os.stat(git.common_dir / "objects" / "pack")
    except OSError:
        return "-"
    return f"{info.st_mtime_ns}:{info.st_ino}"


def check(git: Git, oids: list[str], seen: str) -> tuple[bool, str]:
    """(True when every one of ``oids`` is in the repository, what to remember for the next
    check). ``seen`` is what the last check returned: the pack identity and the ids found
    packed then."""
    identity = pack_identity(git)
    known_identity, *packed = seen.split(" ") if seen else ("",)
    trusted = set(packed) if known_identity == identity else set()
    objects = git.common_dir / "objects"
    asked = [
        oid for oid in oids if oid not in trusted and not (objects / oid[:2] / oid[2:]).is_file()
    ]
    if asked:
        listed = "".join(f"{oid}\n" for oid in asked).encode()
        proc = git.run("cat-file", "--batch-check=%(objectname)", stdin=listed)
        # a missing object's line is "<id> missing"
        found = {line for line in os.fsdecode(proc.stdout).splitlines() if line in asked}
        if len(found) < len(set(asked)):
            return False, seen if known_identity == identity else ""
        trusted |= found
    # the ids of this check first, then the ones remembered before, a few at most
    kept = dict.fromkeys([*(o for o in oids if o in trusted), *(o for o in packed if o in trusted)])
    return True, " ".join([identity, *list(kept)[:_KEPT]])
