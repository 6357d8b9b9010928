"""How a short command's process ends: at once, once what it printed is flushed."""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing is not imported by a hook's start
if TYPE_CHECKING:
    from typing import NoReturn


def leave(code: int) -> NoReturn:
    """Exit with ``code`` as soon as what this process printed is flushed: the interpreter's
    teardown (every module, and the session it read, taken apart one object at a time: about
    10 ms of a turn's command) is left to the operating system. Every file a command writes is
    written unbuffered or closed before it returns; with another thread still running, Python
    exits as it always does."""
    threading = sys.modules.get("threading")
    if threading is not None and threading.active_count() > 1:
        sys.exit(code)
    for stream in (sys.stdout, sys.stderr):
        try:  # noqa: SIM105 - contextlib is not imported by every start that ends here
            stream.flush()
        except (OSError, ValueError):  # a closed pipe, a closed stream: nothing more to say
            pass
    os._exit(code)
