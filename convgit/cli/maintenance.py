"""Checking and mending the store: ``fsck``, ``repair``, ``redact`` (the one command that
rewrites history) and the ``demo``."""

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from convgit.base.errors import RefusedError, UsageError
from convgit.cli.output import show
from convgit.cli.program import (
    JsonFlag,
    command,
    echo,
    open_session,
    options,
    out,
)

if TYPE_CHECKING:
    pass


@command()
def fsck(json: JsonFlag = False) -> None:
    """Check the session file: exit 0 when it is sound, 3 with every problem by line (the
    snapshots gc let go are counted apart, never as lost)."""
    from convgit.text import render, reports
    from convgit.upkeep import collecting

    session = open_session()
    problems = session.problems()
    fatal = [p for p in problems if p.fatal]
    let_go = len(session.track.read_sidecar().pruned)  # let go by gc: never counted as lost
    gc_since = collecting.interrupted(session.location)
    if json:
        out(
            {
                "session": session.id,
                "ok": not fatal,
                "problems": [
                    {"line": p.line, "entry": p.entry, "what": p.what, "fatal": p.fatal}
                    for p in problems
                ],
                "let_go": let_go,
                "interrupted_gc": gc_since,
            }
        )
    else:
        lines = render.problem_lines(problems)
        if gc_since:  # its work is half done: finishing it comes before any repair
            lines.append(reports.interrupted_gc_words(gc_since))
        lost = {(p.line, p.what) for p in session.track.lost_commits()} if fatal else set()
        fixable = [p for p in fatal if (p.line, p.what) not in lost]
        unrecorded = [p for p in fixable if p in session.saved_states.unrecorded_problems()]
        if gc_since and fixable:
            lines.append("run `convgit gc` first, then `convgit fsck` again")
        elif len(unrecorded) < len(fixable):
            lines.append(f"{len(fixable)} problem(s): `convgit repair` moves the bad lines aside")
        elif unrecorded:
            lines.append(
                f"{len(unrecorded)} saved state(s) without a record: `convgit repair` records them"
            )
        if lost:
            lines.append(
                f"{len(lost)} snapshot or saved-state commit(s) lost from git: their files"
                " cannot be restored, and repair cannot bring them back"
            )
        elif not fatal:
            gone = f"; {let_go} commit(s) let go by gc, not lost" if let_go else ""
            lines.append(f"session {session.id}: ok ({len(session.view().entries)} entries{gone})")
        if fatal:
            typer.echo("\n".join(lines), err=True)
        else:
            echo("\n".join(lines))
    if fatal:
        raise typer.Exit(3)


@command()
def repair(json: JsonFlag = False) -> None:
    """Move bad lines to SID.quarantine.jsonl (never deleted), keep a backup of the file."""
    session = open_session()
    report = session.repair()
    if json:
        out(report.to_json())
    elif report.moved == 0 and report.backup is None and not report.records:
        show(f"session {session.id}: nothing to repair")
    else:
        if report.moved or report.backup is not None:
            quarantine = session.conversation.file.quarantine_path.name
            show(f"moved {report.moved} line(s) to the quarantine ({quarantine})")
        if report.backup is not None:
            show(f"the original is kept as {report.backup.name}")
        if report.records:
            show(f"recorded {report.records} saved state(s) again from their refs")


@command()
def redact(
    pattern: Annotated[
        str | None, typer.Argument(help="A regular expression (Python's) to replace.")
    ] = None,
    secrets: Annotated[
        bool,
        typer.Option(
            "--secrets", help="Use the secret detector: API keys, private keys, tokens, passwords."
        ),
    ] = False,
    session_id: Annotated[
        str | None,
        typer.Option("--session", "-s", metavar="SESSION", help="The session (default: current)."),
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
    from convgit.session import Session
    from convgit.session.scrub import Scrubber
    from convgit.text import reports
    from convgit.upkeep import redact as redacting

    scrubber = Scrubber(pattern, secrets=secrets)
    if all_ and session_id is not None:
        raise UsageError("Give --session or --all, not both.")
    if all_:
        from convgit.store.location import locate

        location = locate(options.directory, options.store)
        chosen = [Session(location, sid) for sid in location.session_ids()]
    else:
        chosen = [
            Session.open(
                options.directory,
                session=session_id if session_id is not None else options.session,
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
        show(*reports.redact_lines(preview, scrubber.described))
        if not any(found.changed for found in preview.sessions) and not preview.runs:
            return
        if not typer.confirm("rewrite these files?", default=False):
            raise typer.Exit(1)
    report = redacting.redact(chosen, scrubber, snapshots=snapshots, dry_run=dry_run)
    if json:
        out(report.to_json())
    else:
        show(*reports.redact_lines(report, scrubber.described))


@command()
def demo(
    directory: Annotated[
        Path | None,
        typer.Option("--dir", metavar="DIR", help="Build the demo here (default: a temp folder)."),
    ] = None,
    step: Annotated[
        bool,
        typer.Option(
            "--step",
            help="For a class: each command is shown, then runs when Enter is pressed (q stops).",
        ),
    ] = False,
) -> None:
    """Walk through the two tracks on a throwaway repository, with real commands."""
    from convgit.cli.demo import run

    run(directory, step=step)
