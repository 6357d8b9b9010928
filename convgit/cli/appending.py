"""``convgit append``: entries from stdin, one JSON object per line. A harness runs it every
turn, so ``python -m convgit append`` starts here without typer (``convgit.__main__``'s lean
table), as the hook handler does; the typer command (``convgit -s SID append``) calls the same
``append``. Arguments this entry does not know go to the typer app, which names the mistake."""

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from convgit.base import codec
from convgit.base.errors import ConvgitError, InvalidEntryError, UsageError
from convgit.cli import output
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
    closed = output.occupy_closed_stdout()
    try:
        append(ident, json, lambda: Session.open(Path(".")))
    except ConvgitError as exc:
        output.error(exc)
        return exc.exit_code
    except OSError as exc:  # the file system refused: a full disk, a read-only folder
        output.error(output.os_error(exc))
        return 1
    except KeyboardInterrupt:
        return 130
    finally:
        output.flush(closed)
    return 0


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
