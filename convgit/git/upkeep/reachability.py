"""What a repository reaches, as git proves it, or a refusal: the one walk that decides which
objects convgit may delete (``convgit.git.upkeep.pruning``), so it fails closed.

git walks every ref (the user's, the stash, notes, and convgit's own unless left out), every reflog,
the index of every worktree, the refs each worktree keeps for itself (``refs/bisect/``,
``refs/worktree/``, ``refs/rewritten/``, which ``--all`` leaves out for worktrees other than the one
it runs in), the pseudo-refs a merge, rebase, cherry-pick or fetch leaves (``ORIG_HEAD``,
``FETCH_HEAD``...) and what a stopped rebase, merge or cherry-pick keeps to finish (its autostash,
``rebase-merge/orig-head``, ``sequencer/head``...). The walk counts only when git finished it
without a single error: a ref that names a missing object, a tree git cannot read, an index naming a
blob that is gone all end it, and then nothing may be deleted (``UnjudgeableRepositoryError``). The
one warning that is no error is a reflog naming a commit git already pruned: that commit's objects
are gone, nothing of them can be protected or lost.

A partial clone leaves objects on its promisor remote. A missing blob hides nothing (it names no
other object), so a clone made with ``--filter=blob:none`` is judged: the walk goes past what is
promised (``--missing=allow-promisor``, which never fetches) and lists everything local. A
missing tree or commit hides what it names, which may be a local object only a convgit snapshot
also holds: such a clone is refused, by name, until the trees are fetched. A shallow clone is
judged: what lies past its boundary was never here, and ``git fetch --deepen`` brings it from
the remote. A repository that borrows objects (``objects/info/alternates``) is judged: the walk
reads through the alternates, and only objects of this repository's own folder are ever deleted.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

from convgit.base.errors import UnjudgeableRepositoryError
from convgit.git.names import PREFIX
from convgit.git.plumbing.run import Git

# the refs git keeps per worktree (its files live in each worktree's git dir)
PER_WORKTREE = ("refs/bisect/", "refs/worktree/", "refs/rewritten/")
# what an operation in progress or just done leaves beside HEAD, in each worktree's git dir
PSEUDO_REFS = (
    "ORIG_HEAD", "FETCH_HEAD", "MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD", "REBASE_HEAD",
    "AUTO_MERGE", "BISECT_HEAD",
)  # fmt: skip
# what a rebase, merge, cherry-pick or revert that stopped keeps in each worktree's git dir to
# finish or abort it: the autostash's commit (the user's uncommitted changes, named by nothing
# else), the commits it started from and goes onto. Each must name an object git has.
IN_PROGRESS = (
    "rebase-merge/autostash", "rebase-merge/orig-head", "rebase-merge/onto",
    "rebase-merge/amend", "rebase-merge/stopped-sha",
    "rebase-apply/autostash", "rebase-apply/orig-head", "rebase-apply/onto",
    "MERGE_AUTOSTASH", "sequencer/head", "sequencer/abort-safety",
)  # fmt: skip
_PRUNED_REFLOG = re.compile(r"^warning: reflog of '.*' references pruned commits$")
_HEX = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")

HINT = "`git fsck` names what is broken; once it is fixed, run convgit gc again"


def reached(git: Git, *, ours: bool) -> set[str]:
    """Every object something reaches: the user's refs, reflogs, indexes, per-worktree refs
    and pseudo-refs, and (``ours``) convgit's own refs too. UnjudgeableRepositoryError when git
    cannot prove the list is whole."""
    partial = _partial_clone(git)
    if partial:
        _refuse_hidden_trees(git, partial, ours=ours)
    walk = ["rev-list", "--objects", "--stdin"]
    walk += [] if ours else [f"--exclude={PREFIX}*"]
    walk += ["--all", "--reflog", "--indexed-objects"]
    walk += ["--missing=allow-promisor"] if partial else []
    tips = "".join(f"{oid}\n" for oid in sorted(worktree_tips(git)))
    done = git.run(*walk, stdin=tips.encode(), check=False)
    _refuse_unless_whole(done.returncode, done.stderr)
    width = 2 * git.hash_len
    return {os.fsdecode(line[:width]) for line in done.stdout.splitlines() if line}


def worktree_tips(git: Git) -> set[str]:
    """What each worktree keeps for itself and ``--all`` may not list: its per-worktree refs
    and the files of a stopped rebase, merge or cherry-pick (each must name an object git has,
    or the walk fails), and the ones of their logs, of its
    HEAD's log and of its pseudo-refs that name an object git has (a log may name what git
    pruned long ago)."""
    refs: dict[str, str] = {}  # object -> the ref that names it, and where
    logged: set[str] = set()
    linked = git.common_dir / "worktrees"
    for folder in [git.common_dir, *(linked / name for name in _names(linked))]:
        here = Git(git.root, folder, git.common_dir, object_format=git.object_format)
        listed = here.run(
            "for-each-ref", "--format=%(objectname) %(refname)", *PER_WORKTREE, check=False
        )
        _refuse_unless_whole(listed.returncode, listed.stderr)
        where = "" if folder == git.common_dir else f" of the worktree {folder.name}"
        for line in os.fsdecode(listed.stdout).splitlines():
            oid, _, name = line.partition(" ")
            refs[oid] = f"{name}{where}"
        for state in IN_PROGRESS:
            for oid in _named(folder / state):
                refs[_full(here, oid)] = f"{state}{where}"
        for log in [*(folder / "logs" / prefix for prefix in PER_WORKTREE), folder / "logs/HEAD"]:
            logged |= _logged(log)
        for name in PSEUDO_REFS:
            logged |= _named(folder / name)
    logged -= {"0" * 40, "0" * 64}
    there = _present(git, set(refs) | logged)
    for oid, name in sorted(refs.items()):
        if oid not in there:
            raise UnjudgeableRepositoryError(
                f"git could not walk everything your repository reaches (the ref {name} names"
                f" {oid}, which is not there), so convgit gc deletes nothing.",
                hint=HINT,
            )
    return there


def _partial_clone(git: Git) -> list[str]:
    """The promisor remotes of a partial clone ([] for any other repository)."""
    listed = git.run("config", "--get-regexp", r"^remote\..*\.promisor$", check=False).stdout
    remotes = [
        line.split()[0][len("remote.") : -len(".promisor")]
        for line in os.fsdecode(listed).splitlines()
        if line.split()[-1].lower() in ("true", "yes", "on", "1")
    ]
    extension = git.run("config", "--get", "extensions.partialClone", check=False).stdout
    named = os.fsdecode(extension).strip()
    if named and named not in remotes:
        remotes.append(named)
    packs = _names(git.common_dir / "objects" / "pack")
    if not remotes and any(name.endswith(".promisor") for name in packs):
        remotes.append("its promisor remote")
    return remotes


def _refuse_hidden_trees(git: Git, remotes: list[str], *, ours: bool) -> None:
    """Refuse a partial clone in which a tree or commit something reaches is not here (blobs
    left out of the walk, so only a missing tree or commit is printed)."""
    walk = ["rev-list", "--objects", "--filter=blob:none", "--missing=print"]
    walk += [] if ours else [f"--exclude={PREFIX}*"]
    walk += ["--all", "--reflog", "--indexed-objects"]
    done = git.run(*walk, check=False)
    _refuse_unless_whole(done.returncode, done.stderr)
    hidden = sum(1 for line in done.stdout.splitlines() if line.startswith(b"?"))
    if hidden:
        remote = remotes[0]
        raise UnjudgeableRepositoryError(
            f"This is a partial clone and {hidden} of the trees or commits your refs reach are"
            f" only on {remote}: git cannot see what they hold, so convgit gc deletes nothing.",
            hint=f"fetch the trees (`git fetch --refetch --filter=blob:none {remote}`),"
            " then run convgit gc again",
        )


def _refuse_unless_whole(code: int, err: bytes) -> None:
    """A walk counts only when git ended it without an error or a warning other than a reflog
    naming pruned commits."""
    said = [line.strip() for line in os.fsdecode(err).splitlines() if line.strip()]
    trouble = [line for line in said if not _PRUNED_REFLOG.match(line)]
    if code == 0 and not trouble:
        return
    words = next((line for line in trouble if line.startswith("fatal:")), None)
    words = words or (trouble[0] if trouble else f"exit status {code}")
    words = words.removeprefix("fatal: ").removeprefix("error: ").removeprefix("warning: ")
    raise UnjudgeableRepositoryError(
        "git could not walk everything your repository reaches"
        f" ({words.rstrip('.')}), so convgit gc deletes nothing.",
        hint=HINT,
    )


def _logged(folder: Path) -> set[str]:
    """Every object id the reflogs under ``folder`` name (old and new)."""
    found: set[str] = set()
    for path in _files_under(folder):
        try:
            text = path.read_text(errors="replace")
        except OSError as exc:
            raise UnjudgeableRepositoryError(
                f"The reflog {path} cannot be read ({exc.strerror or exc}), so convgit gc"
                " deletes nothing.",
                hint=HINT,
            ) from None
        for line in text.splitlines():
            found |= {word for word in line.split("\t")[0].split()[:2] if _HEX.match(word)}
    return found


def _named(path: Path) -> set[str]:
    """The object ids a pseudo-ref's file names (FETCH_HEAD names one a line)."""
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return set()
    return {words[0] for words in (line.split() for line in text.splitlines()) if words}


def _full(here: Git, oid: str) -> str:
    """The whole id of ``oid`` (older gits write ``stopped-sha`` abbreviated); as it is when
    git cannot tell which object it names (the check that follows refuses it)."""
    if _HEX.match(oid) or not re.match(r"^[0-9a-f]{4,64}$", oid):
        return oid
    found = here.run("rev-parse", "--verify", "-q", f"{oid}^{{object}}", check=False)
    whole = os.fsdecode(found.stdout).strip()
    return whole if found.returncode == 0 and _HEX.match(whole) else oid


def _present(git: Git, oids: set[str]) -> set[str]:
    """Those of ``oids`` that are object ids git has (a pseudo-ref left by a fetch or merge that
    git later pruned names nothing to keep)."""
    asked = sorted(oid for oid in oids if _HEX.match(oid))
    if not asked:
        return set()
    listed = git.run(
        "cat-file", "--batch-check=%(objectname)", stdin="".join(f"{o}\n" for o in asked).encode()
    ).stdout
    return {os.fsdecode(line).strip() for line in listed.splitlines() if b" " not in line}


def _files_under(folder: Path) -> Iterable[Path]:
    if folder.is_file():
        yield folder
    for parent, _, files in os.walk(folder):
        for name in files:
            yield Path(parent) / name


def _names(folder: Path) -> list[str]:
    """The names in ``folder``; none when it is missing."""
    try:
        return sorted(os.listdir(folder))
    except OSError:
        return []
