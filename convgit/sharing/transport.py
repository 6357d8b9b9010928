"""git's own transport, for sharing: which remote, ``git push`` and ``git fetch`` of refs under
``refs/convgit/`` only, and the bytes a push would send.

Every git process runs through the ``Workspace`` (convgit's environment: no user hook runs, no
prompt for a password, no identity needed). A push is atomic (``--atomic``: every ref moves on
the remote or none does), so a push killed anywhere leaves the remote as it was or as it should
be.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from convgit.base import faults
from convgit.base.errors import NotFoundError, UsageError, WorkspaceError
from convgit.git import names
from convgit.sharing.settings import ShareSettings
from convgit.store.location import StoreLocation
from convgit.workspace import Workspace, git_words, stopped_on_the_way_out

# a remote's name as convgit takes it (git allows more; these are the names people give)
REMOTE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


def fetch_specs(remote: str, sids: list[str] | None, leave: Sequence[str] = ()) -> list[str]:
    """The refspecs that fetch the session commits (``sids`` None; but those of ``leave``) or
    the refs of ``sids``."""
    if sids is None:
        every = f"+{names.SHARED_PREFIX}*:{names.tracking_ref(remote, names.SHARED_PREFIX)}*"
        return [every, *(f"^{names.shared_ref(sid)}" for sid in leave)]
    prefixes = [names.session_prefix(s) for s in sids]
    return [f"+{p}*:{names.tracking_ref(remote, p)}*" for p in prefixes]


DEFAULT_REMOTE = "origin"


# what needs git, as the sentence a store outside git is refused with starts
SHARED_THROUGH_GIT = "Sessions are shared through git"


def remote(git: Workspace, location: StoreLocation, given: str | None, doing: str) -> str:
    """The remote named, else ``[share] remote``, else origin: one that exists. A configured
    remote that does not exist stops the command (no other remote is tried)."""
    configured = ShareSettings.of(location).remote
    name = given if given is not None else configured or DEFAULT_REMOTE
    if not REMOTE_NAME.fullmatch(name):
        raise UsageError(f"'{name}' is not a remote's name; nothing was {doing}.")
    listed = os.fsdecode(git.run("remote").stdout).split()
    if name not in listed:
        how = (
            "named"
            if given is not None
            else "set as [share] remote in config.toml"
            if configured
            else "the default"
        )
        known = ", ".join(listed) if listed else "none"
        raise NotFoundError(
            f"There is no git remote '{name}' ({how}); nothing was {doing}.",
            f"the remotes here: {known} (`git remote add {name} URL` adds it)",
        )
    return name


@dataclass
class Pushed:
    """What ``git push`` said: ``moved`` when the remote moved since it was fetched (fetch,
    merge and push again), the refs it took otherwise."""

    ok: bool
    moved: bool = False
    refs: list[str] = field(default_factory=list)
    said: list[str] = field(default_factory=list)  # the remote's own words (``remote:``)


def push(
    git: Workspace, remote: str, specs: list[str], leases: dict[str, str] | None = None
) -> Pushed:
    """Push ``specs`` (``SRC:DST``, or ``:DST`` to delete) to ``remote`` in one atomic push.
    None is forced but the refs ``leases`` names (ref -> the commit the remote must still have
    there, "" for none): those are replaced whatever they hold, if they hold that."""
    if not specs:
        return Pushed(True)
    leased = [
        f"--force-with-lease={ref}:{commit}" for ref, commit in sorted((leases or {}).items())
    ]
    proc = git.spawn(
        "push", "--atomic", "--porcelain", "--no-verify", "--quiet", *leased, remote, *specs,
        stdin=False,
    )  # fmt: skip
    with stopped_on_the_way_out(proc):
        faults.point("share:pushing")  # killed while git sends: the remote takes all or nothing
        out, err = proc.communicate()
    lines = os.fsdecode(out).splitlines()
    if proc.returncode == 0:
        return Pushed(True, refs=[line.split("\t")[1] for line in lines if line.count("\t") >= 2])
    rejected = [line.split("\t")[-1] for line in lines if line.startswith("!")]
    said = remote_words(err)
    if _moved(rejected, said):
        return Pushed(False, moved=True, said=said)
    reason = "; ".join(dict.fromkeys(r.strip() for r in rejected if "atomic push failed" not in r))
    if said:
        raise WorkspaceError(
            f"{remote} refused the push: {'; '.join(said)}" + (f" ({reason})." if reason else ".")
        )
    words = reason + "." if reason and not err.strip() else git_words(err, proc.returncode)
    raise WorkspaceError(f"git push to {remote} failed: {words}")


# what git says of a ref the remote moved: on the client's side before sending, and on the
# remote's when another push held or took the ref first (both were sent against the same state)
_MOVED = ("fetch first", "non-fast-forward", "stale info")
_LOCKED = "cannot lock ref"


def remote_words(err: bytes) -> list[str]:
    """What the remote itself said (git's ``remote:`` lines: a hook's reason), in order."""
    found = []
    for line in os.fsdecode(err).splitlines():
        if line.startswith("remote:"):
            words = line.removeprefix("remote:").strip()
            if words:
                found.append(words)
    return found


def _moved(rejected: list[str], said: list[str]) -> bool:
    """The push was refused because the remote moved: fetch, merge and push again."""
    return any(w in r for r in rejected for w in _MOVED) or any(_LOCKED in w for w in said)


def fetch(git: Workspace, remote: str, specs: list[str]) -> None:
    """Fetch ``specs`` from ``remote`` into the tracking refs they name."""
    if specs:
        git.run(
            "fetch", "--no-tags", "--no-write-fetch-head", "--no-auto-gc", "--quiet",
            "--no-recurse-submodules", remote, *specs,
        )  # fmt: skip


def remote_refs(git: Workspace, remote: str, patterns: list[str]) -> dict[str, str]:
    """What ``remote`` has now under ``patterns`` (ref -> id), asked by ``git ls-remote``:
    ids only, no object comes here."""
    listed = git.run("ls-remote", "--quiet", remote, *patterns).stdout
    found = (os.fsdecode(line).partition("\t") for line in listed.splitlines())
    return {name: oid for oid, _, name in found if name}


def held(git: Workspace, remote: str) -> list[str]:
    """The tips of ``remote``'s branches as it holds them now, those this repository has too:
    what the user pushed there. Asked of the remote itself (``git ls-remote``, as ``git push``
    asks), not read from the remote-tracking refs here, which may name what the remote no
    longer has (a branch force-pushed to drop a secret); none when it cannot be asked."""
    listed = git.run("ls-remote", "--quiet", "--heads", remote, check=False)
    if listed.returncode != 0:
        return []
    ids: dict[str, None] = {}
    for line in os.fsdecode(listed.stdout).splitlines():
        oid, _, name = line.partition("\t")
        if name.startswith("refs/heads/"):
            ids[oid] = None
    if not ids:
        return []
    asked = "".join(f"{oid}\n" for oid in ids).encode()
    checked = git.run("cat-file", "--batch-check", stdin=asked, check=False).stdout
    return [
        p[0]
        for p in (line.split() for line in os.fsdecode(checked).splitlines())
        if p[1:2] == ["commit"]
    ]


def set_refs(git: Workspace, moves: dict[str, str]) -> None:
    """Point each ref (under refs/convgit/) at its commit, in one transaction."""
    script = "".join(f"update {name} {commit}\n" for name, commit in sorted(moves.items()))
    if script:
        git.run("update-ref", "--stdin", stdin=script.encode())


def pack_bytes(git: Workspace, tips: list[str], have: list[str]) -> int:
    """The bytes of the pack that carries what ``tips`` reach and ``have`` does not: what a
    push sends (a thin pack, as git sends it)."""
    if not tips:
        return 0
    asked = "".join(f"{t}\n" for t in tips) + "".join(f"^{h}\n" for h in have)
    done = git.run("pack-objects", "--revs", "--stdout", "--thin", "-q", stdin=asked.encode())
    return len(done.stdout)
