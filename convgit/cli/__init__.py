"""The command line: parse, call one Session method, render or print ``--json``.

Errors convgit expects (``ConvgitError``) become one sentence on stderr and their exit code:
1 refused or not found, 2 usage, 3 corrupt or inconsistent store. Never a traceback for them.
``program`` holds the typer app; each of the other modules registers one group of commands on
it when ``main`` or ``app`` is first asked for, so that ``appending`` (``convgit append``, run
by a harness every turn) can start without typer.
"""

from typing import Any

__all__ = ["app", "main"]


def main() -> None:
    """Run the command line (``convgit.__main__`` calls it for what it does not run lean)."""
    _register_commands()
    from convgit.cli import program

    program.main()


def __getattr__(name: str) -> Any:
    """``app``: the typer app with every command registered."""
    if name != "app":
        raise AttributeError(f"module 'convgit.cli' has no attribute {name!r}")
    _register_commands()
    from convgit.cli import program

    return program.app


def _register_commands() -> None:
    # in this order in `convgit --help`
    from convgit.cli import writing, agents, reading, sessions  # noqa: F401, I001
    from convgit.cli import moves, maintenance, files, completion, ui  # noqa: F401
    from convgit.cli import sharing, mcp  # noqa: F401
    from convgit.cli import recorder  # noqa: F401
