"""Moving in the conversation, which never changes a file: ``switch``, ``fork``, ``edit``,
``retry``, ``label`` and ``name``. Each ends with the line that says what the files did."""

from typing import TYPE_CHECKING, Annotated

import typer

from convgit.base.errors import UsageError
from convgit.cli.output import show
from convgit.cli.program import (
    JsonFlag,
    boundary,
    command,
    open_session,
    out,
    positive,
)
from convgit.conversation.refs import LEAF

if TYPE_CHECKING:
    from convgit.session import Session
    from convgit.text.render import Styled


@command()
def switch(
    ref: Annotated[
        str | None,
        typer.Argument(help="The entry to make the active leaf (with --branch: the fork point)."),
    ] = None,
    tip: Annotated[
        bool, typer.Option("--tip", help="Go to the newest deepest leaf below REF instead.")
    ] = False,
    branch: Annotated[
        str | None,
        typer.Option(
            "--branch", help="Go to the newest leaf of branch N of `convgit branches`.", metavar="N"
        ),
    ] = None,
    json: JsonFlag = False,
) -> None:
    """Move the active leaf. The files are not changed."""
    session = open_session()
    if branch is not None:
        leaf = session.moves.switch_branch(positive(branch, "--branch"), ref)
    elif ref is None:
        raise UsageError("Say where to switch to.", "convgit switch REF, or --branch N")
    else:
        leaf = session.moves.switch(ref, tip=tip)
    _moved(session, leaf, json, "switched to")


def _moved(session: "Session", leaf: str, json: bool, verb: str) -> None:
    if json:  # fork --new-session prints the same keys
        out(
            {
                "id": leaf,
                "session": session.id,
                "source": None,
                "leaf": session.conversation.leaf,
                "files_changed": False,
                "note": session.moves.note,
            }
        )
        return
    from convgit.text import render

    show(_prefixed(verb, render.entry_line(session.view(), leaf, on_path=True)))
    if session.moves.note is not None:
        show(render.note_line(session.view(), session.moves.note))
    boundary(session)


def _entries(count: int) -> str:
    return f"{count} entr{'y' if count == 1 else 'ies'}"


def _prefixed(verb: str, line: "Styled") -> "Styled":
    from convgit.text.render import Styled

    return Styled(f"{verb} ").append_text(line)


@command()
def fork(
    ref: Annotated[str, typer.Argument(help="The entry to branch from.")],
    text: Annotated[str | None, typer.Argument(help="A user message to start the branch.")] = None,
    summary: Annotated[
        str | None,
        typer.Option(
            "--summary",
            metavar="TEXT",
            help="What the branch left behind learned (a branch_summary).",
        ),
    ] = None,
    new_session: Annotated[
        bool,
        typer.Option(
            "--new-session", help="Start a new session from the root-to-REF path; this one stays."
        ),
    ] = False,
    name: Annotated[
        str | None, typer.Option("--name", help="With --new-session: its display name.")
    ] = None,
    json: JsonFlag = False,
) -> None:
    """Go back to an entry and branch from there (or, with --new-session, into a new session
    that keeps the path up to it). The files are not changed."""
    session = open_session()
    if not new_session:
        if name is not None:
            raise UsageError("--name goes with --new-session.", "convgit name NAME names a session")
        leaf = session.moves.fork(ref, text, summary)
        _moved(session, leaf, json, "forked:")
        return
    if text is not None or summary is not None:
        raise UsageError(
            "--new-session takes no TEXT or --summary: the new session starts at REF.",
            "add the next message there with `convgit user TEXT`",
        )
    made = session.fork_session(ref, name=name)
    source = made.conversation.header().get("forkedFrom")
    if json:
        out(
            {
                "id": made.conversation.leaf,
                "session": made.id,
                "source": source,
                "leaf": made.conversation.leaf,
                "files_changed": False,
                "note": None,
            }
        )
        return
    from convgit.text import render

    show(
        f"started session {made.id} from session {session.id} at"
        f" {render.Names(made.view()).id(str(made.conversation.leaf))}"
        f" ({_entries(len(made.view().entries))}); it is now current, and {session.id} is unchanged"
    )
    show(render.entry_line(made.view(), str(made.conversation.leaf), on_path=True))
    boundary(made)


@command()
def edit(
    ref: Annotated[str, typer.Argument(help="The message to edit.")],
    text: Annotated[str, typer.Argument(help="The new text.")],
    json: JsonFlag = False,
) -> None:
    """A new version of a message, as its sibling; the original stays. Files are not changed."""
    session = open_session()
    leaf = session.moves.edit(ref, text)
    _moved(session, leaf, json, "edited:")


@command()
def retry(
    ref: Annotated[str, typer.Argument(help="The reply to try again (default: the leaf).")] = LEAF,
    turn: Annotated[
        bool,
        typer.Option(
            "--turn",
            help="Go back to before the last user message: the next one starts a new attempt.",
        ),
    ] = False,
    json: JsonFlag = False,
) -> None:
    """Move the leaf so the next reply is a new sibling of REF (with --turn, so the next user
    message is a new sibling of the last one). Files are not changed."""
    session = open_session()
    leaf = session.moves.retry(ref, turn=turn)
    _moved(session, leaf, json, "ready to retry from")


@command()
def label(
    ref: Annotated[str, typer.Argument(help="The entry to bookmark.")],
    name: Annotated[str | None, typer.Argument(help="The label.")] = None,
    clear: Annotated[bool, typer.Option("--clear", help="Remove the entry's label.")] = False,
    force: Annotated[
        bool,
        typer.Option(
            "--force", "-f", help="Move NAME here from the entry that has it; replace REF's label."
        ),
    ] = False,
    json: JsonFlag = False,
) -> None:
    """Bookmark an entry with a name usable anywhere an id is. A NAME another entry has, or a
    label REF has already, is refused unless --force moves or replaces it. Files are not
    changed."""
    if name is None and not clear:
        raise typer.BadParameter("give a NAME, or --clear")
    session = open_session()
    held = [] if clear or name is None else session.conversation.labelled(name)
    had = session.conversation.tree.labels.get(session.conversation.resolve(ref))
    ident = session.moves.label(ref, None if clear else name, force=force, replace=force)
    moved = [i for i in held if i != ident]
    replaced = had if had is not None and had != name else None
    if json:
        out(
            {
                "id": ident,
                "label": None if clear else name,
                "moved_from": moved[0] if moved else None,
                "replaced": replaced,
            }
        )
        return
    from convgit.text import render

    names = render.Names(session.view())
    where = f" (moved from {', '.join(names.id(i) for i in moved)})" if moved else ""
    was = f" (was {replaced})" if replaced is not None else ""
    show(f"{names.id(ident)} {'unlabelled' if clear else 'labelled ' + str(name)}{where}{was}")
    boundary(session)


@command()
def name(
    text: Annotated[str, typer.Argument(help="The session's display name.")],
    json: JsonFlag = False,
) -> None:
    """Name the session."""
    session = open_session()
    session.moves.rename(text)
    if json:
        out({"session": session.id, "name": text})
    else:
        show(f"session {session.id} is now named {text}")
