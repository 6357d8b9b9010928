"""``convgit`` and ``python -m convgit``. A command an agent's hook runs every turn, and a search,
take a lean path (no typer, rich or pydantic); every other goes to the command line app
(``convgit.cli``)."""

from __future__ import annotations

import gc
import importlib
import sys

# command -> the module whose ``run(args) -> exit code`` handles it without the typer app (None:
# arguments the lean path does not take, for the app to explain)
LEAN = {
    "hook": "convgit.agents.hook",
    "append": "convgit.cli.appending",
    "search": "convgit.cli.searching",
}


def main() -> None:
    args = sys.argv[1:]
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
        code = importlib.import_module(LEAN[args[0]]).run(args[1:], **more)
        if code is not None:
            sys.exit(code)
    from convgit.cli import main as app

    app()


if __name__ == "__main__":
    main()
