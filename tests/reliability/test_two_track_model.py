"""The two tracks against a plain model, by a hypothesis state machine.

Conversation moves (append, switch, fork, edit, retry), file operations (write, delete, chmod,
symlink, ignored files, .gitignore and .git/info/exclude edits, files growing past the size cap
and shrinking below it, a folder swapped for a symlink to its new place), hand edits between
turns, explicit snapshots, restores (whole tree, ``paths=``, and to a saved state by its id),
undos, status and diff, `git gc --prune=now`, ``convgit gc`` (keeping only what a keep rule holds),
restores and undos from a second session of the same working tree, and a restore raced by another
writer are interleaved on a real repository (and again with the private index asking the real
watchman what changed, watchman stopped now and then between steps). The model is a dict of every
file and link on disk, ignored and big ones included, and of the files git sees at every snapshot
and saved state, plus the entry tree, kept without convgit. The promises checked after each step:

* a restore brings the files git sees to the target's (or at the chosen paths only), except what
  the target does not account for: a file it lacks that its snapshot left out (over the size
  cap) or that its own .gitignore, or the info/exclude of its time, ignores stays; a write below
  or over a file that stays is refused before anything changes; no file ignored now or over the
  cap is removed or changed;
* a restore that changes files saves them first (a saved state, addressable by its id); one that
  changes nothing saves nothing, and an undo returns to the newest saved state;
* every file content the working tree held at a snapshot or a saved state stays recoverable:
  each of those commits is still reachable from the session's refs;
* a user message is snapshotted when the files differ from the nearest snapshot above it;
* switch, fork, edit and retry never change a byte, a mode, a link or a folder;
* a restore writes no note itself; the next user message (appended, or written by a fork or an
  edit) carries one note right above it when the files git sees differ from before the first
  restore not told yet (restores undone before the conversation moved on leave none), and then
  those restores are told; a reply never has a note above it;
* status and diff answer after any `git gc`, and diff names exactly the files that differ;
* ``convgit gc`` never lets go a snapshot a keep rule holds (the active path's, a branch end's)
  or the saved state an undo returns to: their trees and every object stay;
* an undo undoes the newest restore of the working tree, whichever session ran it;
* a file another writer changes while a restore runs keeps the writer's bytes (the restore
  leaves it alone and lists it), and so does what stands above or below it;
* right after every snapshot, git's own ``git add -A`` tree (files over the cap left out) is
  the snapshot tree, and the snapshot lists exactly the files over the cap as skipped;
* the user's index, HEAD, branches, tags and stash never change.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shutil
import stat
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import event, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from convgit import Session
from convgit.base import faults
from convgit.base.errors import NotFoundError, RefusedError
from convgit.git import patching
from convgit.store.sidecar import SavedState
from tests.missing_tools import missing
from tests.workspace.gitrepo import UserStateGuard, digest, git, init_repo

Files = dict[str, tuple[str, Any]]

# Paths chosen so that files become folders and back (x, x/y.txt), links stand where files and
# folders were (x, link, sub), and folders empty out (sub/deep).
FILES = ["a.txt", "b.txt", "sub/c.txt", "sub/deep/d.txt", "x", "x/y.txt"]
LINKS = ["link", "sub/link", "x"]
LINK_TARGETS = ["a.txt", "sub", "nowhere", "../outside"]
IGNORED = ["out.log", "logs/run.txt"]
# The .gitignore files the agent writes: the first is the one the project starts with.
RULES = [b"*.log\nlogs/\n", b"", b"*.log\n", b"*.log\nlogs/\nb.txt\n"]
# Where another writer (an editor's autosave) writes a file while a restore runs: among the
# removals, before git writes, once git has started.
WRITER_POINTS = ["restore:remove", "restore:before-checkout", "restore:checkout-started"]
RACED = b"written while a restore ran\n"
RESTORE_PATHS = ["a.txt", "sub", "sub/deep/d.txt", "x", "x/y.txt", "link", "lib", "b.txt"]
CAP_MIB = 0.001  # the size cap of the model's repository: 1,048 bytes
CAP = int(CAP_MIB * 1024 * 1024)
BIG = b"big " * 300  # 1,200 bytes: over the cap
PICK = st.integers(min_value=0, max_value=1 << 16)
DATA = st.sampled_from([b"", b"one\n", b"two\n", b"\x00\xff binary", b"one\n" * 3, BIG])
FILE_OPERATIONS = st.lists(
    st.one_of(
        st.tuples(st.just("write"), st.sampled_from(FILES), DATA, st.booleans()),
        st.tuples(st.just("symlink"), st.sampled_from(LINKS), st.sampled_from(LINK_TARGETS)),
        st.tuples(st.just("delete"), st.sampled_from([*FILES, *LINKS, "sub", "lib"])),
        st.tuples(st.just("chmod"), st.sampled_from(FILES), st.booleans()),
        st.tuples(st.just("ignored"), st.sampled_from(IGNORED), DATA),
        st.tuples(st.just("rules"), st.sampled_from(RULES)),
        st.tuples(st.just("exclude"), st.sampled_from(RULES)),
        st.tuples(st.just("swap"), st.just("sub"), st.just("lib")),
    ),
    min_size=1,
    max_size=6,
)


def ignores(rules: bytes, path: str) -> bool:
    """Whether the .gitignore ``rules`` (one of RULES) ignore ``path``."""
    lines = set(rules.split(b"\n"))
    parts = path.split("/")
    return (
        (b"*.log" in lines and parts[-1].endswith(".log"))
        or (b"logs/" in lines and "logs" in parts[:-1])
        or (b"b.txt" in lines and parts[-1] == "b.txt")
    )


def rules_of(files: Files) -> bytes:
    found = files.get(".gitignore")
    return found[1][0] if found is not None and found[0] == "file" else b""


def over_cap(value: tuple[str, Any]) -> bool:
    return value[0] == "file" and len(value[1][0]) > CAP


def ignored(disk: Files, exclude: bytes, path: str) -> bool:
    """Whether the .gitignore on ``disk`` or the info/exclude ``exclude`` ignore ``path``."""
    return ignores(rules_of(disk), path) or ignores(exclude, path)


def seen(disk: Files, exclude: bytes = b"") -> Files:
    """The files and links git stages: nothing ignored, nothing over the cap."""
    return {p: v for p, v in disk.items() if not ignored(disk, exclude, p) and not over_cap(v)}


def skipped(disk: Files, exclude: bytes = b"") -> set[str]:
    """The files a snapshot leaves out and lists: over the cap, not ignored."""
    return {p for p, v in disk.items() if not ignored(disk, exclude, p) and over_cap(v)}


def on_disk(root: Path) -> Files:
    """Every file and link under ``root`` (folders are not kept by git, nor by the model)."""
    return {p: v for p, v in digest(root).items() if v[0] != "dir"}


def under(path: str, top: str) -> bool:
    return path == top or path.startswith(top + "/")


def ancestors(path: str) -> list[str]:
    parts = path.split("/")
    return ["/".join(parts[:i]) for i in range(1, len(parts))]


def kind_on(disk: Files, path: str) -> str | None:
    if path in disk:
        return str(disk[path][0])
    return "dir" if any(q.startswith(path + "/") for q in disk) else None


def placed(files: Files, path: str, value: tuple[str, Any]) -> Files:
    """The model after ``path`` is written: whatever stood there or above it is gone."""
    lead = set(ancestors(path))
    kept = {p: v for p, v in files.items() if not under(p, path) and p not in lead}
    kept[path] = value
    return kept


def exists_in(files: Files, path: str) -> bool:
    return any(under(p, path) for p in files)


def real_parents(root: Path, path: str) -> bool:
    """True when every folder above ``path`` is a real folder (never act through a link)."""
    for lead in ancestors(path):
        info = os.lstat(root / lead) if os.path.lexists(root / lead) else None
        if info is None or not stat.S_ISDIR(info.st_mode):
            return False
    return True


def clear_for(root: Path, path: str) -> None:
    """Make room for ``path`` as an agent would: remove a file or link above it, and whatever
    stands at it (a folder with all it holds)."""
    for lead in ancestors(path):
        target = root / lead
        if target.is_symlink() or target.is_file():
            target.unlink()
            break
        if not target.exists():
            break
    target = root / path
    if target.is_symlink() or target.is_file():
        target.unlink()
    elif target.is_dir():
        shutil.rmtree(target)
    target.parent.mkdir(parents=True, exist_ok=True)


@dataclass(frozen=True)
class State:
    """The files git saw at a snapshot or a saved state, the files left out (over the cap),
    and the info/exclude then (None for a saved state: convgit records none with it, so
    today's judges it)."""

    files: Files
    left_out: frozenset[str]
    exclude: bytes | None = None


class Refused(Exception):
    """The model's answer for a restore that must be refused before anything changes."""


def restored(
    disk: Files,
    target: State,
    paths: list[str] | None,
    exclude: bytes = b"",
    held: set[str] | None = None,
) -> tuple[Files, bool]:
    """The disk after restoring ``target`` (at ``paths`` only, when given; ``exclude`` is
    info/exclude now), and whether a file changed. ``held``: the files a snapshot of the
    restoring session held (and, returning to a saved state, the files of the restore that
    saved it): no other file is deleted. Raises Refused, or NotFoundError for a path in neither
    the files nor the target."""
    now = seen(disk, exclude)
    deltas = {
        p: (now.get(p), target.files.get(p))
        for p in now.keys() | target.files.keys()
        if now.get(p) != target.files.get(p)
    }
    if paths is not None:
        wanted = ["/".join(q for q in p.split("/") if q not in ("", ".")) for p in paths]
        if "" not in wanted:
            for path in wanted:
                if not exists_in(now, path) and not exists_in(target.files, path):
                    raise NotFoundError(path)
            chosen = {d for d in deltas if any(under(d, w) for w in wanted)}
            for d in list(chosen):  # a file where a chosen path needs a folder goes too
                chosen |= {a for a in ancestors(d) if a in deltas and deltas[a][1] is None}
            deltas = {d: deltas[d] for d in chosen}
    rules = rules_of(target.files)
    then = exclude if target.exclude is None else target.exclude
    removed = {
        p
        for p, (_, new) in deltas.items()
        if new is None
        and not any(q in target.left_out for q in [p, *ancestors(p)])
        and not ignores(rules, p)
        and not ignores(then, p)
        and (held is None or p in held)
    }
    removals = removed | {p for p, (old, new) in deltas.items() if old and new}
    written: Files = {}
    for path, (old, new) in deltas.items():
        if new is None:
            continue
        verdict = _verdict(disk, path, old, removals)
        if verdict == "refuse":
            raise Refused(path)
        if verdict == "write":
            written[path] = new
    after = {p: v for p, v in disk.items() if p not in removed}
    for path, value in written.items():
        after = placed(after, path, value)
    return after, bool(removed or written)


def _verdict(disk: Files, path: str, old: Any, removals: set[str]) -> str:
    """restoreplan's check of one write: write, aside (a file convgit does not see stands
    there), or refuse (below a file or link that stays, or over a folder holding one)."""
    for lead in ancestors(path):
        kind = kind_on(disk, lead)
        if kind is None or (kind != "dir" and lead in removals):
            return "write"
        if kind != "dir":
            return "refuse"
    kind = kind_on(disk, path)
    if kind == "dir":
        inside = [q for q in disk if q.startswith(path + "/")]
        return "refuse" if any(q not in removals for q in inside) else "write"
    return "write" if kind is None or old is not None else "aside"


def oracle_tree(root: Path) -> str:
    """`git add -A` into an empty index, less the files over the cap: git's own answer."""
    with tempfile.TemporaryDirectory() as scratch:
        env = {**os.environ, "GIT_INDEX_FILE": str(Path(scratch) / "index")}
        whole = ("-c", "core.splitIndex=false")
        git(root, *whole, "add", "-A", env=env)
        listed = git(root, "ls-files", "-z", env=env).split("\0")
        big = [p for p in listed if p and (root / p).is_file() and not (root / p).is_symlink()]
        big = [p for p in big if (root / p).stat().st_size > CAP]
        if big:
            git(root, *whole, "rm", "-q", "--cached", "--", *big, env=env)
        return git(root, *whole, "write-tree", env=env).strip()


class TwoTrackMachine(RuleBasedStateMachine):
    """One session on one fresh repository per example; snapshots find what changed the way
    ``WATCHER`` (``[snapshots] fsmonitor``) says."""

    WATCHER = "off"

    def __init__(self) -> None:
        super().__init__()
        self.scratch = Path(tempfile.mkdtemp(prefix="convgit-two-tracks-"))
        self.root = self.scratch / "repo"
        init_repo(self.root)
        (self.root / ".gitignore").write_bytes(RULES[0])
        for path in ("a.txt", "sub/c.txt", "sub/deep/d.txt", "x/y.txt"):
            (self.root / path).parent.mkdir(parents=True, exist_ok=True)
            (self.root / path).write_bytes(b"first\n")
        self.guard = UserStateGuard()
        self.guard.watch(self.root)
        self.session = Session.create(self.root)
        config = self.session.location.root / "config.toml"
        config.write_text(
            f'[snapshots]\nsize_cap_mib = {CAP_MIB}\nfsmonitor = "{self.WATCHER}"\n'
            "[retention]\nkeep_days = 0\nsaved_days = 0\n"  # gc keeps only what a rule holds
        )
        # The model: the disk, the states at each snapshotted entry and each saved state.
        self.disk: Files = on_disk(self.root)
        self.exclude = b""  # .git/info/exclude
        self.at: dict[str, State] = {}
        self.saved: list[tuple[str, State, list[str] | None]] = []  # id, state, restore's paths
        self.commits: set[str] = set()  # every snapshot and saved-state commit made
        self.parent: dict[str, str | None] = {}
        self.kind: dict[str, str] = {}  # "user", "assistant" or "note"
        self.order: list[str] = []
        self.leaf: str | None = None
        self.counter = 0
        self.other: Session | None = None  # a second session on the same working tree
        # the files git saw before the first restore of the model's session not told yet
        self.untold: Files | None = None
        self.held: set[str] = set()  # every file a snapshot of the model's session held
        self.went_to: dict[str, Files] = {}  # saved id -> the target of the restore that saved it

    def teardown(self) -> None:
        try:
            self.guard.verify()
        finally:
            shutil.rmtree(self.scratch, ignore_errors=True)

    # -- the model's bookkeeping --

    def _text(self) -> str:
        self.counter += 1
        return f"message {self.counter}"

    def _entered(self, ident: str, parent: str | None, kind: str) -> None:
        assert ident not in self.parent, f"entry id {ident} reused"
        self.parent[ident] = parent
        self.kind[ident] = kind
        self.order.append(ident)
        self.leaf = ident

    def _pick(self, pick: int, kinds: tuple[str, ...] = ("user", "assistant", "note")) -> str:
        choices = [e for e in self.order if self.kind[e] in kinds]
        return choices[pick % len(choices)]

    def _nearest_snapshot(self, ident: str | None) -> str | None:
        while ident is not None:
            if ident in self.at:
                return ident
            ident = self.parent[ident]
        return None

    def _state(self) -> State:
        exclude = self.exclude
        return State(seen(self.disk, exclude), frozenset(skipped(self.disk, exclude)), exclude)

    def _snapshotted(self, ident: str) -> None:
        """A snapshot of ``ident`` was just taken: it is git's tree and the model's files."""
        snap = self.session.track.sidecar.snapshots[ident]
        assert snap.tree_id == oracle_tree(self.root)
        assert {s["path"] for s in snap.skipped} == skipped(self.disk, self.exclude)
        self.at[ident] = self._state()
        self.held |= set(self.at[ident].files)
        self.commits.add(snap.commit)

    def _check_disk(self, expected: Files) -> None:
        assert on_disk(self.root) == expected
        self.disk = expected

    def _moves_nothing(self, move: Any) -> Any:
        before = digest(self.root)
        result = move()
        assert digest(self.root) == before, "a move in the conversation changed files"
        return result

    # -- conversation --

    @initialize()
    def task(self) -> None:
        self.user()

    def _told(self, made: str, parent: str | None) -> None:
        """The append of ``made`` on ``parent`` told the restores not told yet: one note above
        it when the files differ from before the first of them, none when they are back."""
        above = self.session.conversation.tree.entries[made]["parentId"]
        expected = self.untold is not None and self.untold != seen(self.disk, self.exclude)
        if expected:
            note = self.session.conversation.tree.entries[above]
            assert note["type"] == "note" and note["parentId"] == parent, note
            assert note["source"] == "restore"
            self._entered(above, parent, "note")
        else:
            assert above == parent, "a note the model did not expect"
        self.untold = None

    @rule()
    def user(self) -> None:
        parent = self.leaf
        # snapshotted at the start, and whenever the files differ from the nearest snapshot
        nearest = self._nearest_snapshot(parent)
        records = nearest is None or self.at[nearest].files != seen(self.disk, self.exclude)
        made = self._moves_nothing(lambda: self.session.append.user(self._text()))
        self._told(made.id, parent)
        self._entered(made.id, self.leaf, "user")
        assert (made.id in self.session.track.sidecar.snapshots) == records
        if records:
            self._snapshotted(made.id)

    @precondition(lambda self: self.leaf is not None)
    @rule()
    def assistant(self) -> None:
        parent = self.leaf
        made = self._moves_nothing(lambda: self.session.append.assistant(self._text()))
        assert made.parent_id == parent, "a note between a message and its reply"
        self._entered(made.id, self.leaf, "assistant")
        self._snapshotted(made.id)

    @rule(pick=PICK)
    def switch(self, pick: int) -> None:
        target = self._pick(pick)
        assert self._moves_nothing(lambda: self.session.moves.switch(target)) == target
        self.leaf = target

    @rule(pick=PICK, with_text=st.booleans())
    def fork(self, pick: int, with_text: bool) -> None:
        target = self._pick(pick)
        text = self._text() if with_text else None
        leaf = self._moves_nothing(lambda: self.session.moves.fork(target, text))
        if with_text:
            assert leaf != target
            self._told(leaf, target)
            self._entered(leaf, self.session.conversation.tree.entries[leaf]["parentId"], "user")
        else:
            assert leaf == target
            self.leaf = target

    @rule(pick=PICK)
    def edit(self, pick: int) -> None:
        target = self._pick(pick, ("user", "assistant"))
        parent = self.parent[target]
        made = self._moves_nothing(lambda: self.session.moves.edit(target, self._text()))
        if self.kind[target] == "user":
            self._told(made, parent)
            parent = self.session.conversation.tree.entries[made]["parentId"]
        else:
            assert self.session.conversation.tree.entries[made]["parentId"] == parent
        self._entered(made, parent, self.kind[target])

    @rule(pick=PICK)
    def retry(self, pick: int) -> None:
        target = self._pick(pick)
        expected = self.parent[target] if self.kind[target] == "assistant" else target
        if expected is None or self.kind[target] == "note":  # nothing to retry there
            with pytest.raises(RefusedError):
                self._moves_nothing(lambda: self.session.moves.retry(target))
            return
        assert self._moves_nothing(lambda: self.session.moves.retry(target)) == expected
        self.leaf = expected

    @invariant()
    def active_leaf_is_the_models(self) -> None:
        assert self.session.conversation.leaf == self.leaf

    @invariant()
    def every_snapshot_and_saved_state_stays_recoverable(self) -> None:
        """Each commit holding files the working tree had is reachable from the session's
        refs (so git gc keeps it), and the sidecar still names every saved state."""
        if not self.commits:
            return
        reachable = git(self.root, "rev-list", "--glob=refs/convgit/*")
        assert self.commits <= set(reachable.split()), "a snapshot or saved state was dropped"
        # two restores of the same files in one second save one commit: ids are compared as
        # a set, and the newest as the one an undo returns to
        ids = self._saved_ids()
        assert set(ids) == {s[0] for s in self.saved}
        assert not ids or ids[-1] == self.saved[-1][0] or ids.count(ids[-1]) > 1

    # -- files --

    @rule(operations=FILE_OPERATIONS)
    def change_files(self, operations: list[tuple[Any, ...]]) -> None:
        for operation in operations:
            self._file_operation(*operation)

    @precondition(lambda self: self.leaf is not None)
    @rule(operations=FILE_OPERATIONS)
    def agent_turn(self, operations: list[tuple[Any, ...]]) -> None:
        """What an agent's turn looks like: files change, then the reply is snapshotted."""
        self.change_files(operations)
        self.assistant()

    @rule(operations=FILE_OPERATIONS)
    def hand_edits_then_a_user_message(self, operations: list[tuple[Any, ...]]) -> None:
        """The user edits files between turns, then writes: the message records the edits."""
        self.change_files(operations)
        self.user()

    def _file_operation(self, kind: str, path: Any, *args: Any) -> None:
        expected = dict(self.disk)
        if kind == "rules":  # the agent rewrites .gitignore (``path`` is its content)
            (self.root / ".gitignore").write_bytes(path)
            expected[".gitignore"] = ("file", (path, False))
            self._check_disk(expected)
            return
        if kind == "exclude":  # the user rewrites .git/info/exclude (``path`` is its content)
            (self.root / ".git" / "info" / "exclude").write_bytes(path)
            self.exclude = path
            return
        target = self.root / path
        if kind in ("write", "ignored"):
            data, executable = args if kind == "write" else (args[0], False)
            clear_for(self.root, path)
            target.write_bytes(data)
            target.chmod(0o755 if executable else 0o644)
            expected = placed(expected, path, ("file", (data, executable)))
        elif kind == "symlink":
            clear_for(self.root, path)
            target.symlink_to(args[0])
            expected = placed(expected, path, ("link", args[0]))
        elif kind == "delete":
            if real_parents(self.root, path):
                if target.is_symlink() or target.is_file():
                    target.unlink()
                elif target.is_dir():
                    shutil.rmtree(target)
                expected = {p: v for p, v in expected.items() if not under(p, path)}
        elif kind == "chmod":
            if expected.get(path, ("",))[0] == "file":
                target.chmod(0o755 if args[0] else 0o644)
                expected[path] = ("file", (expected[path][1][0], args[0]))
        else:  # `mv sub lib && ln -s lib sub`: a folder swapped for a symlink to its new place
            if target.is_symlink() or not target.is_dir():
                return
            clear_for(self.root, args[0])
            target.rename(self.root / args[0])
            target.symlink_to(args[0])
            expected = {p: v for p, v in expected.items() if not under(p, args[0])}
            expected = {
                (args[0] + p[len(path) :] if under(p, path) else p): v for p, v in expected.items()
            }
            expected[path] = ("link", args[0])
        self._check_disk(expected)

    # -- the workspace track --

    @rule(pick=st.none() | PICK)
    def snapshot(self, pick: int | None) -> None:
        target = self.leaf if pick is None else self._pick(pick)
        assert target is not None
        had = self.session.track.sidecar.snapshots.get(target)
        snap = self._moves_nothing(
            lambda: self.session.snapshots.snapshot("@" if pick is None else target)
        )
        assert snap.entry == target
        if had is not None and had.commit != snap.commit:
            assert snap.replaces == had.commit  # the old one is the new one's parent
            assert git(self.root, "rev-parse", f"{snap.commit}^").strip() == had.commit
        self._snapshotted(target)

    @precondition(lambda self: bool(self.at))
    @rule(pick=PICK)
    def restore(self, pick: int) -> None:
        target = self.order_of_snapshots()[pick % len(self.at)]
        self._restore(self.at[target], None, lambda: self.session.restoring.restore(target))

    def _held(self, by: Session | None, saved: str | None = None) -> set[str]:
        """What a restore by ``by`` (None: the model's session) may delete: the files its
        snapshots held, and, returning to the saved state ``saved``, the files of the restore
        that saved it."""
        mine = set() if by is not None else set(self.held)
        return mine | set(self.went_to.get(saved, {})) if saved is not None else mine

    @precondition(lambda self: bool(self.at))
    @rule(pick=PICK, picks=st.lists(PICK | st.sampled_from(RESTORE_PATHS), min_size=1, max_size=2))
    def restore_paths(self, pick: int, picks: list[int | str]) -> None:
        """Mostly files and folders that exist on one side; sometimes any name at all."""
        target = self.order_of_snapshots()[pick % len(self.at)]
        now = seen(self.disk, self.exclude)
        known = sorted({q for p in [*now, *self.at[target].files] for q in [p, *ancestors(p)]})
        paths = [known[p % len(known)] if isinstance(p, int) else p for p in picks]
        run = lambda: self.session.restoring.restore(target, paths=paths)  # noqa: E731
        self._restore(self.at[target], paths, run)

    @precondition(lambda self: bool(self.saved))
    @rule(pick=PICK)
    def restore_saved_state(self, pick: int) -> None:
        """Back to any saved state, by the id the restore printed."""
        ident, state, _ = self.saved[pick % len(self.saved)]
        self._restore(state, None, lambda: self.session.restoring.restore(ident), saved=ident)

    @rule()
    def status_and_diff(self) -> None:
        """status and diff answer from the files now, whatever git collected before (the
        tree only they wrote included), and name exactly the files that differ."""
        self._moves_nothing(self.session.snapshots.status)
        nearest = self._nearest_snapshot(self.leaf)
        if nearest is None:
            return
        changes = self._moves_nothing(lambda: self.session.snapshots.diff(nearest))
        then, now = self.at[nearest].files, seen(self.disk, self.exclude)
        differing = {p for p in then.keys() | now.keys() if then.get(p) != now.get(p)}
        assert {c.path for c in changes} == differing

    @rule()
    def git_gc(self) -> None:
        """The user shrinks the repository: what no ref keeps is collected now."""
        self.guard.verify()
        git(self.root, "gc", "-q", "--prune=now")
        self.guard.watch(self.root)  # git packed the user's refs: the user's own doing

    @rule()
    def gc(self) -> None:
        """``convgit gc`` with nothing kept for its age: every snapshot a keep rule holds (the
        active path's, each branch end's) and the newest saved state stay recoverable, with
        their trees; what it let go is dropped from the model, and the model goes on."""
        from convgit.upkeep import collecting

        children = {p for p in self.parent.values() if p is not None}
        path = []
        node = self.leaf
        while node is not None:
            path.append(node)
            node = self.parent[node]
        holds = {self._nearest_snapshot(e) for e in [*path, *set(self.parent) - children]}
        trees = {e: self.session.track.sidecar.snapshots[e].tree_id for e in holds if e is not None}
        newest = self.saved[-1][0] if self.saved else None
        self.guard.verify()
        users = git(self.root, "for-each-ref", "refs/heads", "refs/tags", "refs/stash")
        report = self._moves_nothing(lambda: collecting.run(self.session.location, dry_run=False))
        # deleting a ref git packed rewrites packed-refs: the user's refs in it stay as they were
        assert git(self.root, "for-each-ref", "refs/heads", "refs/tags", "refs/stash") == users
        self.guard.watch(self.root)
        for session in (self.session, self.other):
            if session is not None:
                session.reload()
        let_go = {i.commit for i in report.let_go}
        gone = {i.entry for i in report.let_go if i.what == "snapshot"}
        gone &= {i.entry for i in report.let_go if i.session == self.session.id}
        assert not gone & set(trees), "gc let go a snapshot a keep rule holds"
        event(f"gc: let go {'some' if report.let_go else 'nothing'}")
        for entry, tree in trees.items():
            snap = self.session.track.sidecar.snapshots[entry]
            assert snap.tree_id == tree
            assert git(self.root, "rev-parse", f"{snap.commit}^{{tree}}").strip() == tree
            git(self.root, "rev-list", "--objects", snap.commit)  # every object is there
        saved_gone = {f"saved:{i.commit[:12]}" for i in report.let_go if i.what == "saved"}
        assert newest not in saved_gone, "gc let go the state an undo returns to"
        self.saved = [s for s in self.saved if s[0] not in saved_gone]
        for entry in gone:
            del self.at[entry]
        moved: dict[str, str] = {}
        for session in (self.session, self.other):
            if session is not None:
                moved.update(session.track.read_sidecar().moved)
        self.commits = {moved.get(c, c) for c in self.commits if c not in let_go}
        self.held = {p for state in self.at.values() for p in state.files}

    def order_of_snapshots(self) -> list[str]:
        return [e for e in self.order if e in self.at]

    @precondition(lambda self: bool(self.saved))
    @rule()
    def undo(self) -> None:
        """Back to the newest saved state, at the paths of the restore that saved it."""
        ident, state, paths = self.saved[-1]
        self._restore(state, paths, lambda: self.session.restoring.restore(undo=True), saved=ident)

    def _saved_ids(self) -> list[str]:
        """The saved states of the working tree, oldest first, whichever session saved them."""
        return [s.id for s in reversed(self.session.saved_states.of_worktree())]

    def _other(self) -> Session:
        """A second session on the same working tree (made at its first use)."""
        if self.other is None:
            self.other = Session.create(self.root)
        return self.other

    def _restore(
        self,
        target: State,
        paths: list[str] | None,
        run: Any,
        by: Session | None = None,
        saved: str | None = None,
    ) -> None:
        """``run`` restores ``target`` (by the session ``by``, default the model's; ``saved``:
        the saved state ``target`` is)."""
        before = dict(self.disk)
        state = dataclasses.replace(self._state(), exclude=None)  # a saved state records none
        held = self._held(by, saved)
        try:
            expected, changes = restored(self.disk, target, paths, self.exclude, held)
        except NotFoundError:
            event("restore: a path in neither tree")
            with pytest.raises(NotFoundError):
                run()
            assert on_disk(self.root) == before
            return
        except Refused:
            event("restore: refused before any change")
            with pytest.raises(RefusedError):
                run()
            assert on_disk(self.root) == before
            return
        tree_before = oracle_tree(self.root)
        saved_before = set(self._saved_ids())
        result = run()
        assert bool(result.changes) == changes, result.changes
        event(f"restore: {'changed files' if changes else 'nothing to change'}")
        for alone in result.changes.left_alone:
            event(f"restore left alone: {alone.reason.split(' (')[0].split(';')[0]}")
        # a restore that changes nothing saves nothing and moves no undo point
        assert (result.saved is not None) == changes
        saved_after = set(self._saved_ids())
        assert saved_after == saved_before if not changes else result.saved in saved_after
        self._check_disk(expected)
        for path, value in before.items():  # what git does not see now is never touched
            if ignored(before, self.exclude, path) or over_cap(value):
                assert self.disk.get(path) == value, f"a restore changed {path}, left out now"
        if changes:
            assert result.saved == f"saved:{result.before[:12]}"
            assert git(self.root, "rev-parse", f"{result.before}^{{tree}}").strip() == tree_before
            self.saved.append((result.saved, state, paths))
            self.went_to[result.saved] = target.files
            self.commits.add(result.before)
            if by is not None:
                return  # the other session's note is in its own tree
            # no note yet: the leaf stays; the next turn tells the model
            assert self.session.conversation.leaf == self.leaf
            if self.untold is None:
                self.untold = state.files

    # -- restores from two sessions, and restores that are killed --

    @precondition(lambda self: bool(self.saved))
    @rule(pick=PICK)
    def restore_saved_state_from_another_session(self, pick: int) -> None:
        """Another session of the same working tree restores a saved state by its id."""
        ident, state, _ = self.saved[pick % len(self.saved)]
        other = self._other()
        self._restore(state, None, lambda: other.restoring.restore(ident), by=other, saved=ident)

    @precondition(lambda self: bool(self.saved))
    @rule()
    def undo_from_another_session(self) -> None:
        """An undo in another session undoes the newest restore of the working tree, whichever
        session made it."""
        ident, state, paths = self.saved[-1]
        other = self._other()
        self._restore(
            state, paths, lambda: other.restoring.restore(undo=True), by=other, saved=ident
        )

    @precondition(lambda self: bool(self.at))
    @rule(pick=PICK, where=st.sampled_from(WRITER_POINTS), path=st.sampled_from(FILES))
    def restore_raced_by_a_writer(self, pick: int, where: str, path: str) -> None:
        """Another writer (an agent writing a file, an editor's autosave) writes ``path`` while
        a restore runs (at ``where``): its bytes are never overwritten nor deleted (the saved
        state does not hold them). A restore that had not yet reached the path leaves it alone,
        and what stands above or below it too; one that had (a removal comes first) reports
        what it did to the file it saved, and the writer's new file stays."""
        target = self.order_of_snapshots()[pick % len(self.at)]
        if kind_on(self.disk, path) != "file" or not real_parents(self.root, path):
            return
        try:
            expected, _ = restored(self.disk, self.at[target], None, self.exclude, self._held(None))
        except (Refused, NotFoundError):
            return
        state = dataclasses.replace(self._state(), exclude=None)
        planned = seen(self.disk, self.exclude).get(path) != self.at[target].files.get(path)
        mode = self.disk[path][1][1]
        wrote: list[bool] = []  # whether the file was still there when the writer wrote
        real_point = faults.point

        def point(name: str) -> None:
            if name == where and not wrote:
                file = self.root / path
                wrote.append(file.exists())
                file.parent.mkdir(parents=True, exist_ok=True)
                file.write_bytes(RACED)
            real_point(name)

        with mock.patch.object(faults, "point", point):
            result = self.session.restoring.restore(target)
        event(f"raced restore: {'written at ' + where if wrote else 'no writer'}")
        if wrote:
            expected = {
                q: v for q, v in expected.items() if q not in ancestors(path) and not under(q, path)
            }
            expected[path] = ("file", (RACED, mode and wrote[0]))
            if planned:  # left alone, or changed (saved) before the writer wrote
                named = {a.path for a in result.changes.left_alone} | {
                    c.path for c in result.changes
                }
                assert path in named, result.changes
        self._check_disk(expected)
        if result.saved is not None:
            self.saved.append((result.saved, state, None))
            self.went_to[result.saved] = self.at[target].files
            self.commits.add(str(result.before))
            if self.untold is None:  # what the restore saved (the writer may come before)
                self.untold = self._files_of(str(result.before))
        self._resync()

    def _resync(self) -> None:
        """Take into the model what a raced restore recorded: the saved state it made (what it
        holds is read from git) and the note under the leaf. Two restores of the same files in one
        second save the same commit: ids are counted, not only compared."""
        self.session.reload()
        for state in self._new_states():
            files = self._files_of(state.commit)
            left_out = frozenset(state.skipped)
            self.saved.append((state.id, State(files, left_out), state.paths))
            if state.restored_to:
                self.went_to[state.id] = self._files_of(state.restored_to)
            self.commits.add(state.commit)
        for ident, entry in self.session.conversation.tree.entries.items():
            if ident not in self.parent:
                assert entry["type"] == "note", entry
                self._entered(ident, entry["parentId"], "note")
        self.leaf = self.session.conversation.leaf

    def _new_states(self) -> list[SavedState]:
        """The saved states of the working tree the model does not know yet, oldest first (two
        restores of the same files in one second save the same commit: the model knows it)."""
        known = {s[0] for s in self.saved}
        return [s for s in reversed(self.session.saved_states.of_worktree()) if s.id not in known]

    def _files_of(self, commit: str) -> Files:
        """The model's view of a commit's tree: path -> file (bytes, exec bit) or link."""
        listed = git(self.root, "ls-tree", "-r", "-z", "--full-tree", commit)
        files: Files = {}
        for line in filter(None, listed.split("\0")):
            meta, path = line.split("\t", 1)
            mode, _, oid = meta.split()
            data = subprocess.run(
                ["git", "cat-file", "blob", oid], cwd=self.root, capture_output=True, check=True
            ).stdout
            if mode == "120000":
                files[path] = ("link", os.fsdecode(data))
            else:
                files[path] = ("file", (data, mode == "100755"))
        return files


class WatchedTwoTrackMachine(TwoTrackMachine):
    """The same, with snapshots taken the recorder's way while it is on (issue 37: the
    recorder's patcher serves the working tree in this process, and patches each snapshot from
    the paths the real watchman says changed), turned on and off between steps, and watchman
    stopped now and then (the next snapshot's watch starts it again, with a new clock). Every
    snapshot is still checked against ``git add -A`` into an empty index."""

    WATCHER = "watchman"

    def __init__(self) -> None:
        super().__init__()
        folder = self.session.location.root / "index"
        folder.mkdir(parents=True, exist_ok=True)
        self.patcher = patching.Patcher(folder / "recorder-model")
        patching.serve(self.root, self.patcher)

    def teardown(self) -> None:
        patching.stop_serving(self.root)
        self.patcher.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            subprocess.run(
                ["watchman", "watch-del", str(self.root)], capture_output=True, timeout=30
            )
        super().teardown()

    @rule(on=st.booleans())
    def recorder(self, on: bool) -> None:
        """The recorder there (its snapshots patched) or gone (every file stat'ed)."""
        if on:
            patching.serve(self.root, self.patcher)
        else:
            patching.stop_serving(self.root)
        event(f"recorder {'on' if on else 'off'}")

    @rule()
    def watcher_restarted(self) -> None:
        # not running (stopped by the step before, not asked since) is stopped too
        with contextlib.suppress(subprocess.TimeoutExpired):  # never hangs the model
            subprocess.run(["watchman", "shutdown-server"], capture_output=True, timeout=30)

    @invariant()
    def tally_how_snapshots_went(self) -> None:
        """Statistics only (``--hypothesis-show-statistics``): patched, or every file stat'ed."""
        event(self.patcher.last.get(str(self.session.track.index()), "-").split(":")[0])


def run_machine(
    max_examples: int, steps: int, machine: type[TwoTrackMachine] = TwoTrackMachine
) -> None:
    if machine.WATCHER == "watchman" and shutil.which("watchman") is None:
        missing("watchman", "apt-get install watchman")
    # the watched runs replay the same examples every time (a fixed seed): each waits on watchman
    fixed = machine.WATCHER == "watchman" or settings.default.derandomize
    run_state_machine_as_test(
        machine,
        settings=settings(
            max_examples=max_examples, stateful_step_count=steps, deadline=None, derandomize=fixed
        ),
    )


def test_restores_undos_and_moves_keep_their_promises_against_the_model() -> None:
    run_machine(max_examples=40, steps=20)  # about 25 s of CPU


@pytest.mark.slow
def test_restores_undos_and_moves_keep_their_promises_against_the_model_at_length() -> None:
    # 24 examples of 40 steps by default, 120 with CONVGIT_HYPOTHESIS_PROFILE=ci (derandomized,
    # so CI replays the same ones): a few minutes on two cores
    run_machine(max_examples=min(settings.default.max_examples * 2 // 5, 120), steps=40)


def test_with_watchman_the_two_tracks_keep_their_promises_against_the_model() -> None:
    # each example waits on watchman (a restart now and then): about 9 s an example, mostly idle
    run_machine(max_examples=4, steps=20, machine=WatchedTwoTrackMachine)


@pytest.mark.slow
def test_with_watchman_the_two_tracks_keep_their_promises_at_length() -> None:
    # 15 examples of 30 steps by default and with CONVGIT_HYPOTHESIS_PROFILE=ci (derandomized):
    # about 20 s each, mostly waiting on watchman. Fewer missed a patcher that lost the
    # deletions of some files; these caught it.
    run_machine(
        max_examples=min(settings.default.max_examples // 4, 15),
        steps=30,
        machine=WatchedTwoTrackMachine,
    )


def test_the_model_says_what_git_ignores_as_git_does(tmp_path: Path) -> None:
    """The model's reading of each .gitignore it writes agrees with git check-ignore."""
    root = tmp_path / "rules"
    init_repo(root, commit=False)
    paths = [*FILES, *IGNORED, "lib/c.txt", "sub/deep/x.log"]
    for rules in RULES:
        (root / ".gitignore").write_bytes(rules)
        done = subprocess.run(
            ["git", "check-ignore", "--no-index", "--stdin", "-z"],
            cwd=root,
            input="\0".join(paths) + "\0",
            capture_output=True,
            text=True,
            check=False,
        )
        by_git = {p for p in done.stdout.split("\0") if p}
        assert by_git == {p for p in paths if ignores(rules, p)}, rules
