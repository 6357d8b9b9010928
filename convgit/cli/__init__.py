"""The command line: parse, call one Session method, render or print ``--json``.

Errors convgit expects (``ConvgitError``) become one sentence on stderr and their exit code:
1 refused or not found, 2 usage, 3 corrupt or inconsistent store. Never a traceback for them.
``program`` holds the app; each other module registers one group of commands on it.
"""

# in this order in `convgit --help`
from convgit.cli import writing, agents, reading, moves, maintenance, files  # noqa: F401, I001
from convgit.cli.program import app, main

__all__ = ["app", "main"]
