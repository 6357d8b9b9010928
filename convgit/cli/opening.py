"""The session a command works on, opened without typer (the typer commands and the lean
entries of ``convgit.__main__`` alike): and, once, the events of an agent's hooks that ran no
convgit since the last command, named on stderr."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from convgit.cli import output

if TYPE_CHECKING:
    from convgit.session import Session


def open_session(
    directory: Path = Path("."),
    *,
    create: bool = False,
    session: str | None = None,
    store: Path | None = None,
    fsync: bool = False,
    tell_hooks: bool = True,
) -> Session:
    """The session the command works on. ``tell_hooks``: events of an agent's hooks that ran
    no convgit since the last command (``hook_failures.take_not_run``) are named on stderr,
    once (``status`` names them among the rest)."""
    from convgit.session import Session

    opened = Session.open(directory, create=create, session=session, store_dir=store, fsync=fsync)
    if tell_hooks:
        hooks_not_run(opened.location.root)
    return opened


def hooks_not_run(root: Path) -> None:
    """Name, on stderr, the hook events that ran no convgit, which the agent's command kept in
    the store (a stat when there are none: every command asks)."""
    from convgit.agents import hook_failures

    if not (root / hook_failures.NOT_RUN).exists():
        return
    from convgit.text import reports

    try:
        taken = hook_failures.take_not_run(root)
    except OSError:
        return
    for line in reports.not_run_words(taken):
        output.warn(line)
