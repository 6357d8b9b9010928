"""Creating a session and appending to it: ``init``, ``user``, ``assistant``, ``tool``,
``append`` and ``system``."""

import signal
import sys
from collections.abc import Callable
from typing import Annotated

import typer

from convgit.base import codec
from convgit.base.errors import InvalidEntryError, SignalReceived, StoppedError, signal_name
from convgit.cli.output import show
from convgit.cli.program import (
    ForceFlag,
    IdOption,
    JsonFlag,
    command,
    open_session,
    options,
    out,
)
from convgit.session import Session


@command()
def init(
    name: Annotated[str | None, typer.Option("--name", help="A display name.")] = None,
    no_snapshots: Annotated[
        bool, typer.Option("--no-snapshots", help="Do not snapshot files after assistant turns.")
    ] = False,
    json: JsonFlag = False,
) -> None:
    """Start a new session here and make it current."""
    session = Session.create(
        options.directory,
        store_dir=options.store,
        name=name,
        snapshots=False if no_snapshots else None,
        fsync=options.fsync,
    )
    if json:
        out(
            {
                "id": session.id,
                "path": str(session.conversation.file.path),
                "snapshots": session.track.snapshots_enabled,
            }
        )
        return
    files = "snapshots on" if session.track.snapshots_enabled else "snapshots off"
    if session.location.git is None:
        files = "no git repository: conversation only"
    show(f"started session {session.id} ({files})", f"store: {session.location.root}")


def _appended(session: Session, ident: str, json: bool) -> None:
    """Show an appended entry and its snapshot; a snapshot that could not be taken is a
    warning (the entry is recorded: the command succeeds, so a retry adds nothing)."""
    snap = session.track.sidecar.snapshots.get(ident)
    failed = session.append.snapshot_error
    if failed is not None:
        typer.echo(
            codec.shown(f"convgit: warning: the files were not snapshotted: {failed}"), err=True
        )
    elsewhere = session.append.files_from
    if json:
        value = session.conversation.record(ident)
        value["snapshot"] = {"error": failed} if failed else snap.to_json() if snap else None
        value["files_from"] = None if elsewhere is None else elsewhere.to_json()
        out(value)
        return
    from convgit.text import render

    show(render.entry_line(session.view(), ident, on_path=ident == session.conversation.leaf))
    if session.append.note is not None:
        show(render.note_line(session.view(), session.append.note))
    if snap is not None and failed is None:
        show(*render.snapshot_words(snap, names=render.Names(session.view())))
    if elsewhere is not None:
        show(elsewhere.words)


def text_of(text: str) -> str:
    """The text argument, or stdin for ``-`` (texts longer than a command line allows)."""
    if text != "-":
        return text
    data = sys.stdin.buffer.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidEntryError("The text on stdin is not UTF-8; nothing was appended.") from None


def _appending(session: Session, append: Callable[[], str]) -> str:
    """``append()`` (which records an entry, then snapshots the files): stopped by SIGINT,
    SIGTERM or SIGHUP, it says in one sentence whether the entry was recorded."""
    from convgit.base.process_groups import stopping_on_signals

    leaf = session.conversation.leaf
    try:
        with stopping_on_signals():
            return append()
    except (SignalReceived, KeyboardInterrupt) as exc:
        signum = exc.signum if isinstance(exc, SignalReceived) else signal.SIGINT
        if open_session().conversation.leaf != leaf:
            left = (
                "the entry was recorded and its snapshot was not (`convgit snapshot` records"
                " the files now)"
            )
        else:
            left = "nothing was recorded"
        raise StoppedError(
            signum, f"Interrupted by {signal_name(signum)}: {left}; no file was changed."
        ) from None


@command()
def user(
    text: Annotated[str, typer.Argument(help="The message text (- reads it from stdin).")],
    ident: IdOption = None,
    force: ForceFlag = False,
    json: JsonFlag = False,
) -> None:
    """Append a user message at the active leaf."""
    session = open_session()
    said = text_of(text)
    made = _appending(session, lambda: session.append.user(said, force=force, ident=ident).id)
    _appended(session, made, json)


@command()
def assistant(
    text: Annotated[str, typer.Argument(help="The reply text (- reads it from stdin).")],
    ident: IdOption = None,
    force: ForceFlag = False,
    json: JsonFlag = False,
) -> None:
    """Append an assistant reply (and snapshot the files when snapshots are on)."""
    session = open_session()
    said = text_of(text)
    made = _appending(session, lambda: session.append.assistant(said, force=force, ident=ident).id)
    _appended(session, made, json)


@command()
def tool(
    call_id: Annotated[str, typer.Argument(help="The id of the tool call this answers.")],
    text: Annotated[str, typer.Argument(help="The tool's output (- reads it from stdin).")],
    error: Annotated[bool, typer.Option("--error", help="The tool failed.")] = False,
    on_call_branch: Annotated[
        bool,
        typer.Option(
            "--on-call-branch",
            help="The call is on another branch: file the result there; the leaf stays.",
        ),
    ] = False,
    ident: IdOption = None,
    force: ForceFlag = False,
    json: JsonFlag = False,
) -> None:
    """Append the result of a tool call on the active path (a call on another branch is refused
    unless --on-call-branch)."""
    session = open_session()
    made = session.append.tool_result(
        call_id,
        text_of(text),
        is_error=error,
        force=force,
        on_call_branch=on_call_branch,
        ident=ident,
    )
    _appended(session, made.id, json)
    if not json and made.id != session.conversation.leaf:
        from convgit.text import render

        leaf = render.Names(session.view()).named(str(session.conversation.leaf))
        show(f"filed on the branch of call {call_id}; the active leaf stays at {leaf}")


@command()
def append(ident: IdOption = None, json: JsonFlag = False) -> None:
    """Append entries from stdin, one JSON object per line, in order. An entry without
    parentId hangs off the leaf at the moment it is written; id and ts are filled in. An
    entry sent again with its id (each record's "id", or --id for a single entry) is a no-op."""
    from convgit.cli import appending

    appending.append(ident, json, open_session)


@command()
def system(
    text: Annotated[
        str | None, typer.Argument(help="The system prompt (none: show the one in force).")
    ] = None,
    clear: Annotated[bool, typer.Option("--clear", help="No system prompt from here on.")] = False,
    json: JsonFlag = False,
) -> None:
    """Record the system prompt the model is sent from the active leaf on (a settings entry,
    replayed like a model change); without TEXT, show the one in force."""
    session = open_session()
    if text is None and not clear:
        prompt = session.conversation.context().system
        if json:
            out({"leaf": session.conversation.leaf, "system": prompt, "entry": None})
        else:
            show("no system prompt on the active path" if prompt is None else prompt)
        return
    if text is not None and clear:
        raise typer.BadParameter("give a TEXT or --clear, not both")
    made = session.append.system(None if clear else text)
    if json:  # the same shape as without TEXT, with the entry that records it
        out(
            {
                "leaf": session.conversation.leaf,
                "system": text,
                "entry": session.conversation.record(made.id),
            }
        )
        return
    from convgit.text import render

    show(render.entry_line(session.view(), made.id, on_path=True))
