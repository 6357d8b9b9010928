"""The command line: parse, call one Session method, render or print ``--json``.

Errors convgit expects (``ConvgitError``) become one sentence on stderr and their exit code:
1 refused or not found, 2 usage, 3 corrupt or inconsistent store. Never a traceback for them.
"""

import errno
import functools
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
import typer.core

from convgit import codec
from convgit.errors import (
    ConvgitError,
    InvalidEntryError,
    NotFoundError,
    RefusedError,
    UsageError,
)
from convgit.session import WORKING_TREE, Session, caller_id
from convgit.sidecar import is_saved_ref

if TYPE_CHECKING:
    from convgit.render import Styled


class _CommandAfterDashes(typer.core.TyperCommand):
    """A command whose arguments end at ``--``: what follows is another program's command
    line, kept whole in ``ctx.meta["convgit.command"]`` (the parser would drop the ``--``)."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if "--" in args:
            at = args.index("--")
            ctx.meta["convgit.command"] = args[at + 1 :]
            args = args[:at]
        parsed: list[str] = super().parse_args(ctx, args)
        return parsed


_APP_SETTINGS: dict[str, Any] = dict(
    name="convgit",
    help="A conversation tree beside git snapshots of the files. Branching is not rollback.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
app = typer.Typer(**_APP_SETTINGS)

F = TypeVar("F", bound=Callable[..., Any])

# command name -> what registers it on a Typer app: main() builds an app with the one asked for
_REGISTER: dict[str, Callable[[typer.Typer], Any]] = {}

JsonFlag = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]
IdOption = Annotated[
    str | None,
    typer.Option("--id", help="The entry's id; sending the same entry again changes nothing."),
]
ForceFlag = Annotated[
    bool, typer.Option("--force", help="Append even if another process moved the leaf.")
]


class Options:
    """The global options of this run, set by ``_global`` before the command runs. A plain
    class: a dataclass would compile its methods at every start."""

    def __init__(self) -> None:
        self.session: str | None = None
        self.store: Path | None = None
        self.directory = Path(".")
        self.fsync = False


options = Options()


@app.callback()
def _global(
    session: Annotated[
        str | None, typer.Option("--session", "-s", help="Session id (default: current).")
    ] = None,
    store: Annotated[
        Path | None,
        typer.Option("--store", help="Store folder (default: inside the git dir, or ./.convgit)."),
    ] = None,
    directory: Annotated[
        Path, typer.Option("-C", help="Run as if convgit was started in this folder.")
    ] = Path("."),
    fsync: Annotated[
        bool, typer.Option("--fsync", help="fsync every write (survives power loss).")
    ] = False,
) -> None:
    options.session, options.store, options.directory, options.fsync = (
        session,
        store,
        directory,
        fsync,
    )
    if not directory.is_dir():
        what = "is not a folder" if directory.exists() else "does not exist"
        fail(UsageError(f"The folder {directory} given with -C {what}."))


def command(*names: str, **kwargs: Any) -> Callable[[F], F]:
    """Register a command whose expected errors become one sentence and an exit code."""

    def decorate(fn: F) -> F:
        @functools.wraps(fn)
        def guarded(*args: Any, **kw: Any) -> Any:
            kw = {name: _utf8(value) for name, value in kw.items()}
            try:
                return fn(*args, **kw)
            except ConvgitError as exc:
                fail(exc)
            except OSError as exc:  # the file system refused: a full disk, a read-only folder
                fail(ConvgitError(_os_sentence(exc)))
            except KeyboardInterrupt:
                raise typer.Exit(130) from None

        def register(target: typer.Typer) -> None:
            target.command(*names, **kwargs)(guarded)

        register(app)
        _REGISTER[names[0] if names else fn.__name__.replace("_", "-")] = register
        return fn

    return decorate


def _utf8(value: Any) -> Any:
    """A text argument as UTF-8 text: bytes that are not UTF-8 (which Python hands over as lone
    surrogates) become U+FFFD, the replacement character. Paths are Path values, kept as given."""
    if not isinstance(value, str) or value.isascii():
        return value
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        try:
            raw = value.encode("utf-8", "surrogateescape")  # back to the bytes that were given
        except UnicodeEncodeError:  # a surrogate no byte made
            raw = value.encode("utf-8", "replace")
        return raw.decode("utf-8", "replace")
    return value


def _os_sentence(exc: OSError) -> str:
    where = f" at {os.fsdecode(exc.filename)}" if exc.filename is not None else ""
    return f"The file system refused{where}: {exc.strerror or exc}; nothing more was written."


def fail(exc: ConvgitError) -> None:
    message = f"convgit: {exc.message}"
    message += "".join(f"\n  {line}" for line in exc.report)
    if exc.hint:
        message += f"\n  hint: {exc.hint}"
    typer.echo(codec.shown(message), err=True)
    raise typer.Exit(exc.exit_code)


def open_session(create: bool = False) -> Session:
    return Session.open(
        options.directory,
        create=create,
        session=options.session,
        store_dir=options.store,
        fsync=options.fsync,
    )


def echo(text: str) -> None:
    """Write ``text`` and a newline on stdout; a stdout that refuses it (a full disk, a closed
    pipe) is one sentence and exit 1, never taken for the store's file system refusing."""
    try:
        typer.echo(text)
    except OSError as exc:
        _output_failed(exc)


def out(value: Any) -> None:
    echo(codec.dumps(value))


def show(*lines: Any) -> None:
    from convgit import render

    try:
        render.print_lines(lines)
    except OSError as exc:
        _output_failed(exc)


def entry_json(session: Session, ident: str) -> dict[str, Any]:
    record = dict(session.tree.entries[ident])
    label = session.tree.labels.get(ident)
    if label is not None:
        record["label"] = label
    return record


def boundary(session: Session) -> None:
    """End a move in the conversation with the line that says the files did not change."""
    from convgit import render

    try:
        status = session.status()
    except ConvgitError as exc:
        show(f"files: not changed ({exc.message})")
        return
    show(render.boundary_line(status))


# -- creating and appending ---------------------------------------------------------------


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
                "path": str(session.file.path),
                "snapshots": session.snapshots_enabled,
            }
        )
        return
    files = "snapshots on" if session.snapshots_enabled else "snapshots off"
    if session.location.git is None:
        files = "no git repository: conversation only"
    show(f"started session {session.id} ({files})", f"store: {session.location.root}")


def _appended(session: Session, ident: str, json: bool) -> None:
    """Show an appended entry and its snapshot; a snapshot that could not be taken is a
    warning (the entry is recorded: the command succeeds, so a retry adds nothing)."""
    snap = session.sidecar.snapshots.get(ident)
    failed = session.snapshot_error
    if failed is not None:
        typer.echo(
            codec.shown(f"convgit: warning: the files were not snapshotted: {failed}"), err=True
        )
    if json:
        value = entry_json(session, ident)
        value["snapshot"] = {"error": failed} if failed else snap.to_json() if snap else None
        out(value)
        return
    from convgit import render

    show(render.entry_line(session, ident, on_path=ident == session.leaf))
    if snap is not None and failed is None:
        show(*render.snapshot_words(snap))


def _text_of(text: str) -> str:
    """The text argument, or stdin for ``-`` (texts longer than a command line allows)."""
    if text != "-":
        return text
    data = sys.stdin.buffer.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidEntryError("The text on stdin is not UTF-8; nothing was appended.") from None


@command()
def user(
    text: Annotated[str, typer.Argument(help="The message text (- reads it from stdin).")],
    ident: IdOption = None,
    force: ForceFlag = False,
    json: JsonFlag = False,
) -> None:
    """Append a user message at the active leaf."""
    session = open_session()
    _appended(session, session.append_user(_text_of(text), force=force, ident=ident).id, json)


@command()
def assistant(
    text: Annotated[str, typer.Argument(help="The reply text (- reads it from stdin).")],
    ident: IdOption = None,
    force: ForceFlag = False,
    json: JsonFlag = False,
) -> None:
    """Append an assistant reply (and snapshot the files when snapshots are on)."""
    session = open_session()
    reply = session.append_assistant(_text_of(text), force=force, ident=ident)
    _appended(session, reply.id, json)


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
    made = session.append_tool_result(
        call_id,
        _text_of(text),
        is_error=error,
        force=force,
        on_call_branch=on_call_branch,
        ident=ident,
    )
    _appended(session, made.id, json)
    if not json and made.id != session.leaf:
        show(f"filed on the branch of call {call_id}; the active leaf stays at {session.leaf}")


@command()
def append(ident: IdOption = None, json: JsonFlag = False) -> None:
    """Append entries from stdin, one JSON object per line, in order. An entry without
    parentId hangs off the leaf at the moment it is written; id and ts are filled in. An
    entry sent again with its id (each record's "id", or --id for a single entry) is a no-op."""
    records = []
    for number, line in enumerate(sys.stdin.buffer, 1):
        if not line.strip():
            continue
        try:
            record = codec.decode(line)
        except ValueError:
            what = "JSON" if _is_utf8(line) else "UTF-8 (JSON must be)"
            raise InvalidEntryError(
                f"Line {number} of the input is not {what}; nothing was appended."
            ) from None
        if type(record) is not dict:
            raise InvalidEntryError(
                f"Line {number} of the input is not a JSON object; nothing was appended."
            )
        records.append(record)
    if ident is not None:
        _give_id(records, ident)
    session = open_session()
    ids = session.append_records(records, follow=True)
    if session.snapshot_error is not None:
        warning = f"convgit: warning: the files were not snapshotted: {session.snapshot_error}"
        typer.echo(codec.shown(warning), err=True)
    if json:
        out({"ids": ids, "leaf": session.leaf})
    else:
        show(f"appended {len(ids)} entries; leaf is {session.leaf}")


@command("import")
def import_cmd(
    agent: Annotated[
        str, typer.Argument(help="The agent that wrote the file: claude-code, codex, gemini, pi.")
    ],
    file: Annotated[Path, typer.Argument(help="The agent's session file (its transcript).")],
    json: JsonFlag = False,
) -> None:
    """Import an agent's session into the convgit session that mirrors it (one per agent
    session; found again on the next import, which adds only what is new). Nothing is
    snapshotted: today's files are not those of the turns imported."""
    from convgit.formats import importing

    importer = importing.importer(agent)
    results = Session.import_file(
        agent, file, options.directory, store_dir=options.store, fsync=options.fsync
    )
    if json:
        out(results[0].to_json() if len(results) == 1 else [r.to_json() for r in results])
        return
    from convgit import render

    for result in results:
        show(*render.import_words(result, importer.title))


def _is_utf8(line: bytes) -> bool:
    try:
        line.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


@command("export")
def export_cmd(
    ref: Annotated[str | None, typer.Argument(help="The path's last entry (default: @).")] = None,
    format: Annotated[str, typer.Option("--format", help="pi: a pi v3 session file.")] = "",
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write a new file instead of stdout.")
    ] = None,
) -> None:
    """The root-to-REF path as another agent's session file, which that agent continues
    (`pi --session FILE`). Entries imported from it are written back byte for byte."""
    if format != "pi":
        raise UsageError(f"Unknown export format '{format}': use --format pi.")
    from convgit.formats import pi_export

    session = open_session()
    path = [session.tree.entries[e.id] for e in session.path(ref)]
    if not path:
        raise NotFoundError("The session has no entries to export.", 'convgit user "..."')
    data = pi_export.export(session.tree.header or {}, path, session.tree.kept)
    if output is None:
        try:
            sys.stdout.buffer.write(data)
            sys.stdout.buffer.flush()
        except OSError as exc:
            _output_failed(exc)
        return
    try:
        with open(output, "xb") as written:
            written.write(data)
    except FileExistsError:
        raise RefusedError(
            f"{output} exists; convgit export writes only new files.", "choose another name"
        ) from None
    except OSError as exc:
        raise RefusedError(f"{output} cannot be written ({exc.strerror}).") from None
    show(f"wrote {len(path)} entries, root to {path[-1]['id']}, to {output} (pi v3)")


def _give_id(records: list[dict[str, Any]], ident: str) -> None:
    """``append --id``: the id of the one entry on stdin."""
    if len(records) != 1 or records[0].get("id") not in (None, ident):
        raise UsageError(
            "--id names one entry: give it with a single entry that has no other id.",
            'give each record its own "id" instead',
        )
    records[0]["id"] = caller_id(ident)


# -- beside an agent ---------------------------------------------------------------------------

hooks_app = typer.Typer(
    name="hooks",
    help="Install, remove or check convgit's hooks in an agent's settings.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(hooks_app)
_REGISTER["hooks"] = lambda target: target.add_typer(hooks_app)
ScopeOption = Annotated[
    str,
    typer.Option("--scope", help="local (.claude/settings.local.json), project or user."),
]


def _project() -> Path:
    from convgit import store

    found = store.find_git(options.directory)
    return found.worktree if found and found.worktree else options.directory.resolve()


def _backups() -> Path:
    from convgit import store

    return store.locate(options.directory, options.store).root / "backups"


def _hooks_command(name: str) -> Callable[[F], F]:
    """Register a `convgit hooks NAME` command (expected errors as for every command)."""

    def decorate(fn: F) -> F:
        @functools.wraps(fn)
        def guarded(*args: Any, **kw: Any) -> Any:
            try:
                return fn(*args, **kw)
            except ConvgitError as exc:
                fail(exc)

        hooks_app.command(name)(guarded)
        return fn

    return decorate


@_hooks_command("install")
def hooks_install(
    agent: Annotated[str, typer.Argument(help="The agent: claude-code.")],
    scope: ScopeOption = "local",
    json: JsonFlag = False,
) -> None:
    """Add convgit's hooks to the agent's settings (every other setting and hook is kept):
    from then on every prompt, reply and tool call is recorded, with a snapshot per turn."""
    from convgit import agents, render
    from convgit.agents import hooks

    change = hooks.install(agents.integration(agent), scope, _project(), _backups())
    if json:
        out(change.to_json())
    else:
        show(*render.hooks_change_words(change, "install"))


@_hooks_command("uninstall")
def hooks_uninstall(
    agent: Annotated[str, typer.Argument(help="The agent: claude-code.")],
    scope: ScopeOption = "local",
    json: JsonFlag = False,
) -> None:
    """Take convgit's hooks out of the agent's settings, and nothing else."""
    from convgit import agents, render
    from convgit.agents import hooks

    change = hooks.uninstall(agents.integration(agent), scope, _project(), _backups())
    if json:
        out(change.to_json())
    else:
        show(*render.hooks_change_words(change, "uninstall"))


@_hooks_command("status")
def hooks_status(json: JsonFlag = False) -> None:
    """Where convgit's hooks are installed, whether the agent can run them, and the hook log."""
    import shutil

    from convgit import agents, hook, render, store
    from convgit.agents import hooks

    found = {name: hooks.status(agents.integration(name), _project()) for name in agents.AGENTS}
    log = hook.log_path(store.locate(options.directory, options.store).root)
    report = hook.read_log(log)
    on_path = shutil.which("convgit")
    if json:
        out(
            {
                "agents": {n: [s.to_json() for s in states] for n, states in found.items()},
                "on_path": on_path,
                "log": str(log),
                **report.to_json(),
            }
        )
    else:
        show(*render.hooks_status_words(found, on_path, str(log), report.to_json()))


@command("hook")
def hook_cmd(
    agent: Annotated[str, typer.Argument(help="The agent whose hook this is: claude-code.")],
) -> None:
    """Record one hook event of the agent, read on stdin (what `convgit hooks install` sets up).
    Always exits 0 and prints nothing; problems go to the hook log (`convgit hooks status`)."""
    from convgit import hook

    os.chdir(options.directory)
    raise typer.Exit(hook.run([agent], options.store))


@command()
def resume(
    ref: Annotated[str, typer.Argument(help="The entry to continue from in the agent.")],
    agent: Annotated[
        str | None, typer.Option("--agent", help="The agent (default: the session's): claude-code.")
    ] = None,
    restore_files: Annotated[
        bool, typer.Option("--restore", help="Also restore the files to REF's snapshot.")
    ] = False,
    json: JsonFlag = False,
) -> None:
    """Write a new session of the agent holding exactly the path to REF, and print the command
    that resumes it; its turns become a new branch below REF. Files are not changed unless
    --restore is given (then it is a restore, saved first)."""
    from convgit import render
    from convgit import resume as handback

    session = open_session()
    session.tree.check(f"Session {session.id}")
    chosen = agent or (session.tree.header or {}).get("agent") or handback.AGENT
    result = handback.resume(session, ref, str(chosen), restore=restore_files)
    if json:
        out(result.to_json())
        return
    show(*render.resume_words(result, render.shown_id(session.tree, result.entry)))
    if result.restored is not None:
        show(*render.restore_words(result.restored))
    else:
        boundary(session)


# -- reading ---------------------------------------------------------------------------------


@command()
def log(
    ref: Annotated[str | None, typer.Argument(help="Show the path to this entry instead.")] = None,
    json: JsonFlag = False,
) -> None:
    """The active path, root to leaf (what the model sees, before replay)."""
    session = open_session()
    ids = [e.id for e in session.path(ref)]
    if json:
        out([entry_json(session, i) for i in ids])
        return
    from convgit import render

    show(*render.log_lines(session, ids))


@command("tree")
def tree_cmd(json: JsonFlag = False) -> None:
    """Every entry as a tree: the active path bold, labels, snapshots (◆), and where the
    context (← context) and the files (← files) are."""
    session = open_session()
    session.tree.check(f"Session {session.id}")
    if json:
        out([entry_json(session, i) for i in session.tree.entries])
        return
    from convgit import render

    files_at = None
    if session.sidecar.snapshots and session.location.git is not None:
        files_at = session.status().matches
    show(render.draw_tree(session, files_at))


@command("show")
def show_cmd(
    ref: Annotated[str, typer.Argument(help="An id prefix, label, @, @~N or root.")] = "@",
    json: JsonFlag = False,
) -> None:
    """One entry in full, with its snapshot if it has one."""
    session = open_session()
    if is_saved_ref(ref):  # a saved state, by the id restore printed
        state = session.saved_state(ref).to_json()
        if json:
            out(state)
        else:
            echo(codec.dumps(state, pretty=True))
        return
    ident = session.resolve(ref)
    value = entry_json(session, ident)
    snap = session.sidecar.snapshots.get(ident)
    value["snapshot"] = snap.to_json() if snap else None
    value["children"] = session.tree.children.get(ident, [])
    if json:
        out(value)
        return
    echo(codec.dumps(value, pretty=True))


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
            help="With openai or anthropic: the caller's output cap (max_tokens for Anthropic).",
        ),
    ] = None,
) -> None:
    """What the model would be sent at the leaf: settings and messages, replayed. With --format
    openai or anthropic, the request body; what it leaves out is reported on stderr."""
    session = open_session()
    cap = _positive(max_tokens, "--max-tokens") if max_tokens is not None else None
    if format in ("openai", "anthropic"):
        from convgit.formats import export

        body, dropped = export(session.context(ref), format, max_tokens=cap)
        if json:
            out({"request": body, "dropped": dropped})
        else:
            out(body)
            _report_dropped(dropped, "OpenAI" if format == "openai" else "Anthropic")
        return
    if format not in (None, "text", "json"):
        raise UsageError(f"Unknown format '{format}': use openai, anthropic or text.")
    if cap is not None:
        raise UsageError("--max-tokens goes with --format openai or anthropic.")
    ctx = session.context(ref)
    if json or format == "json":
        out(ctx.to_json())
        return
    lines = [] if ctx.system is None else [f"system: {ctx.system}"]
    if ctx.model:
        lines.append(f"[model {ctx.model['provider']}/{ctx.model['model']}]")
    if ctx.thinking is not None:
        lines.append(f"[thinking {ctx.thinking}]")
    for message in ctx.messages:
        content = message["content"]
        text = content if isinstance(content, str) else codec.dumps(content)
        lines.append(f"{message['role']}: {text}")
    echo("\n".join(lines))
    _report_dropped(ctx.dropped, "the model")


def _positive(value: str, option: str) -> int:
    if not (value.isascii() and value.isdigit()) or int(value) == 0:
        raise UsageError(f"{option} takes a positive whole number, not '{value}'.")
    return int(value)


def _report_dropped(dropped: list[dict[str, Any]], target: str) -> None:
    if dropped:
        from convgit import render

        typer.echo("\n".join(render.dropped_lines(dropped, target)), err=True)


@command()
def use(
    ref: Annotated[str, typer.Argument(help="A session id, a unique prefix of one, or its name.")],
    json: JsonFlag = False,
) -> None:
    """Make a session current here again (by id, prefix or unique name)."""
    from convgit.session import use as make_current

    sid = make_current(options.directory, ref, options.store)
    if json:
        out({"session": sid, "current": True})
    else:
        show(f"session {sid} is current")


@command()
def sessions(json: JsonFlag = False) -> None:
    """Every session in this store."""
    from convgit.session import list_sessions

    found = list_sessions(options.directory, options.store)
    if json:
        out(found)
        return
    if not found:
        show("no sessions here (`convgit init` starts one)")
    from convgit import render

    show(*render.session_lines(found))


# -- moving in the conversation (never changes a file) ------------------------------------------


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
        leaf = session.switch_branch(_positive(branch, "--branch"), ref)
    elif ref is None:
        raise UsageError("Say where to switch to.", "convgit switch REF, or --branch N")
    else:
        leaf = session.switch(ref, tip=tip)
    _moved(session, leaf, json, "switched to")


def _moved(session: Session, leaf: str, json: bool, verb: str) -> None:
    if json:
        out({"id": leaf, "leaf": session.leaf, "files_changed": False})
        return
    from convgit import render

    show(_prefixed(verb, render.entry_line(session, leaf, on_path=True)))
    boundary(session)


def _entries(count: int) -> str:
    return f"{count} entr{'y' if count == 1 else 'ies'}"


def _prefixed(verb: str, line: "Styled") -> "Styled":
    from convgit.render import Styled

    return Styled(f"{verb} ").append_text(line)


@command()
def fork(
    ref: Annotated[str, typer.Argument(help="The entry to branch from.")],
    text: Annotated[str | None, typer.Argument(help="A user message to start the branch.")] = None,
    summary: Annotated[
        str | None,
        typer.Option("--summary", help="What the branch left behind learned (a branch_summary)."),
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
        leaf = session.fork(ref, text, summary)
        _moved(session, leaf, json, "forked:")
        return
    if text is not None or summary is not None:
        raise UsageError(
            "--new-session takes no TEXT or --summary: the new session starts at REF.",
            "add the next message there with `convgit user TEXT`",
        )
    made = session.fork_session(ref, name=name)
    source = (made.tree.header or {}).get("forkedFrom")
    if json:
        out({"session": made.id, "source": source, "leaf": made.leaf, "files_changed": False})
        return
    from convgit import render

    show(
        f"started session {made.id} from session {session.id} at {made.leaf}"
        f" ({_entries(len(made.tree.entries))}); it is now current, and {session.id} is unchanged"
    )
    show(render.entry_line(made, str(made.leaf), on_path=True))
    boundary(made)


@command()
def edit(
    ref: Annotated[str, typer.Argument(help="The message to edit.")],
    text: Annotated[str, typer.Argument(help="The new text.")],
    json: JsonFlag = False,
) -> None:
    """A new version of a message, as its sibling; the original stays. Files are not changed."""
    session = open_session()
    leaf = session.edit(ref, text)
    _moved(session, leaf, json, "edited:")


@command()
def retry(
    ref: Annotated[str, typer.Argument(help="The reply to try again (default: the leaf).")] = "@",
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
    leaf = session.retry(ref, turn=turn)
    _moved(session, leaf, json, "ready to retry from")


@command()
def label(
    ref: Annotated[str, typer.Argument(help="The entry to bookmark.")],
    name: Annotated[str | None, typer.Argument(help="The label.")] = None,
    clear: Annotated[bool, typer.Option("--clear", help="Remove the entry's label.")] = False,
    json: JsonFlag = False,
) -> None:
    """Bookmark an entry with a name usable anywhere an id is."""
    if name is None and not clear:
        raise typer.BadParameter("give a NAME, or --clear")
    session = open_session()
    held = [] if clear or name is None else session.labelled(name)
    ident = session.label(ref, None if clear else name)
    moved = [i for i in held if i != ident]
    if json:
        out(
            {
                "id": ident,
                "label": None if clear else name,
                "moved_from": moved[0] if moved else None,
            }
        )
    else:
        where = f" (moved from {', '.join(moved)})" if moved else ""
        show(f"{ident} {'unlabelled' if clear else 'labelled ' + str(name)}{where}")


@command()
def name(
    text: Annotated[str, typer.Argument(help="The session's display name.")],
    json: JsonFlag = False,
) -> None:
    """Name the session."""
    session = open_session()
    session.name(text)
    if json:
        out({"session": session.id, "name": text})
    else:
        show(f"session {session.id} is now named {text}")


# -- verification ------------------------------------------------------------------------------


@command()
def fsck(json: JsonFlag = False) -> None:
    """Check the session file: exit 0 when it is sound, 3 with every problem by line."""
    from convgit import render

    session = open_session()
    problems = session.problems()
    fatal = [p for p in problems if p.fatal]
    if json:
        out(
            {
                "session": session.id,
                "ok": not fatal,
                "problems": [
                    {"line": p.line, "entry": p.entry, "what": p.what, "fatal": p.fatal}
                    for p in problems
                ],
            }
        )
    else:
        lines = render.problem_lines(problems)
        lost = {(p.line, p.what) for p in session.lost_commits()} if fatal else set()
        fixable = [p for p in fatal if (p.line, p.what) not in lost]
        if fixable:
            lines.append(f"{len(fixable)} problem(s): `convgit repair` moves the bad lines aside")
        if lost:
            lines.append(
                f"{len(lost)} snapshot or saved-state commit(s) lost from git: their files"
                " cannot be restored, and repair cannot bring them back"
            )
        else:
            lines.append(f"session {session.id}: ok ({len(session.tree.entries)} entries)")
        if fatal:
            typer.echo("\n".join(lines), err=True)
        else:
            echo("\n".join(lines))
    if fatal:
        raise typer.Exit(3)


@command()
def repair(json: JsonFlag = False) -> None:
    """Move bad lines to <sid>.quarantine.jsonl (never deleted), keep a backup of the file."""
    session = open_session()
    report = session.repair()
    if json:
        out(report.to_json())
    elif report.moved == 0 and report.backup is None:
        show(f"session {session.id}: nothing to repair")
    else:
        show(
            f"moved {report.moved} line(s) to the quarantine ({session.file.quarantine_path.name})"
        )
        if report.backup is not None:
            show(f"the original is kept as {report.backup.name}")


# -- the workspace track ---------------------------------------------------------------------


@command()
def status(json: JsonFlag = False) -> None:
    """Both tracks: where the context is, and which snapshot the files match."""
    from convgit import render

    st = open_session().status()
    if json:
        out(st.to_json())
    else:
        show(*render.status_words(st))


@command()
def snapshot(
    ref: Annotated[str, typer.Argument(help="The entry to attach the snapshot to.")] = "@",
    json: JsonFlag = False,
) -> None:
    """Record the working tree now as the snapshot of an entry (default: the leaf)."""
    from convgit import render

    session = open_session()
    had = session.sidecar.snapshots.get(session.resolve(ref))
    snap = session.snapshot(ref)
    unchanged = had is not None and had.commit == snap.commit
    if json:
        out({"entry": snap.entry, "files": snap.files, "unchanged": unchanged, **snap.to_json()})
    else:
        show(*render.snapshot_words(snap, unchanged=unchanged))


@command()
def snapshots(
    state: Annotated[str, typer.Argument(help="on or off")],
) -> None:
    """Turn the automatic snapshot after each assistant reply on or off."""
    if state not in ("on", "off"):
        raise UsageError(f"'{state}' is neither on nor off.")
    session = open_session()
    session.set_snapshots(state == "on")
    show(f"snapshots {state} for session {session.id}")


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
    json: JsonFlag = False,
) -> None:
    """Bring files back to an entry's snapshot or a saved state, after saving the current
    state (undoable). Asks first (on a terminal; elsewhere it needs --yes). The conversation's
    leaf does not move; a note tells the model."""
    from convgit import render

    if undo == (ref is not None):
        raise UsageError("Give either an entry to restore or --undo.", "convgit restore REF")
    session = open_session()
    paths = None if path is None else _from_here(session, path)
    if not (yes or dry_run):
        preview = session.restore(ref, paths=paths, dry_run=True, undo=undo)  # checks REF too
        if not sys.stdin.isatty():
            raise RefusedError(
                "restore changes files and there is no terminal to ask; nothing was restored.",
                "add --yes to restore without asking (--dry-run lists the changes)",
            )
        show(*render.restore_words(preview))
        if not preview.changes:
            return
        if not typer.confirm("restore these files?", default=False):
            typer.echo("nothing was restored", err=True)
            raise typer.Exit(1)
    result = session.restore(ref, paths=paths, dry_run=dry_run, undo=undo, force=force)
    if json:
        out(result.to_json())
    else:
        show(*render.restore_words(result))


def _from_here(session: Session, paths: list[str]) -> list[str]:
    """``--path`` values, relative to the folder convgit runs in (as git reads pathspecs), as
    paths relative to the worktree's root (a path outside it keeps its ``..`` and is refused)."""
    here = Path(options.directory).resolve()
    root = session.workspace().root.resolve()
    out: list[str] = []
    for given in paths:
        joined = os.path.normpath(os.path.join(here, given))
        relative = os.path.relpath(joined, root)
        out.append("" if relative == "." else relative)
    return out


@command()
def restores(json: JsonFlag = False) -> None:
    """The saved states, newest first: the files as they were before each restore."""
    from convgit import render

    saved = list(reversed(open_session().sidecar.saved))
    if json:
        out([state.to_json() for state in saved])
    else:
        show(*render.saved_lines(saved))


@command()
def diff(
    a: Annotated[str, typer.Argument(help="An entry with a snapshot.")],
    b: Annotated[str | None, typer.Argument(help="Another (default: the files now).")] = None,
    stat: Annotated[bool, typer.Option("--stat", help="Counts only.")] = False,
    name_only: Annotated[bool, typer.Option("--name-only", help="Paths only.")] = False,
    json: JsonFlag = False,
) -> None:
    """Files that differ between two entries' snapshots, or a snapshot and the files now."""
    from convgit import render

    changes = open_session().diff(a, b)
    if json:
        out(
            [
                {"path": c.path, "status": c.status, **({"reason": c.reason} if c.reason else {})}
                for c in changes
            ]
        )
    elif stat:
        show(*render.changes_lines(changes), render.stat_line(changes))
    else:
        show("\n".join(render.changes_lines(changes, name_only=name_only)) or "no changes")


@command()
def worktree(
    ref: Annotated[
        str | None, typer.Argument(help="The entry whose snapshot to check out.")
    ] = None,
    directory: Annotated[Path | None, typer.Argument(help="Where (a new folder).")] = None,
    list_: Annotated[bool, typer.Option("--list", help="List convgit's worktrees.")] = False,
    remove: Annotated[
        Path | None, typer.Option("--remove", help="Remove this convgit worktree.")
    ] = None,
    json: JsonFlag = False,
) -> None:
    """Check an entry's snapshot out in another folder, side by side (a detached git worktree)."""
    session = open_session()
    ws = session.workspace()
    if list_:
        rows = [{"path": str(p), "commit": c} for p, c in ws.list_worktrees()]
        if json:
            out(rows)
        else:
            show(*(f"{r['path']}  {r['commit'][:12]}" for r in rows))
        return
    if remove is not None:
        ws.remove_worktree(remove)
        show(f"removed worktree {remove}")
        return
    if ref is None or directory is None:
        raise UsageError("Give an entry and a folder.", "convgit worktree REF DIR")
    commit = session.add_worktree(ref, directory)
    if is_saved_ref(ref):
        entry, what = None, f"the saved state {session.saved_state(ref).id}"
    else:
        entry = session.resolve(ref)
        what = f"the snapshot of {entry} ({commit[:12]})"
    if json:
        out({"entry": entry, "commit": commit, "path": str(directory)})
    else:
        show(f"checked out {what} in {directory}")


@command("html")
def html_cmd(
    session_ref: Annotated[
        str | None,
        typer.Argument(metavar="SESSION", help="A session id or prefix (default: the current)."),
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option(
            "-o", "--output", help="Where to write it (default: <store>/pages/SID.html; - prints)."
        ),
    ] = None,
    open_: Annotated[bool, typer.Option("--open", help="Open the page in a browser.")] = False,
    json: JsonFlag = False,
) -> None:
    """Write one self-contained HTML page of both tracks: the tree beside the snapshots, each
    entry in full, the files changed at each snapshot, comparisons, restores."""
    from convgit import render, sessionpage
    from convgit.formats import html

    session = Session.open(
        options.directory,
        session=session_ref or options.session,
        store_dir=options.store,
        fsync=options.fsync,
    )
    status = session.status()
    text = html.render(sessionpage.gather(session, status, render.status_words(status)))
    if output is not None and str(output) == "-":
        sys.stdout.write(text)
        return
    path = output or session.location.root / "pages" / f"{session.id}.html"
    path.parent.mkdir(parents=True, exist_ok=True)
    scratch = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    scratch.write_text(text, encoding="utf-8")
    os.replace(scratch, path)  # a reader never sees half a page
    size = len(text.encode())
    if json:
        out({"session": session.id, "path": str(path), "bytes": size})
    else:
        show(f"wrote the page of session {session.id} to {path} ({size / 1024:.0f} KiB)")
    if open_:
        import webbrowser

        if not webbrowser.open(path.resolve().as_uri()):
            show(f"no browser was found to open it: open {path}")


@command(cls=_CommandAfterDashes)
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
    (removed afterwards): convgit run REF... -- COMMAND. Exit 0 when every command ran,
    whatever its own exit code (in the report); 1 when nothing could be run."""
    from convgit import render

    command_line = ctx.meta.get("convgit.command")
    if not command_line:
        raise UsageError("Give the command to run after --.", "convgit run REF... -- COMMAND")
    chosen = ([WORKING_TREE] if worktree else []) + list(refs or [])
    session = open_session()
    report = session.run(
        chosen,
        command_line,
        jobs=None if jobs is None else _number(jobs, "--jobs", int),
        timeout=None if timeout is None else _number(timeout, "--timeout", float),
        links=link or [],
        note=note,
    )
    if json:
        out([row.to_json() for row in report.rows])
    else:
        show(*render.run_lines(session, report))
    for sentence in report.unnoted:
        typer.echo(f"convgit: no note was recorded: {sentence}", err=True)
    if report.unnoted:
        raise typer.Exit(1)


N = TypeVar("N", int, float)


def _number(text: str, option: str, kind: Callable[[str], N]) -> N:
    try:
        return kind(text)
    except ValueError:
        raise UsageError(f"{option} takes a number, not {text!r}.") from None


@command()
def demo(
    directory: Annotated[
        Path | None, typer.Option("--dir", help="Build the demo here (default: a temp folder).")
    ] = None,
) -> None:
    """Walk through the two tracks on a throwaway repository, with real commands."""
    from convgit.demo import run

    run(directory)


_GLOBAL_WITH_VALUE = frozenset({"--session", "-s", "--store", "-C"})


def _command_named(args: list[str]) -> str | None:
    """The command word of a command line (the first word that is no global option)."""
    words = iter(args)
    for word in words:
        if word in _GLOBAL_WITH_VALUE:
            next(words, None)
        elif word == "--" or not word.startswith("-"):
            return None if word == "--" else word
    return None


def main() -> None:
    """The console script: runs one command; an output that cannot be written (a closed or full
    stdout) is one sentence on stderr and exit code 1, never a traceback."""
    closed = _occupy_closed_stdout()
    try:
        _run()
    except SystemExit:
        _flush(closed)
        raise
    except OSError as exc:
        _output_failed(exc)
    _flush(closed)


def _occupy_closed_stdout() -> bool:
    """With fd 1 closed, the next file opened would become "stdout": park /dev/null there, and
    let the output go to it (the run still ends with the sentence saying it was lost)."""
    if sys.stdout is not None:
        return False
    fd = os.open(os.devnull, os.O_WRONLY)
    if fd != 1:
        os.dup2(fd, 1)
        os.close(fd)
    sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115 - lives as stdout
    return True


def _flush(closed: bool) -> None:
    try:
        if sys.stdout is not None:
            sys.stdout.flush()
    except OSError as exc:
        _output_failed(exc)
    if closed:
        _output_failed(OSError(errno.EBADF, "standard output is closed"))


def _output_failed(exc: OSError) -> None:
    try:  # Python flushes stdout again at exit: give that flush somewhere to go
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno() if sys.stdout is not None else 1)
    except (OSError, ValueError):
        pass
    if exc.errno != errno.EPIPE:  # a reader that stopped reading (`| head`) needs no sentence
        reason = exc.strerror or str(exc)
        sys.stderr.write(f"convgit: the output could not be written ({reason}).\n")
    raise SystemExit(1)


def _run() -> None:
    # Building every command's parser costs more than running most commands: build an app with
    # just the one asked for (help, errors and anything unknown get the whole app).
    register = _REGISTER.get(_command_named(sys.argv[1:]) or "")
    if register is None:
        app()
        return
    one = typer.Typer(**_APP_SETTINGS)
    one.callback()(_global)
    register(one)
    one()


from convgit import cli_history  # noqa: E402, F401  (registers its commands on app)
