"""The sessions of a store and its trash: ``sessions`` (list), ``sessions rm``, ``sessions
restore`` and ``gc --trash`` (``convgit.upkeep.trash``)."""

import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer

from convgit.base.errors import ConvgitError, RefusedError, UsageError
from convgit.cli import output
from convgit.cli.output import show
from convgit.cli.program import JsonFlag, add_group, command, fail, options, out
from convgit.store.location import StoreLocation

if TYPE_CHECKING:
    from convgit.schema.shapes import GcTrashJson, SessionsJson

sessions_app = typer.Typer(
    name="sessions",
    help="Every session in this store; rm moves one to the trash, restore brings it back.",
    invoke_without_command=True,
    no_args_is_help=False,
    rich_markup_mode=None,
)
add_group("sessions", sessions_app)
YesFlag = Annotated[bool, typer.Option("--yes", "-y", help="Do not ask.")]
SessionArgument = Annotated[
    str,
    typer.Argument(metavar="SESSION", help="A session id, a unique prefix of one, or its name."),
]


def _location() -> StoreLocation:
    from convgit.store.location import locate

    return locate(options.directory, options.store)


@sessions_app.callback()
def sessions(
    ctx: typer.Context,
    in_trash: Annotated[
        bool, typer.Option("--trash", help="List the sessions in the trash instead.")
    ] = False,
    json: JsonFlag = False,
) -> None:
    """Every session in this store, then those in its trash (`convgit sessions rm` moves one
    there). --json: the sessions (with --trash: those in the trash), each with "trashed"."""
    if ctx.invoked_subcommand is not None:
        return
    try:
        _list(in_trash, json)
    except ConvgitError as exc:
        fail(exc)
    except OSError as exc:
        fail(output.os_error(exc))


def _list(in_trash: bool, json: bool) -> None:
    from convgit.store.sessions import rows
    from convgit.text import reports
    from convgit.upkeep import trash

    location = _location()
    found: list[dict[str, Any]] = [] if in_trash else rows(location)
    for row in found:
        row["trashed"] = None
    trashed = trash.listing(location)
    if json:
        shown: SessionsJson = {"sessions": trashed if in_trash else found}
        out(shown)
        return
    if not in_trash:
        if not found:
            show("no sessions here (`convgit init` starts one)")
        show(*reports.session_lines(found))
        if trashed:
            show("in the trash (`convgit sessions restore SESSION` brings one back):")
    elif not trashed:
        show("the trash is empty")
    show(*reports.session_lines(trashed))


@command("rm", group=sessions_app)
def sessions_rm(session_ref: SessionArgument, yes: YesFlag = False, json: JsonFlag = False) -> None:
    """Move a session to the store's trash: its file, its sidecar and its refs (which keep its
    snapshots from git gc). Asks first (on a terminal; elsewhere it needs --yes)."""
    from convgit.store.sessions import find_session
    from convgit.upkeep import trash

    location = _location()
    if not yes:
        sid = find_session(location, session_ref)
        if not sys.stdin.isatty():
            raise RefusedError(
                f"convgit sessions rm moves session {sid} to the trash, and with no terminal to"
                " ask on it needs --yes; nothing was moved.",
                f"`convgit sessions rm {sid} --yes`",
            )
        about = trash.describe(location, sid)
        if not typer.confirm(f"move session {_named(about)} to the trash?", default=False):
            typer.echo("nothing was moved", err=True)
            raise typer.Exit(1)
        session_ref = sid
    moved = trash.remove(location, session_ref)
    if json:
        out(moved.to_json())
    else:
        show(
            f"moved session {_named(moved)} to the trash ({_counted(moved)});"
            f" `convgit sessions restore {moved.session}` brings it back"
        )


@command("restore", group=sessions_app)
def sessions_restore(
    session_ref: Annotated[
        str, typer.Argument(metavar="SESSION", help="A session id in the trash, or a prefix.")
    ],
    json: JsonFlag = False,
) -> None:
    """Bring a session back from the trash, as it was: the same files, byte for byte, and the
    same refs. Refused when a session of that id is in the store."""
    from convgit.upkeep import trash

    back = trash.restore(_location(), session_ref)
    if json:
        out(back.to_json())
    else:
        show(f"restored session {_named(back)} from the trash ({_counted(back)})")


@command()
def gc(
    in_trash: Annotated[
        bool, typer.Option("--trash", help="Delete the sessions in the trash for good.")
    ] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="List what would be let go, and the bytes it frees.")
    ] = False,
    yes: YesFlag = False,
    json: JsonFlag = False,
) -> None:
    """Let go the snapshots and saved states the [retention] policy of config.toml does not
    keep, and free the room they took (see docs/retention.md). With --trash: empty the
    trash, for good (asks first on a terminal; elsewhere it needs --yes)."""
    if not in_trash:
        _gc_snapshots(dry_run, json)
        return
    if dry_run:
        raise UsageError("gc --trash has no --dry-run: `convgit sessions --trash` lists the trash.")
    _gc_trash(yes, json)


def _gc_snapshots(dry_run: bool, json: bool) -> None:
    from convgit.text import reports
    from convgit.upkeep import collecting

    report = collecting.run(_location(), dry_run=dry_run)
    if json:
        out(report.to_json())
    else:
        show(*reports.gc_lines(report))


def _gc_trash(yes: bool, json: bool) -> None:
    from convgit.upkeep import trash

    location = _location()
    held = [trash.describe(location.in_trash(sid), sid) for sid in location.trashed_ids()]
    if held and not yes:
        if not sys.stdin.isatty():
            raise RefusedError(
                f"convgit gc --trash deletes {len(held)} session(s) for good, and with no"
                " terminal to ask on it needs --yes; nothing was deleted.",
                "`convgit gc --trash --yes`",
            )
        show(*(f"  {_named(t)}" for t in held))
        if not typer.confirm("delete these sessions for good?", default=False):
            typer.echo("nothing was deleted", err=True)
            raise typer.Exit(1)
    removed, leftover = trash.empty(location)
    if json:
        shown: GcTrashJson = {"removed": [t.to_json() for t in removed], "leftover_refs": leftover}
        out(shown)
        return
    if not removed and not leftover:
        show("the trash is empty: nothing to remove")
        return
    for gone in removed:
        files = ", ".join(gone.files)
        show(f"removed session {_named(gone)}: {files}; {_refs(gone.refs)}")
    if leftover:
        show(f"removed {_refs(leftover)} an interrupted move left in the trash")
    show("git gc may now prune the snapshots only these refs kept")


def _named(found: Any) -> str:
    """``ID (NAME, N entries)``."""
    count = found.entries
    entries = f"{count} entr{'y' if count == 1 else 'ies'}"
    return (
        f"{found.session} ({found.name}, {entries})"
        if found.name
        else f"{found.session} ({entries})"
    )


def _counted(moved: Any) -> str:
    return f"{len(moved.files)} file{'' if len(moved.files) == 1 else 's'}, {_refs(moved.refs)}"


def _refs(count: int) -> str:
    return f"{count} ref{'' if count == 1 else 's'}"
