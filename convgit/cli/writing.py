"""Creating a session and appending to it: ``init``, ``user``, ``assistant``, ``tool``,
``append`` and ``system``."""

from typing import Annotated

import typer

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


@command()
def init(
    name: Annotated[str | None, typer.Option("--name", help="A display name.")] = None,
    no_snapshots: Annotated[
        bool, typer.Option("--no-snapshots", help="Do not snapshot files after assistant turns.")
    ] = False,
    json: JsonFlag = False,
) -> None:
    """Start a new session here and make it current."""
    from convgit.session import Session

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


@command()
def user(
    text: Annotated[str, typer.Argument(help="The message text (- reads it from stdin).")],
    ident: IdOption = None,
    force: ForceFlag = False,
    json: JsonFlag = False,
) -> None:
    """Append a user message at the active leaf."""
    from convgit.cli import appending  # where the lean `convgit user` runs the same

    appending.message("user", text, ident, force, json, open_session)


@command()
def assistant(
    text: Annotated[str, typer.Argument(help="The reply text (- reads it from stdin).")],
    ident: IdOption = None,
    force: ForceFlag = False,
    json: JsonFlag = False,
) -> None:
    """Append an assistant reply (and snapshot the files when snapshots are on)."""
    from convgit.cli import appending

    appending.message("assistant", text, ident, force, json, open_session)


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
    from convgit.cli import appending

    session = open_session()
    made = session.append.tool_result(
        call_id,
        appending.text_of(text),
        is_error=error,
        force=force,
        on_call_branch=on_call_branch,
        ident=ident,
    )
    appending.appended(session, made.id, json)
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
