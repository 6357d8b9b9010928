"""The survey plan: what lets a reply's snapshot start its ``git status`` (the survey) as the
process starts, before Python has imported the modules that find the store, the session and the
repository (about 35 ms of a 100 ms start, while git stats every file on the other core).

The first snapshot a command starts early (``convgit.workspace.early``, by the whole machinery)
writes the plan: the current session's pointer and the id it held, the session's file, its
private index, and the status's command line. The next command reads it with the standard
library alone (``begin``), checks each part against the files (the pointer still names that
session, whose file is there, and the index and the shared index it builds on are the files
convgit last saw whole, as ``PrivateIndex.survey_early`` checks them), takes the index's lock,
and starts that command on it. The snapshot takes what was started only when it asks for exactly
that command, environment and index (``PrivateIndex._taken_early``); anything else is waited for
and dropped: a plan that proves wrong costs time, never a snapshot's correctness.

Only the default place is planned for: a store in the repository's own ``.git`` folder, found
from a working tree whose ``.git`` is that folder, no ``CONVGIT_STORE``, ``GIT_DIR`` or
``GIT_WORK_TREE``.

This module also keeps the statuses started ahead of their snapshot (``STARTED``), whichever
way they were started. It imports nothing of convgit's but the lock and the index file's
identity.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from contextlib import suppress

from convgit.base import locks
from convgit.git.index.format import identity
from convgit.git.plumbing.environment import scrubbed_env

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import FrameType
    from typing import Any

PLAN = "early-survey.json"  # in the store's folder
# the survey: what differs between the files and the private index, untracked files one by one
STATUS = (
    "status", "--porcelain=v2", "-z", "--untracked-files=all", "--no-renames",
    "--ignore-submodules=dirty",
)  # fmt: skip
# The settings a planned status may be given (the runner's config sets for a private index): a
# plan that asks for any other (a filter, a pager, an fsmonitor hook: a program git would run)
# is no plan of convgit's, and starts nothing (a snapshot with an fsmonitor hook of the user's,
# ``[snapshots] fsmonitor``, starts its own status, after reading the configuration).
_SETTINGS = (
    "core.splitIndex", "index.sparse", "core.sparseCheckout",
    "core.untrackedCache", "status.showUntrackedFiles", "index.recordEndOfIndexEntries",
    "splitIndex.sharedIndexExpire", "splitIndex.maxPercentChange",
)  # fmt: skip
_FIXED = ("core.hooksPath=/dev/null", "core.fsmonitor=false")  # no program of anyone's
_VERSION = 1
_STOPPING = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

# The statuses started ahead of their snapshot, by the index's absolute path: the command line,
# the environment and the process. The survey that asks for exactly that command takes it
# (``PrivateIndex._taken_early``); any other use of the index first waits for it
# (``private_index.stop_early``).
STARTED: dict[str, tuple[list[str], dict[str, str], subprocess.Popen[bytes]]] = {}


def key(index: str | os.PathLike[str]) -> str:
    """The key of ``STARTED`` for the index at ``index``."""
    return os.path.abspath(index)


def stop_early(index: str | os.PathLike[str], *, stop: bool = False) -> None:
    """Wait for the status started early on the private index at ``index`` (if one is left
    that no survey took) and drop what it said: it ends whole before anything else uses the
    index. With ``stop`` (or when the wait is cut short) it is stopped first: the git lock it
    may leave is stale for the next holder of convgit's lock (``locked``)."""
    started = STARTED.pop(key(index), None)
    if started is None:
        return
    proc = started[2]
    if stop and proc.poll() is None:
        proc.terminate()
    from convgit.git.plumbing.run import stopped_on_the_way_out  # imported by then

    with stopped_on_the_way_out(proc, grace=0):
        proc.communicate()


def write(
    store: str | os.PathLike[str],
    *,
    worktree: str,
    pointer: str,
    sid: str,
    session: str,
    index: str,
    git_dir: str,
    argv: list[str],
) -> None:
    """Keep the plan in the store at ``store`` (when it differs from the one kept): the
    status ``argv`` on ``index`` (the private index of session ``sid``, whose file is
    ``session``), for the working tree ``worktree`` while ``pointer`` names that session.
    Never fails: a plan not kept only costs the next command its head start."""
    plan = {
        "version": _VERSION,
        "worktree": worktree,
        "pointer": pointer,
        "sid": sid,
        "session": session,
        "index": index,
        "git_dir": git_dir,
        "argv": argv,
    }
    path = os.path.join(store, PLAN)
    try:
        with open(path, "rb") as handle:
            if json.loads(handle.read()) == plan:
                return
    except (OSError, ValueError):
        pass
    scratch = f"{path}.{os.getpid()}.tmp"
    try:
        with open(scratch, "w") as out:
            out.write(json.dumps(plan))
        os.replace(scratch, path)
    except OSError:
        with suppress(OSError):
            os.unlink(scratch)


class Begun:
    """A status started from the plan: the index's lock held, and SIGINT, SIGTERM and SIGHUP
    kept in ``received`` until ``close`` (a signal that comes while the command's modules are
    imported is raised where the command can take it: ``workspace.early.started``)."""

    def __init__(self, index: str, held: Any, saved: dict[int, Any], received: list[int]):
        self.index = index
        self.received = received
        self._held = held
        self._saved = saved

    def close(self) -> None:
        """Wait for the status if no snapshot took it (stopped when this is an exception's
        way out), let the lock go, and put the signal handlers back."""
        import sys

        try:
            stop_early(self.index, stop=sys.exc_info()[1] is not None)
        finally:
            try:
                self._held.__exit__(None, None, None)
            finally:
                for signum, handler in self._saved.items():
                    signal.signal(signum, signal.SIG_DFL if handler is None else handler)


def begin(cwd: str = ".") -> Begun | None:
    """Start the status the plan names, when every part of it holds now (the module's note);
    None when it does not, or when the index's lock is held elsewhere."""
    env = os.environ
    if env.get("CONVGIT_STORE") or env.get("GIT_DIR") or env.get("GIT_WORK_TREE"):
        return None
    try:
        root = os.path.realpath(cwd)
        while not os.path.lexists(os.path.join(root, ".git")):
            parent = os.path.dirname(root)
            if parent == root:
                return None
            root = parent
        git_dir = os.path.join(root, ".git")
        with open(os.path.join(git_dir, "convgit", PLAN), "rb") as handle:
            plan = json.loads(handle.read())
        if not _holds(plan, root, git_dir):
            return None
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None
    index: str = plan["index"]
    if not _still_whole(index, git_dir):  # before the lock (no lock file made for nothing)
        return None
    held = locks.held(f"{index}.flock", 0)
    try:
        held.__enter__()
    except (locks.LockTimeout, OSError):
        return None
    received: list[int] = []
    saved: dict[int, Any] = {}
    begun = Begun(key(index), held, saved, received)
    try:
        if not _still_whole(index, git_dir):  # checked under the lock
            begun.close()
            return None

        def keep(signum: int, _frame: FrameType | None) -> None:
            received.append(signum)

        for stopping in _STOPPING:  # before git starts: its stop is the command's end
            if signal.getsignal(stopping) != signal.SIG_IGN:
                saved[stopping] = signal.signal(stopping, keep)
        argv = list(plan["argv"])
        git_env = {**scrubbed_env(), "GIT_INDEX_FILE": index}
        proc = subprocess.Popen(
            argv,
            cwd=plan["worktree"],
            env=git_env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            pass_fds=(locks.descriptor(f"{index}.flock"),),
        )
    except BaseException:
        begun.close()
        raise
    STARTED[key(index)] = (argv, git_env, proc)
    return begun


def _holds(plan: Any, root: str, git_dir: str) -> bool:
    """True when the plan is this working tree's, asks for convgit's status alone, and its
    session is still the current one."""
    if plan.get("version") != _VERSION or plan["worktree"] != root:
        return False
    if plan["git_dir"] != git_dir or not os.path.isdir(git_dir):
        return False
    if not _is_status(plan["argv"], root, git_dir):
        return False
    store = os.path.join(git_dir, "convgit")
    for name, folder in (("pointer", "current"), ("session", "sessions"), ("index", "index")):
        path = plan[name]
        if not isinstance(path, str) or os.path.dirname(path) != os.path.join(store, folder):
            return False  # convgit's own files, in its store, alone
    sid = os.environ.get("CONVGIT_SESSION")
    if not sid:
        with open(plan["pointer"], "rb") as handle:
            sid = handle.read().decode("utf-8", "replace").strip()
    return bool(sid == plan["sid"] and os.path.isfile(plan["session"]))


def _still_whole(index: str, git_dir: str) -> bool:
    """True when the index, and the shared index it builds on, are the files convgit last saw
    whole (``PrivateIndex.survey_early``'s check, from its state file)."""
    try:
        with open(f"{index}.state", "rb") as handle:
            state = json.loads(handle.read())
    except (OSError, ValueError):
        return False
    checked, shared, shared_checked = (
        state.get(k) for k in ("checked", "shared", "shared_checked")
    )
    if not checked or checked != identity(index):
        return False
    if not shared or not shared_checked:
        return False  # a whole index, or one the state says nothing of: the snapshot checks it
    return bool(shared_checked == identity(os.path.join(git_dir, f"sharedindex.{shared}")))


def _is_status(argv: Any, root: str, git_dir: str) -> bool:
    """True when ``argv`` is git's ``STATUS`` on this repository with convgit's settings."""
    if not isinstance(argv, list) or not all(isinstance(a, str) for a in argv):
        return False
    head = ["git", f"--git-dir={git_dir}", f"--work-tree={root}"]
    if argv[:3] != head or tuple(argv[len(argv) - len(STATUS) :]) != STATUS:
        return False
    settings = argv[3 : len(argv) - len(STATUS)]
    if len(settings) % 2:
        return False
    for flag, setting in zip(settings[::2], settings[1::2], strict=True):
        name = setting.partition("=")[0]
        if flag != "-c" or (name not in _SETTINGS and setting not in _FIXED):
            return False
    return True
