"""The git notes of attribution (``names.NOTES``) in git: a commit's note read and written,
``notes.rewriteRef`` in the repository's git config (so git itself copies the notes through a
rebase and an amend), and the note refs carried to and from a remote.

A note is written by convgit's identity (the notes ref's commits are convgit's, as its snapshots
are) from a blob, byte for byte (``git notes add -C``: no clean-up of the text). A remote's note
refs are fetched into ``refs/convgit/_remote/<remote>/_notes/<name>`` and merged into this
clone's with git's ``ours`` strategy: where both have a note for one commit, this clone's stays.

``hooks install git`` adds the note refs to ``notes.rewriteRef`` and remembers, in the store's
``git-config-added``, which values it added; ``hooks uninstall git`` takes out only those.
"""

from __future__ import annotations

import os

from convgit.git import names
from convgit.sharing import transport
from convgit.store.location import StoreLocation
from convgit.workspace import COMMIT, IDENTITY, Workspace

REWRITE_REF = "notes.rewriteRef"
ADDED = "git-config-added"  # in the store: "<key> <value>" a line, what convgit added


class Notes:
    """The notes of some commits under the note refs, read through one listing per ref."""

    def __init__(self, git: Workspace) -> None:
        self.git = git
        self._listed: dict[str, dict[str, str]] = {}
        self._read: dict[tuple[str, str], bytes | None] = {}

    def listing(self, ref: str) -> dict[str, str]:
        """commit -> the blob of its note, under ``ref``."""
        if ref not in self._listed:
            done = self.git.run("notes", f"--ref={ref}", "list", check=False)
            pairs = (line.split() for line in os.fsdecode(done.stdout).splitlines())
            self._listed[ref] = {p[1]: p[0] for p in pairs if len(p) == 2}
        return self._listed[ref]

    def note(self, ref: str, commit: str) -> bytes | None:
        """The note of ``commit`` under ``ref``, or None."""
        if (ref, commit) not in self._read:
            blob = self.listing(ref).get(commit)
            found = None
            if blob is not None:
                done = self.git.run("cat-file", "blob", blob, check=False)
                found = done.stdout if done.returncode == 0 else None
            self._read[(ref, commit)] = found
        return self._read[(ref, commit)]


def read(git: Workspace, ref: str, commit: str) -> bytes | None:
    """The note of ``commit`` under ``ref``, or None."""
    done = git.run("notes", f"--ref={ref}", "show", commit, check=False)
    return done.stdout if done.returncode == 0 else None


def write(git: Workspace, ref: str, commit: str, data: bytes) -> None:
    """Make ``data`` the note of ``commit`` under ``ref`` (over the one there, if any)."""
    blob = os.fsdecode(git.run("hash-object", "-w", "--stdin", stdin=data).stdout).strip()
    git.run(
        "notes", f"--ref={ref}", "add", "-f", "-C", blob, commit,
        config=COMMIT, env={**git.env, **IDENTITY},
    )  # fmt: skip


def remove(git: Workspace, ref: str, commit: str) -> None:
    """Take away the note of ``commit`` under ``ref`` (there is none: nothing happens)."""
    git.run(
        "notes", f"--ref={ref}", "remove", "--ignore-missing", commit,
        config=COMMIT, env={**git.env, **IDENTITY},
    )  # fmt: skip


# -- notes.rewriteRef --


def rewrite_refs(git: Workspace) -> list[str]:
    done = git.run("config", "--get-all", REWRITE_REF, check=False)
    return os.fsdecode(done.stdout).split()


def _added(location: StoreLocation) -> list[str]:
    try:
        text = (location.root / ADDED).read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    return [line.split(" ", 1)[1] for line in text.splitlines() if line.startswith(REWRITE_REF)]


def _remember(location: StoreLocation, values: list[str]) -> None:
    path = location.root / ADDED
    if not values:
        path.unlink(missing_ok=True)
        return
    location.root.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f"{ADDED}.tmp")
    temporary.write_text("".join(f"{REWRITE_REF} {v}\n" for v in values), encoding="utf-8")
    os.replace(temporary, path)


def add_rewrite_refs(git: Workspace, location: StoreLocation, refs: list[str]) -> list[str]:
    """Add each of ``refs`` to ``notes.rewriteRef`` where it is not there yet; the ones added."""
    there = rewrite_refs(git)
    added = [ref for ref in refs if ref not in there]
    _remember(location, [*_added(location), *added])  # remembered first: never one forgotten
    for ref in added:
        git.run("config", "--add", REWRITE_REF, ref)
    return added


def remove_rewrite_refs(git: Workspace, location: StoreLocation) -> list[str]:
    """Take out of ``notes.rewriteRef`` the values convgit added (none other); those taken."""
    ours = _added(location)
    there = rewrite_refs(git)
    taken = [ref for ref in ours if ref in there]
    for ref in taken:
        pattern = "^" + ref.replace(".", "\\.") + "$"
        git.run("config", "--unset-all", REWRITE_REF, pattern)
    _remember(location, [])
    return taken


# -- to and from a remote --


def _one(git: Workspace, ref: str) -> str | None:
    done = git.run("rev-parse", "--verify", "-q", ref, check=False)
    found = os.fsdecode(done.stdout).strip()
    return found if done.returncode == 0 and found else None


def push_specs(git: Workspace, remote: str, refs: list[str]) -> list[str]:
    """The refspecs that carry ``refs`` where this clone's differ from what ``remote`` was last
    known to have (none forced: a remote that moved refuses them, and is fetched and merged)."""
    specs = []
    for ref in refs:
        mine = _one(git, ref)
        if mine is not None and mine != _one(git, names.tracking_ref(remote, ref)):
            specs.append(f"{mine}:{ref}")
    return specs


def fetch_and_merge(git: Workspace, remote: str, refs: list[str]) -> list[str]:
    """Fetch ``remote``'s note refs and merge those of ``refs`` into this clone's (this clone's
    note wins where both have one); the refs that changed here."""
    if not refs:
        return []
    folder = names.remote_prefix(remote) + names.NOTES_TRACKING
    transport.fetch(git, remote, [f"+{names.NOTES_PREFIX}*:{folder}*"])
    changed = []
    for ref in refs:
        theirs = _one(git, names.tracking_ref(remote, ref))
        mine = _one(git, ref)
        if theirs is None or theirs == mine:
            continue
        if mine is not None and _contains(git, mine, theirs):
            continue
        git.run(
            "notes", f"--ref={ref}", "merge", "--quiet", "-s", "ours", theirs,
            config=COMMIT, env={**git.env, **IDENTITY},
        )  # fmt: skip
        changed.append(ref)
    return changed


def _contains(git: Workspace, newer: str, older: str) -> bool:
    done = git.run("merge-base", "--is-ancestor", older, newer, check=False)
    return done.returncode == 0
