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
from dataclasses import field
from pathlib import Path

from convgit.base import faults
from convgit.base.errors import UnjudgeableRepositoryError
from convgit.base.valueclass import valueclass
from convgit.git import names
from convgit.git.index import format as index_format
from convgit.git.plumbing.run import Git, git_words
from convgit.git.upkeep import reachability

PACK_OVERHEAD = (
    12 + 20 + 8 + 1024 + 40
)  # a pack's header and trailer, an index's header, fan-out and trailer


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


@valueclass
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
    of each worktree, the refs each worktree keeps for itself, and the blobs of convgit's
    private indexes (their stat cache names them). UnjudgeableRepositoryError when git cannot
    prove it (``convgit.git.upkeep.reachability``): then nothing is deleted."""
    return reachability.reached(git, ours=True) | index_blobs(git, private_indexes)


def index_blobs(git: Git, indexes: Iterable[Path]) -> set[str]:
    """The blobs the index files ``indexes`` name; UnjudgeableRepositoryError when git cannot
    read one (a blob it names could be deleted under it). A private index is split, its shared
    part in the git dir of the worktree whose snapshots it made: each is read with the common
    git dir, then with each linked worktree's, until one reads it. One whose shared part is in
    none of them (``_orphaned``) names nothing: no git reads it again."""
    linked = git.common_dir / "worktrees"
    folders = [git.common_dir, *sorted(p for p in linked.glob("*") if p.is_dir())]
    found: set[str] = set()
    for index in indexes:
        for folder in folders:
            here = Git(git.root, folder, git.common_dir, object_format=git.object_format)
            listed = here.run("ls-files", "--stage", index=index, check=False)
            if listed.returncode == 0:
                break
        else:
            if _orphaned(index, folders, git.hash_len):
                continue
            raise UnjudgeableRepositoryError(
                f"git cannot read convgit's index {index} ({git_words(listed.stderr, 1)[:-1]}),"
                " so convgit gc deletes nothing.",
                hint="delete that file (convgit builds it again at the next snapshot), then run"
                " convgit gc again",
            )
        for line in os.fsdecode(listed.stdout).splitlines():
            parts = line.split(" ", 2)
            if len(parts) == 3:
                found.add(parts[1])
    return found


def _orphaned(index: Path, folders: list[Path], hash_len: int) -> bool:
    """Whether the split index ``index`` builds on a shared index that is in none of the git
    dirs ``folders``, nor beside it: the git dir of the linked worktree it was made in went
    with that worktree (`git worktree remove`, or `prune` once its folder was deleted). No git
    can read it again and convgit builds it anew before it snapshots through it
    (``PrivateIndex``), so no snapshot will take a blob from it."""
    shared = index_format.shared_index(index, hash_len)
    if shared is None:  # a whole index git cannot read: torn, or not an index
        return False
    name = f"sharedindex.{shared}"
    return not any(os.path.lexists(where / name) for where in [*folders, index.parent])


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
        (ours if name.startswith(names.PREFIX) else theirs).add(oid)
    if not ours:
        return 0
    head = os.fsdecode(git.run("rev-parse", "--verify", "-q", "HEAD", check=False).stdout).strip()
    theirs |= {head} if head else set()
    revs = "".join([*(f"{o}\n" for o in sorted(ours)), *(f"^{t}\n" for t in sorted(theirs))])
    found = git.run("rev-list", "--objects", "--stdin", stdin=revs.encode()).stdout
    width = 2 * git.hash_len
    oids = {os.fsdecode(line[:width]) for line in found.splitlines() if line}
    return sum(disk_sizes(git, oids).values())


# why ``drop`` leaves a candidate where it is, and what frees it (the words ``gc`` says)
FRESH = "git wrote or freshened it while gc ran; the next convgit gc frees it"
KEPT_PACK = "it is in a pack git keeps (.keep, promisor or cruft); git's own gc decides"
BUSY = "a git command held a lock; the next convgit gc frees it once none runs"
AGAIN = (
    "something other than convgit's snapshot wrote it again since (a stash, a checkout...);"
    " git's own gc keeps it until gc.pruneExpire, and so does convgit gc"
)
PACKED_AGAIN = (
    "its pack holds an object written again since convgit's snapshot, which the pack's time"
    " keeps until gc.pruneExpire; convgit gc leaves that pack as it is"
)


@valueclass
class Dropped:
    """What ``drop`` deleted (``objects``, from ``packs_rewritten`` packs) and what it left
    where it is (``left``: why -> those objects)."""

    objects: int = 0
    left: dict[str, set[str]] = field(default_factory=dict)
    packs_rewritten: int = 0

    def leave(self, why: str, oids: Iterable[str]) -> None:
        self.left.setdefault(why, set()).update(oids)

    @property
    def left_over(self) -> set[str]:
        """Every object left, whatever the reason."""
        return set().union(*self.left.values())


@valueclass(frozen=True)
class Packed:
    """A pack holding some of the candidates: its index file, the candidates in it with the
    bytes each takes in the pack, the rest of what it holds, and whether git keeps it as it
    is."""

    index: Path
    hit: Mapping[str, int]
    rest: frozenset[str]
    kept_by_git: bool


IDX_ENTRY = 4 + 4  # a pack index's CRC and offset of an object, beside its id


def packs_holding(git: Git, wanted: Collection[str]) -> list[Packed]:
    """The packs that hold any of ``wanted`` (git's own ``pack-*`` and the ``loose-*`` of
    ``git maintenance``), each with what it holds (git's ``show-index``; a pack whose index git
    cannot read holds nothing gc will touch)."""
    found: list[Packed] = []
    objects = git.common_dir / "objects"
    wanted = set(wanted)
    for index in sorted((objects / "pack").glob("*.idx")):
        try:
            data = index.read_bytes()
            end = index.with_suffix(".pack").stat().st_size - git.hash_len
        except OSError:
            continue
        listed = git.run("show-index", stdin=data, check=False)
        if listed.returncode != 0:
            continue
        at = sorted(
            (int(words[0]), os.fsdecode(words[1]))
            for words in (line.split() for line in listed.stdout.splitlines())
            if len(words) >= 2
        )
        if not wanted.intersection(oid for _, oid in at):
            continue
        ends = [offset for offset, _ in at[1:]] + [end]
        hit = {
            oid: stop - offset
            for (offset, oid), stop in zip(at, ends, strict=True)
            if oid in wanted
        }
        rest = frozenset(oid for _, oid in at if oid not in wanted)
        kept = any(index.with_suffix(s).exists() for s in (".keep", ".promisor", ".mtimes"))
        found.append(Packed(index, hit, rest, kept))
    return found


def estimate(
    git: Git, doomed: Collection[str], written: Mapping[str, float | None], cutoff: float
) -> tuple[int, dict[str, int]]:
    """What ``drop`` would free of ``doomed`` as things are, as ``git count-objects -v`` counts
    it (each loose copy's blocks, each packed copy's bytes and index entry, a pack's own header
    and index when nothing of it stays), and how many objects it would leave, by why: those
    written again (``spared``) and those only a pack git keeps holds."""
    left = {why: set(oids) for why, oids in spared(git, doomed, written, cutoff).items() if oids}
    doomed = set(doomed).difference(*left.values())
    objects = git.common_dir / "objects"
    freed = 0
    for oid in doomed:
        with suppress(OSError):
            freed += os.stat(objects / oid[:2] / oid[2:]).st_blocks * 512
    held: set[str] = set()
    free: set[str] = set()
    for found in packs_holding(git, doomed):
        if found.kept_by_git:
            held |= set(found.hit)
            continue
        free |= set(found.hit)
        freed += sum(size + git.hash_len + IDX_ENTRY for size in found.hit.values())
        freed += 0 if found.rest else PACK_OVERHEAD
    if held - free:
        left[KEPT_PACK] = held - free
    return freed, {why: len(oids) for why, oids in left.items()}


def prune_expire(git: Git) -> float:
    """The time before which git's own gc prunes what nothing reaches (``gc.pruneExpire``, by
    default 2.weeks.ago, read as git reads it): 0 for ``never``, past every time for ``now``.
    UnjudgeableRepositoryError when git cannot read the setting."""
    read = git.run(
        "config", "--type=expiry-date", "--default=2.weeks.ago", "gc.pruneExpire", check=False
    )
    said = os.fsdecode(read.stdout).strip()
    if read.returncode != 0 or not said.isdigit():
        raise UnjudgeableRepositoryError(
            f"git cannot read gc.pruneExpire ({git_words(read.stderr, 1)[:-1]}), and it says"
            " how long what nothing reaches stays, so convgit gc deletes nothing.",
            hint="set it to a time git reads (`git config gc.pruneExpire 2.weeks.ago`), then"
            " run convgit gc again",
        )
    return float(said)


def written(
    git: Git,
    doomed: Collection[str],
    before: Mapping[str, float | None],
    carried: Mapping[str, float],
) -> dict[str, float | None]:
    """When convgit last wrote each of ``doomed``, as far as git's files tell: the newest time
    among the commits to drop that hold it (a commit's own loose file's time, which the writing
    of its tree and files precedes on the same clock; a packed commit's commit time, the first
    moment it can have been written: a write in the same second may be anyone's, so it counts
    as someone else's; ``carried``'s for a commit a gc re-parented, its first commit's time).
    ``before``'s time (an earlier gc's) for an object no such commit holds;
    None when nothing tells (then no time of its files is convgit's)."""
    here = held_here(git, doomed)
    times: dict[str, float | None] = {oid: before.get(oid) for oid in here}
    if not here:
        return times
    asked = "".join(f"{oid}\n" for oid in sorted(here)).encode()
    typed = git.run("cat-file", "--batch-check=%(objectname) %(objecttype)", stdin=asked).stdout
    commits = [
        os.fsdecode(line.split()[0]) for line in typed.splitlines() if line.endswith(b" commit")
    ]
    if not commits:
        return times
    objects = git.common_dir / "objects"
    listed = git.run(
        "log", "--no-walk=unsorted", "--format=%H %ct", "--stdin",
        stdin="".join(f"{c}\n" for c in commits).encode(),
    ).stdout  # fmt: skip
    when: dict[str, float] = {}
    for line in os.fsdecode(listed).splitlines():
        commit, _, stamp = line.partition(" ")
        if commit not in here or not stamp.isdigit():
            continue  # not a line of the format (a signature a user's log.showSignature adds)
        try:
            when[commit] = (
                carried.get(commit) or os.stat(objects / commit[:2] / commit[2:]).st_mtime
            )
        except OSError:
            when[commit] = float(stamp)
    newest_first = sorted(when, key=lambda c: -when[c])
    walked = git.run(
        "rev-list", "--objects", "--no-walk=unsorted", "--in-commit-order", "--stdin",
        stdin="".join(f"{c}\n" for c in newest_first).encode(),
    ).stdout  # fmt: skip
    width = 2 * git.hash_len
    current: float | None = None
    for row in walked.splitlines():
        oid = os.fsdecode(row[:width])
        current = when.get(oid, current) if len(row) == width else current
        if oid in times and current is not None:
            times[oid] = max(current, times[oid] or current)
    return times


def spared(
    git: Git, doomed: Collection[str], written: Mapping[str, float | None], cutoff: float
) -> dict[str, set[str]]:
    """Those of ``doomed`` git's own gc would keep because something wrote them again after
    convgit did (``written``) and less than gc.pruneExpire ago (after ``cutoff``): a loose
    file's time says when it was last written; a pack's (git freshens a packed object by
    touching its ``.pack`` file alone, so a ``.pack`` newer than its ``.idx`` was freshened)
    says it for every object it holds, and such a pack stays as it is. By why (``AGAIN``,
    ``PACKED_AGAIN``)."""
    objects = git.common_dir / "objects"

    def again(oid: str, stamp: float) -> bool:
        mine = written.get(oid)
        return stamp > cutoff and (mine is None or stamp > mine)

    found: set[str] = set()
    mates: set[str] = set()
    for oid in doomed:
        try:
            stamp = os.stat(objects / oid[:2] / oid[2:]).st_mtime
        except OSError:
            continue
        if again(oid, stamp):
            found.add(oid)
    for pack in packs_holding(git, doomed):
        if pack.kept_by_git:
            continue
        try:
            touched = pack.index.with_suffix(".pack").stat()
            indexed = pack.index.stat()
        except OSError:
            continue
        if touched.st_mtime_ns <= indexed.st_mtime_ns:
            continue
        hit = {oid for oid in pack.hit if again(oid, touched.st_mtime)}
        if hit:
            found |= hit
            mates |= set(pack.hit)
    return {AGAIN: found, PACKED_AGAIN: mates - found}


def drop(
    git: Git,
    doomed: Collection[str],
    since: float,
    written: Mapping[str, float | None],
    cutoff: float,
) -> Dropped:
    """Delete the objects ``doomed`` (nothing reaches them; the caller checked): loose files
    unlinked, packs rewritten without them (the new pack in place before the old one goes).
    What git's own gc would keep stays (``spared``: written again after convgit wrote it,
    ``written``, and after ``cutoff``), as does anything written or freshened after ``since``
    (``started``), and everything while a git command holds an index or ref lock (it may be
    writing what names a candidate)."""
    done = Dropped()
    wanted = held_here(git, doomed)  # an id a git gc already pruned is no object to delete
    if not wanted:
        return done
    lock = busy(git)
    if lock is not None:
        done.leave(busy_why(lock), wanted)
        return done
    asked = set(wanted)
    for why, oids in spared(git, wanted, written, cutoff).items():
        done.leave(why, oids)
        wanted -= oids
    objects = git.common_dir / "objects"
    for oid in sorted(wanted):
        path = objects / oid[:2] / oid[2:]
        try:
            if path.stat().st_mtime > since:
                done.leave(FRESH, [oid])
                continue
            path.unlink()
        except OSError:
            continue
        faults.point("gc:dropped-loose")
    midx = (objects / "pack" / "multi-pack-index").exists()
    midx_bitmap = any((objects / "pack").glob("multi-pack-index*.bitmap"))
    for found in packs_holding(git, wanted):
        pack = found.index.with_suffix(".pack")
        if found.kept_by_git or _fresh(pack, since):
            done.leave(KEPT_PACK if found.kept_by_git else FRESH, found.hit)
            continue
        made = None
        if found.rest:
            name = git.run(
                "pack-objects", "-q", str(objects / "pack" / "pack"),
                stdin="".join(f"{oid}\n" for oid in sorted(found.rest)).encode(),
            ).stdout  # fmt: skip
            made = objects / "pack" / f"pack-{os.fsdecode(name).strip()}.idx"
        faults.point("gc:repacked")
        if _fresh(pack, since):  # git freshened it while the rest was copied: it all stays
            if made is not None and made != found.index:
                _remove_pack(made)
            done.leave(FRESH, found.hit)
            continue
        if midx:  # git reads every pack's own index until it is written again
            _remove_midx(objects / "pack")
        _remove_pack(found.index)
        done.packs_rewritten += 1
    remaining = held_here(git, asked)
    done.objects = len(asked - remaining)
    done.left = {why: oids & remaining for why, oids in done.left.items() if oids & remaining}
    if done.packs_rewritten and midx:
        # written anew: git's write keeps the packs the old one named, files gone or not
        indexed = git.run(
            "multi-pack-index", "write", *(["--bitmap"] if midx_bitmap else []), check=False
        )
        if indexed.returncode != 0 and midx_bitmap:
            git.run("multi-pack-index", "write", check=False)
    graphs = objects / "info"
    if done.objects and ((graphs / "commit-graph").exists() or (graphs / "commit-graphs").exists()):
        git.run("commit-graph", "write", "--reachable", check=False)
    return done


def held_here(git: Git, oids: Collection[str]) -> set[str]:
    """Those of ``oids`` this repository's own object folder holds, loose or packed (read from
    the files: asking git for a missing object in a partial clone would fetch it)."""
    objects = git.common_dir / "objects"
    loose = {oid for oid in oids if (objects / oid[:2] / oid[2:]).exists()}
    return loose | {oid for found in packs_holding(git, oids) for oid in found.hit}


def busy_why(lock: Path) -> str:
    """Why gc leaves its candidates while ``lock`` is held (``busy``)."""
    return f"{BUSY} ({lock}: if no git runs, it is stale and can go)"


def _fresh(pack: Path, since: float) -> bool:
    """Whether git wrote or freshened ``pack`` after ``since`` (a pack that is gone counts as
    fresh: someone else is repacking)."""
    try:
        return pack.stat().st_mtime > since
    except OSError:
        return True


def _remove_midx(folder: Path) -> None:
    """Delete the multi-pack-index and the files beside it (its bitmap and reverse index)."""
    for path in [folder / "multi-pack-index", *folder.glob("multi-pack-index-*")]:
        with suppress(OSError):
            os.unlink(path)


def _remove_pack(index: Path) -> None:
    """Delete a pack's files, its index first (git then no longer looks in it)."""
    for suffix in (".idx", ".pack", ".rev", ".bitmap"):
        with suppress(OSError):
            os.unlink(index.with_suffix(suffix))
        faults.point("gc:pack-file-gone")


def busy(git: Git) -> Path | None:
    """The lock of a git command that holds an index or a ref of any worktree right now (it may
    be between writing an object and writing what names it); None when there is none."""
    folders = [git.common_dir, *sorted((git.common_dir / "worktrees").glob("*"))]
    locks = [folder / "index.lock" for folder in folders] + [git.common_dir / "packed-refs.lock"]
    for lock in locks:
        if lock.exists():
            return lock
    for parent, _, files in os.walk(git.common_dir / "refs"):
        for name in files:
            if name.endswith(".lock"):
                return Path(parent) / name
    return None


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


def started(git: Git) -> float:
    """The time ``drop`` compares against, taken when gc starts: an object or pack written or
    freshened after it stays. Less the file system's step (``slack``)."""
    now = time.time()
    return now - slack(git)


def slack(git: Git) -> float:
    """How far a file's time may lie before the clock that wrote it: where the object folder
    keeps whole seconds (ext3, HFS+) or two (FAT), a write just after a moment may carry an
    earlier time; elsewhere, a kernel's file times may lag its clock by a tick."""
    objects = git.common_dir / "objects"
    try:
        handle, name = tempfile.mkstemp(prefix="tmp_convgit_clock_", dir=objects)
    except OSError:
        return 2.0
    try:
        stamp = os.fstat(handle).st_mtime_ns
    finally:
        os.close(handle)
        with suppress(OSError):
            os.unlink(name)
    coarse = stamp % 1_000_000_000 == 0
    return 2.0 if coarse else 0.05


class Pruning:
    """gc's git on one repository, as the workspace track hands it out
    (``Workspace.pruning``): the functions above, each on this repository's git."""

    def __init__(self, git: Git) -> None:
        self._git = git

    def started(self) -> float:
        return started(self._git)

    def prune_expire(self) -> float:
        return prune_expire(self._git)

    def graph(self, tips: Collection[str]) -> tuple[list[str], dict[str, list[str]]]:
        return graph(self._git, tips)

    def rebase(
        self,
        order: list[str],
        parents: Mapping[str, list[str]],
        kept: Collection[str],
        *,
        write: bool,
    ) -> Rebased:
        return rebase(self._git, order, parents, kept, write=write)

    def objects_of(self, tips: Iterable[str], *, walk: bool = True) -> set[str]:
        return objects_of(self._git, tips, walk=walk)

    def protected(self, private_indexes: Iterable[Path]) -> set[str]:
        return protected(self._git, private_indexes)

    def index_blobs(self, indexes: Iterable[Path]) -> set[str]:
        return index_blobs(self._git, indexes)

    def disk_sizes(self, oids: Collection[str], *, packed: bool = False) -> dict[str, int]:
        return disk_sizes(self._git, oids, packed=packed)

    def own_bytes(self) -> int:
        return own_bytes(self._git)

    def estimate(
        self, doomed: Collection[str], written: Mapping[str, float | None], cutoff: float
    ) -> tuple[int, dict[str, int]]:
        return estimate(self._git, doomed, written, cutoff)

    def written(
        self,
        doomed: Collection[str],
        before: Mapping[str, float | None],
        carried: Mapping[str, float],
    ) -> dict[str, float | None]:
        return written(self._git, doomed, before, carried)

    def drop(
        self,
        doomed: Collection[str],
        since: float,
        written: Mapping[str, float | None],
        cutoff: float,
    ) -> Dropped:
        return drop(self._git, doomed, since, written, cutoff)

    def held_here(self, oids: Collection[str]) -> set[str]:
        return held_here(self._git, oids)

    def busy(self) -> Path | None:
        return busy(self._git)

    def pack(self, oids: Collection[str]) -> None:
        pack(self._git, oids)

    def reached(self, *, ours: bool) -> set[str]:
        """Every object something reaches (``reachability.reached``)."""
        return reachability.reached(self._git, ours=ours)
