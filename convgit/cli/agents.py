"""Beside an agent: ``import`` and ``export`` of its session files, ``hooks`` and ``hook``
(recording it live), ``resume`` (handing a path back to it)."""

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from convgit.agents import registry
from convgit.base.errors import ConvgitError, NotFoundError, RefusedError, UsageError
from convgit.cli.output import output_failed, show
from convgit.cli.program import (
    JsonFlag,
    add_group,
    command,
    open_session,
    options,
    out,
)

if TYPE_CHECKING:
    from convgit.agents.hooks import ScopeState
    from convgit.agents.protocol import Live, OwnHooks, SettingsHooks
    from convgit.schema.shapes import HooksDismissJson, ImportJson


@command("import")
def import_cmd(
    agent: Annotated[
        str,
        typer.Argument(
            help=f"The agent that wrote the file: {registry.listing('reading')}; it may be left"
            " out (`convgit import FILE`: recognised from the file's content).",
            metavar="AGENT",
        ),
    ],
    file: Annotated[
        Path | None, typer.Argument(help="The agent's session file (its transcript).")
    ] = None,
    json: JsonFlag = False,
) -> None:
    """Import an agent's session into the convgit session that mirrors it (one per agent
    session; found again on the next import, which adds only what is new). Nothing is
    snapshotted: today's files are not those of the turns imported. A file of another agent
    than AGENT is refused; without AGENT the agent is recognised from the file."""
    from convgit.text import reports

    chosen: str | None = agent
    if file is None:
        if agent in registry.names() and not Path(agent).exists():
            raise UsageError(f"Give the {agent} file to import.", f"convgit import {agent} FILE")
        chosen, file = None, Path(agent)
    from convgit.agents import importing

    results = importing.import_file(
        chosen, file, options.directory, store_dir=options.store, fsync=options.fsync
    )
    if json:
        shown: ImportJson = {
            "imports": [r.to_json() for r in results]
        }  # the session, then its subagents
        out(shown)
        return
    title = registry.title(results[0].agent) or results[0].agent
    if chosen is None:
        show(f"{file} is {registry.a(title)} session file (recognised from its content)")
    for result in results:
        show(*reports.import_words(result, title))


@command("export")
def export_cmd(
    ref: Annotated[str | None, typer.Argument(help="The path's last entry (default: @).")] = None,
    format: Annotated[
        str, typer.Option("--format", help=f"The agent: {registry.listing('writing')}.")
    ] = "",
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", metavar="FILE", help="Write a new file instead of stdout."),
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Replace the file -o names if it exists.")
    ] = False,
) -> None:
    """The root-to-REF path as an agent's own session, which that agent continues (`pi
    --session FILE`; OpenCode's: `opencode import FILE`), whichever agents recorded it. Entries
    imported from that agent are written back byte for byte where it has them; another
    agent's tool calls are the agent's own counterparts (docs/handoff.md)."""
    from convgit.agents import writing

    if not format:
        known = registry.listing("writing")
        raise UsageError(f"Say which agent's format to write: --format {known}.")
    unknown = "Unknown export format '{name}': use --format {known}."
    registry.agent(format, "writing", unknown=unknown)

    session = open_session()
    path = session.conversation.records(ref)
    if not path:
        raise NotFoundError("The session has no entries to export.", 'convgit user "..."')
    data = writing.export(session, ref, format)
    if output is None:
        try:
            sys.stdout.buffer.write(data)
            sys.stdout.buffer.flush()
        except OSError as exc:
            output_failed(exc)
        return
    from convgit.cli import newfile

    newfile.write(output, data, command="convgit export", force=force)
    wrote = writing.writer(format).WRITES
    show(f"wrote {len(path)} entries, root to {path[-1]['id']}, to {output} ({wrote})")


hooks_app = typer.Typer(
    name="hooks",
    help="Install, remove or check convgit's hooks in an agent's settings; dismiss what they"
    " missed.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
add_group("hooks", hooks_app)
ScopeOption = Annotated[
    str | None,
    typer.Option(
        "--scope",
        help="claude-code: local (.claude/settings.local.json, the default), project or user;"
        " gemini: project (.gemini/settings.json, the default) or user; pi: project"
        " (.pi/extensions/, the default) or user; codex: user ($CODEX_HOME); copilot: project"
        " (.github/hooks/convgit.json, the default) or user ($COPILOT_HOME/hooks/); qwen:"
        " project (.qwen/settings.json, the default) or user ($QWEN_HOME). With --mcp, the"
        " scopes of docs/mcp.md.",
    ),
]


McpFlag = Annotated[
    bool,
    typer.Option(
        "--mcp",
        help="convgit's MCP server (`convgit mcp`) in the agent's own configuration, not the"
        f" hooks: {registry.listing('mcp')} (see docs/mcp.md).",
    ),
]


def _mcp_change(
    agent: str, scope: str | None, program: str | None, json: bool, *, remove: bool
) -> None:
    """``hooks install|uninstall AGENT --mcp``: convgit's MCP server registered in (or taken
    out of) the agent's configuration; nothing else in it changes."""
    from convgit.agents import exclude
    from convgit.text import reports

    unknown = "convgit's MCP server has no place in '{name}': --mcp takes {known}."
    declared = registry.agent(agent, "mcp", unknown=unknown).mcp
    assert declared is not None
    part = declared()
    scope = scope or part.DEFAULT_SCOPE
    project = _project()
    if remove:
        change = part.uninstall(scope, project, _backups(scope))
        if change.changed:
            exclude.let_back_into_git(project, change.path, _excluded_record(scope))
    else:
        change = part.install(scope, project, _backups(scope), program)
    excluded = None
    if not remove and change.own and scope in part.PROJECT_SCOPES:
        excluded = exclude.keep_out_of_git(project, change.path, _excluded_record(scope))
    if json:
        folders = [str(f) for f in change.folders]
        gone = {"folders": folders, "recorder": None}  # the shape of `hooks uninstall AGENT`
        out({**change.to_json(), **gone} if remove else {**change.to_json(), "excluded": excluded})
        return
    show(*reports.mcp_change_words(change, "uninstall" if remove else "install"))
    if excluded:
        show(f"added {excluded} to .git/info/exclude (git ignores it, a file of convgit's)")


def _scope(integration: "Live", scope: str | None) -> str:
    """The scope given, else the agent's default."""
    return scope or integration.DEFAULT_SCOPE


def _project() -> Path:
    from convgit.store.location import find_git

    found = find_git(options.directory)
    return found.worktree if found and found.worktree else options.directory.resolve()


def _backups(scope: str) -> Path:
    """Where the backups of a settings file go: the project's store in git; for the user's
    own settings, or outside git, the per-user folder (never a store made in whatever folder
    this runs in)."""
    from convgit.store.location import locate

    location = locate(options.directory, options.store)
    if scope == "user" or (location.git is None and not location.root.is_dir()):
        from convgit.store import userstore

        return userstore.backups()
    return location.root / "backups"


def _committed(integration: "Live") -> frozenset[str]:
    """The agent's scopes whose file is meant to be committed (never kept out of git)."""
    return integration.COMMITTED_SCOPES


def _excluded_record(scope: str) -> Path:
    """Where the lines the installs added to ``info/exclude`` are noted."""
    return _backups(scope).parent / "settings-before-install" / "excluded.json"


def _tool_snapshots() -> bool:
    from convgit.agents.live import turns

    return turns.tool_snapshots(_location())


def _location() -> Any:
    from convgit.store.location import locate

    return locate(options.directory, options.store, per_user=True)


def _own_hooks(name: str) -> "OwnHooks | None":
    """The agent's ``hooks`` part, when its hooks install their own way (pi's extension,
    Codex's trust): ``install``, ``uninstall`` and ``status``; None for a settings file
    ``convgit.agents.hooks`` merges alone (Claude Code)."""
    found = registry.agent(name, "live")
    return None if found.hooks is None else found.hooks()


def _settings(name: str) -> "SettingsHooks":
    """The agent's ``settings`` part: its hooks are handlers in a settings file."""
    found = registry.agent(name, "live").settings
    assert found is not None, f"{name} declares neither hooks nor settings"
    return found()


@command("install", group=hooks_app)
def hooks_install(
    agent: Annotated[
        str,
        typer.Argument(help=f"The agent: {registry.listing('live')}; or git (commit trailers)."),
    ],
    scope: ScopeOption = None,
    program: Annotated[
        str | None,
        typer.Option(
            "--command",
            help="The convgit the hooks run (default: this one, by its absolute path, with the"
            " PATH's as a fallback), e.g. convgit or '/opt/venv/bin/python -m convgit'.",
        ),
    ] = None,
    mcp: McpFlag = False,
    json: JsonFlag = False,
) -> None:
    """Add convgit's hooks to the agent's settings (every other setting and hook is kept):
    from then on every prompt, reply and tool call is recorded, with a snapshot per turn.
    Installing again replaces the hooks of an older version (on other events) with these.
    With --mcp: register convgit's MCP server in the agent's configuration instead."""
    from convgit.agents import hooks
    from convgit.text import reports

    if program is not None and not program.strip():
        raise UsageError("--command is empty: give the convgit the hooks should run.")
    if mcp:
        _mcp_change(agent, scope, program, json, remove=False)
        return
    if agent == "git":  # git's own hooks (convgit.sharing.githooks)
        from convgit.cli import sharing

        sharing.install_git_hooks(program, json)
        return
    integration = registry.integration(agent)
    scope = _scope(integration, scope)
    project = _project()
    own = _own_hooks(agent)
    if own is not None:
        change = own.install(scope, project, _backups(scope), program, _tool_snapshots())
    else:
        merged = _settings(agent)
        wanted = merged.wanted(program, _tool_snapshots())
        change = hooks.install(merged, scope, project, _backups(scope), wanted)
    excluded = None
    if scope == "local" or (change.own and scope not in _committed(integration)):
        from convgit.agents import exclude

        excluded = exclude.keep_out_of_git(project, change.path, _excluded_record(scope))
    if json:
        out({**change.to_json(), "excluded": excluded})
    else:
        show(*reports.hooks_change_words(change, "install"))
        if excluded:
            why = "as Claude does" if scope == "local" else "a file of convgit's"
            show(f"added {excluded} to .git/info/exclude (git ignores it, {why})")


@command("uninstall", group=hooks_app)
def hooks_uninstall(
    agent: Annotated[
        str,
        typer.Argument(help=f"The agent: {registry.listing('live')}; or git (commit trailers)."),
    ],
    scope: ScopeOption = None,
    mcp: McpFlag = False,
    json: JsonFlag = False,
) -> None:
    """Take convgit's hooks out of the agent's settings, and nothing else (a file nothing
    else changed in since the install gets its bytes back; one the install made goes, and the
    folders it made for it when they are empty). Once no agent's convgit hooks are left for
    this working tree, its recorder is asked to leave. With --mcp: take convgit's MCP server
    out of the agent's configuration instead."""
    from convgit.agents import hooks
    from convgit.text import reports

    if mcp:
        _mcp_change(agent, scope, None, json, remove=True)
        return
    if agent == "git":
        from convgit.cli import sharing

        sharing.install_git_hooks(None, json, remove=True)
        return
    integration = registry.integration(agent)
    scope = _scope(integration, scope)
    own = _own_hooks(agent)
    if own is not None:
        change = own.uninstall(scope, _project(), _backups(scope))
    else:
        change = hooks.uninstall(_settings(agent), scope, _project(), _backups(scope))
    if change.changed:  # the line the install added to info/exclude for convgit's own file
        from convgit.agents import exclude

        exclude.let_back_into_git(_project(), change.path, _excluded_record(scope))
    left = _recorder_leaves_when_unhooked()
    if json:
        folders = [str(f) for f in change.folders]
        out({**change.to_json(), "folders": folders, "recorder": left})
        return
    show(*reports.hooks_change_words(change, "uninstall"))
    if left is not None:
        show(
            "no agent's convgit hooks are left for this working tree: its recorder"
            f" (pid {left}) was asked to leave"
        )


def _recorder_leaves_when_unhooked() -> int | None:
    """After an uninstall, the recorder of this working tree is asked to leave when no agent's
    convgit hooks are left that run there (``_hooks_remain``): nothing would send it an event
    again before it idles out. Its pid when one was running; else None."""
    if _hooks_remain():
        return None
    from convgit.agents.live import recorder

    said = recorder.stop(options.directory, options.store, by="convgit hooks uninstall")
    if said is None:
        return None
    pid = said.get("pid")
    return pid if isinstance(pid, int) else None


def _hooks_remain() -> bool:
    """Whether any agent's convgit hooks still run in this working tree: in any scope of any
    agent, the user's own too (they run in every working tree), of this version or an older
    one. A settings file that cannot be read, or an agent whose hooks cannot be looked at,
    counts as holding them."""
    try:
        found = _states(registry.names("live"))
    except ConvgitError:
        return True
    return any(s.state != "not installed" for states in found.values() for s in states)


def _states(names: list[str]) -> "dict[str, list[ScopeState]]":
    """convgit's hooks in every settings file of each agent of ``names``, as `hooks status`
    says them."""
    from convgit.agents import hooks

    tool_snapshots = _tool_snapshots()
    found = {}
    for name in names:
        own = _own_hooks(name)
        if own is not None:
            found[name] = own.status(_project(), tool_snapshots)
        else:
            merged = _settings(name)
            found[name] = hooks.status(merged, _project(), merged.events(tool_snapshots))
    return found


@command("status", group=hooks_app)
def hooks_status(
    agent: Annotated[
        str | None, typer.Argument(help="Only this agent's settings (default: every agent's).")
    ] = None,
    json: JsonFlag = False,
) -> None:
    """Where convgit's hooks are installed, whether the agent can run them whatever its PATH,
    the hook log, the hook events that failed or ran no convgit whose turns are not recorded
    yet, and the turns recorded without snapshots."""
    import shutil

    from convgit.agents import hook, hook_failures
    from convgit.text import reports

    chosen = [registry.integration(agent).AGENT] if agent is not None else None
    found = _states(chosen or registry.names("live"))
    root = _location().root
    log = hook.log_path(root)
    report = hook.read_log(log)
    hook_failures.take_not_run(root)
    failures = hook_failures.current(root)
    on_path = shutil.which("convgit")
    if json:
        out(
            {
                "agents": {n: [s.to_json() for s in states] for n, states in found.items()},
                "on_path": on_path,
                "log": str(log),
                **report.to_json(),
                "hook_failures": failures,
            }
        )
    else:
        show(*reports.hooks_status_words(found, on_path, str(log), report.to_json()))
        show(*reports.hook_failure_words(failures))


@command("dismiss", group=hooks_app)
def hooks_dismiss(json: JsonFlag = False) -> None:
    """Stop naming what `status` and `hooks status` name of the hooks (events that failed or
    ran no convgit, turns recorded without snapshots), once you have seen it. The hook log
    keeps every line; what a later event catches up is settled without this."""
    from convgit.agents import hook_failures
    from convgit.text import reports

    root = _location().root
    hook_failures.take_not_run(root)
    dismissed = hook_failures.dismiss(root)
    if json:
        shown: HooksDismissJson = {"dismissed": dismissed}
        out(shown)
    else:
        show(*reports.dismissed_words(dismissed))


@command("hook")
def hook_cmd(
    agent: Annotated[
        str, typer.Argument(help=f"The agent whose hook this is: {registry.listing('live')}.")
    ],
    event: Annotated[
        str | None,
        typer.Argument(help="The agent's name for the event, when its payload does not say it."),
    ] = None,
) -> None:
    """Record one hook event of the agent, read on stdin (what `convgit hooks install` sets up).
    Exits 0 and prints nothing; problems go to the hook log (`convgit hooks status`), and are
    told through the agent (exit 2 with the words on stderr, for an agent that reads them so)."""
    from convgit.agents import hook

    os.chdir(options.directory)
    raise typer.Exit(hook.run([agent, *([event] if event else [])], options.store))


@command()
def resume(
    ref: Annotated[str, typer.Argument(help="The entry to continue from in the agent.")],
    agent: Annotated[
        str | None,
        typer.Option(
            "--agent", help=f"The agent (default: the session's): {registry.listing('resume')}."
        ),
    ] = None,
    restore_files: Annotated[
        bool, typer.Option("--restore", help="Also restore the files to REF's snapshot.")
    ] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Restore without asking.")] = False,
    json: JsonFlag = False,
) -> None:
    """Write a new session of the agent holding exactly the path to REF, and print the command
    that resumes it; its turns become a new branch below REF. Files are not changed unless
    --restore is given (then it is a restore, saved first, and asks first as restore does:
    on a terminal; elsewhere it needs --yes)."""
    from convgit.agents import resume as handback
    from convgit.session.restoring import RestoreResult
    from convgit.text import render, reports

    session = open_session()
    session.conversation.check()
    chosen = agent or session.conversation.header().get("agent") or registry.DEFAULT

    def confirm(preview: RestoreResult) -> None:
        if yes:
            return
        if not sys.stdin.isatty():
            raise RefusedError(
                "resume --restore changes files and there is no terminal to ask; nothing was"
                " resumed or restored.",
                "add --yes to restore without asking",
            )
        show(*render.restore_words(preview))
        if preview.changes and not typer.confirm("restore these files?", default=False):
            typer.echo("nothing was resumed or restored", err=True)
            raise typer.Exit(1)

    result = handback.resume(session, ref, str(chosen), restore=restore_files, confirm=confirm)
    try:  # the files against REF: ahead of it when they are a later turn's
        status = session.snapshots.status()
    except ConvgitError as exc:
        status, unread = None, exc.message
    if json:
        files = None
        if status is not None and status.workspace:
            changed = status.changed
            files = {"matches": status.matches, "changed": changed, "ahead": bool(changed)}
        out({**result.to_json(), "files": files})
        return
    git = session.location.git
    worktree = None if git is None or git.worktree is None else Path(git.worktree).resolve()
    show(*reports.resume_words(result, session.view().short_id(result.entry), worktree))
    if result.restored is not None:
        show(*render.restore_words(result.restored))
    elif status is None:
        show(f"files: not changed ({unread})")
    else:
        names = render.Names(session.view())
        show(render.resume_files_line(status, result.title, names))
