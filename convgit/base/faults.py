"""Named points where a crash test can kill the process, as ``kill -9`` would.

Off unless ``CONVGIT_FAULT`` is set (to ``point`` or ``point#N``, the N-th time the point is
reached; ``point!INT`` sends SIGINT instead, as a Ctrl-C at that exact place would; ``point!STOP``
SIGSTOP, as a process stopped or hung there looks to others). Tests use
it to stop an append, a snapshot or a restore at an exact place and then prove that nothing is
lost: the session loads, fsck passes, and the files are old, new, or recoverable with
``restore --undo``.
"""

from __future__ import annotations

import os
import signal

_TARGET, _, _HOW = (os.environ.get("CONVGIT_FAULT") or "").partition("!")
_SIGNAL = {"INT": signal.SIGINT, "STOP": signal.SIGSTOP}.get(_HOW, signal.SIGKILL)
_seen: dict[str, int] = {}


def point(name: str) -> None:
    """Die (or be interrupted) here if a test asked for it; otherwise cost one comparison."""
    if not _TARGET:
        return
    count = _seen[name] = _seen.get(name, 0) + 1
    if _TARGET in (name, f"{name}#{count}"):
        os.kill(os.getpid(), _SIGNAL)


def torn_write(fd: int, data: bytes) -> bool:
    """For the ``append:torn`` point: write half of ``data`` and die, leaving a torn line."""
    if not _TARGET.startswith("append:torn"):
        return False
    count = _seen["append:torn"] = _seen.get("append:torn", 0) + 1
    if _TARGET in ("append:torn", f"append:torn#{count}"):
        os.write(fd, data[: max(1, len(data) // 2)])
        os.kill(os.getpid(), signal.SIGKILL)
    return False
