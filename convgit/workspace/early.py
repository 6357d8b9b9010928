"""A reply's snapshot started as the command starts (``convgit assistant``): the session's
private index locked, the repository found and the snapshot's ``git status`` running before
the command has imported its modules or read the session, so that git stats the files on one
core while Python starts on the other.

What is started is the snapshot's own first step, by its own code (``Workspace.of``,
``PrivateIndex.locked`` and ``survey_early``); the snapshot takes it when it asks for exactly
that (the same repository, index and command: ``Workspace.at``, ``PrivateIndex._survey``) and
starts its own otherwise. What no snapshot took is waited for, and the lock let go, when the
block ends: a guess that proves wrong costs time, never a snapshot's correctness.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager, suppress
from types import FrameType

from convgit.base import faults
from convgit.base.errors import ConvgitError, SignalReceived
from convgit.base.process_groups import handling_stops, stopping_on_signals
from convgit.git.index import survey_plan
from convgit.store.config import fsmonitor
from convgit.store.location import GitPlace, StoreLocation, locate

TYPE_CHECKING = False
if TYPE_CHECKING:
    from convgit.git.index.private_index import PrivateIndex
    from convgit.git.index.survey_plan import Begun


@contextmanager
def started(start: str = ".", begun: Begun | None = None) -> Iterator[Callable[[], None]]:
    """For the block (a command that appends a reply, which snapshots the files): the snapshot
    of the session the command will append to started, when that session is named by its id
    (``CONVGIT_SESSION``, else the one current in this worktree), is in a repository with a
    working tree, and has a private index convgit last saw whole that no other process holds.

    Once it has started, SIGINT, SIGTERM and SIGHUP stop the command, and the git started here
    is stopped before it exits (``PrivateIndex.locked``), never left running. A signal that
    comes while the command's modules are imported is kept until the block calls what it is
    given (``ready``: an exception raised inside an import can crash an extension's start,
    orjson's among them); from then on a signal raises ``SignalReceived`` where the command
    is (``process_groups.stopping_on_signals``).

    ``begun``: that status started already as the process started, from the plan
    (``survey_plan.begin``), its lock held and signals kept since; the block ends it."""
    with ExitStack() as stack:
        received: list[int] = []
        if begun is not None:
            stack.callback(begun.close)
            received = begun.received
        running = False
        with suppress(ConvgitError, OSError):  # the snapshot finds it again and says it
            running = _start(stack, locate(start), received, kept=begun is not None)
        if received and not running:  # came while nothing started: as if it came now
            signal.raise_signal(received[0])

        def ready() -> None:
            if not running:  # nothing started: signals are the command's own, as ever
                return
            if received:
                raise SignalReceived(received[0])
            stack.enter_context(stopping_on_signals())

        yield ready


def _start(
    stack: ExitStack, location: StoreLocation, received: list[int], *, kept: bool = False
) -> bool:
    """Start the snapshot (its lock and git kept by ``stack``); False when it did not.
    ``kept``: signals are kept in ``received`` already. The plan that lets the next command
    start it sooner is kept when it started (``survey_plan.write``)."""
    place = location.git
    if place is None or place.worktree is None:
        return False
    sid = os.environ.get("CONVGIT_SESSION") or location.current()
    if not sid or not location.session_path(sid).is_file():
        return False
    index = location.index_path(sid)
    if not index.exists():
        return False
    from convgit.git.index.private_index import locked
    from convgit.workspace import Workspace

    with ExitStack() as held:
        if not kept:
            held.enter_context(_kept(received))  # before git starts: its stop is the block's end
        held.enter_context(locked(index, timeout=0))  # held elsewhere: the snapshot waits then
        ws = Workspace.of(location)
        if ws is None:
            return False
        ws.track_changes(fsmonitor(location))
        private = ws.private_index(index)
        _plan(location, place, sid, private)  # a plan that did not hold is mended here
        if not private.survey_early():
            return False
        held.enter_context(ws.opened_again(place.git_dir, place.worktree))
        stack.push(held.pop_all())
    faults.point("snapshot:started")
    return True


def _plan(location: StoreLocation, place: GitPlace, sid: str, private: PrivateIndex) -> None:
    """Keep the plan of this snapshot's status for the next command's start, where the store
    is the default one of a working tree whose ``.git`` is its git folder (``survey_plan``)."""
    worktree = place.worktree
    if worktree is None or location.root != place.common_dir / "convgit":
        return
    git_dir = worktree / ".git"
    if place.git_dir != git_dir or not git_dir.is_dir() or git_dir.is_symlink():
        return
    survey_plan.write(
        location.root,
        worktree=os.path.realpath(worktree),
        pointer=str(location.current_pointer),
        sid=sid,
        session=str(location.session_path(sid)),
        index=str(private.path),
        git_dir=os.path.join(os.path.realpath(worktree), ".git"),
        argv=private.survey_command(),
    )


@contextmanager
def _kept(received: list[int]) -> Iterator[None]:
    """For the block, SIGINT, SIGTERM and SIGHUP are kept in ``received`` (a signal the caller
    ignores stays ignored)."""

    def keep(signum: int, _frame: FrameType | None) -> None:
        received.append(signum)

    with handling_stops(keep):
        yield
