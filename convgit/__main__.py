"""``convgit`` and ``python -m convgit``. A command an agent's hook or a harness runs every turn
(``hook``, ``append``, ``user``, ``assistant``), a search and ``--version`` take a lean path (no
typer, rich or pydantic); every other goes to the command line app (``convgit.cli``)."""

from __future__ import annotations

import gc
import importlib
import sys

# command -> the module and its function ``(args) -> exit code`` that handle it without the typer
# app (None: arguments the lean path does not take, for the app to explain)
LEAN = {
    "hook": ("convgit.agents.hook", "run"),
    "append": ("convgit.cli.appending", "run"),
    "user": ("convgit.cli.appending", "run_user"),
    "assistant": ("convgit.cli.appending", "run_assistant"),
    "search": ("convgit.cli.searching", "run"),
}


def main() -> None:
    args = sys.argv[1:]
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
                sys.exit(handed)
            more = {"raw": handed}  # the event, read already: the hook takes it
        # A short process that keeps what it makes until it exits: without the cyclic garbage
        # collector, which its imports alone started dozens of times (about 15% of a hook's
        # imports), as reading a session already does (``store.load``).
        gc.disable()
        module, function = LEAN[args[0]]
        code = getattr(importlib.import_module(module), function)(args[1:], **more)
        if code is not None:
            sys.exit(code)
    from convgit.cli import main as app

    app()


if __name__ == "__main__":
    main()
