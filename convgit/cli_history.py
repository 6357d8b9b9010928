"""The commands that read and shape the history beyond one move: ``branches``, ``system`` and
``redact``. They are registered on ``convgit.cli.app`` like every other command."""

from __future__ import annotations

from typing import Annotated

import typer

from convgit.cli import JsonFlag, command, entry_json, open_session, out, show


@command()
def branches(
    ref: Annotated[
        str | None,
        typer.Argument(help="The fork point (default: the nearest at or above the active leaf)."),
    ] = None,
    json: JsonFlag = False,
) -> None:
    """The branches that start at a fork point: each one's first entry, its newest deepest leaf
    and that leaf's text, its labels and newest snapshot. Numbered for `switch --branch N`."""
    session = open_session()
    fork = session.branches(ref)
    if json:
        out(
            {
                "at": fork.at,
                "branches": [
                    {
                        "number": b.number,
                        "first": b.first,
                        "leaf": b.leaf,
                        "entries": b.length,
                        "text": _leaf_text(session.tree.entries[b.leaf]),
                        "labels": b.labels,
                        "snapshot": b.snapshot,
                        "active": b.active,
                    }
                    for b in fork.branches
                ],
            }
        )
        return
    from convgit import render

    show(*render.branch_lines(session, fork, ref))


def _leaf_text(record: dict[str, object]) -> str:
    from convgit import render

    return render.summary(record, width=1 << 30)


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
        prompt = session.context().system
        if json:
            out({"leaf": session.leaf, "system": prompt})
        else:
            show("no system prompt on the active path" if prompt is None else prompt)
        return
    if text is not None and clear:
        raise typer.BadParameter("give a TEXT or --clear, not both")
    made = session.set_system(None if clear else text)
    if json:
        out(entry_json(session, made.id))
        return
    from convgit import render

    show(render.entry_line(session, made.id, on_path=True))
