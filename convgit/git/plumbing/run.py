"""Running git's command line on one working tree: every git process convgit starts goes
through ``Git``, with an explicit git dir and work tree, an environment scrubbed of the
variables that would point git at another repository, index or object store, and one of the
named config sets below (none runs the user's hooks).

``Git.open`` does not search for a repository: it is handed the one the store found
(``convgit.store.find_git``, which reads files and starts no git), asks git once where that
repository's working tree, common dir and object format are, and refuses a working tree
whose root is the home folder or the file system root (``refuse_home_or_root``).
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path

from convgit.base.errors import NotFoundError, NoWorkspaceError, RefusedError, WorkspaceError
from convgit.git.names import PREFIX
from convgit.git.plumbing.environment import LOCAL_GIT_VARS, scrubbed_env
from convgit.git.plumbing.objects import Objects

AUTHOR_NAME = "convgit"
AUTHOR_EMAIL = "convgit@localhost"
STOP_GRACE = 5.0  # seconds a git process has to end after SIGTERM before it is killed
# git's check_refname_format, for the refs convgit writes (a component may not start with a
# dot or end with .lock; no "..", "@{", control characters, space or ~^:?*[\ anywhere).
_BAD_REF = re.compile(r"(^|/)\.|\.lock(/|$)|\.\.|@\{|[\x00-\x20\x7f~^:?*\[\\]|//|/$|\.$|^@$")


# -- the config sets: every git command runs with one -----------------------------------------

# the user's hooks never run: not through hooksPath, not as an fsmonitor daemon command
SAFE = ("core.hooksPath=/dev/null", "core.fsmonitor=false")
# commit-tree with no signature, no encoding header and convgit's own identity (``IDENTITY``)
COMMIT = (*SAFE, "i18n.commitEncoding=UTF-8")
# an index that is "git add -A into an empty index": no split or sparse index
WHOLE_INDEX = (
    *SAFE,
    "core.splitIndex=false",
    "index.sparse=false",
    "core.sparseCheckout=false",
    # git's untracked cache, kept in the private index: a folder whose mtime has not moved is
    # not read again, so finding new files costs a stat per folder, not a readdir
    "core.untrackedCache=true",
    "status.showUntrackedFiles=all",  # the mode the untracked cache is kept for
    # an index that says where its extensions start: convgit reads them from the file's tail
    "index.recordEndOfIndexEntries=true",
)
# The private index is split: git rewrites only what changed (a small file) rather than the
# whole index on every update, keeping the rest in ``sharedindex.<id>`` in the git dir. git
# never deletes shared indexes for convgit (the user's may be old but in use); convgit deletes
# the ones it made when its index moves on (``PrivateIndex``).
INDEX = (
    *WHOLE_INDEX,  # the last value of a setting wins
    "core.splitIndex=true",
    "splitIndex.sharedIndexExpire=never",
    "splitIndex.maxPercentChange=20",  # git's default: a new shared index only now and then
)
# unified diffs with names as they are, not C-quoted beyond what git must quote
DIFF = (*SAFE, "core.quotePath=false")

IDENTITY = {
    f"GIT_{who}_{what}": value
    for who in ("AUTHOR", "COMMITTER")
    for what, value in (("NAME", AUTHOR_NAME), ("EMAIL", AUTHOR_EMAIL))
}


def refuse_home_or_root(worktree: Path, *, hint: str | None = None) -> None:
    """Refuse (RefusedError) a working tree whose root is the home folder or the file system
    root: convgit never snapshots either."""
    root = worktree.resolve()
    home = Path(os.path.expanduser("~")).resolve()
    if root in (home, Path(root.anchor)):
        where = "your home folder" if root == home else "the file system root"
        raise RefusedError(
            f"The git repository at {worktree} is {where}; convgit will not snapshot it.",
            hint=hint or "run convgit inside a project's own repository",
        )


class Git:
    """git on the working tree at ``root``: ``git_dir`` (this worktree's git dir),
    ``common_dir`` (shared by its worktrees) and the repository's ``object_format``."""

    def __init__(
        self, root: Path, git_dir: Path, common_dir: Path, *, object_format: str = "sha1"
    ) -> None:
        self.root = root
        self.git_dir = git_dir
        self.common_dir = common_dir
        self.object_format = object_format
        self.hash_len = 32 if object_format == "sha256" else 20
        self.env = scrubbed_env()

    def __repr__(self) -> str:
        return f"Git(root={str(self.root)!r})"

    @classmethod
    def open(cls, git_dir: Path, worktree: Path) -> Git | None:
        """git on the repository at ``git_dir`` whose working tree the store found at
        ``worktree`` (git's own answer wins: core.worktree moves it). None when git sees no
        working tree there (a bare repository, a git dir that is not one). Refuses a working
        tree at the home folder or the file system root, and a repository of another user."""
        env = {k: v for k, v in os.environ.items() if k not in LOCAL_GIT_VARS}
        env.update(LC_ALL="C", GIT_DIR=str(git_dir))
        asked = ["--is-bare-repository", "--git-dir", "--git-common-dir", "--show-object-format"]
        try:
            proc = subprocess.run(
                ["git", "rev-parse", "--path-format=absolute", *asked, "--show-toplevel"],
                cwd=worktree,
                env=env,
                capture_output=True,
                check=False,
            )
        except FileNotFoundError:
            raise NoWorkspaceError(
                "git is not installed, and convgit needs it for snapshots.", hint="install git"
            ) from None
        except NotADirectoryError:
            return None
        lines = os.fsdecode(proc.stdout).splitlines()
        error = os.fsdecode(proc.stderr).strip()
        if "dubious ownership" in error:
            raise RefusedError(
                f"git refuses to work in {worktree}: the repository belongs to another user.",
                hint="see `git config --global --add safe.directory`",
            )
        if proc.returncode != 0 or len(lines) != 5 or lines[0] == "true":
            return None
        root = Path(lines[4])
        refuse_home_or_root(root)
        return cls(root, Path(lines[1]), Path(lines[2]), object_format=lines[3])

    def run(
        self,
        *args: str,
        index: Path | None = None,
        config: Sequence[str] = SAFE,
        stdin: bytes | None = None,
        check: bool = True,
        env: dict[str, str] | None = None,
    ) -> subprocess.CompletedProcess[bytes]:
        """Run git to the end; WorkspaceError in git's words when it fails (unless not
        ``check``)."""
        proc = self.spawn(*args, index=index, config=config, stdin=stdin is not None, env=env)
        with stopped_on_the_way_out(proc):
            out, err = proc.communicate(stdin)
        return self.finish(proc, args[0], out, err, check=check)

    def spawn(
        self,
        *args: str,
        index: Path | None = None,
        config: Sequence[str] = SAFE,
        stdin: bool = False,
        env: dict[str, str] | None = None,
        keep_fds: Sequence[int] = (),
    ) -> subprocess.Popen[bytes]:
        """Start git on this worktree: explicit git dir and work tree, the scrubbed environment
        (or ``env``), GIT_INDEX_FILE set to ``index`` (a private index) or unset. It stays in
        convgit's process group; ``keep_fds`` are inherited (a lock's descriptor: the child
        holds the lock until it ends, even if convgit is killed first)."""
        env = self.env if env is None else env
        if index is not None:
            env = {**env, "GIT_INDEX_FILE": str(index)}
        return subprocess.Popen(
            self.command(*args, config=config),
            cwd=self.root,
            env=env,
            stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            pass_fds=tuple(keep_fds),
        )

    def command(self, *args: str, config: Sequence[str] = SAFE) -> list[str]:
        """The command line ``spawn`` starts for ``args`` with the config set ``config``."""
        cmd = ["git", f"--git-dir={self.git_dir}", f"--work-tree={self.root}"]
        for setting in config:
            cmd += ["-c", setting]
        return [*cmd, *args]

    @staticmethod
    def finish(
        proc: subprocess.Popen[bytes], verb: str, out: bytes, err: bytes, *, check: bool = True
    ) -> subprocess.CompletedProcess[bytes]:
        """The result of a git process ``spawn`` started and whose output was read."""
        done = subprocess.CompletedProcess(proc.args, proc.wait(), out, err)
        if check and done.returncode != 0:
            code = done.returncode
            if code < 0 and not err.strip():
                raise WorkspaceError(f"git {verb} failed: killed by {_signal_name(-code)}.")
            raise WorkspaceError(f"git {verb} failed: {git_words(err, code)}")
        return done

    def objects(self) -> Objects:
        """A reader of this repository's objects (one ``git cat-file --batch``): use it in a
        ``with`` block."""
        return Objects(self.spawn("cat-file", "--batch", stdin=True), self.hash_len)

    def commit_tree(self, tree_id: str, parents: Sequence[str], message: str) -> str:
        """A commit of ``tree_id`` by convgit's identity, unsigned; its id."""
        linked = [arg for parent in parents for arg in ("-p", parent)]
        proc = self.run(
            "commit-tree", "--no-gpg-sign", tree_id, *linked,
            config=COMMIT, stdin=message.encode(), env={**self.env, **IDENTITY},
        )  # fmt: skip
        return os.fsdecode(proc.stdout).strip()

    # -- refs: only ever under refs/convgit/ --

    def set_ref(self, ref: str, commit: str) -> None:
        """Point ``ref`` (under refs/convgit/) at ``commit``, which keeps it safe from gc."""
        _check_ref(ref)
        if commit.startswith("-"):
            raise NotFoundError(f"There is no commit {commit!r} in this repository.")
        # git peels and checks the target: only a commit is accepted
        proc = self.run("update-ref", ref, f"{commit}^{{commit}}", check=False)
        if proc.returncode != 0:
            self.commit_and_tree(commit)  # NotFoundError when that is why
            words = os.fsdecode(proc.stderr).strip()
            raise WorkspaceError(f"git update-ref failed: {words}")

    def delete_ref(self, ref: str) -> None:
        """Remove ``ref`` (under refs/convgit/); nothing happens when it does not exist."""
        _check_ref(ref)
        self.run("update-ref", "-d", ref)

    def refs_under(self, prefix: str) -> dict[str, str]:
        """Every ref whose name starts with ``prefix`` (a folder of ``names``, or one of its
        for-each-ref patterns, under refs/convgit/): name -> commit."""
        if not prefix.startswith(PREFIX) or _BAD_REF.search(prefix.replace("*", "x").rstrip("/")):
            raise RefusedError(f"convgit only lists refs under {PREFIX}, not {prefix!r}.")
        listed = self.run("for-each-ref", "--format=%(objectname) %(refname)", prefix).stdout
        found = (os.fsdecode(line).partition(" ") for line in listed.splitlines())
        return {name: commit for commit, _, name in found}

    def move_refs(self, moves: Sequence[tuple[str, str, str]]) -> None:
        """Rename refs under refs/convgit/, each (old name, new name, commit), in one git
        transaction: all of them move or none does (a new name that exists fails it)."""
        script = []
        for old, new, commit in moves:
            _check_ref(old)
            _check_ref(new)
            script += [f"create {new} {commit}\n", f"delete {old} {commit}\n"]
        if script:
            self.run("update-ref", "--stdin", stdin="".join(script).encode())

    def delete_refs(self, refs: Mapping[str, str]) -> None:
        """Delete refs under refs/convgit/ (name -> the commit it must still point at) in one
        git transaction."""
        for name in refs:
            _check_ref(name)
        script = "".join(f"delete {name} {commit}\n" for name, commit in refs.items())
        if script:
            self.run("update-ref", "--stdin", stdin=script.encode())

    def commit_and_tree(self, rev: str) -> tuple[str, str]:
        """The full id of commit ``rev`` and of its tree; NotFoundError when it is no commit."""
        if rev.startswith("-"):
            raise NotFoundError(f"There is no commit {rev!r} in this repository.")
        proc = self.run("rev-parse", "--verify", f"{rev}^{{commit}}", check=False)
        commit = os.fsdecode(proc.stdout).strip()
        if proc.returncode != 0 or not commit:
            raise NotFoundError(f"There is no commit {rev!r} in this repository.")
        tree = self.run("rev-parse", "--verify", f"{commit}^{{tree}}")
        return commit, os.fsdecode(tree.stdout).strip()


@contextmanager
def stopped_on_the_way_out(
    proc: subprocess.Popen[bytes], *, grace: float = STOP_GRACE
) -> Iterator[None]:
    """For the block that waits on ``proc``: if anything cuts it short (a signal, Ctrl-C), the
    git process is stopped and waited for before the exception goes on, so no git convgit
    started outlives the command that started it. Its input closed, git has ``grace`` seconds
    to end on its own (0: a git whose work is worth nothing half-done, such as one writing a
    restore's files beside their places, is stopped at once)."""
    try:
        yield
    except BaseException:
        if proc.stdin is not None and grace > 0:  # no more input: git ends once it has done
            with suppress(OSError):
                proc.stdin.close()
            with suppress(subprocess.TimeoutExpired):
                proc.wait(grace)
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(STOP_GRACE)
            except subprocess.TimeoutExpired:
                proc.kill()
        proc.wait()
        raise


def _check_ref(ref: str) -> None:
    if not ref.startswith(PREFIX) or _BAD_REF.search(ref):
        raise RefusedError(f"convgit only writes refs under {PREFIX}, not {ref!r}.")


def git_words(err: bytes, code: int) -> str:
    """git's reason in one line: its fatal line (else its last line), ending in a full stop."""
    lines = [line.strip() for line in os.fsdecode(err).splitlines() if line.strip()]
    fatal = [line for line in lines if line.startswith("fatal:")]
    words = (fatal or lines or [f"exit status {code}"])[0 if fatal else -1]
    words = words.removeprefix("fatal: ").removeprefix("error: ")
    return words if words.endswith(".") else words + "."


def _signal_name(signum: int) -> str:
    import signal  # only a git killed by a signal needs it

    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"
