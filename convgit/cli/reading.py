"""Reading a session without changing it: ``log``, ``tree``, ``show``, ``context``,
``branches``, ``use`` and the ``html`` page."""

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from convgit.base.errors import UsageError
from convgit.cli.output import show
from convgit.cli.program import (
    JsonFlag,
    command,
    echo,
    open_session,
    options,
    out,
    positive,
)
from convgit.conversation.refs import LEAF, is_saved_ref

if TYPE_CHECKING:
    from convgit.schema.shapes import ContextFormatJson, HtmlJson, UseJson
    from convgit.session import Session


@command()
def log(
    ref: Annotated[str | None, typer.Argument(help="Show the path to this entry instead.")] = None,
    max_count: Annotated[
        str | None,
        typer.Option("--max-count", "-n", metavar="N", help="Only the last N entries of the path."),
    ] = None,
    json: JsonFlag = False,
) -> None:
    """The active path, root to leaf (what the model sees, before replay): labels, snapshots
    (◆), and where the context (← context) and the files (← files) are."""
    session = open_session()
    ids = session.conversation.path_ids(ref)
    if max_count is not None:
        ids = ids[-positive(max_count, "-n") :]
    if json:
        out(
            {
                "session": session.id,
                "leaf": session.conversation.leaf,
                "entries": _records(session, ids),
            }
        )
        return
    from convgit.text import render

    show(*render.log_lines(session.view(), ids, _files_at(session)))


def _records(session: "Session", ids: list[str]) -> list[dict[str, Any]]:
    return [session.conversation.record(i) for i in ids]


def _files_at(session: "Session") -> str | None:
    """The entry whose snapshot the files are at (None: none, or no workspace track)."""
    if session.track.sidecar.snapshots and session.location.git is not None:
        return session.snapshots.status().matches
    return None


@command("tree")
def tree_cmd(
    depth: Annotated[
        str | None,
        typer.Option(
            "--depth",
            metavar="N",
            help="Only N levels of forks (0: the trunk); the branches below are counted.",
        ),
    ] = None,
    stable: Annotated[
        bool,
        typer.Option(
            "--stable",
            help="Branches in the order they were written, whichever has the context.",
        ),
    ] = False,
    files: Annotated[
        bool,
        typer.Option(
            "--files",
            help="Both tracks: beside each entry its snapshot's commit and the restores there.",
        ),
    ] = False,
    json: JsonFlag = False,
) -> None:
    """Every entry as a tree: the active path bold (its branch first at each fork, unless
    --stable), labels, snapshots (◆), and where the context (← context) and the files
    (← files) are. On a terminal, an entry's text gives way so its line fits its width. With
    --files, the workspace track beside it, aligned by entry."""
    session = open_session()
    session.conversation.check()
    if files and (json or depth is not None):
        raise UsageError(
            "--files draws every entry beside its snapshot, for a person; it takes no --json"
            " or --depth.",
            "the same as data: `convgit tree --json`, `convgit show REF --json`,"
            " `convgit restores --json`",
        )
    if depth is not None and not (depth.isascii() and depth.isdigit()):
        raise UsageError(f"--depth takes a whole number (0: the trunk only), not '{depth}'.")
    levels = None if depth is None else int(depth)
    view = session.view()
    if json:
        out(
            {
                "session": session.id,
                "leaf": session.conversation.leaf,
                "entries": _records(session, list(view.entries)),
            }
        )
        return
    from convgit.cli import pager
    from convgit.text import render

    if files:
        _both_tracks(session, stable, pager.columns() or _columns_asked())
        return
    drawn = render.draw_tree(
        view,
        session.conversation.children(),
        session.conversation.path_ids(),
        _files_at(session),
        depth=levels,
        width=pager.columns(),
        stable=stable,
    )
    show(*render.fitted(drawn, pager.columns()))


def _columns_asked() -> int | None:
    """The width ``COLUMNS`` asks for when the output is no terminal (as the demo sets it)."""
    value = os.environ.get("COLUMNS", "")
    return int(value) if value.isascii() and value.isdigit() and int(value) >= 40 else None


def _both_tracks(session: "Session", stable: bool, width: int | None) -> None:
    """``tree --files``: the tree beside the workspace track (``text.tracks``)."""
    from convgit.text import sessionpage, tracks

    view = session.view()
    if session.location.git is None:
        show(f"session {view.id}: no git repository here, so no workspace track")
        return
    lineage = session.snapshots.lineage()
    restores = sessionpage.restores(session.track.sidecar, session.conversation.tree.entries)
    where = f"git log --graph --oneline --glob=refs/convgit/{session.id}"
    show(
        *tracks.draw(
            view,
            session.conversation.children(),
            session.conversation.path_ids(),
            lineage,
            restores,
            files_at=_files_at(session),
            width=width,
            stable=stable,
            where=where,
        )
    )


@command("show")
def show_cmd(
    ref: Annotated[str, typer.Argument(help="An id prefix, label, @, @~N or root.")] = LEAF,
    patch: Annotated[
        bool,
        typer.Option(
            "--patch", "-p", help="With git's diff from the previous snapshot on its path."
        ),
    ] = False,
    json: JsonFlag = False,
) -> None:
    """One entry in full: its role, time and text, its tool calls, its snapshot; with -p its
    snapshot's diff from the previous snapshot on its path. --json: {"entry", "snapshot",
    "children", "saved_state", "let_go"}: the record, its snapshot and children (for saved:ID,
    the saved state and the rest null or empty), and the day gc let its snapshot go (or null)."""
    session = open_session()
    if is_saved_ref(ref):  # a saved state, by the id restore printed
        found = session.saved_states.find(ref)
        state = found.to_json()
        if json:
            out(
                {
                    "entry": None,
                    "snapshot": None,
                    "children": [],
                    "saved_state": state,
                    "let_go": None,
                }
            )
        else:
            from convgit.text import render

            shown = render.saved_state_lines(found, session.id, render.Names(session.view()))
            show(*shown)
        return
    ident = session.conversation.resolve(ref)
    value = session.conversation.record(ident)
    snap = session.track.sidecar.snapshots.get(ident)
    value["snapshot"] = snap.to_json() if snap else None
    value["children"] = session.conversation.children().get(ident, [])
    gone = session.track.sidecar.let_go.get(ident)
    let_go = gone.day if gone is not None and snap is None else None
    if json:
        snapshot, children = value.pop("snapshot"), value.pop("children")
        out(
            {
                "entry": value,
                "snapshot": snapshot,
                "children": children,
                "saved_state": None,
                "let_go": let_go,
            }
        )
        return
    from convgit.text import readable

    parent = session.conversation.tree.entries[ident]["parentId"]
    previous = session.track.nearest_snapshot(parent) if snap is not None and parent else None
    show(
        *readable.entry_lines(
            session.view(),
            ident,
            snapshot=snap,
            previous=previous,
            children=value["children"],
            let_go=let_go,
        )
    )
    if patch and snap is None:
        typer.echo(f"entry {ref} has no snapshot: there is no diff to show", err=True)
    elif patch and snap is not None:
        from convgit.cli.files import write_git_diff

        echo("")
        write_git_diff(session, None if previous is None else previous.entry, ident, patch=True)


@command()
def context(
    ref: Annotated[str | None, typer.Argument(help="Replay at this entry instead.")] = None,
    json: JsonFlag = False,
    format: Annotated[
        str | None, typer.Option("--format", help="openai, anthropic or text.")
    ] = None,
    max_tokens: Annotated[
        str | None,
        typer.Option(
            "--max-tokens",
            metavar="N",
            help="With openai or anthropic: the caller's output cap (max_tokens for Anthropic).",
        ),
    ] = None,
) -> None:
    """What the model would be sent at the leaf: settings and messages, replayed. With --format
    openai or anthropic, the request body; what it leaves out is reported on stderr."""
    session = open_session()
    cap = positive(max_tokens, "--max-tokens") if max_tokens is not None else None
    if format in ("openai", "anthropic"):
        from convgit.providers import export

        body, dropped = export(session.conversation.context(ref), format, max_tokens=cap)
        if json:
            shown: ContextFormatJson = {"request": body, "dropped": dropped}
            out(shown)
        else:
            out(body)
            report_dropped(dropped, "OpenAI" if format == "openai" else "Anthropic")
        return
    if format not in (None, "text", "json"):
        raise UsageError(f"Unknown format '{format}': use openai, anthropic or text.")
    if cap is not None:
        raise UsageError("--max-tokens goes with --format openai or anthropic.")
    ctx = session.conversation.context(ref)
    if json or format == "json":
        out(ctx.to_json())
        return
    lines = [] if ctx.system is None else [f"system: {ctx.system}"]
    if ctx.model:
        lines.append(f"[model {ctx.model['provider']}/{ctx.model['model']}]")
    if ctx.thinking is not None:
        lines.append(f"[thinking {ctx.thinking}]")
    from convgit.text import readable

    names = readable.call_names(ctx.messages)
    for message in ctx.messages:
        lines += readable.message_lines(message, names)
    echo("\n".join(lines))
    report_dropped(ctx.dropped, "the model")


def report_dropped(dropped: list[dict[str, Any]], target: str) -> None:
    from convgit.text import reports

    if dropped:
        typer.echo("\n".join(reports.dropped_lines(dropped, target)), err=True)


@command()
def use(
    ref: Annotated[
        str,
        typer.Argument(
            metavar="SESSION", help="A session id, a unique prefix of one, or its name."
        ),
    ],
    json: JsonFlag = False,
) -> None:
    """Make a session current here again (by id, prefix or unique name)."""
    from convgit.store.sessions import use as make_current

    sid = make_current(options.directory, ref, options.store)
    if json:
        shown: UseJson = {"session": sid, "current": True}
        out(shown)
    else:
        show(f"session {sid} is current")


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
    from convgit.text import reports

    session = open_session()
    fork = session.moves.branches(ref)
    view = session.view()
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
                        "text": _leaf_text(view.entries[b.leaf]),
                        "labels": b.labels,
                        "snapshot": b.snapshot,
                        "active": b.active,
                    }
                    for b in fork.branches
                ],
            }
        )
        return

    show(*reports.branch_lines(view, fork, session.conversation.path_ids(), ref))


def _leaf_text(record: dict[str, object]) -> str:
    from convgit.text import render

    return render.summary(record, width=1 << 30)


@command("html")
def html_cmd(
    session_ref: Annotated[
        str | None,
        typer.Argument(metavar="SESSION", help="A session id or prefix (default: the current)."),
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option(
            "-o",
            "--output",
            metavar="FILE",
            help="Where to write it (default: STORE/pages/SID.html; - prints).",
        ),
    ] = None,
    open_: Annotated[bool, typer.Option("--open", help="Open the page in a browser.")] = False,
    force: Annotated[
        bool, typer.Option("--force", help="Replace the file -o names if it exists.")
    ] = False,
    json: JsonFlag = False,
) -> None:
    """Write one self-contained HTML page of both tracks: the tree beside the snapshots, each
    entry in full, the files changed at each snapshot, comparisons, restores."""
    from convgit.cli import newfile
    from convgit.session import Session
    from convgit.text import html, render, reports, sessionpage
    from convgit.upkeep import collecting

    session = Session.open(
        options.directory,
        session=session_ref if session_ref is not None else options.session,
        store_dir=options.store,
        fsync=options.fsync,
    )
    status = session.snapshots.status()
    # the page says what `status` says: the store's size only when it is over its budget
    store = collecting.store(session.location, fresh=False)
    words = render.status_words(status, render.Names(session.view()))
    words += reports.store_lines(store, verbose=False)
    text = html.render(sessionpage.gather(session, status, words))
    if output is not None and str(output) == "-":
        sys.stdout.write(text)
        return
    if output is None:  # the store's own page of the session, replaced each time
        path = session.location.root / "pages" / f"{session.id}.html"
        path.parent.mkdir(parents=True, exist_ok=True)
    else:
        path = output
    newfile.write(path, text.encode(), command="convgit html", force=force or output is None)
    size = len(text.encode())
    if json:
        shown: HtmlJson = {"session": session.id, "path": str(path), "bytes": size}
        out(shown)
    else:
        show(f"wrote the page of session {session.id} to {path} ({size / 1024:.0f} KiB)")
    if open_:
        import webbrowser

        if not webbrowser.open(path.resolve().as_uri()):
            show(f"no browser was found to open it: open {path}")


@command()
def search(
    words: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="WORDS",
            help="Each one is looked for as it is written (case aside), anywhere in an entry's"
            " words; an entry is found when it holds every one.",
        ),
    ] = None,
    agent: Annotated[
        str | None, typer.Option("--agent", help="Only the sessions of this agent.")
    ] = None,
    session_refs: Annotated[
        list[str] | None,
        typer.Option(
            "--session", metavar="SESSION", help="Only this session (an id, prefix or name)."
        ),
    ] = None,
    file: Annotated[
        str | None,
        typer.Option("--file", metavar="PATH", help="Only the turns whose snapshot changed PATH."),
    ] = None,
    since: Annotated[
        str | None,
        typer.Option(
            "--since", metavar="WHEN", help="From WHEN on: 2026-12-01, 2026-12-01T10:30, 2d, 6h."
        ),
    ] = None,
    until: Annotated[
        str | None, typer.Option("--until", metavar="WHEN", help="Before WHEN (a day: its end).")
    ] = None,
    role: Annotated[
        str | None,
        typer.Option("--role", help="Only user, assistant, tool, note, summary or system entries."),
    ] = None,
    branch: Annotated[
        bool, typer.Option("--branch", help="Only the entries on each session's active path.")
    ] = False,
    max_count: Annotated[
        str | None,
        typer.Option("--max-count", "-n", metavar="N", help="Show N results (default 20)."),
    ] = None,
    all_stores: Annotated[
        bool,
        typer.Option(
            "--all-stores", help="Search every store convgit has written on this machine."
        ),
    ] = False,
    reindex: Annotated[
        bool, typer.Option("--reindex", help="Rebuild the search index from the sessions first.")
    ] = False,
    json: JsonFlag = False,
) -> None:
    """Find entries in every session of the store: prompts, replies, tool calls and their
    arguments, tool results, labels, session names, and (--file) the files each turn changed.
    Newest first, each with the command that shows it. The index (STORE/search.sqlite) is
    brought up to date from the sessions first, and is never the truth; see docs/search.md."""
    from convgit.cli import searching

    sessions = list(session_refs or [])
    if options.session is not None:
        sessions.append(options.session)
    asked = searching.Asked(
        terms=list(words or []),
        agent=agent,
        sessions=sessions,
        file=file,
        since=since,
        until=until,
        role=role,
        branch=branch,
        limit=max_count,
        all_stores=all_stores,
        reindex=reindex,
        json=json,
    )
    searching.search(asked, options.directory, options.store)
