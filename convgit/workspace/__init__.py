"""The workspace track: git snapshots of the working tree, restore, diff and side-by-side
worktrees, as one facade over ``convgit.git`` (the runner, objects, the private index, restore
and worktrees). It runs git's own command line: no git library is loaded, so neither a
per-turn snapshot nor a restore pays for one. It knows commits, trees and paths, never
conversations.

Promises kept by every method here:
* HEAD, the user's index, branches, tags, the stash and the user's config are never touched;
  the only refs written are ``refs/convgit/...`` (``set_ref``/``delete_ref``);
* working tree files are changed only by a restore (never by a snapshot or a scan), and never
  through a symlink, outside the working tree, or inside ``.git``;
* no hook runs, nothing is signed, and no user identity is needed.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from convgit.base.errors import (
    HostileSnapshotError,
    NoWorkspaceError,
    RestoreBlockedError,
    WorkspaceError,
)
from convgit.git import names, rules, snapshots
from convgit.git.index import watcher
from convgit.git.index.kept_out import KeptOut
from convgit.git.index.private_index import PrivateIndex
from convgit.git.plumbing.environment import user_env
from convgit.git.plumbing.objects import Change, Delta, Objects, diff
from convgit.git.plumbing.run import (
    AUTHOR_EMAIL,
    AUTHOR_NAME,
    COMMIT,
    DIFF,
    IDENTITY,
    SAFE,
    Git,
    git_words,
    refuse_home_or_root,
    stopped_on_the_way_out,
)
from convgit.git.restore.plan import LeftAlone
from convgit.git.snapshots import Snapshot
from convgit.store.config import DEFAULT_SIZE_CAP
from convgit.store.location import StoreLocation

if TYPE_CHECKING:  # the restore machinery is imported when a restore runs: a hook never needs it
    import subprocess

    from convgit.git.restore.operation import RestoreChanges, RestorePlan, RestoreRequest
    from convgit.git.upkeep.pruning import Pruning


def __getattr__(name: str) -> Any:
    if name in ("RestorePlan", "RestoreChanges", "RestoreRequest"):
        from convgit.git.restore import operation as restore

        return getattr(restore, name)
    raise AttributeError(name)


__all__ = [
    "AUTHOR_EMAIL",
    "AUTHOR_NAME",
    "COMMIT",
    "DEFAULT_SIZE_CAP",
    "DIFF",
    "IDENTITY",
    "SAFE",
    "Change",
    "HostileSnapshotError",
    "LeftAlone",
    "RestoreBlockedError",
    "RestoreChanges",
    "RestorePlan",
    "RestoreRequest",
    "Snapshot",
    "Workspace",
    "WorkspaceError",
    "git_words",
    "refuse_home_or_root",
    "stopped_on_the_way_out",
    "user_env",
]


# git's answers handed on (``Workspace.opened_again``: a snapshot started early,
# ``convgit.workspace.early``), by git dir and working tree, each taken once by the next
# ``Workspace.at`` of the same two folders, which would ask git the same question a moment later.
_opened_early: dict[tuple[Path, Path], Git] = {}


class Workspace:
    """A git working tree seen by convgit: ``root`` (top level), ``git_dir`` (this worktree's
    git dir) and ``common_dir`` (shared; convgit keeps its store in ``common_dir / "convgit"``)."""

    def __init__(
        self, root: Path, git_dir: Path, common_dir: Path, *, object_format: str = "sha1"
    ) -> None:
        self._git = Git(root, git_dir, common_dir, object_format=object_format)
        self._kept_out = KeptOut()
        self._rules_home: Path | None = None  # where the store keeps the rules snapshots record
        self._tracking = watcher.OFF  # how the private index finds what changed
        self.root, self.git_dir, self.common_dir = root, git_dir, common_dir
        self.object_format = object_format

    def __repr__(self) -> str:
        return f"Workspace(root={str(self.root)!r})"

    @classmethod
    def discover(cls, start: Path) -> Workspace | None:
        """The working tree containing ``start``: the repository the store finds there
        (``store.location.find_git``: GIT_DIR and GIT_WORK_TREE honoured), as git describes it
        (core.worktree honoured); None outside a repository or in a bare one. Refuses
        (RefusedError) a worktree whose root is the home folder or the file system root."""
        from convgit.store import location  # the one place a repository is found

        place = location.find_git(Path(start).absolute())
        if place is None or place.worktree is None:
            return None
        return cls.at(place.git_dir, place.worktree)

    @classmethod
    def at(cls, git_dir: Path, worktree: Path) -> Workspace | None:
        """The repository at ``git_dir`` whose working tree was found at ``worktree``, as git
        describes it (``Git.open``); None when git sees no working tree there."""
        if not worktree.is_dir():
            return None
        git = _opened_early.pop((git_dir, worktree), None) or Git.open(git_dir, worktree)
        if git is None:
            return None
        return cls(git.root, git.git_dir, git.common_dir, object_format=git.object_format)

    @classmethod
    def of(cls, location: StoreLocation) -> Workspace | None:
        """The working tree of the repository the store at ``location`` lives in (``at``); None
        outside git or where git sees no working tree."""
        place = location.git
        if place is None or place.worktree is None:
            return None
        return cls.at(place.git_dir, place.worktree)

    @contextmanager
    def opened_again(self, git_dir: Path, worktree: Path) -> Iterator[None]:
        """For the block: the next ``at(git_dir, worktree)`` (this workspace's own folders, as
        the store found them) takes the answer git gave this workspace a moment ago rather than
        asking git again; once, and never after the block."""
        key = (git_dir, worktree)
        _opened_early[key] = self._git
        try:
            yield
        finally:
            _opened_early.pop(key, None)

    @classmethod
    def needed_by(cls, location: StoreLocation, why: str) -> Workspace:
        """``of``, refused plainly (NoWorkspaceError) where there is none: ``why`` is what needs
        git, as the sentence starts ("Sessions are shared through git")."""
        found = cls.of(location)
        if found is None:
            raise NoWorkspaceError(
                f"{why}, and this store is not in a git repository with a working tree.",
                "run convgit inside the repository",
            )
        return found

    def keep_out(self, store: Path) -> None:
        """Never snapshot or restore ``store`` (convgit's own folder) when it is inside the
        working tree; folders named ``.convgit`` are kept out wherever they are. The ignore
        rules each snapshot records are kept in it (``store/rules``, see ``git.rules``)."""
        store = Path(store).resolve()
        self._rules_home = store / "rules"
        if any(store.is_relative_to(git.resolve()) for git in (self.git_dir, self.common_dir)):
            return  # git never stages its own folder
        try:
            inside = store.relative_to(self.root.resolve())
        except ValueError:
            return
        if inside.parts:
            self._kept_out.add(os.fsencode(inside.as_posix()))

    def track_changes(self, setting: str) -> None:
        """Find what changed through the watcher ``setting`` names (``[snapshots] fsmonitor``:
        "auto", "watchman", "off" or a hook's path; see ``convgit.git.index.watcher``)."""
        self._tracking = watcher.choose(setting)

    def tracking(self) -> watcher.Tracking:
        """How snapshots find what changed (``[snapshots] fsmonitor``, as this machine can
        give it: ``convgit.git.index.watcher``)."""
        return self._tracking

    def git(self, *args: str, stdin: bytes | None = None) -> bytes:
        """git's output for ``args`` on this repository, with convgit's environment and safe
        settings (no hook, no user index); a failure raises ``WorkspaceError`` in git's words.
        Every ref written goes through ``set_ref``."""
        return self._git.run(*args, stdin=stdin).stdout

    def run(
        self,
        *args: str,
        index: Path | None = None,
        config: Sequence[str] = SAFE,
        stdin: bytes | None = None,
        check: bool = True,
        env: dict[str, str] | None = None,
    ) -> subprocess.CompletedProcess[bytes]:
        """git ``args`` run to the end on this repository, through the runner (``Git.run``:
        convgit's environment, or ``env``; the config set ``config``, none running a hook;
        ``index``: an index of convgit's, never the user's); WorkspaceError in git's words when
        it fails, unless not ``check``."""
        return self._git.run(*args, index=index, config=config, stdin=stdin, check=check, env=env)

    def spawn(
        self, *args: str, config: Sequence[str] = SAFE, stdin: bool = False
    ) -> subprocess.Popen[bytes]:
        """git ``args`` started on this repository (``Git.spawn``), for a caller that reads
        its output as it comes (end it within ``stopped_on_the_way_out``)."""
        return self._git.spawn(*args, config=config, stdin=stdin)

    @property
    def env(self) -> dict[str, str]:
        """The environment git runs in here (``run``'s, when no ``env`` is given)."""
        return self._git.env

    def commit_tree(self, tree_id: str, parents: Sequence[str], message: str) -> str:
        """A commit of ``tree_id`` by convgit's identity, unsigned; its id."""
        return self._git.commit_tree(tree_id, parents, message)

    def commit_and_tree(self, rev: str) -> tuple[str, str]:
        """The full id of commit ``rev`` and of its tree; NotFoundError when it is no commit."""
        return self._git.commit_and_tree(rev)

    @property
    def pruning(self) -> Pruning:
        """gc's git on this repository: re-parenting kept commits, deleting what nothing
        reaches (``convgit.git.upkeep.pruning``)."""
        from convgit.git.upkeep.pruning import Pruning

        return Pruning(self._git)

    def mirrors(self) -> list[str]:
        """The remotes a plain ``git push`` sends every ref of convgit's to (``remotes``)."""
        from convgit.git.plumbing.remotes import mirrors

        return mirrors(self._git)

    def objects(self) -> Objects:
        """A reader of this repository's objects (one `git cat-file --batch`), for a ``with``."""
        return self._git.objects()

    def private_index(self, index: Path) -> PrivateIndex:
        """The private index at ``index`` (kept per session and worktree)."""
        return PrivateIndex(self._git, index, self._kept_out, self._tracking)

    def ignored(self, paths: Collection[bytes]) -> frozenset[bytes]:
        """Those of ``paths`` (relative to the root) that git's ignore rules match now, whether
        or not an index tracks them (``git check-ignore --no-index``)."""
        from convgit.git.index import agent_files

        return agent_files.ignored(self._git, paths)

    def forget_index(self, index: Path) -> None:
        """Remove a private index and what is kept beside it: the next snapshot rebuilds it
        (after objects it named were rewritten, it must not trust them)."""
        private = self.private_index(index)
        with private.locked():
            private.forget()

    # -- snapshots --

    def snapshot(
        self,
        index: Path,
        *,
        message: str,
        parent: str | None,
        size_cap: int = DEFAULT_SIZE_CAP,
        max_files: int = 0,
    ) -> Snapshot:
        """Record the working tree as a commit with ``parent`` as its only parent (none when None).

        The tree is what ``git add -A`` would stage into an empty index, minus files above
        ``size_cap`` and untracked nested repositories (listed in ``skipped``); a registered
        submodule is kept as its gitlink. When the parent has the same tree, the parent is
        returned (``reused``) and no commit is made. ``index`` is convgit's private index for
        this session and worktree: created (seeded from the user's index) when missing, kept
        as a stat cache. Writes objects only: no ref, no hook, no signature, no file touched.
        ``max_files`` (a turn's cap, 0: none): when ``git add -A`` would take more new or
        changed files than that, nothing is written (SnapshotSkippedError)."""
        return snapshots.take(
            self.private_index(index), message=message, parent=parent, size_cap=size_cap,
            rules_home=self._rules_home, max_files=max_files,
        )  # fmt: skip

    def scan(
        self, index: Path, *, size_cap: int = DEFAULT_SIZE_CAP
    ) -> tuple[str, tuple[LeftAlone, ...]]:
        """The tree id of the working tree right now (as ``snapshot`` would record it; objects
        are written, no commit is made) and the paths left out."""
        private = self.private_index(index)
        with private.locked():
            tree_id, skipped, _ = private.stage(size_cap)
            return tree_id, skipped

    # -- refs and objects --

    def set_ref(self, ref: str, commit: str) -> None:
        """Point ``ref`` (under refs/convgit/) at ``commit``, which keeps it safe from gc."""
        self._git.set_ref(ref, commit)

    def delete_ref(self, ref: str) -> None:
        """Remove ``ref`` (under refs/convgit/); nothing happens when it does not exist."""
        self._git.delete_ref(ref)

    def refs_under(self, prefix: str) -> dict[str, str]:
        """The refs under ``prefix`` (in refs/convgit/), name -> commit."""
        return self._git.refs_under(prefix)

    def convgit_refs(self) -> dict[str, str]:
        """Every ref convgit wrote in this repository, of every family (``names``)."""
        return self._git.refs_under(names.PREFIX)

    def session_refs(self, sid: str, *, trashed: bool = False) -> dict[str, str]:
        """Session ``sid``'s refs (its snapshots, replaced snapshots and saved states; with
        ``trashed``, those it has in the trash), name -> commit."""
        folder = names.trash_prefix(sid) if trashed else names.session_prefix(sid)
        return self._git.refs_under(folder)

    def saved_state_refs(self) -> dict[str, str]:
        """The ref of every saved state, of every session (listed by their pattern: a few ms
        beside 20,000 snapshot refs, where all of refs/convgit/ takes ten times as long)."""
        return self._git.refs_under(names.SAVED_STATE_PATTERN)

    def delete_session_refs(self, sid: str, *, trashed: bool = False) -> dict[str, str]:
        """Delete session ``sid``'s refs (``session_refs``), all or none: git gc may then prune
        their commits. Returns them."""
        found = self.session_refs(sid, trashed=trashed)
        self._git.delete_refs(found)
        return found

    def move_refs(self, moves: Sequence[tuple[str, str, str]]) -> None:
        """Rename refs (old name, new name, commit), all or none; the commits stay kept."""
        self._git.move_refs(moves)

    def delete_refs(self, refs: Mapping[str, str]) -> None:
        """Delete refs (name -> commit), all or none: git gc may then prune their commits."""
        self._git.delete_refs(refs)

    def missing(self, commits: list[str]) -> list[str]:
        """The ``commits`` (full ids) that are not in the repository."""
        ids = [c for c in commits if c and all(x in "0123456789abcdef" for x in c)]
        asked = "".join(f"{c}\n" for c in ids).encode()
        answers = os.fsdecode(self.git("cat-file", "--batch-check", stdin=asked)).splitlines()
        return [c for c, line in zip(ids, answers, strict=False) if line.endswith(" missing")]

    def tree_of(self, commit: str) -> str:
        """The tree id of a commit (a tree id is returned as it is)."""
        with self.objects() as objects:
            return objects.peel(commit, "tree")

    def changes(self, a: str, b: str) -> list[Change]:
        """File-level differences from a to b (commit or tree ids), sorted by path. A file
        replaced by a folder is a deletion plus additions; file <-> symlink is a typechange."""
        with self.objects() as objects:
            deltas = diff(objects, objects.peel(a, "tree"), objects.peel(b, "tree"))
        return [Change(d.path, d.status) for d in deltas]

    def deltas(self, pairs: Sequence[tuple[str | None, str]]) -> list[list[Delta]]:
        """``changes`` with each side's (mode, id), for each pair (a, b) of commit or tree ids
        (a None: from nothing), read through one ``git cat-file``."""
        with self.objects() as objects:
            return [
                diff(
                    objects, None if a is None else objects.peel(a, "tree"), objects.peel(b, "tree")
                )
                for a, b in pairs
            ]

    def parents(self, commits: Sequence[str]) -> dict[str, list[str]]:
        """Each of ``commits`` git has -> its parents, read through one ``git cat-file``."""
        found: dict[str, list[str]] = {}
        with self.objects() as objects:
            for commit in commits:
                read = objects.read(commit)
                if read is None or read[1] != "commit":
                    continue
                head = read[2].split(b"\n\n", 1)[0]
                found[commit] = [
                    os.fsdecode(line[len(b"parent ") :])
                    for line in head.splitlines()
                    if line.startswith(b"parent ")
                ]
        return found

    def patches(self, pairs: Sequence[tuple[str, str]]) -> list[dict[str, str]]:
        """git's unified diff of every changed path (path -> patch) for each (old tree id, new
        tree id) pair, from one ``git diff-tree``; binary files say so in git's words."""
        if not pairs:
            return []
        from convgit.git.plumbing import patches

        done = self._git.run(*patches.DIFF_TREE, config=DIFF, stdin=patches.stdin(pairs))
        return patches.split(done.stdout, pairs)

    def changed_paths(self, pairs: Sequence[tuple[str, str]]) -> list[list[str]]:
        """For each (old tree, new tree) of ``pairs``, the paths that differ, from one ``git
        diff-tree`` (``convgit.git.plumbing.changed``)."""
        from convgit.git.plumbing.changed import changed_paths

        return changed_paths(self._git, pairs)

    def empty_tree(self) -> str:
        """The id of the tree with no file (git knows it without storing it)."""
        return os.fsdecode(self.git("hash-object", "-t", "tree", os.devnull)).strip()

    def git_diff(
        self,
        a: str,
        b: str,
        *,
        stat: int | None = None,
        patch: bool = True,
        colour: bool = False,
        leave_out: Sequence[str] = (),
    ) -> bytes:
        """What ``git diff A B`` prints for two commit or tree ids (``patches.git_diff_args``)."""
        from convgit.git.plumbing import patches

        args = patches.git_diff_args(
            a, b, stat=stat, patch=patch, colour=colour, leave_out=leave_out
        )
        return self._git.run(*args).stdout

    def blobs(self, oids: Collection[str], cap: int) -> dict[str, bytes | None]:
        """The content of each blob, None for one over ``cap`` bytes or missing."""
        found: dict[str, bytes | None] = {}
        with self.objects() as objects:
            for oid in oids:
                read = objects.read(oid)
                ok = read is not None and read[1] == "blob" and len(read[2]) <= cap
                found[oid] = read[2] if ok and read is not None else None
        return found

    def modes(self, commit: str, paths: Sequence[str]) -> dict[str, int | None]:
        """The mode of each of ``paths`` in the tree of ``commit`` (None: not there, or below
        an entry that is not a folder)."""
        with self.objects() as objects:
            tree_id = objects.peel(commit, "tree")
            found = {path: objects.lookup(tree_id, path) for path in paths}
        return {path: None if entry is None else entry[0] for path, entry in found.items()}

    # -- restore --

    def restoring(
        self, request: RestoreRequest, *, index: Path
    ) -> AbstractContextManager[RestorePlan]:
        """The restore ``request`` asks (``convgit.git.restore.operation.RestoreRequest``),
        planned with the private index ``index`` locked for the block: ``save`` then ``apply``
        it. The rules
        ``request.target_rules`` names are read from the store (judged by today's when None, or
        when their copy is gone)."""
        from convgit.git.restore import operation as restore

        then = None
        if request.target_rules and self._rules_home is not None:
            then = rules.recorded(self._rules_home, request.target_rules)
        return restore.restoring(self._git, self.private_index(index), request, then)

    # -- side-by-side worktrees --

    def add_worktree(
        self, commit: str, directory: Path, env: Mapping[str, str] | None = None
    ) -> None:
        """Check ``commit`` out in ``directory`` as a real, detached `git worktree`, marked as
        made by convgit (``env``: variables for the git that does it). The main working tree,
        its index and HEAD are not touched."""
        with self.objects() as objects:
            sha = objects.peel(commit, "commit")
        from convgit.git import worktrees

        worktrees.add(self._git, sha, directory, env)

    def list_worktrees(self) -> list[tuple[Path, str]]:
        """(path, head commit) of each worktree convgit made, whether or not its folder exists."""
        from convgit.git import worktrees

        return worktrees.listed(self._git)

    def remove_worktree(self, directory: Path, *, force: bool = False) -> None:
        """Remove a worktree convgit made (one with changes only with ``force``)."""
        from convgit.git import worktrees

        worktrees.remove(self._git, directory, force=force)

    def discard_worktree(self, directory: Path) -> None:
        """Remove the worktree convgit made at ``directory``, whatever state it is in."""
        from convgit.git import worktrees

        worktrees.discard(self._git, directory)

    # -- housekeeping --

    def maintain(self, *, threshold: int = 2048) -> bool:
        """Pack convgit's own loose objects once there are more than ``threshold`` of them
        (see ``convgit.git.upkeep.packing``). True when it packed."""
        from convgit.git.upkeep import packing

        return packing.pack_own(self._git, threshold=threshold)
