"""The two tracks against a plain model, by a hypothesis state machine.

Conversation moves (append, switch, fork, edit, retry), file operations (write, delete, chmod,
symlink, an ignored file), explicit snapshots, restores (whole tree and ``paths=``) and undos are
interleaved on a real repository. The model is a dict of the files now and of the files at every
snapshotted entry, plus the entry tree, kept without convgit. The promises checked after each step:

* a restore brings the files (tracked and untracked, not ignored) to the model's files at that
  entry, or at the chosen paths only, and leaves ignored files byte-identical;
* an undo brings back the files as they were before the undone restore;
* switch, fork, edit and retry never change a byte, a mode, a link or a folder;
* right after every snapshot, git's own ``git add -A`` tree (``oracle_tree``) is the snapshot tree;
* the user's index, HEAD, branches, tags and stash never change.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings
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
from convgit.errors import NotFoundError, RefusedError
from tests.workspace.gitrepo import UserStateGuard, digest, init_repo, oracle_tree

Files = dict[str, tuple[str, Any]]

# Paths chosen so that files become folders and back (x, x/y.txt), links stand where files and
# folders were (x, link), and folders empty out (sub/deep).
FILES = ["a.txt", "b.txt", "sub/c.txt", "sub/deep/d.txt", "x", "x/y.txt"]
LINKS = ["link", "sub/link", "x"]
LINK_TARGETS = ["a.txt", "sub", "nowhere"]
IGNORED = ["out.log", "logs/run.txt"]
GITIGNORE = b"*.log\nlogs/\n"
RESTORE_PATHS = ["a.txt", "sub", "sub/deep/d.txt", "x", "x/y.txt", "link"]
PICK = st.integers(min_value=0, max_value=1 << 16)
DATA = st.sampled_from([b"", b"one\n", b"two\n", b"\x00\xff binary", b"one\n" * 3])
FILE_OPERATIONS = st.lists(
    st.one_of(
        st.tuples(st.just("write"), st.sampled_from(FILES), DATA, st.booleans()),
        st.tuples(st.just("symlink"), st.sampled_from(LINKS), st.sampled_from(LINK_TARGETS)),
        st.tuples(st.just("delete"), st.sampled_from([*FILES, *LINKS, "sub"])),
        st.tuples(st.just("chmod"), st.sampled_from(FILES), st.booleans()),
        st.tuples(st.just("ignored"), st.sampled_from(IGNORED), DATA),
    ),
    min_size=1,
    max_size=6,
)


def is_ignored(path: str) -> bool:
    return path.endswith(".log") or path == "logs" or path.startswith("logs/")


def visible(entries: Files) -> Files:
    """Files and links git would stage: no folders (git keeps none), nothing ignored."""
    return {p: v for p, v in entries.items() if v[0] != "dir" and not is_ignored(p)}


def ignored_part(entries: Files) -> Files:
    return {p: v for p, v in entries.items() if is_ignored(p)}


def under(path: str, top: str) -> bool:
    return path == top or path.startswith(top + "/")


def ancestors(path: str) -> list[str]:
    parts = path.split("/")
    return ["/".join(parts[:i]) for i in range(1, len(parts))]


def placed(files: Files, path: str, value: tuple[str, Any]) -> Files:
    """The model after ``path`` is written: whatever stood there or above it is gone."""
    lead = set(ancestors(path))
    kept = {p: v for p, v in files.items() if not under(p, path) and p not in lead}
    kept[path] = value
    return kept


def merged(now: Files, source: Files, paths: list[str] | None) -> Files:
    """``now`` with ``paths`` (all, when None) taken from ``source``, as a restore does it:
    a file or link that stands where a restored path needs a folder goes too."""
    if paths is None:
        return dict(source)
    brought = {p: v for p, v in source.items() if any(under(p, top) for top in paths)}
    lead = {a for p in brought for a in ancestors(p)}
    kept = {
        p: v for p, v in now.items() if not any(under(p, top) for top in paths) and p not in lead
    }
    return {**kept, **brought}


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


class TwoTrackMachine(RuleBasedStateMachine):
    """One session on one fresh repository per example."""

    def __init__(self) -> None:
        super().__init__()
        self.scratch = Path(tempfile.mkdtemp(prefix="convgit-two-tracks-"))
        self.root = self.scratch / "repo"
        init_repo(self.root)
        (self.root / ".gitignore").write_bytes(GITIGNORE)
        for path in ("a.txt", "sub/c.txt", "sub/deep/d.txt", "x/y.txt"):
            (self.root / path).parent.mkdir(parents=True, exist_ok=True)
            (self.root / path).write_bytes(b"first\n")
        self.guard = UserStateGuard()
        self.guard.watch(self.root)
        self.session = Session.create(self.root)
        # The model: files now (visible to git), ignored files, files at each snapshotted entry.
        self.files: Files = visible(digest(self.root))
        self.ignored: Files = {}
        self.at: dict[str, Files] = {}
        self.parent: dict[str, str | None] = {}
        self.kind: dict[str, str] = {}  # "user", "assistant" or "note"
        self.order: list[str] = []
        self.leaf: str | None = None
        self.last_restore: tuple[Files, list[str] | None] | None = None
        self.counter = 0

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

    def _snapshotted(self, ident: str) -> None:
        """A snapshot of ``ident`` was just taken: it is git's tree and the model's files."""
        snap = self.session.sidecar.snapshots[ident]
        assert snap.tree == oracle_tree(self.root)
        self.at[ident] = dict(self.files)

    def _check_files(self, expected: Files) -> None:
        assert visible(digest(self.root)) == expected
        self.files = expected

    def _moves_nothing(self, move: Any) -> Any:
        before = digest(self.root)
        result = move()
        assert digest(self.root) == before, "a move in the conversation changed files"
        return result

    # -- conversation --

    @initialize()
    def task(self) -> None:
        self.user()

    @rule()
    def user(self) -> None:
        parent = self.leaf
        # snapshotted at the start, and whenever the files differ from the nearest snapshot
        nearest = self._nearest_snapshot(parent)
        records = nearest is None or self.at[nearest] != self.files
        made = self._moves_nothing(lambda: self.session.append_user(self._text()))
        self._entered(made.id, parent, "user")
        assert (made.id in self.session.sidecar.snapshots) == records
        if records:
            self._snapshotted(made.id)

    @precondition(lambda self: self.leaf is not None)
    @rule()
    def assistant(self) -> None:
        parent = self.leaf
        made = self._moves_nothing(lambda: self.session.append_assistant(self._text()))
        self._entered(made.id, parent, "assistant")
        self._snapshotted(made.id)

    @rule(pick=PICK)
    def switch(self, pick: int) -> None:
        target = self._pick(pick)
        assert self._moves_nothing(lambda: self.session.switch(target)) == target
        self.leaf = target

    @rule(pick=PICK, with_text=st.booleans())
    def fork(self, pick: int, with_text: bool) -> None:
        target = self._pick(pick)
        text = self._text() if with_text else None
        leaf = self._moves_nothing(lambda: self.session.fork(target, text))
        if with_text:
            assert leaf != target
            self._entered(leaf, target, "user")
        else:
            assert leaf == target
            self.leaf = target

    @rule(pick=PICK)
    def edit(self, pick: int) -> None:
        target = self._pick(pick, ("user", "assistant"))
        made = self._moves_nothing(lambda: self.session.edit(target, self._text()))
        self._entered(made, self.parent[target], self.kind[target])

    @rule(pick=PICK)
    def retry(self, pick: int) -> None:
        target = self._pick(pick)
        expected = self.parent[target] if self.kind[target] == "assistant" else target
        if expected is None:
            with pytest.raises(RefusedError):
                self._moves_nothing(lambda: self.session.retry(target))
            return
        assert self._moves_nothing(lambda: self.session.retry(target)) == expected
        self.leaf = expected

    @invariant()
    def active_leaf_is_the_models(self) -> None:
        assert self.session.leaf == self.leaf

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

    def _file_operation(self, kind: str, path: str, *args: Any) -> None:
        expected = dict(self.files)
        target = self.root / path
        if kind == "write":
            data, executable = args
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
        else:  # an ignored file: the model keeps what git does not see apart
            target.parent.mkdir(exist_ok=True)
            target.write_bytes(args[0])
            self.ignored = ignored_part(digest(self.root))
        self._check_files(expected)

    # -- the workspace track --

    @rule(pick=st.none() | PICK)
    def snapshot(self, pick: int | None) -> None:
        target = self.leaf if pick is None else self._pick(pick)
        assert target is not None
        snap = self._moves_nothing(lambda: self.session.snapshot("@" if pick is None else target))
        assert snap.entry == target
        self._snapshotted(target)

    @precondition(lambda self: bool(self.at))
    @rule(pick=PICK)
    def restore(self, pick: int) -> None:
        target = self.order_of_snapshots()[pick % len(self.at)]
        self._restore(self.at[target], None, lambda: self.session.restore(target))

    @precondition(lambda self: bool(self.at))
    @rule(pick=PICK, picks=st.lists(PICK | st.sampled_from(RESTORE_PATHS), min_size=1, max_size=2))
    def restore_paths(self, pick: int, picks: list[int | str]) -> None:
        """Mostly files and folders that exist on one side; sometimes any name at all."""
        target = self.order_of_snapshots()[pick % len(self.at)]
        known = sorted({q for p in [*self.files, *self.at[target]] for q in [p, *ancestors(p)]})
        paths = [known[p % len(known)] if isinstance(p, int) else p for p in picks]
        self._restore(self.at[target], paths, lambda: self.session.restore(target, paths=paths))

    def order_of_snapshots(self) -> list[str]:
        return [e for e in self.order if e in self.at]

    @precondition(lambda self: self.last_restore is not None)
    @rule()
    def undo(self) -> None:
        assert self.last_restore is not None
        before, paths = self.last_restore
        self._restore(before, paths, lambda: self.session.restore(undo=True))

    def _restore(self, source: Files, paths: list[str] | None, run: Any) -> None:
        disk_before = digest(self.root)
        if paths is not None and not all(
            exists_in(self.files, p) or exists_in(source, p) for p in paths
        ):
            with pytest.raises(NotFoundError):
                run()
            assert digest(self.root) == disk_before
            return
        expected = merged(self.files, source, paths)
        saved_before = len(self.session.sidecar.saved)
        result = run()
        assert ignored_part(digest(self.root)) == ignored_part(disk_before) == self.ignored
        assert bool(result.changes) == (expected != self.files), result.changes
        # a restore that changes nothing saves nothing and moves no undo point
        assert (result.saved is not None) == bool(result.changes)
        assert len(self.session.sidecar.saved) == saved_before + bool(result.changes)
        if result.changes:
            self.last_restore = (dict(self.files), paths)
        self._check_files(expected)
        if result.changes:  # a note on the leaf tells the model; the leaf stays on its branch
            note = self.session.leaf
            assert note is not None and note != self.leaf
            assert self.session.tree.entries[note]["type"] == "note"
            self._entered(note, self.leaf, "note")


def run_machine(max_examples: int, steps: int) -> None:
    run_state_machine_as_test(
        TwoTrackMachine,
        settings=settings(max_examples=max_examples, stateful_step_count=steps, deadline=None),
    )


def test_restores_undos_and_moves_keep_their_promises_against_the_model() -> None:
    run_machine(max_examples=40, steps=20)  # about 10 s on two idle cores


@pytest.mark.slow
def test_restores_undos_and_moves_keep_their_promises_against_the_model_at_length() -> None:
    # With CONVGIT_HYPOTHESIS_PROFILE=ci: derandomized, so CI replays the same examples.
    run_machine(max_examples=max(settings.default.max_examples, 200), steps=40)
