"""``convgit`` and ``python -m convgit``. A command an agent's hook or a harness runs every turn
(``hook``, ``append``, ``user``, ``assistant``), a search and ``--version`` take a lean path (no
typer, rich or pydantic); every other goes to the command line app (``convgit.cli``)."""

from __future__ import annotations

import gc
import importlib
import sys

TYPE_CHECKING = False  # typing is not imported by a start that does not need it (--version)
if TYPE_CHECKING:
    from typing import Any

# command -> the module and its function ``(args) -> exit code`` that handle it without the typer
# app (None: arguments the lean path does not take, for the app to explain)
LEAN = {
    "hook": ("convgit.agents.hook", "run"),
    "append": ("convgit.cli.appending", "run"),
    "user": ("convgit.cli.appending", "run_user"),
    "assistant": ("convgit.cli.appending", "run_assistant"),
    "search": ("convgit.cli.searching", "run"),
    "_auto-gc": ("convgit.upkeep.collecting", "main"),  # started in the background after a turn
}


def main() -> None:
    # A start keeps what it makes: no cyclic garbage collector while Python imports and typer
    # builds the command (its collections cost about 10 ms of a 100 ms start, finding nothing);
    # the typer app's commands start it again when they begin (``cli.program.collect``), a lean
    # one, short by design, runs without it, as reading a session already does (``store.load``).
    gc.disable()
    try:
        _run(sys.argv[1:])
    finally:
        # Python's last collection at exit walks every object still alive (a long session's
        # entries: about 35 ms at 300,000) for cycles that no longer matter: what the command
        # leaves is frozen, out of its reach, and freed all the same.
        gc.freeze()


def _run(args: list[str]) -> None:
    if "--version" in args:
        from convgit.cli import version

        if version.asked(args):
            sys.exit(version.run())
    if args and args[0] in LEAN and not {"--help", "-h"} & set(args):
        more = {}
        if args[0] == "hook":  # the recorder of the working tree takes it, when there is one
            from convgit.agents.live import client

            handed = client.run(args[1:])
            if isinstance(handed, int):
                from convgit.base.leaving import leave

                leave(handed)
            more = {"raw": handed}  # the event, read already: the hook takes it
        code = _lean(args[0], args[1:], more)
        if code is not None:
            from convgit.base.leaving import leave

            leave(code)
    from convgit.cli import main as app

    app()


def _lean(command: str, args: list[str], more: dict[str, Any]) -> int | None:
    """``command`` run by its function of the lean table. A reply (``assistant``) has its
    snapshot's git started before the command's modules are imported (``workspace.early``):
    git stats the files on one core while Python imports and reads the session on the other.
    Not a reply read from stdin (``-``): its files are the ones there once it is read whole,
    and no other snapshot waits for the private index while it comes."""
    module, function = LEAN[command]
    if command != "assistant" or "-" in args:
        code: int | None = getattr(importlib.import_module(module), function)(args, **more)
        return code
    from convgit.git.index import survey_plan

    begun = survey_plan.begin()  # git stats the files while the rest is imported
    if begun is not None:
        from convgit.base import faults

        faults.point("snapshot:begun")
    from convgit.base.errors import SignalReceived
    from convgit.workspace import early

    try:
        with early.started(begun=begun) as ready:
            run = getattr(importlib.import_module(module), function)
            ready()  # a signal kept while the modules were imported stops the command here
            code = run(args, **more)
    except SignalReceived as exc:  # before the command ran
        from convgit.cli import appending, output

        output.error(appending.nothing_recorded(exc.signum))
        return 128 + exc.signum
    return code


if __name__ == "__main__":
    main()
