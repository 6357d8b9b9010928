"""The command line: parse, call one Session method, render or print ``--json``.

Errors convgit expects (``ConvgitError``) become one sentence on stderr and their exit code:
1 refused or not found, 2 usage, 3 corrupt or inconsistent store. Never a traceback for them.
``program`` holds the typer app; each of the other modules registers one group of commands on
it when ``main`` or ``app`` is first asked for, so that ``appending`` (``convgit append``, run
by a harness every turn) can start without typer.
"""

from typing import Any

__all__ = ["app", "main"]


# command (or group) -> the module of ``convgit.cli`` that registers it: a command imports its
# own module alone (tests/test_startup.py holds this to what each module registers); help,
# completion and anything unknown import them all, in this order (``convgit --help``'s)
COMMANDS = {
    **dict.fromkeys(("init", "user", "assistant", "tool", "append", "system"), "writing"),
    **dict.fromkeys(("import", "export", "hooks", "hook", "resume"), "agents"),
    **dict.fromkeys(
        ("log", "tree", "show", "context", "use", "branches", "html", "search"), "reading"
    ),
    **dict.fromkeys(("sessions", "gc"), "sessions"),
    **dict.fromkeys(("switch", "fork", "edit", "retry", "label", "name"), "moves"),
    **dict.fromkeys(("fsck", "repair", "redact", "demo"), "maintenance"),
    **dict.fromkeys(
        ("status", "snapshot", "snapshots", "restore", "restores", "diff", "worktree", "run"),
        "files",
    ),
    "completion": "completion",
    "ui": "ui",
    **dict.fromkeys(
        ("share", "unshare", "push", "fetch", "pull", "why", "git-hook", "blame", "attribution"),
        "sharing",
    ),
    "mcp": "mcp",
    "recorder": "recorder",
}
MODULES = tuple(dict.fromkeys(COMMANDS.values()))


def main() -> None:
    """Run the command line (``convgit.__main__`` calls it for what it does not run lean)."""
    import sys

    from convgit.cli import program

    _register_commands(program.command_named(sys.argv[1:]) or program.completed_command())
    program.main()


def __getattr__(name: str) -> Any:
    """``app``: the typer app with every command registered."""
    if name != "app":
        raise AttributeError(f"module 'convgit.cli' has no attribute {name!r}")
    _register_commands()
    from convgit.cli import program

    return program.app


def _register_commands(command: str | None = None) -> None:
    """Import the module that registers ``command`` (None, or one it does not know: every
    module, for the whole app)."""
    import importlib

    for module in (COMMANDS[command],) if command in COMMANDS else MODULES:
        importlib.import_module(f"convgit.cli.{module}")
