"""``convgit gc``: let go what the retention policy does not keep
(``convgit.upkeep.retention``), for every session of the store at once (forks share commits).

The kept snapshots' commits are re-parented onto their nearest kept ancestor (same trees), the
sessions' sidecars told (a ``rebased`` record: old id -> new; a ``pruned`` record per commit
let go), the refs moved and deleted in one git transaction, then the objects nothing reaches
any more deleted (``convgit.git.upkeep.pruning``: never one the user's refs, reflogs or indexes
reach).

Crash-safe: nothing is deleted before everything names what is kept. The new commits are kept
by refs of their own (``refs/convgit/_gc/``) from the moment they are written; the records come
next, then the refs, then the objects. Killed anywhere, every kept snapshot still restores (its
old commit and its new one both exist until the end), and the next ``gc`` finishes the job from
the records (``settle``): refs still at an old commit move, refs of what was let go go, and the
objects a killed run was deleting (listed in ``<store>/gc-drop``) are checked again and go.
Concurrent-safe: it holds the lock of every session's records and private indexes (no snapshot,
restore or append runs meanwhile), the background packing's lock, and its own.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from convgit import schema
from convgit.base import codec, faults, locks
from convgit.base.errors import ConvgitError, RefusedError
from convgit.base.valueclass import valueclass
from convgit.git import names
from convgit.git.upkeep import pruning
from convgit.store import load, sessions
from convgit.store.location import StoreLocation
from convgit.store.shared import shared_ids
from convgit.upkeep.retention import HELD, Item, Policy, judge
from convgit.workspace import Workspace

if TYPE_CHECKING:
    from convgit.schema.shapes import GcJson

LOCK_WAIT = 10.0
GC_LETS_GO = "convgit gc lets snapshots go"  # what needs git, as a refusal outside git says
MIB = 1024 * 1024


@valueclass
class GcReport:
    """What gc let go (or would, with ``dry_run``), what it kept and why, and the bytes."""

    dry_run: bool
    policy: Policy
    let_go: list[Item] = field(default_factory=list)
    kept: dict[str, int] = field(default_factory=dict)  # why -> how many
    skipped: dict[str, str] = field(default_factory=dict)  # session -> why not looked at
    bytes_before: int = 0  # convgit's own objects before
    bytes_freed: int = 0  # what gc frees (a dry run: what it would, about)
    bytes_after: int = 0
    kept_over_budget: int | None = None  # the kept part alone, when over max_mib
    rebased: int = 0  # commits given new parents
    objects: int = 0  # objects deleted
    left: dict[str, int] = field(default_factory=dict)  # why -> objects gc could not delete
    settled: bool = False  # an interrupted gc was finished first
    seconds: float = 0.0

    def to_json(self) -> GcJson:
        return {
            "dry_run": self.dry_run,
            "policy": self.policy.to_json(),
            "let_go": [item.to_json() for item in self.let_go],
            "kept": self.kept,
            "skipped": [{"session": s, "why": w} for s, w in sorted(self.skipped.items())],
            "bytes": {
                "before": self.bytes_before,
                "freed": self.bytes_freed,
                "after": self.bytes_after,
            },
            "over_budget": self.kept_over_budget,
            "rebased": self.rebased,
            "objects": self.objects,
            "left": [{"why": w, "objects": n} for w, n in sorted(self.left.items())],
            "finished_interrupted": self.settled,
        }


def run(location: StoreLocation, *, dry_run: bool, now: datetime | None = None) -> GcReport:
    """Apply the store's policy (``dry_run``: say what it would do, change nothing)."""
    started = time.monotonic()
    policy = Policy.of(location)
    git = Workspace.needed_by(location, GC_LETS_GO)
    with _locked(location):
        report = GcReport(dry_run, policy)
        since = git.pruning.started()
        cutoff = git.pruning.prune_expire()
        if not dry_run:
            report.settled = settle(location, git, since, cutoff, report)
        report.bytes_before = store_bytes(git)
        _collect(location, git, policy, report, now, since, cutoff)
        if not dry_run:
            (location.root / "gc-last").write_text(schema.now() + "\n")
            (location.root / SIZE_CACHE).unlink(missing_ok=True)  # measured again when asked
            report.bytes_after = store_bytes(git)
            report.bytes_freed = report.bytes_before - report.bytes_after
        else:
            report.bytes_after = max(0, report.bytes_before - report.bytes_freed)
    report.seconds = time.monotonic() - started
    return report


def _collect(
    location: StoreLocation,
    git: Workspace,
    policy: Policy,
    report: GcReport,
    now: datetime | None,
    since: float,
    cutoff: float,
) -> None:
    looked = judge(location, policy, now)
    report.skipped = looked.skipped
    refs = _refs(git)
    mine = {
        sid: {r: c for r, c in refs.items() if names.session_of(r) == sid}
        for sid in looked.sessions
    }
    named = {item.commit for item in looked.items}
    fixed_tips = {c for r, c in refs.items() if names.session_of(r) not in mine}
    fixed_tips |= {c for held in mine.values() for c in held.values() if c not in named}
    fixed = set(git.pruning.graph(fixed_tips)[0])
    _hold_unpushed(location, looked.items, fixed)
    tips = set(refs.values()) | named | {item.also for item in looked.items if item.also}
    order, parents = git.pruning.graph(tips & _present(git, tips))
    kept = _kept(looked.items, fixed, parents)
    for item in looked.items:
        if item.why is None and item.commit in kept:
            item.why = "held elsewhere"
    everything = git.pruning.objects_of(tips & set(order))
    theirs = _user_objects(git, location)
    if policy.max_mib is not None:
        budget = int(policy.max_mib * MIB)
        extra = _over_budget(git, looked.items, kept, fixed_tips, theirs, budget, report)
        for item in extra:
            item.why = None
        kept = _kept(looked.items, fixed, parents)
        for item in looked.items:
            if item.why is None and item.commit in kept:
                item.why = "held elsewhere"
    rebased = git.pruning.rebase(order, parents, kept & set(order), write=not report.dry_run)
    report.rebased = len(rebased.commits)
    still = git.pruning.objects_of(kept - set(rebased.commits), walk=False)
    still |= git.pruning.objects_of(fixed_tips)
    still |= git.pruning.objects_of(kept & set(rebased.commits), walk=False) - set(rebased.commits)
    before = _left_before(location)
    doomed = (everything | set(before)) - still - theirs
    written = git.pruning.written(doomed, before, _carried(location))
    report.let_go = [item for item in looked.items if item.why is None]
    for item in looked.items:
        if item.why:
            report.kept[item.why] = report.kept.get(item.why, 0) + 1
    if report.dry_run:
        lock = git.pruning.busy()
        if lock is not None and doomed:
            report.left[pruning.busy_why(lock)] = len(git.pruning.held_here(doomed))
            return
        freed, left = git.pruning.estimate(doomed, written, cutoff)
        report.left.update(left)
        new = sum(git.pruning.disk_sizes(list(rebased.commits), packed=True).values())
        overhead = pruning.PACK_OVERHEAD if rebased.commits else 0
        report.bytes_freed = max(0, freed - new - overhead)
        return
    _apply(location, git, looked.items, mine, rebased, doomed, written, since, cutoff, report)


def _hold_unpushed(location: StoreLocation, items: list[Item], fixed: set[str]) -> None:
    """A shared session's snapshots and saved states stay until a remote has them: a commit
    no fetched or pushed ref of a remote (``refs/convgit/_remote/``, among the refs gc does not
    look at: ``fixed``) reaches is held, "not pushed"."""
    shared = set(shared_ids(location))
    for item in items:
        if item.session in shared and item.commit not in fixed and item.why not in HELD:
            item.why = "not pushed"


def _kept(items: list[Item], fixed: set[str], parents: dict[str, list[str]]) -> set[str]:
    """The commits kept: those of the items a rule keeps, those ``fixed`` (refs gc does not
    look at reach them), the commit each kept saved state's restore went to (its undo reads
    it), and the whole ancestry of each saved state kept (a saved state's commit may be a
    child of the state saved first, with exact bytes: its id must not change); what these
    keep keeps in turn."""
    kept = {item.commit for item in items if item.why} | fixed
    # an undo to a saved state reads the commit its restore went to: that commit stays too,
    # and so on down the chain, for a saved state kept only because a kept one went to it is
    # itself one an undo may restore (the two rules are applied until neither keeps more)
    went_to: dict[str, set[str]] = {}
    for item in items:
        if item.also and item.also in parents:
            went_to.setdefault(item.commit, set()).add(item.also)
    saved = {item.commit for item in items if item.what == "saved"}
    stack = [(commit, commit in saved) for commit in kept]  # (commit, its ancestry kept)
    whole: set[str] = set()  # the commits whose ancestry is kept, walked once
    while stack:
        commit, ancestry = stack.pop()
        found = [(also, also in saved) for also in went_to.get(commit, ())]
        if ancestry and commit not in whole:
            whole.add(commit)
            found += [(parent, True) for parent in parents.get(commit, [])]
        for also, walk in found:
            if also not in kept or (walk and also not in whole):
                kept.add(also)
                stack.append((also, walk))
    return kept


def _apply(
    location: StoreLocation,
    git: Workspace,
    items: list[Item],
    mine: dict[str, dict[str, str]],
    rebased: pruning.Rebased,
    doomed: set[str],
    written: dict[str, float | None],
    since: float,
    cutoff: float,
    report: GcReport,
) -> None:
    moved = rebased.commits
    targets = sorted({moved[c] for held in mine.values() for c in held.values() if c in moved})
    if targets:  # the new commits are kept from here on, whatever happens next
        _transaction(git, [f"create {names.gc_ref(c)} {c}\n" for c in targets])
    stamp = schema.now()
    records: dict[str, list[dict[str, Any]]] = {}
    for sid in mine:
        ours = [item for item in items if item.session == sid]
        named = {item.commit for item in ours} | set(mine[sid].values())
        named |= {item.also for item in ours if item.also}
        theirs = {old: new for old, new in moved.items() if old in named}
        records[sid] = [schema.rebased(theirs, stamp)] if theirs else []
        records[sid] += [
            schema.pruned(item.entry, item.commit, item.what, stamp)
            for item in ours
            if item.why is None
        ]
    journal = {
        "ts": stamp,
        "records": {sid: found for sid, found in records.items() if found},
        "moved": moved,
        "let_go": sorted({item.commit for item in items if item.why is None}),
        "doomed": sorted(doomed),
        # when convgit last wrote each (``pruning.written``): a later write is someone else's
        "written": {oid: when for oid, when in sorted(written.items()) if when is not None},
        # a re-parented commit's first write: its new commit is packed, its time lost
        "carried": {new: written[old] for old, new in moved.items() if written.get(old)},
    }
    _write_journal(location, journal)
    faults.point("gc:before-records")
    _finish(location, git, journal, since, cutoff, report)


def _finish(
    location: StoreLocation,
    git: Workspace,
    journal: dict[str, Any],
    since: float,
    cutoff: float,
    report: GcReport,
) -> None:
    """Carry out the journal of a gc (``_apply`` wrote it; ``settle`` after a kill): each
    session's records (unless it has them), the refs, the objects (none written or freshened
    after ``since``, when gc started, none git's own gc would keep: written again after
    convgit wrote it and after ``cutoff``); then the journal goes. What was deleted and what
    was left, and why, go to ``report``."""
    stamp = journal["ts"]
    for sid, records in sorted(journal["records"].items()):
        sidecar_file = sessions.sidecar_file(location, sid)
        if stamp not in load.sidecar(sidecar_file)[1].gc_runs:
            sidecar_file.append(records)
        faults.point("gc:between-sessions")
    faults.point("gc:before-refs")
    moved, let_go = journal["moved"], set(journal["let_go"])
    script = []
    for ref, commit in sorted(_refs(git).items()):
        if ref.startswith(names.GC_PREFIX):
            script.append(f"delete {ref} {commit}\n")
        elif names.session_of(ref) in journal["records"] and commit in moved:
            script.append(f"update {ref} {moved[commit]} {commit}\n")
        elif names.session_of(ref) in journal["records"] and commit in let_go:
            script.append(f"delete {ref} {commit}\n")
    _transaction(git, script)
    _expire_logs(git, [line.split()[1] for line in script])
    faults.point("gc:before-prune")
    safe = git.pruning.protected(_private_indexes(location))
    faults.point("gc:dropping")
    written = _times(journal.get("written"))  # a journal of an older gc has none: unknown
    dropped = git.pruning.drop(set(journal["doomed"]) - safe, since, written, cutoff)
    report.objects += dropped.objects
    for why, oids in dropped.left.items():
        report.left[why] = report.left.get(why, 0) + len(oids)
    left = {oid: written.get(oid) for oid in sorted(dropped.left_over)}
    _write_atomically(location.root / LEFT, codec.dumps(left).encode())
    carried = {**_carried(location), **_times(journal.get("carried"))}
    there = git.pruning.held_here(carried)
    kept = {c: when for c, when in sorted(carried.items()) if c in there and when is not None}
    _write_atomically(location.root / CARRIED, codec.dumps(kept).encode())
    git.pruning.pack([new for new in set(moved.values()) if _loose(git, new)])
    (location.root / JOURNAL).unlink(missing_ok=True)


def _left_before(location: StoreLocation) -> dict[str, float | None]:
    """The objects an earlier gc let go but had to leave where they were (``LEFT``), each with
    when convgit last wrote it (None: unknown): this run deletes them too, once nothing reaches
    them and git's own gc would not keep them."""
    try:
        found = codec.decode((location.root / LEFT).read_bytes())
    except (OSError, ValueError):
        return {}
    if isinstance(found, list):  # an older gc's: ids alone
        return {oid: None for oid in found if isinstance(oid, str)}
    return _times(found)


def _carried(location: StoreLocation) -> dict[str, float]:
    """When convgit first wrote each commit a gc re-parented (``CARRIED``): its new commit is
    packed, so no file of git's keeps that time."""
    try:
        found = _times(codec.decode((location.root / CARRIED).read_bytes()))
    except (OSError, ValueError):
        return {}
    return {commit: when for commit, when in found.items() if when is not None}


def _times(found: object) -> dict[str, float | None]:
    """An object -> time mapping as JSON gave it (anything else: nothing known)."""
    if not isinstance(found, dict):
        return {}
    return {
        oid: float(when) if isinstance(when, int | float) else None
        for oid, when in found.items()
        if isinstance(oid, str)
    }


JOURNAL = "gc-journal.json"
CARRIED = "gc-written.json"  # a re-parented commit -> when convgit wrote the commit it replaced
LEFT = "gc-left.json"  # objects a gc let go and could not delete yet: id -> when convgit wrote it


def _write_journal(location: StoreLocation, journal: dict[str, Any]) -> None:
    _write_atomically(location.root / JOURNAL, codec.dumps(journal).encode())


def _write_atomically(path: Path, data: bytes) -> None:
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_bytes(data)
    with open(temporary, "rb") as written:
        os.fsync(written.fileno())
    os.replace(temporary, path)


def interrupted(location: StoreLocation) -> str | None:
    """When the gc that was killed before it finished began (its journal's time), or None:
    ``fsck`` and ``status`` name it, and the next ``convgit gc`` finishes it (``settle``)."""
    try:
        journal = codec.decode((location.root / JOURNAL).read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(journal, dict):
        return None
    return str(journal.get("ts") or "") or "an unknown time"


def settle(
    location: StoreLocation, git: Workspace, since: float, cutoff: float, report: GcReport
) -> bool:
    """Finish a gc that was killed (its journal is there): the records each session lacks,
    the refs, the objects it was deleting. Refs of its own (``names.GC_PREFIX``) left by a gc
    killed before its journal go. True when there was anything to finish."""
    path = location.root / JOURNAL
    try:
        journal = codec.decode(path.read_bytes())
    except FileNotFoundError:
        journal = None
    except ValueError:  # written whole and renamed into place: damage means it is not ours
        path.unlink()
        journal = None
    if isinstance(journal, dict):
        _finish(location, git, journal, since, cutoff, report)
        return True
    keepers = {r: c for r, c in _refs(git).items() if r.startswith(names.GC_PREFIX)}
    _transaction(git, [f"delete {ref} {commit}\n" for ref, commit in sorted(keepers.items())])
    return bool(keepers)


def _over_budget(
    git: Workspace,
    items: list[Item],
    kept: set[str],
    fixed_tips: set[str],
    theirs: set[str],
    budget: int,
    report: GcReport,
) -> list[Item]:
    """The items kept while there is room (recent, branch ends) to let go, oldest first, so
    convgit's objects fit in ``budget`` bytes; the fewest that do (all of them when the kept
    part alone is over: ``report.kept_over_budget`` then says how much it is)."""
    soft = sorted((i for i in items if i.why and i.why not in HELD), key=lambda i: i.ts)
    fixed = git.pruning.objects_of(fixed_tips)

    def size(count: int) -> int:
        gone = {i.commit for i in soft[:count]}
        held = {i.commit for i in items if i.why and i.commit not in gone and i not in soft[:count]}
        found = (git.pruning.objects_of(held & kept, walk=False) | fixed) - theirs
        return sum(git.pruning.disk_sizes(found, packed=True).values())

    if size(0) <= budget:
        return []
    low, high = 1, len(soft)
    if size(high) > budget:
        report.kept_over_budget = size(high)
        return soft
    while low < high:
        middle = (low + high) // 2
        if size(middle) <= budget:
            high = middle
        else:
            low = middle + 1
    return soft[:low]


def store_bytes(git: Workspace) -> int:
    """The bytes git's object folder takes (``git count-objects -v``: loose and packed)."""
    listed = os.fsdecode(git.run("count-objects", "-v").stdout)
    found = dict(line.split(": ", 1) for line in listed.splitlines() if ": " in line)
    return (int(found.get("size", "0")) + int(found.get("size-pack", "0"))) * 1024


def _user_objects(git: Workspace, location: StoreLocation) -> set[str]:
    """Every object something other than convgit's refs reaches: the user's refs, reflogs,
    indexes and worktrees' own refs, and the blobs convgit's private indexes name.
    UnjudgeableRepositoryError when git cannot prove it (nothing is deleted then)."""
    found = git.pruning.reached(ours=False)
    return found | git.pruning.index_blobs(_private_indexes(location))


def _private_indexes(location: StoreLocation) -> list[Path]:
    folder = location.root / "index"
    return sorted(p for p in folder.glob("*") if "." not in p.name) if folder.is_dir() else []


def _refs(git: Workspace) -> dict[str, str]:
    return git.refs_under(names.PREFIX)


def _present(git: Workspace, commits: set[str]) -> set[str]:
    asked = "".join(f"{c}\n" for c in sorted(commits)).encode()
    listed = git.run("cat-file", "--batch-check=%(objectname) %(objecttype)", stdin=asked).stdout
    return {
        os.fsdecode(line.split()[0]) for line in listed.splitlines() if line.endswith(b" commit")
    }


def _loose(git: Workspace, oid: str) -> bool:
    return (git.common_dir / "objects" / oid[:2] / oid[2:]).exists()


def _transaction(git: Workspace, script: list[str]) -> None:
    """One ``git update-ref --stdin`` transaction: every line or none."""
    if script:
        git.run("update-ref", "--stdin", stdin="".join(script).encode())


def _expire_logs(git: Workspace, refs: list[str]) -> None:
    """Under core.logAllRefUpdates=always a ref's log would keep the old commits."""
    logs = git.common_dir / "logs"
    for ref in refs:
        if (logs / ref).exists():
            expire = ("--expire=now", "--expire-unreachable=now")
            git.run("reflog", "expire", *expire, ref, check=False)


@contextmanager
def _locked(location: StoreLocation) -> Iterator[None]:
    """gc's own lock, the background packing's, and every session's records and private
    indexes: no snapshot, restore or append runs while gc does."""
    from convgit.git.index import private_index

    with ExitStack() as held:
        try:
            held.enter_context(locks.held(location.root / "locks" / "gc.lock", 0))
        except locks.LockTimeout:
            raise RefusedError(
                "Another convgit gc is running in this store.", "wait for it to end"
            ) from None
        held.enter_context(locks.held(location.root / "locks" / "maintenance.lock", LOCK_WAIT))
        for index in _private_indexes(location):
            held.enter_context(private_index.locked(index))
        for sid in location.session_ids():
            held.enter_context(sessions.sidecar_file(location, sid).lock())
        yield


SIZE_CACHE = "store-size.json"
SIZE_FRESH = 3600.0  # seconds ``status`` shows a measured size before measuring again


def store(location: StoreLocation, *, fresh: bool = True) -> dict[str, Any] | None:
    """The store's size (the objects only convgit's refs reach, ``bytes``, and when it was
    ``measured``) and policy, for ``status`` and ``snapshots``; None outside git. Over its
    budget, ``gc_lets_go``: how many snapshots and saved states a ``gc`` would let go now (its
    dry run; 0: the current rules keep everything), else None. Without ``fresh``, a size
    measured in the last hour is shown as it was (walking every snapshot's objects costs
    ``status`` more than the rest of it on a large store), and so is what gc would let go
    while the policy and the sessions' records are the ones it was judged under."""
    place = location.git
    if place is None or place.worktree is None:
        return None
    try:
        last: str | None = (location.root / "gc-last").read_text().strip() or None
    except OSError:
        last = None
    policy = Policy.of(location)
    cache = location.root / SIZE_CACHE
    measured: dict[str, Any] | None = None
    if not fresh:
        try:
            if time.time() - cache.stat().st_mtime < SIZE_FRESH:
                measured = codec.decode(cache.read_bytes())
        except (OSError, ValueError):
            measured = None
    keep_time = True
    if not isinstance(measured, dict) or type(measured.get("bytes")) is not int:
        git = Workspace.of(location)
        if git is None:
            return None
        measured = {"bytes": git.pruning.own_bytes(), "measured": schema.now()}
        keep_time = False
    over = policy.max_mib is not None and measured["bytes"] > policy.max_mib * MIB
    judged = {"policy": policy.to_json(), "records": _records_changed(location)}
    lets_go = measured.get("gc_lets_go") if measured.get("judged") == judged else None
    if over and type(lets_go) is not int:
        lets_go = _lets_go(location)
        measured.update(gc_lets_go=lets_go, judged=judged)
        _cache(cache, measured, keep_time)
    elif not keep_time:
        _cache(cache, measured, keep_time)
    return {
        "bytes": measured["bytes"],
        "measured": str(measured.get("measured", "")),
        "policy": policy.to_json(),
        "last_gc": last,
        "interrupted_gc": interrupted(location),
        "gc_lets_go": lets_go if over else None,
    }


def _records_changed(location: StoreLocation) -> list[int]:
    """When the sessions' files last changed, and how many there are: what gc judged changes
    when this does (a turn, a label taken off, a session moved to the trash)."""
    try:
        found = list(os.scandir(location.sessions))
    except OSError:
        return [0, 0]
    times = [0]
    for entry in found:
        with suppress(OSError):
            times.append(entry.stat().st_mtime_ns)
    return [max(times), len(found)]


def _lets_go(location: StoreLocation) -> int | None:
    """How many snapshots and saved states ``gc`` would let go now (its dry run); None when it
    cannot say (another gc runs, a session is busy past the wait, a damaged file)."""
    try:
        return len(run(location, dry_run=True).let_go)
    except ConvgitError:
        return None


def _cache(cache: Path, measured: dict[str, Any], keep_time: bool) -> None:
    """Write the measured size (and what gc would let go) to ``cache``; ``keep_time``: with the
    time it had, so that what gc would let go, added later, does not make the size fresh."""
    with suppress(OSError):
        before = cache.stat().st_mtime if keep_time else None
        temporary = cache.with_name(SIZE_CACHE + ".tmp")
        temporary.write_bytes(codec.dumps(measured).encode())
        if before is not None:
            os.utime(temporary, (before, before))
        os.replace(temporary, cache)


def auto(store_root: Path, worktree: Path) -> int:
    """The automatic ``gc`` (``[retention] auto``: the session's snapshots start it when
    ``workspace.background.gc_due``) of the store at ``store_root``: one line to
    ``logs/gc.log``."""
    from convgit.store.location import find_git

    log = store_root / "logs" / "gc.log"
    try:
        report = run(StoreLocation(store_root, find_git(worktree)), dry_run=False)
        line = (
            f"{schema.now()} let go {len(report.let_go)}, freed {report.bytes_freed} bytes"
            f" in {report.seconds:.1f} s"
        )
        code = 0
    except (ConvgitError, OSError) as exc:
        line, code = f"{schema.now()} gc failed: {exc}", 1
    with suppress(OSError):
        log.parent.mkdir(parents=True, exist_ok=True)
        with open(log, "a") as written:
            written.write(line + "\n")
    return code


def main(args: list[str]) -> int:
    """``convgit _auto-gc STORE WORKTREE``, the automatic gc's entry (``__main__.LEAN``): the
    session's snapshots start it through convgit's own entry, the top floor, which may start
    any floor's module."""
    if len(args) != 2:
        print("convgit: _auto-gc takes the store's folder and the working tree's.", file=sys.stderr)
        return 2
    return auto(Path(args[0]), Path(args[1]))
