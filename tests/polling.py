"""The tests' one poll: ask until the answer comes or the time is up. For what a test waits on
that says nothing when it is done (a file another process writes, a process that starts, git
that begins writing): a wait is never a promise of timing, so the time given is generous."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def poll(ask: Callable[[], T], seconds: float, every: float = 0.05) -> T:
    """Call ``ask`` until it answers something true, for at most ``seconds``: its last answer
    (false when the time ran out)."""
    deadline = time.monotonic() + seconds
    while not (answer := ask()) and time.monotonic() < deadline:
        time.sleep(every)
    return answer


def wait_until(ask: Callable[[], T], what: str, seconds: float = 30, every: float = 0.05) -> T:
    """``poll``, failing with "waited N s for WHAT" when the time runs out: the answer."""
    answer = poll(ask, seconds, every)
    assert answer, f"waited {seconds:.0f} s for {what}"
    return answer
