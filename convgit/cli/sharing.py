"""Working with others through git remotes: ``share``/``unshare`` a session, ``push``,
``fetch`` and ``pull`` (``convgit.sharing``)."""

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from convgit.cli.output import show
from convgit.cli.program import JsonFlag, add_group, command, options, out
from convgit.store.location import StoreLocation, locate

if TYPE_CHECKING:
    from convgit.schema.shapes import AttributionRewriteJson, SharingJson

RemoteArg = Annotated[
    str | None,
    typer.Argument(
        metavar="REMOTE",
        help="The git remote (default: [share] remote of config.toml, else origin).",
        show_default=False,
    ),
]


def _location() -> StoreLocation:
    return locate(options.directory, options.store)


def _bytes(count: int) -> str:
    return f"{count} bytes" if count < 1024 else f"{count / 1024:.1f} KiB"


def _count(n: int, word: str) -> str:
    plural = word[:-1] + "ies" if word.endswith("y") else word + "s"
    return f"{n} {word if n == 1 else plural}"


def _named(sid: str, name: str | None) -> str:
    return f"session {sid}" + (f" ({name})" if name else "")


@command()
def share(
    session: Annotated[
        str, typer.Argument(metavar="SESSION", help="Its id, a prefix or its name.")
    ],
    json: JsonFlag = False,
) -> None:
    """Share a session: `convgit push` sends it (sessions are shared one by one, never all)."""
    _mark_shared(session, True, json)


@command()
def unshare(
    session: Annotated[
        str, typer.Argument(metavar="SESSION", help="Its id, a prefix or its name.")
    ],
    json: JsonFlag = False,
) -> None:
    """Stop sharing a session: `convgit push` no longer sends it (remotes keep what they have)."""
    _mark_shared(session, False, json)


def _mark_shared(session: str, shared: bool, json: bool) -> None:
    """``share`` and ``unshare``: the session found, marked, and what changed said."""
    from convgit.sharing.settings import set_shared
    from convgit.store.sessions import find_session
    from convgit.text.reports import mirror_lines
    from convgit.workspace import Workspace

    location = _location()
    sid = find_session(location, session)
    changed = set_shared(location, sid, shared)
    workspace = Workspace.of(location)
    mirrored = workspace.mirrors() if workspace is not None else []
    if json:
        shown: SharingJson = {
            "session": sid,
            "shared": shared,
            "changed": changed,
            "mirrors": mirrored,
        }
        out(shown)
        return
    was = "" if changed else " already"
    if shared:
        show(f"session {sid} is{was} shared: `convgit push` sends it")
    else:
        show(f"session {sid} is{was} not shared; remotes keep what they were sent")
    show(*mirror_lines(mirrored))


@command()
def push(
    remote: RemoteArg = None,
    session: Annotated[
        str | None,
        typer.Option("--session", "-s", metavar="SESSION", help="Push this shared session."),
    ] = None,
    every: Annotated[bool, typer.Option("--all", help="Push every shared session.")] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="List what would be sent; send nothing.")
    ] = False,
    allow_secrets: Annotated[
        bool, typer.Option("--allow-secrets", help="Send even what the secret scan finds.")
    ] = False,
    replace: Annotated[
        bool,
        typer.Option(
            "--replace",
            help="Replace what the remote holds of a session redacted here (a forced push,"
            " leased on what it had).",
        ),
    ] = False,
    json: JsonFlag = False,
) -> None:
    """Send shared sessions to a git remote (default: the current session): entries, snapshots
    and saved states the remote lacks, after a scan for secrets."""
    from convgit.base.errors import UsageError
    from convgit.sharing import pushing
    from convgit.store.sessions import find_session

    if session is not None and every:
        raise UsageError("Give --session or --all, not both.")
    location = _location()
    given = session or options.session
    named = find_session(location, given) if given else None
    sids = pushing.chosen(location, named, every, None if named else location.current())
    report = pushing.push(
        location, remote, sids, dry_run=dry_run, allow_secrets=allow_secrets, replace=replace
    )
    if json:
        out(report.to_json())
        return
    lines: list[Any] = []
    if report.merged:
        had = _count(report.merged, "entry")
        lines.append(f"{report.remote} had moved: merged its {had} here first, then pushed again")
    verb = "would push" if dry_run else "pushed"
    for sid in report.replaced:
        done = "would replace" if dry_run else "replaced"
        lines.append(f"{done} {report.remote}'s copy of session {sid}, as it was before redaction")
    for s in report.sessions:
        if not s.specs:
            lines.append(
                f"{report.remote} is up to date: it has all of {_named(s.session, s.name)}"
            )
            continue
        if not s.entries and not s.snapshots:  # a label, a name or a leaf moved: records only
            lines.append(
                f"{verb} {_named(s.session, s.name)} to {report.remote}: no new entry or"
                f" snapshot, only the records that changed (labels, names, the active leaf),"
                f" {_bytes(s.bytes)}"
            )
            continue
        lines.append(
            f"{verb} {_named(s.session, s.name)} to {report.remote}: {_count(s.entries, 'entry')},"
            f" {_count(s.snapshots, 'snapshot ref')}, {_bytes(s.bytes)}"
        )
    if report.notes:
        lines.append(f"{verb} the git notes {', '.join(report.notes)} to {report.remote}")
    if dry_run:
        lines.append("nothing was sent (--dry-run)")
    show(*lines)


def _fetched(merge: bool, remote: str | None, json: bool) -> None:
    from convgit.sharing import fetching

    report = fetching.fetch(_location(), remote, merge=merge)
    if json:
        out(report.to_json())
        return
    lines = []
    for s in report.sessions:
        where = f"from {report.remote}: session {s.session}"
        if s.stale:
            lines.append(
                f"{where}: not fetched: it holds what was redacted here (`convgit push --replace"
                f" --session {s.session} {report.remote}` replaces it there)"
            )
        elif s.trashed:
            lines.append(f"{where}: in the trash here, not made again")
        elif s.new:
            what = f"{_count(s.entries, 'entry')}, {_count(s.snapshots, 'snapshot')}"
            lines.append(f"{where}: new here, {what}")
        elif s.merged and (s.entries or s.snapshots):
            what = f"{_count(s.entries, 'entry')}, {_count(s.snapshots, 'snapshot')}"
            lines.append(f"{where}: merged {what}")
        elif not s.merged and s.entries:
            lines.append(
                f"{where}: {_count(s.entries, 'entry')} not here yet (`convgit pull` merges them)"
            )
        else:
            lines.append(f"{where}: up to date")
        if s.differ:
            lines.append(f"  {s.differ} entries have another snapshot here; this clone's kept")
    if not report.sessions:
        lines.append(f"{report.remote} has no shared session")
    if report.notes:
        lines.append(f"from {report.remote}: merged the git notes {', '.join(report.notes)} here")
    show(*lines)


@command()
def fetch(remote: RemoteArg = None, json: JsonFlag = False) -> None:
    """Fetch the shared sessions of a git remote: a session new here is made; for one here,
    how many entries it lacks (`convgit pull` merges them)."""
    _fetched(False, remote, json)


@command()
def pull(remote: RemoteArg = None, json: JsonFlag = False) -> None:
    """Fetch, then merge each remote copy into the session here: the union of their entries,
    each clone keeping its own active leaf."""
    _fetched(True, remote, json)


@command()
def why(
    commit: Annotated[str, typer.Argument(metavar="COMMIT", help="A commit (any git revision).")],
    json: JsonFlag = False,
) -> None:
    """The conversation that led to a commit (its trailers name it; `convgit hooks install
    git` adds them), and which snapshot the commit's files match."""
    from convgit.attribution import why as asking
    from convgit.text import render

    found = asking.why(_location(), commit)
    if json:
        out(found.to_json())
        return
    view = found.session.view()
    entry = view.short_id(found.match.entry)
    files = (
        "the committed files are its snapshot exactly"
        if found.match.differ == 0
        else f"{found.match.differ} committed files differ from its snapshot (the nearest)"
    )
    how = "named in its trailers" if found.found_by == "trailers" else "found by its files"
    if found.predates:
        show(
            f"commit {found.commit[:12]} {found.subject}",
            f"it predates {_named(found.session.id, view.name)}: the session started from its"
            f" files, the snapshot of entry {entry}; no conversation led there",
            *render.log_lines(view, found.path),
        )
        return
    show(
        f"commit {found.commit[:12]} {found.subject}",
        f"{_named(found.session.id, view.name)}, entry {entry} ({how}): {files}",
        "the conversation that led there:",
        *render.log_lines(view, found.path),
    )


@command("git-hook", hidden=True)
def git_hook(
    hook: Annotated[
        str, typer.Argument(help="prepare-commit-msg, post-commit, post-rewrite or pre-push.")
    ],
    args: Annotated[list[str] | None, typer.Argument(help="git's arguments to the hook.")] = None,
) -> None:
    """What convgit's git hooks run: never stops git (a failure is one line on stderr)."""
    import sys

    from convgit.base.errors import ConvgitError

    try:
        if hook == "prepare-commit-msg":
            from convgit.attribution import trailers

            trailers.on_commit(_location(), args or [])
        elif hook == "post-commit":
            from convgit.attribution import commit_notes

            commit_notes.on_commit(_location())
        elif hook == "post-rewrite":
            from convgit.attribution import commit_notes

            kind = (args or ["rebase"])[0]
            commit_notes.on_rewrite(_location(), kind, sys.stdin.read())
        elif hook == "pre-push":
            from convgit.sharing import pushing

            report = pushing.on_push(_location(), args or [], sys.stdin.read())
            if report is not None and report.sessions:
                sent = sum(1 for s in report.sessions if s.specs)
                typer.echo(f"convgit: sent {sent} shared session(s) to {report.remote}", err=True)
    except (ConvgitError, OSError) as exc:
        typer.echo(f"convgit: the {hook} hook did nothing: {exc}", err=True)
    except Exception as exc:  # a hook never stops git, nor prints a traceback over its output
        typer.echo(f"convgit: the {hook} hook failed ({type(exc).__name__}: {exc})", err=True)


def install_git_hooks(program: str | None, json: bool, *, remove: bool = False) -> None:
    """`convgit hooks install git` (and uninstall): post-commit and post-rewrite (the git notes
    of attribution, kept through a rebase and an amend by `notes.rewriteRef`), prepare-commit-msg
    with `[attribution] trailers = true`, pre-push with `[share] on_push = true`."""
    from convgit.git import names
    from convgit.sharing import githooks, gitnotes
    from convgit.sharing.settings import AttributionSettings, ShareSettings
    from convgit.sharing.transport import SHARED_THROUGH_GIT
    from convgit.workspace import Workspace

    location = _location()
    git = Workspace.needed_by(location, SHARED_THROUGH_GIT)
    attribution = AttributionSettings.of(location)
    hooks = ["post-commit", "post-rewrite"]
    if remove or attribution.trailers:
        hooks.insert(0, "prepare-commit-msg")
    if remove or ShareSettings.of(location).on_push:
        hooks.append("pre-push")
    changes = [
        githooks.uninstall(git, h) if remove else githooks.install(git, h, program) for h in hooks
    ]
    if remove:
        config = gitnotes.remove_rewrite_refs(git, location)
    else:
        refs = [names.AGENT_TRACE_NOTES]
        if attribution.git_ai:
            refs.append(names.GIT_AI_NOTES)
        config = gitnotes.add_rewrite_refs(git, location, refs)
    changes = [githooks.with_config(c, config) if c.hook == "post-rewrite" else c for c in changes]
    if json:  # the shape of an agent's install, with git's hook files in "hooks"
        found = {
            "agent": "git",
            "scope": "repository",
            "path": str(githooks.folder(git)),
            "changed": any(c.changed for c in changes),
            "events": [c.hook for c in changes],
            "backup": None,
            "hooks": [c.to_json() for c in changes],
        }
        out({**found, "folders": [], "recorder": None} if remove else {**found, "excluded": None})
        return
    for change in changes:
        verb = "removed" if remove else "installed"
        if not change.changed:
            verb = "not there" if remove else "already installed"
        chained = " (it runs the hook that was there first)" if change.chained else ""
        show(f"git {change.hook} hook {verb}: {change.path}{chained}")
    for value in config:
        done = "no longer copies" if remove else "copies"
        show(f"git {done} the notes of {value} through a rebase and an amend (notes.rewriteRef)")


@command()
def blame(
    file: Annotated[Path, typer.Argument(metavar="FILE", help="A file of the working tree.")],
    notes: Annotated[
        bool,
        typer.Option(
            "--notes",
            help="Answer from the git notes of attribution alone, as a clone without the"
            " session's snapshots would.",
        ),
    ] = False,
    json: JsonFlag = False,
) -> None:
    """For each line of FILE as it is now, what last changed it: a turn (the prompt it
    answered, the agent and model), a hand edit recorded at a user's entry, an older commit
    (as git blame says), or nothing recorded yet. git tracks the lines over the snapshots; a
    commit's git notes of attribution answer for its lines (without a session, they alone)."""
    from convgit.attribution import blame as blaming
    from convgit.session import Session, opening
    from convgit.sharing.transport import SHARED_THROUGH_GIT
    from convgit.workspace import Workspace

    location = _location()
    sid = opening.find(location, options.session)
    session = None
    if sid is not None:
        session = Session(location, sid)
        session.reload()
    where = file if file.is_absolute() else options.directory / file
    found = blaming.blame(
        location, session, Workspace.needed_by(location, SHARED_THROUGH_GIT), where, notes=notes
    )
    if json:
        out(found.to_json())
        return
    view = session.view() if session is not None and found.session is not None else None
    named: dict[str, blaming.Source] = {}
    lines = []
    for number, (text, source) in enumerate(found.lines, 1):
        if source.entry is not None:
            short = view.short_id(source.entry) if view is not None else source.entry[:8]
            who = f"{'turn' if source.kind == 'turn' else 'hand'} {short}"
            named.setdefault(who, source)
        elif source.commit is not None:
            who = f"commit {source.commit[:8]}"
            named.setdefault(who, source)
        elif source.kind in ("agent", "human"):
            who = f"{source.kind} {(source.agent or source.author or '')[:10]}".rstrip()
            named.setdefault(who, source)
        else:
            who = "not recorded yet"
        lines.append(f"{number:>4} {who:<17} | {text}")
    for who, source in named.items():
        by = ", ".join(x for x in (source.agent, source.model) if x)
        if source.kind == "turn" and source.prompt is None:  # a note names no prompt
            said = f"a turn of session {source.session}" + (f" ({by})" if by else "")
            lines.append(f"{who}: {said}, as its commit's git note says")
        elif source.kind == "turn":
            lines.append(f'{who}: answered "{source.prompt}"' + (f" ({by})" if by else ""))
        elif source.kind == "hand edit":
            lines.append(f"{who}: the files as they were when this prompt was sent (a hand edit)")
        elif source.kind == "agent":
            lines.append(f"{who}: an agent wrote it, as a git note says ({by or 'no model'})")
        elif source.kind == "human":
            lines.append(f"{who}: {source.author or 'a person'} wrote it, as a git note says")
        else:
            lines.append(f"{who}: {source.summary or ''} ({source.author or 'unknown'})")
    if found.session is None:
        lines.append("answered from the git notes of attribution (no session's snapshots)")
    show(*lines)


attribution_app = typer.Typer(
    name="attribution",
    help="The git notes that say which turn wrote each line of a commit (docs/attribution.md).",
    no_args_is_help=True,
    rich_markup_mode=None,
)
add_group("attribution", attribution_app)


@command("rewrite", group=attribution_app)
def attribution_rewrite(
    targets: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="COMMIT",
            help="The commits to write notes for, each a commit or a range A..B (default: HEAD).",
            show_default=False,
        ),
    ] = None,
    sources: Annotated[
        list[str] | None,
        typer.Option(
            "--from",
            metavar="COMMIT",
            help="The commits whose notes to carry (the squashed ones, or those a rebase"
            " replaced), a commit or a range A..B; give it once or more.",
        ),
    ] = None,
    json: JsonFlag = False,
) -> None:
    """Carry the git notes of attribution to commits git did not carry them to: a squash
    merge, or a rebase done elsewhere. Each target's lines get the notes of the --from commits
    (the later winning), where their diff keeps the lines."""
    from convgit.attribution import commit_notes
    from convgit.base.errors import UsageError

    if not sources:
        raise UsageError("Name the commits whose notes to carry with --from; nothing was written.")
    done = commit_notes.rewrite(_location(), targets or [], sources)
    if json:
        shown: AttributionRewriteJson = {"commits": [w.to_json() for w in done]}
        out(shown)
        return
    lines = []
    for w in done:
        wrote = ", ".join(w.written) if w.written else "nothing (no line to attribute)"
        lines.append(f"commit {w.commit[:12]}: {_count(w.lines, 'line')} attributed; wrote {wrote}")
        for ref in w.kept:
            lines.append(f"  {ref}: another tool's note is there; it was kept")
    show(*lines)
