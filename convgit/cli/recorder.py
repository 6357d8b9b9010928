"""``convgit recorder status|stop``: the process that stays beside a working tree and takes its
hooks' events (``convgit.agents.live.recorder``)."""

import typer

from convgit.cli.output import show
from convgit.cli.program import JsonFlag, add_group, command, options, out

recorder_app = typer.Typer(
    name="recorder",
    help="The recorder: one process per working tree that takes its hooks' events, started by"
    " the first one, leaving when idle; hooks do the work themselves without it.",
    no_args_is_help=True,
)
add_group("recorder", recorder_app)


@command("status", group=recorder_app)
def recorder_status(json: JsonFlag = False) -> None:
    """Whether a recorder runs for this working tree (its process, since when, its convgit and
    watcher, the events it took), or why there is none."""
    from convgit.agents.live import recorder
    from convgit.text import reports

    found = recorder.status(options.directory, options.store)
    if json:
        out(found)
    else:
        show(*reports.recorder_words(found))


@command("stop", group=recorder_app)
def recorder_stop(json: JsonFlag = False) -> None:
    """Ask the recorder of this working tree to leave (the next hook event starts another;
    CONVGIT_RECORDER=off keeps them from starting one)."""
    from convgit.agents.live import recorder

    said = recorder.stop(options.directory, options.store)
    if json:
        out({"stopped": said is not None, "pid": None if said is None else said.get("pid")})
    elif said is None:
        show("no recorder was running for this working tree")
    else:
        show(f"the recorder (pid {said.get('pid')}) left")
