"""``convgit ui``: the terminal navigator (``convgit.navigator``, on textual, imported here
only)."""

import sys
from typing import Annotated

import typer

from convgit.base.errors import RefusedError
from convgit.cli.output import show
from convgit.cli.program import command, options


@command()
def ui(
    session_ref: Annotated[
        str | None,
        typer.Argument(metavar="SESSION", help="A session id or prefix (default: the current)."),
    ] = None,
    stable: Annotated[
        bool,
        typer.Option(
            "--stable",
            help="Each line follows the branch written first, so nothing moves when s switches.",
        ),
    ] = False,
) -> None:
    """Browse the session in the terminal: the tree beside the selected entry and its diff.
    s switches, r restores (after listing what changes), u undoes it, ? lists every key."""
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise RefusedError(
            "The navigator draws in a terminal, and stdin or stdout is not one.",
            "convgit tree prints the tree; convgit show REF one entry",
        )
    from convgit.session import Session

    session = Session.open(
        options.directory,
        session=session_ref if session_ref is not None else options.session,
        store_dir=options.store,
        fsync=options.fsync,
    )
    session.conversation.check()
    from convgit.navigator.app import Navigator

    navigator = Navigator(session, stable=stable)
    said = navigator.run()
    if said:
        show(*said)
    if navigator.stopped is not None:  # said once the terminal is back; exit 128 + the signal
        raise navigator.stopped
