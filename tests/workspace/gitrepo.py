"""Real git repositories for the workspace tests, and git's own command line as the oracle."""

from __future__ import annotations

import os
import stat
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from convgit.store.config import DEFAULT_SIZE_CAP
from convgit.workspace import RestoreChanges, RestoreRequest, Workspace


def git(cwd: Path, *args: str, env: dict[str, str] | None = None, check: bool = True) -> str:
    """Run git as the user would and return its stdout."""
    proc = subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {proc.stderr}")
    return proc.stdout


def oracle_tree(root: Path) -> str:
    """The tree of `GIT_INDEX_FILE=<empty> git add -A && git write-tree`: git's own answer."""
    with tempfile.TemporaryDirectory() as scratch:
        env = {**os.environ, "GIT_INDEX_FILE": str(Path(scratch) / "index")}
        # a whole index: a split one would leave its shared half in .git (the tree is the same)
        git(root, "-c", "core.splitIndex=false", "add", "-A", env=env)
        return git(root, "-c", "core.splitIndex=false", "write-tree", env=env).strip()


def digest(root: Path) -> dict[str, tuple[str, object]]:
    """Every entry under ``root`` except .git: kind plus bytes, link target or exec bit."""
    seen: dict[str, tuple[str, object]] = {}
    for top, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not (top == str(root) and d == ".git")]
        for name in [*dirs, *files]:
            path = Path(top, name)
            rel = path.relative_to(root).as_posix()
            info = path.lstat()
            if stat.S_ISLNK(info.st_mode):
                seen[rel] = ("link", os.readlink(path))
            elif stat.S_ISDIR(info.st_mode):
                seen[rel] = ("dir", None)
            else:
                seen[rel] = ("file", (path.read_bytes(), bool(info.st_mode & 0o100)))
    return seen


def restore_files(
    workspace: Workspace, target: str, *, index: Path, dry_run: bool = False, **kwargs: Any
) -> tuple[str | None, RestoreChanges]:
    """What `convgit restore` does to the files (``convgit.session.restoring``), without a session:
    plan against the files as they are, save them when something changes, apply. The saved
    state's commit (None when nothing was saved) and the changes."""
    kwargs.setdefault("size_cap", DEFAULT_SIZE_CAP)
    if kwargs.get("paths") is not None:
        kwargs["paths"] = tuple(kwargs["paths"])
    with workspace.restoring(RestoreRequest(target, **kwargs), index=index) as planned:
        if dry_run:
            return None, planned.changes
        saved = planned.save(None, "saved before a restore\n") if planned.changes else None
        planned.apply()
        return saved, planned.changes


def apply_operation(root: Path, kind: str, name: str, data: bytes) -> None:
    """One file operation of an agent's turn (for property tests)."""
    if kind == "ignore":  # ignore rules change too: a file, a folder or a pattern
        (root / ".gitignore").write_text(f"*.log\n{name if data else name.split('/')[0] + '/'}\n")
        return
    path = root / name
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir() and kind != "dir":
        return
    if kind == "delete":
        return
    if path.parent.is_symlink() or (path.parent.exists() and not path.parent.is_dir()):
        path.parent.unlink()
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "symlink":
        path.symlink_to("a.txt")
    elif kind == "dir":
        path.mkdir(exist_ok=True)
        (path / "inner.txt").write_bytes(data)
    else:
        path.write_bytes(data.ljust(8, b"_") if kind == "write-same-size" else data)
        path.chmod(0o755 if kind == "chmod" else 0o644)


class GitRepo:
    """A worktree of a real repository made with `git init`, with convgit's private index path."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def git(self, *args: str, check: bool = True) -> str:
        return git(self.path, *args, check=check)

    def has_object(self, oid: str) -> bool:
        proc = subprocess.run(["git", "cat-file", "-e", oid], cwd=self.path, capture_output=True)
        return proc.returncode == 0

    def write(self, rel: str, content: str | bytes = "", *, executable: bool = False) -> Path:
        target = self.path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content.encode() if isinstance(content, str) else content)
        target.chmod(0o755 if executable else 0o644)
        return target

    def symlink(self, rel: str, to: str) -> Path:
        target = self.path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.symlink_to(to)
        return target

    def commit_all(self, message: str = "commit") -> str:
        self.git("add", "-A")
        self.git("commit", "-q", "--no-verify", "-m", message)
        return self.git("rev-parse", "HEAD").strip()

    @property
    def workspace(self) -> Workspace:
        found = Workspace.discover(self.path)
        assert found is not None
        return found

    @property
    def index(self) -> Path:
        """Where a session keeps its private index: <common dir>/convgit/index/<name>."""
        common = Path(self.git("rev-parse", "--path-format=absolute", "--git-common-dir").strip())
        return common / "convgit" / "index" / f"test-{self.path.name}"

    def oracle(self) -> str:
        return oracle_tree(self.path)

    def digest(self) -> dict[str, tuple[str, object]]:
        return digest(self.path)

    def tree_paths(self, tree: str) -> dict[str, str]:
        """path -> "mode oid" of every file of a tree, as git lists it."""
        out = self.git("ls-tree", "-r", "-z", "--full-tree", tree)
        entries = {}
        for line in filter(None, out.split("\0")):
            meta, path = line.split("\t", 1)
            mode, _kind, oid = meta.split()
            entries[path] = f"{mode} {oid}"
        return entries


UserState = dict[str, bytes | str | None]


class UserStateGuard:
    """Records the user's git state of watched worktrees and checks it did not change."""

    def __init__(self) -> None:
        self._saved: dict[Path, UserState] = {}

    def watch(self, worktree: Path) -> None:
        """Record (or re-record, after the test's own user actions) the state of a worktree."""
        self._saved[worktree] = self._record(worktree)

    def verify(self) -> None:
        for worktree, before in self._saved.items():
            after = self._record(worktree)
            keys = before.keys() | after.keys()
            changed = sorted(k for k in keys if before.get(k) != after.get(k))
            assert not changed, f"user state changed in {worktree}: {changed}"

    @staticmethod
    def _record(worktree: Path) -> UserState:
        git_dir = Path(git(worktree, "rev-parse", "--absolute-git-dir").strip())
        common = Path(
            git(worktree, "rev-parse", "--path-format=absolute", "--git-common-dir").strip()
        )
        state: UserState = {}
        for name, path in {
            "index": git_dir / "index",
            "HEAD": git_dir / "HEAD",
            "packed-refs": common / "packed-refs",
            "logs/refs/stash": common / "logs" / "refs" / "stash",
        }.items():
            state[name] = path.read_bytes() if path.exists() else None
        if state["packed-refs"] is not None:  # convgit's own lines may come and go
            state["packed-refs"] = _users_lines(state["packed-refs"])
        for top in ("refs/heads", "refs/tags", "refs/stash"):
            base = common / top
            files = [base] if base.is_file() else sorted(p for p in base.rglob("*") if p.is_file())
            for path in files:
                state[path.relative_to(common).as_posix()] = path.read_bytes()
        state["stash list"] = git(worktree, "stash", "list")
        # a repository with a broken ref (a test of one) makes for-each-ref fail: its words
        # are the state then, and must not change either
        listed = subprocess.run(
            ["git", "for-each-ref", "refs/heads", "refs/tags", "refs/stash"],
            cwd=worktree, capture_output=True, text=True, check=False,
        )  # fmt: skip
        state["refs"] = listed.stdout + listed.stderr
        return state


def _users_lines(packed: bytes) -> bytes:
    """packed-refs without convgit's refs (a ref's line and the peeled line after it)."""
    kept: list[bytes] = []
    ours = False
    for line in packed.splitlines(keepends=True):
        if line.startswith(b"^"):
            if not ours:
                kept.append(line)
            continue
        ours = b" refs/convgit/" in line
        if not ours:
            kept.append(line)
    return b"".join(kept)


def init_repo(path: Path, *, commit: bool = True) -> GitRepo:
    """`git init` plus, when ``commit``, a first commit, a branch, a tag and a stash entry."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    repo = GitRepo(path)
    if commit:
        repo.write("README.md", "# demo\n")
        repo.write("src/app.py", "print('hello')\n")
        repo.commit_all("first")
        repo.git("branch", "feature")
        repo.git("tag", "v1")
        repo.write("README.md", "# stashed change\n")
        repo.git("stash", "-q")
    return repo
