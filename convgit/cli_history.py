"""The commands that read and shape the history beyond one move: ``branches``, ``system`` and
``redact``. They are registered on ``convgit.cli.app`` like every other command."""

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


@command()
def redact(
    pattern: Annotated[
        str | None, typer.Argument(help="A regular expression (Python's) to replace.")
    ] = None,
    secrets: Annotated[
        bool,
        typer.Option(
            "--secrets", help="Use the built-in patterns: API keys, private keys, tokens."
        ),
    ] = False,
    session_id: Annotated[
        str | None, typer.Option("--session", "-s", help="The session (default: current).")
    ] = None,
    all_: Annotated[bool, typer.Option("--all", help="Every session of the store.")] = False,
    snapshots: Annotated[
        bool,
        typer.Option("--snapshots", help="Rewrite the snapshot and saved-state commits too."),
    ] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="List what would change, change nothing.")
    ] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask.")] = False,
    json: JsonFlag = False,
) -> None:
    """Replace every match of PATTERN with [redacted] in the session's history, keeping every
    id and the tree's shape, and leave no copy of it in the store (with --snapshots, in its
    snapshot commits either). The one command that rewrites history."""
    import sys

    from convgit import redact as redacting
    from convgit import render
    from convgit.cli import options
    from convgit.errors import RefusedError, UsageError
    from convgit.scrub import Scrubber
    from convgit.session import Session

    scrubber = Scrubber(pattern, secrets=secrets)
    if all_ and session_id is not None:
        raise UsageError("Give --session or --all, not both.")
    if all_:
        from convgit import store

        location = store.locate(options.directory, options.store)
        chosen = [Session(location, sid) for sid in location.session_ids()]
    else:
        chosen = [
            Session.open(
                options.directory,
                session=session_id or options.session,
                store_dir=options.store,
            )
        ]
    if not (yes or dry_run):
        if not sys.stdin.isatty():
            raise RefusedError(
                "convgit redact rewrites history, and with no terminal to ask on it needs --yes.",
                "`convgit redact … --dry-run` lists what would change",
            )
        preview = redacting.redact(chosen, scrubber, snapshots=snapshots, dry_run=True)
        show(*render.redact_lines(preview, scrubber.described))
        if not any(found.changed for found in preview.sessions) and not preview.runs:
            return
        if not typer.confirm("rewrite these files?", default=False):
            raise typer.Exit(1)
    report = redacting.redact(chosen, scrubber, snapshots=snapshots, dry_run=dry_run)
    if json:
        out(report.to_json())
    else:
        show(*render.redact_lines(report, scrubber.described))
