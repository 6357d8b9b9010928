"""The workspace track: ``status``, ``snapshot``, ``snapshots``, ``restore``, ``restores``,
``diff``, ``worktree`` and ``run`` (a command on several snapshots side by side)."""

import os
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from convgit.base.errors import (
    NotFoundError,
    RefusedError,
    SignalReceived,
    StoppedError,
    UsageError,
    signal_name,
)
from convgit.cli.output import output_failed, show
from convgit.cli.program import (
    CommandAfterDashes,
    JsonFlag,
    command,
    number,
    open_session,
    options,
    out,
)
from convgit.conversation.refs import LEAF, WORKING_TREE

if TYPE_CHECKING:
    from convgit.schema.shapes import RestoresJson, SnapshotsJson
    from convgit.session import Session


@command()
def status(
    verbose: Annotated[
        bool,
        typer.Option(
            "--verbose",
            "-v",
            help="Also how snapshots find changes (the watcher, the recorder), the store's size"
            " and policy.",
        ),
    ] = False,
    json: JsonFlag = False,
) -> None:
    """Both tracks: where the context is, and which snapshot the files match (-v: also the
    watcher, the recorder, the store's size and its retention policy; each is said without -v
    when it is wrong: a watcher that fell back, a store over its budget)."""
    from convgit.agents import hook_failures
    from convgit.text import render, reports
    from convgit.upkeep import collecting
    from convgit.upkeep.retention import Policy

    try:
        session = open_session(tell_hooks=False)
    except NotFoundError:  # no session yet: the hook that would have made it may have failed
        from convgit.store.location import locate

        root = locate(options.directory, options.store).root
        hook_failures.take_not_run(root)
        failed = hook_failures.current(root)
        if failed and not json:
            show(*reports.hook_failure_words(failed))
        raise
    from convgit.agents.live import recorder
    from convgit.store import config

    config.load(session.location).check()  # the whole file: each command checks what it reads
    st = session.snapshots.status()
    hook_failures.take_not_run(session.location.root)
    failures = hook_failures.current(session.location.root)
    budget = json or verbose or Policy.of(session.location).max_mib is not None
    store = collecting.store(session.location, fresh=False) if budget else None
    gc_since = collecting.interrupted(session.location) if store is None else None
    # the recorder is asked (a round trip to it) only when it is said: with -v, or in --json
    resident = recorder.status(options.directory, options.store) if json or verbose else None
    place = session.location.git
    mirrors = session.track.workspace().mirrors() if place and place.worktree else []
    if json:
        out(
            {
                **st.to_json(),
                "recorder": resident,
                "hook_failures": failures,
                "store": store,
                "mirrors": mirrors,
            }
        )
    else:
        show(*render.status_words(st, render.Names(session.view()), verbose=verbose))
        if st.workspace and resident is not None:
            show(*reports.recorder_words(resident, str(session.track.index())))
        show(*reports.hook_failure_words(failures))
        show(*reports.store_lines(store, verbose=verbose))
        if gc_since is not None:
            show(reports.interrupted_gc_words(gc_since))
        show(*reports.mirror_lines(mirrors))


@command()
def snapshot(
    ref: Annotated[str, typer.Argument(help="The entry to attach the snapshot to.")] = LEAF,
    yes: Annotated[
        bool, typer.Option("--yes", "-y", help="Replace another entry's snapshot without asking.")
    ] = False,
    json: JsonFlag = False,
) -> None:
    """Record the working tree now as the snapshot of an entry (default: the leaf). Replacing
    the snapshot of an entry other than the leaf asks first (on a terminal; elsewhere it needs
    --yes); the old snapshot stays, as the new one's parent (REF@{1})."""
    from convgit.base.process_groups import stopping_on_signals
    from convgit.text import render

    session = open_session()
    target = session.conversation.resolve(ref)
    had = session.track.sidecar.snapshots.get(target)
    if had is not None and target != session.conversation.leaf and not yes:
        _confirm_replacing(session, target, had.commit)
    try:
        with stopping_on_signals():
            snap = session.snapshots.snapshot(ref)
    except (SignalReceived, KeyboardInterrupt) as exc:
        signum = exc.signum if isinstance(exc, SignalReceived) else signal.SIGINT
        now = open_session().track.sidecar.snapshots.get(target)
        state = " after the snapshot was recorded" if now != had else ": no snapshot was recorded"
        raise StoppedError(
            signum, f"Interrupted by {signal_name(signum)}{state}; no file was changed."
        ) from None
    unchanged = had is not None and had.commit == snap.commit
    if json:
        out({"entry": snap.entry, "files": snap.files, "unchanged": unchanged, **snap.to_json()})
    else:
        show(*render.snapshot_words(snap, unchanged=unchanged, names=render.Names(session.view())))


def _confirm_replacing(session: "Session", target: str, old: str) -> None:
    """Ask before the files now replace the snapshot of ``target``, an entry other than the
    leaf (they may be another turn's files); nothing to ask when they are that snapshot's."""
    from convgit.conversation.shortids import ShortIds

    ws = session.track.workspace()
    now, _ = session.track.scan()
    if now == ws.tree_of(old):
        return
    short = ShortIds(session.conversation.tree.entries).short(target)
    kept = f"the old one, {old[:12]}, stays as the new one's parent (`{short}@{{1}}` names it)"
    if not sys.stdin.isatty():
        raise RefusedError(
            f"Entry {short} is not the active leaf and has a snapshot already; replacing it with"
            " the files now needs --yes (there is no terminal to ask); nothing was recorded.",
            f"add --yes: {kept}",
        )
    show(f"entry {short} is not the active leaf and has a snapshot already: {kept}")
    if not typer.confirm(f"record the files now as the snapshot of {short}?", default=False):
        typer.echo("nothing was recorded", err=True)
        raise typer.Exit(1)


@command()
def snapshots(
    state: Annotated[str | None, typer.Argument(help="on or off (none: show)")] = None,
    json: JsonFlag = False,
) -> None:
    """Turn the automatic snapshot after each assistant reply on or off; without on or off,
    say whether they are on, the store's size and its retention policy."""
    from convgit.text import reports
    from convgit.upkeep import collecting

    if state not in ("on", "off", None):
        raise UsageError(f"'{state}' is neither on nor off.")
    session = open_session()
    if state is not None:
        session.track.set_snapshots(state == "on")
    enabled = session.track.snapshots_enabled
    store = collecting.store(session.location)
    if json:
        shown: SnapshotsJson = {"session": session.id, "snapshots": enabled, "store": store}
        out(shown)
    else:
        verb = "are" if state is None else "turned"
        show(f"snapshots {verb} {'on' if enabled else 'off'} for session {session.id}")
        show(*reports.store_lines(store))


@command()
def restore(
    ref: Annotated[
        str | None,
        typer.Argument(help="The entry whose snapshot to restore, or a saved state (saved:…)."),
    ] = None,
    path: Annotated[
        list[str] | None,
        typer.Option("--path", help="Restore only this file or folder (relative to here)."),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="List changes, change nothing.")
    ] = False,
    undo: Annotated[bool, typer.Option("--undo", help="Return to the newest saved state.")] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask.")] = False,
    force: Annotated[
        bool, typer.Option("--force", help="Restore while tool calls await their results.")
    ] = False,
    clean: Annotated[
        bool,
        typer.Option("--clean", help="Delete files no snapshot held too (saved first)."),
    ] = False,
    json: JsonFlag = False,
) -> None:
    """Bring files back to an entry's snapshot or a saved state, after saving the current
    state (undoable). Asks first (on a terminal; elsewhere it needs --yes). The conversation's
    leaf does not move; a note tells the model."""
    from convgit.text import render

    if undo == (ref is not None):
        raise UsageError("Give either an entry to restore or --undo.", "convgit restore REF")
    session = open_session()
    paths = None if path is None else _from_here(session, path)
    if not (yes or dry_run):
        preview = session.restoring.restore(
            ref, paths=paths, dry_run=True, undo=undo, clean=clean, settle=sys.stdin.isatty()
        )
        if not sys.stdin.isatty():
            raise RefusedError(
                "restore changes files and there is no terminal to ask; nothing was restored.",
                "add --yes to restore without asking (--dry-run lists the changes)",
            )
        show(*render.restore_words(preview, render.Names(session.view())))
        if not preview.changes:
            return
        if not typer.confirm("restore these files?", default=False):
            typer.echo("nothing was restored", err=True)
            raise typer.Exit(1)
    result = session.restoring.restore(
        ref, paths=paths, dry_run=dry_run, undo=undo, force=force, clean=clean
    )
    if json:
        out(result.to_json())
    else:
        show(*render.restore_words(result, render.Names(session.view())))


def _from_here(session: "Session", paths: list[str]) -> list[str]:
    """``--path`` values, relative to the folder convgit runs in (as git reads pathspecs), as
    paths relative to the worktree's root (a path outside it keeps its ``..`` and is refused).
    A path that reaches the tree only through a symlink outside it (``$PWD/file`` in a folder
    entered through a symlink, an absolute path through a symlinked root) is read at the
    folder it reaches; a symlink inside the tree is never followed here."""
    here = Path(options.directory).resolve()
    root = session.track.workspace().root.resolve()
    out: list[str] = []
    for given in paths:
        if not given:  # refused where every path is read (restoreplan.relative_path)
            out.append(given)
            continue
        joined = os.path.normpath(os.path.join(here, given))
        relative = os.path.relpath(joined, root)
        if relative.split(os.sep)[0] == "..":  # its folder, else itself, may lead into the tree
            folder, name = os.path.split(joined)
            for real in (os.path.join(os.path.realpath(folder), name), os.path.realpath(joined)):
                inside = os.path.relpath(real, root)
                if inside.split(os.sep)[0] != "..":
                    relative = inside
                    break
        out.append(relative)
    return out


@command()
def restores(json: JsonFlag = False) -> None:
    """The saved states of the working tree, newest first: the files as they were before
    each restore, whichever session ran it."""
    from convgit.text import render

    session = open_session()
    saved = session.saved_states.of_worktree()
    if json:
        shown: RestoresJson = {"saved_states": [state.to_json() for state in saved]}
        out(shown)
    else:
        show(*render.saved_lines(saved, session.id))


@command()
def diff(
    a: Annotated[
        str | None,
        typer.Argument(
            help="An entry with a snapshot (default: the context's, as `status` compares)."
        ),
    ] = None,
    b: Annotated[str | None, typer.Argument(help="Another (default: the files now).")] = None,
    patch: Annotated[
        bool, typer.Option("--patch", "-p", help="git's unified diff of the two.")
    ] = False,
    stat: Annotated[bool, typer.Option("--stat", help="git's summary of the changes.")] = False,
    name_only: Annotated[bool, typer.Option("--name-only", help="Paths only.")] = False,
    json: JsonFlag = False,
) -> None:
    """Files that differ between two entries' snapshots, or a snapshot and the files now; with
    -p or --stat, what git diff prints between them. Without an entry, the files now against
    the context's snapshot (the one `status` compares them with). --json: {"changes"}, always."""
    from convgit.text import render

    if name_only and (patch or stat):
        raise UsageError("--name-only lists paths; give it without -p and --stat.")
    session = open_session()
    if a is None:  # typer fills A first: B alone is never given
        a = _context_snapshot(session)
    if json or not (patch or stat):
        changes = session.snapshots.diff(a, b)
    if json:
        out(
            {
                "changes": [
                    {
                        "path": c.path,
                        "status": c.status,
                        **({"reason": c.reason} if c.reason else {}),
                    }
                    for c in changes
                ]
            }
        )
    elif patch or stat:
        write_git_diff(session, a, b, patch=patch, stat=stat)
    else:
        show("\n".join(render.changes_lines(changes, name_only=name_only)) or "no changes")


def _context_snapshot(session: "Session") -> str:
    """The entry whose snapshot ``status`` compares the files with: the nearest on the
    context's path, at or above the active leaf."""
    session.track.workspace()  # outside git: the one sentence every workspace command says
    snap = session.track.nearest_snapshot(session.conversation.tree.leaf)
    if snap is None:
        raise NotFoundError(
            "There is no snapshot on the context's path to compare the files with yet.",
            hint="convgit snapshot",
        )
    return snap.entry


def write_git_diff(
    session: "Session", a: str | None, b: str | None, *, patch: bool, stat: bool = False
) -> None:
    """Print git's diff (``-p``), summary (``--stat``) or both between two sides, in colour and
    as wide as the terminal only on one; a file one side left out is named on stderr."""
    import shutil

    from convgit.text import render

    terminal = render.colour(sys.stdout)
    width = shutil.get_terminal_size().columns if terminal else 0
    shown, changes = session.snapshots.git_diff(
        a, b, stat=width if stat else None, patch=patch, colour=terminal
    )
    write_bytes(shown)
    alone = [c for c in changes if c.status == "left alone"]
    if alone:
        typer.echo("\n".join(render.changes_lines(alone)), err=True)


def write_bytes(data: bytes) -> None:
    """``data`` on stdout as it is (git's output, in the bytes git wrote)."""
    try:
        sys.stdout.flush()
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
    except OSError as exc:
        output_failed(exc)


@command()
def worktree(
    ref: Annotated[
        str | None, typer.Argument(help="The entry whose snapshot to check out.")
    ] = None,
    directory: Annotated[
        Path | None, typer.Argument(metavar="DIR", help="Where (a new folder).")
    ] = None,
    list_: Annotated[bool, typer.Option("--list", help="List convgit's worktrees.")] = False,
    remove: Annotated[
        Path | None, typer.Option("--remove", metavar="DIR", help="Remove this convgit worktree.")
    ] = None,
    json: JsonFlag = False,
) -> None:
    """Check an entry's snapshot out in another folder, side by side (a detached git worktree).
    --json: what was added and removed, and convgit's worktrees after it."""
    session = open_session()

    def report(added: dict[str, str | None] | None, removed: Path | None) -> None:
        rows = [
            {"path": str(p), "commit": c} for p, c in session.track.workspace().list_worktrees()
        ]
        out(
            {
                "added": added,
                "removed": None if removed is None else str(removed),
                "worktrees": rows,
            }
        )

    if list_:
        if json:
            report(None, None)
        else:
            show(*(f"{p}  {c[:12]}" for p, c in session.track.workspace().list_worktrees()))
        return
    if remove is not None:
        session.track.workspace().remove_worktree(remove)
        if json:
            report(None, remove)
        else:
            show(f"removed worktree {remove}")
        return
    if ref is None or directory is None:
        raise UsageError("Give an entry and a folder.", "convgit worktree REF DIR")
    from convgit.cli import newfile

    newfile.check_new_folder(directory, "convgit worktree")
    entry, commit = session.snapshots.add_worktree(ref, directory)
    if entry is None:
        what = f"the saved state {session.saved_states.find(ref).id}"
    else:
        current = session.track.sidecar.snapshots.get(entry)
        now = current is not None and current.commit == commit
        what = f"the snapshot of {entry}{'' if now else ' (since replaced)'} ({commit[:12]})"
    if json:
        report({"entry": entry, "commit": commit, "path": str(directory)}, None)
    else:
        show(f"checked out {what} in {directory}")


@command(cls=CommandAfterDashes)
def run(
    ctx: typer.Context,
    refs: Annotated[
        list[str] | None,
        typer.Argument(
            help="Entries whose snapshots to run on; . is the files now.", metavar="REF"
        ),
    ] = None,
    jobs: Annotated[
        str | None,
        typer.Option("--jobs", "-j", help="How many at once (default: the cores).", metavar="N"),
    ] = None,
    timeout: Annotated[
        str | None,
        typer.Option("--timeout", help="Stop each command after this many seconds.", metavar="S"),
    ] = None,
    link: Annotated[
        list[str] | None,
        typer.Option(
            "--link", help="Symlink this path of the working tree in (e.g. .venv).", metavar="PATH"
        ),
    ] = None,
    worktree: Annotated[
        bool, typer.Option("--worktree", help="Run on the files now too (as REF .), first.")
    ] = False,
    note: Annotated[
        bool, typer.Option("--note", help="Record each result as a note on its REF's branch.")
    ] = False,
    json: JsonFlag = False,
) -> None:
    """Run a command on several entries' snapshots side by side, each in a temporary worktree
    (removed afterwards). convgit run REF... -- COMMAND: every REF runs, whatever the others
    did. Exit 0 when every command exited 0; 1 when one failed or timed out (the report says
    which), or when nothing could be run."""
    from convgit.text import reports

    command_line = ctx.meta.get("convgit.command")
    if not command_line:
        raise UsageError("Give the command to run after --.", "convgit run REF... -- COMMAND")
    chosen = ([WORKING_TREE] if worktree else []) + list(refs or [])
    session = open_session()
    report = session.runs.run(
        chosen,
        command_line,
        jobs=None if jobs is None else number(jobs, "--jobs", int),
        timeout=None if timeout is None else number(timeout, "--timeout", float),
        links=link or [],
        note=note,
    )
    failed = [row for row in report.rows if row.outcome.timed_out or row.outcome.exit_code != 0]
    if json:
        out(
            {
                "command": command_line,
                "runs": [row.to_json() for row in report.rows],
                "failed": len(failed),
            }
        )
    else:
        show(*reports.run_lines(session.view(), report))
    for sentence in report.unnoted:
        typer.echo(f"convgit: no note was recorded: {sentence}", err=True)
    if failed:
        typer.echo(reports.run_failed_sentence(failed, len(report.rows)), err=True)
    if report.unnoted or failed:
        raise typer.Exit(1)
