"""Appending from the command line: ``convgit append`` (entries from stdin, one JSON object per
line), ``convgit user`` and ``convgit assistant`` (one message, its turn's files snapshotted). A
harness runs them every turn, so ``python -m convgit append|user|assistant`` starts here without
typer (``convgit.__main__``'s lean table), as the hook handler does; the typer commands
(``convgit -s SID user ...``) call the same functions. Arguments these entries do not know go to
the typer app, which names the mistake."""

import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from convgit.base import codec
from convgit.base.errors import (
    ConvgitError,
    InvalidEntryError,
    SignalReceived,
    StoppedError,
    UsageError,
    signal_name,
)
from convgit.cli import output
from convgit.cli.opening import open_session as opened
from convgit.session import Session
from convgit.session.appending import caller_id


def append(ident: str | None, json: bool, open_session: Callable[[], Session]) -> None:
    """Append the records on stdin in order, then say what was appended (``--json``: as JSON)."""
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
    ids = session.append.records(records, follow=True)
    if session.append.snapshot_error is not None:
        warning = (
            f"convgit: warning: the files were not snapshotted: {session.append.snapshot_error}"
        )
        output.warn(warning)
    _say_skipped(session)
    elsewhere = session.append.files_from
    if json:
        files_from = None if elsewhere is None else elsewhere.to_json()
        output.write_line(
            codec.dumps({"ids": ids, "leaf": session.conversation.leaf, "files_from": files_from})
        )
    else:
        entries = f"{len(ids)} entr{'y' if len(ids) == 1 else 'ies'}"
        output.show(f"appended {entries}; leaf is {session.conversation.leaf}")
        if elsewhere is not None:
            output.show(elsewhere.words)


def run(args: list[str]) -> int | None:
    """``convgit append [--id ID] [--json]`` without typer; the exit code, as every command's.
    None for arguments it does not take: the typer app says what is wrong with them."""
    parsed = _parsed(args)
    if parsed is None:
        return None
    ident, json = parsed
    return _lean(lambda: append(ident, json, lambda: Session.open(Path("."))))


def run_user(args: list[str]) -> int | None:
    """``convgit user TEXT [--id ID] [--force] [--json]`` without typer (None: see ``run``)."""
    return _message("user", args)


def run_assistant(args: list[str]) -> int | None:
    """``convgit assistant TEXT [--id ID] [--force] [--json]`` without typer."""
    return _message("assistant", args)


def _message(role: str, args: list[str]) -> int | None:
    """The text and options of ``user``/``assistant`` as the typer command takes them, run;
    None for anything else (no text, two, an option it does not know)."""
    text: str | None = None
    ident, force, json = None, False, False
    words = iter(args)
    for word in words:
        if word == "--json":
            json = True
        elif word == "--force":
            force = True
        elif word == "--id":
            given = next(words, None)
            if given is None:
                return None
            ident = output.utf8(given)
        elif word.startswith("--id="):
            ident = output.utf8(word[len("--id=") :])
        elif text is None and (word == "-" or not word.startswith("-")):
            text = output.utf8(word)
        else:
            return None
    if text is None:
        return None
    said = text
    return _lean(lambda: message(role, said, ident, force, json, opened))


def _lean(work: Callable[[], None]) -> int:
    closed = output.occupy_closed_stdout()
    try:
        work()
    except ConvgitError as exc:
        output.error(exc)
        return exc.exit_code
    except OSError as exc:  # the file system refused: a full disk, a read-only folder
        output.error(output.os_error(exc))
        return 1
    except KeyboardInterrupt:
        return 130
    except SignalReceived as exc:  # once the reply and its snapshot are recorded, as Ctrl-C
        return 128 + exc.signum
    finally:
        output.flush(closed)
    return 0


def message(
    role: str,
    text: str,
    ident: str | None,
    force: bool,
    json: bool,
    open_session: Callable[[], Session],
) -> None:
    """``convgit user`` and ``convgit assistant``: append one message at the active leaf (a
    reply snapshots the files), then show it."""
    try:
        session = open_session()
        said = text_of(text)
    except SignalReceived as exc:  # a reply's snapshot started early stops on a signal
        raise nothing_recorded(exc.signum) from None
    made = appending(
        session, lambda: session.append.message(role, said, force=force, ident=ident), open_session
    )
    appended(session, made, json)


def appended(session: Session, ident: str, json: bool) -> None:
    """Show an appended entry and its snapshot; a snapshot that could not be taken is a
    warning (the entry is recorded: the command succeeds, so a retry adds nothing)."""
    snap = session.track.sidecar.snapshots.get(ident)
    failed = session.append.snapshot_error
    if failed is not None:
        output.warn(f"convgit: warning: the files were not snapshotted: {failed}")
    skipped = _say_skipped(session)
    elsewhere = session.append.files_from
    if json:
        value = session.conversation.record(ident)
        value["snapshot"] = (
            {"error": failed}
            if failed
            else {"skipped": skipped}
            if skipped
            else snap.to_json()
            if snap
            else None
        )
        value["files_from"] = None if elsewhere is None else elsewhere.to_json()
        output.write_line(codec.dumps(value))
        return
    from convgit.text import render

    output.show(
        render.entry_line(session.view(), ident, on_path=ident == session.conversation.leaf)
    )
    if session.append.note is not None:
        output.show(render.note_line(session.view(), session.append.note))
    if snap is not None and failed is None:
        output.show(*render.snapshot_words(snap, names=render.Names(session.view())))
    if elsewhere is not None:
        output.show(elsewhere.words)


def _say_skipped(session: Session) -> dict[str, int] | None:
    """The turn's snapshot skipped over ``[snapshots] max_files_per_turn``, said in one
    sentence on stderr; what ``--json`` says of it (``{"changed", "cap"}``), or None."""
    skipped = session.append.snapshot_skipped
    if skipped is None:
        return None
    output.warn(f"convgit: warning: {skipped.words()}; {skipped.hint}")
    return {"changed": skipped.changed, "cap": skipped.cap}


def nothing_recorded(signum: int) -> StoppedError:
    """A command that appends, stopped by ``signum`` before it appended anything."""
    return StoppedError(
        signum, f"Interrupted by {signal_name(signum)}: nothing was recorded; no file was changed."
    )


def text_of(text: str) -> str:
    """The text argument, or stdin for ``-`` (texts longer than a command line allows)."""
    if text != "-":
        return text
    data = sys.stdin.buffer.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidEntryError("The text on stdin is not UTF-8; nothing was appended.") from None


def appending(session: Session, append: Callable[[], str], reopen: Callable[[], Session]) -> str:
    """``append()`` (which records an entry, then snapshots the files): stopped by SIGINT,
    SIGTERM or SIGHUP, it says in one sentence whether the entry was recorded (``reopen``
    reads the session again to know)."""
    from convgit.base.process_groups import stopping_on_signals

    leaf = session.conversation.leaf
    try:
        with stopping_on_signals():
            return append()
    except (SignalReceived, KeyboardInterrupt) as exc:
        signum = exc.signum if isinstance(exc, SignalReceived) else signal.SIGINT
        again = reopen()
        if again.conversation.leaf == leaf:
            raise nothing_recorded(signum) from None
        if not again.track.snapshots_enabled:
            left = "the entry was recorded"
        elif again.conversation.leaf in again.track.sidecar.snapshots:
            left = "the entry and its snapshot were recorded"  # stopped after both
        else:
            left = (
                "the entry was recorded and its snapshot was not (`convgit snapshot` records"
                " the files now)"
            )
        raise StoppedError(
            signum, f"Interrupted by {signal_name(signum)}: {left}; no file was changed."
        ) from None


def _parsed(args: list[str]) -> tuple[str | None, bool] | None:
    """(--id, --json) of these arguments, or None for anything else."""
    ident, json = None, False
    words = iter(args)
    for word in words:
        if word == "--json":
            json = True
        elif word == "--id":
            given = next(words, None)
            if given is None:
                return None
            ident = output.utf8(given)
        elif word.startswith("--id="):
            ident = output.utf8(word[len("--id=") :])
        else:
            return None
    return ident, json


def _is_utf8(line: bytes) -> bool:
    try:
        line.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _give_id(records: list[dict[str, Any]], ident: str) -> None:
    """``append --id``: the id of the one entry on stdin."""
    if len(records) != 1 or records[0].get("id") not in (None, ident):
        raise UsageError(
            "--id names one entry: give it with a single entry that has no other id.",
            'give each record its own "id" instead',
        )
    records[0]["id"] = caller_id(ident)
