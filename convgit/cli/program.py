"""The program every command runs in: the typer app and its global options, the decorator that
registers a command (its expected errors become one sentence and an exit code), the output
helpers, and ``main``, which builds an app with just the command asked for."""

import functools
import gc
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
import typer.core

from convgit.base import codec
from convgit.base.errors import (
    ConvgitError,
    UsageError,
)
from convgit.cli import output, pager
from convgit.cli.grouping import Grouped
from convgit.cli.notation import Command
from convgit.cli.output import output_failed, show

if TYPE_CHECKING:
    from convgit.session import Session


class CommandAfterDashes(Command):
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
    context_settings={"help_option_names": ["-h", "--help"]},
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    cls=Grouped,
)
app = typer.Typer(**_APP_SETTINGS)

F = TypeVar("F", bound=Callable[..., Any])

# command name -> what registers it on a Typer app: main() builds an app with the one asked for
_REGISTER: dict[str, Callable[[typer.Typer], Any]] = {}

JsonFlag = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]
IdOption = Annotated[
    str | None,
    typer.Option(
        "--id", metavar="ID", help="The entry's id; sending the same entry again changes nothing."
    ),
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


def _version(asked: bool) -> None:
    """``--version`` where ``convgit.__main__`` did not take it first (``app`` called itself)."""
    if asked:
        from convgit.cli import version

        typer.echo(version.words())
        raise typer.Exit(0)


@app.callback()
def _global(
    session: Annotated[
        str | None,
        typer.Option("--session", "-s", metavar="SESSION", help="Session id (default: current)."),
    ] = None,
    store: Annotated[
        str | None,
        typer.Option(
            "--store",
            metavar="DIR",
            help="Store folder, relative to -C's DIR (default: inside the git dir, or ./.convgit).",
        ),
    ] = None,
    directory: Annotated[
        Path,
        typer.Option(
            "-C", metavar="DIR", help="Run as if convgit was started in DIR.", show_default=False
        ),
    ] = Path("."),
    fsync: Annotated[
        bool, typer.Option("--fsync", help="fsync every write (survives power loss).")
    ] = False,
    no_pager: Annotated[
        bool,
        typer.Option(
            "--no-pager", "-P", help="Do not page long output (see CONVGIT_PAGER in docs/guide.md)."
        ),
    ] = False,
    version: Annotated[
        bool,
        typer.Option(
            "--version", help="Print convgit's version and exit.", callback=_version, is_eager=True
        ),
    ] = False,
) -> None:
    # a relative --store is relative to -C's DIR, as git reads its later paths, whichever
    # comes first; made absolute, it stays right after a command moves into DIR (``hook``).
    # A relative CONVGIT_STORE too, as the hooks read it in the agent's folder (empty: unset):
    # from DIR's real path, as the hooks' own folder is, so that both name one recorder
    if store == "":  # Path("") is the current folder: an empty name must not choose one
        fail(UsageError("--store was given an empty folder name."))
    named = store if store is not None else os.environ.get("CONVGIT_STORE") or None
    options.session, options.store, options.directory, options.fsync = (
        session,
        None if named is None else Path(os.path.realpath(directory)) / named,
        directory,
        fsync,
    )
    if not directory.is_dir():
        what = "is not a folder" if directory.exists() else "does not exist"
        fail(UsageError(f"The folder {directory} given with -C {what}."))


def command(*names: str, group: typer.Typer | None = None, **kwargs: Any) -> Callable[[F], F]:
    """Register a command (on ``group``, a sub-app such as ``convgit hooks``, when given) whose
    expected errors become one sentence and an exit code."""
    kwargs.setdefault("cls", Command)

    def decorate(fn: F) -> F:
        @functools.wraps(fn)
        def guarded(*args: Any, **kw: Any) -> Any:
            collect()
            kw = {name: output.utf8(value) for name, value in kw.items()}
            try:
                return fn(*args, **kw)
            except ConvgitError as exc:
                fail(exc)
            except OSError as exc:  # the file system refused: a full disk, a read-only folder
                fail(output.os_error(exc))
            except KeyboardInterrupt:
                raise typer.Exit(130) from None

        def register(target: typer.Typer) -> None:
            target.command(*names, **kwargs)(guarded)

        if group is not None:
            register(group)
            return fn
        register(app)
        _REGISTER[names[0] if names else fn.__name__.replace("_", "-")] = register
        return fn

    return decorate


def collect() -> None:
    """Start the cyclic garbage collector, which ``convgit.__main__`` leaves off while Python
    imports and typer builds the command: a command may run long (``ui``, ``mcp``, ``run``).
    What the start made lives until the process ends: it goes to the oldest generation at once,
    rather than be walked by the next young collections (as ``store.load`` does)."""
    if not gc.isenabled():
        gc.freeze()
        gc.unfreeze()
        gc.enable()


def add_group(name: str, group: typer.Typer) -> None:
    """Register a group of commands (``convgit NAME ...``), a typer app of its own."""

    def register(target: typer.Typer) -> None:
        target.add_typer(group, name=name)

    register(app)
    _REGISTER[name] = register


def fail(exc: ConvgitError) -> None:
    typer.echo(output.sentence(exc), err=True)
    raise typer.Exit(exc.exit_code)


def open_session(create: bool = False, *, tell_hooks: bool = True) -> "Session":
    """The session the command works on, as the global options name it (``opening``)."""
    from convgit.cli import opening

    return opening.open_session(
        options.directory,
        create=create,
        session=options.session,
        store=options.store,
        fsync=options.fsync,
        tell_hooks=tell_hooks,
    )


def echo(text: str) -> None:
    """Write ``text`` and a newline on stdout; a stdout that refuses it (a full disk, a closed
    pipe) is one sentence and exit 1, never taken for the store's file system refusing."""
    try:
        typer.echo(text)
    except OSError as exc:
        output_failed(exc)


def out(value: Any) -> None:
    echo(codec.dumps(value))


def boundary(session: "Session") -> None:
    """End a move in the conversation with the line that says the files did not change."""
    from convgit.text import render

    try:
        status = session.snapshots.status()
    except ConvgitError as exc:
        show(f"files: not changed ({exc.message})")
        return
    show(render.boundary_line(status, render.Names(session.view())))


def positive(value: str, option: str) -> int:
    if not (value.isascii() and value.isdigit()) or int(value) == 0:
        raise UsageError(f"{option} takes a positive whole number, not '{value}'.")
    return int(value)


N = TypeVar("N", int, float)


def number(text: str, option: str, kind: Callable[[str], N]) -> N:
    try:
        return kind(text)
    except ValueError:
        raise UsageError(f"{option} takes a number, not {text!r}.") from None


_GLOBAL_WITH_VALUE = frozenset({"--session", "-s", "--store", "-C"})
PROGRAM = "convgit"  # the name in usage lines and completion, also under `python -m convgit`
COMPLETE_VAR = "_CONVGIT_COMPLETE"  # the variable a completion script sets (`convgit completion`)


def command_named(args: list[str]) -> str | None:
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
    closed = output.occupy_closed_stdout()
    pager.start(sys.argv[1:], command_named(sys.argv[1:]), _GLOBAL_WITH_VALUE)
    try:
        try:
            _run()
        except SystemExit:
            output.flush(closed)
            raise
        except OSError as exc:
            output_failed(exc)
        output.flush(closed)
    finally:
        pager.finish()


def completed_command() -> str | None:
    """The command word a shell's completion request has before the word it completes (None:
    no request, or the command word itself is being completed): a TAB after it builds that
    command's module alone. Read as typer's completion classes read the request (bash's
    COMP_WORDS and COMP_CWORD, zsh's and fish's _TYPER_COMPLETE_ARGS)."""
    if COMPLETE_VAR not in os.environ:
        return None
    if "COMP_WORDS" in os.environ:  # bash
        words = _split(os.environ["COMP_WORDS"])
        try:
            before = words[1 : int(os.environ.get("COMP_CWORD", ""))]
        except ValueError:
            return None
    else:  # zsh and fish: the line, the word being completed last unless a space ends it
        line = os.environ.get("_TYPER_COMPLETE_ARGS", "")
        before = _split(line)[1:]
        if before and not line.endswith(" "):
            before = before[:-1]
    return command_named(before)


def _split(line: str) -> list[str]:
    """A command line's words as the shell gives them (a quote left open: split at spaces)."""
    import shlex

    try:
        return shlex.split(line)
    except ValueError:
        return line.split()


def _run() -> None:
    # Building every command's parser costs more than running most commands: build an app with
    # just the one asked for (help, errors and anything unknown get the whole app).
    register = _REGISTER.get(command_named(sys.argv[1:]) or "")
    if register is None:
        if COMPLETE_VAR in os.environ:  # a shell asks for completions (`convgit completion`)
            from typer.completion import completion_init  # typer's answers to the script

            completion_init()
        app(prog_name=PROGRAM, complete_var=COMPLETE_VAR)
        return
    one = typer.Typer(**_APP_SETTINGS)
    one.callback()(_global)
    register(one)
    one(prog_name=PROGRAM, complete_var=COMPLETE_VAR)
