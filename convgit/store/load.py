"""The one load path of a session file and its sidecar: where byte-level quirks (a torn last line,
a byte-order mark, CRLF, a missing final newline, a header naming another session) become
tolerated problems beside what validation found, and where a file of an older format version
is brought to the current one (``migrations``). ``Session``, fsck and repair all read through
here, so they see the same file the same way.
"""

from __future__ import annotations

import gc
import os
from pathlib import Path

from convgit.conversation import tree
from convgit.store import jsonl, migrations
from convgit.store.sidecar import Sidecar


def session(file: jsonl.JsonlFile, sid: str) -> tuple[jsonl.Lines, tree.Tree]:
    """Read, index and validate the whole session file ``sid`` in one pass, through the
    migrations of its format version (``read_from_version``: the version it was migrated from,
    else None)."""
    collecting = gc.isenabled()
    gc.disable()  # a million small dicts would trigger dozens of useless full collections
    try:
        lines = file.read()
        records, older = migrations.migrate(lines.records)
        found = tree.build_records(records, lines.first)
        found.read_from_version = older
        if collecting and not gc.get_freeze_count():
            # what was loaded lives as long as the session: move it to the oldest generation
            # now, rather than let the next young collections walk it entry by entry
            gc.freeze()
            gc.unfreeze()
    finally:
        if collecting:
            gc.enable()
    for problem in _quirks(lines):
        found.tolerate(problem)
    if found.header is not None and found.header.get("id") != sid:
        found.tolerate(tree.Problem(1, f"names session {found.header.get('id')!r}", fatal=False))
    return lines, found


# The sessions a process that stays (the recorder) keeps read between its events, by file:
# the file as far as it was read or written, and its tree. None: this process keeps none.
_held: dict[Path, tuple[jsonl.JsonlFile, tree.Tree]] | None = None


def keep_sessions() -> None:
    """From now on, this process keeps each session it reads (``session_again``)."""
    global _held
    if _held is None:
        _held = {}


def forget_sessions() -> None:
    """Read every session whole again next time (after an event that failed half-way, whose
    writes may not all be in the tree it kept)."""
    if _held is not None:
        _held.clear()


def session_again(file: jsonl.JsonlFile, sid: str) -> tuple[jsonl.JsonlFile, tree.Tree]:
    """Session ``sid`` read again: in a process that keeps sessions, the tree it kept with only
    the whole lines appended since added (an event's import reads a few lines, not a session of
    thousands); else, or when the file was anything but appended to since (``read_appended``),
    or is of an older format version, or the kept tree has a fatal problem (a line appended
    since may mend it: a missing parent or target written at last), read whole (``session``).
    The file returned is the one the tree follows: every write of the session goes through it.
    ``CONVGIT_HELD_CHECK=1`` (the tests) compares a kept tree with the file read whole, each
    time."""
    kept = None if _held is None else _held.get(file.path)
    if kept is not None and not kept[1].fatal:  # a later line may mend what it found wrong
        held, found = kept
        news = held.read_appended()
        if news is not None:
            if news.records:
                found.add_records(news.records, news.first)
                found.finish(since=news.first)
            held.fsync = file.fsync
            if os.environ.get("CONVGIT_HELD_CHECK") == "1":
                _same(found, session(jsonl.JsonlFile(file.path, file.lock_path), sid)[1], sid)
            return held, found
    if _held is not None:
        file.keep_digest()
    lines, found = session(file, sid)
    if _held is not None:
        if found.read_from_version is None and not _quirks(lines):  # they change at a write
            _held[file.path] = (file, found)
        else:
            _held.pop(file.path, None)
    return file, found


def _same(kept: tree.Tree, whole: tree.Tree, sid: str) -> None:
    """Raise when a kept tree says anything else than the file read whole."""
    said = [
        (name, getattr(kept, name), getattr(whole, name))
        for name in ("entries", "leaf", "labels", "header", "kept")
        if getattr(kept, name) != getattr(whole, name)
    ]
    problems = sorted(p.what for p in kept.problems), sorted(p.what for p in whole.problems)
    if said or problems[0] != problems[1]:
        differs = said or problems
        raise AssertionError(f"session {sid}: the kept tree differs from the file: {differs}")


def sidecar(file: jsonl.JsonlFile) -> tuple[jsonl.Lines, Sidecar]:
    """Read the sidecar file (none: no records) into snapshots, restores and problems."""
    found = Sidecar()
    if not file.path.exists():
        return jsonl.Lines(), found
    lines = file.read()
    for number, record in lines.parsed:
        found.add(number, record)
    if lines.torn is not None:
        found.problems.append(
            tree.Problem(
                len(lines.records) + 1,
                "of the sidecar is torn; the next write moves it to the quarantine",
                fatal=False,
            )
        )
    return lines, found


def _quirks(lines: jsonl.Lines) -> list[tree.Problem]:
    """What a session file's bytes do that its readers tolerate."""
    found = []
    if lines.torn is not None:
        found.append(
            tree.Problem(
                len(lines.records) + 1,
                "is torn (a writer stopped mid-line); readers ignore it and the next write"
                " moves it to the quarantine file",
                fatal=False,
            )
        )
    if lines.bom:
        found.append(
            tree.Problem(1, "starts with a UTF-8 byte-order mark; read without it", fatal=False)
        )
    if lines.unterminated:
        found.append(
            tree.Problem(
                len(lines.records), "has no final newline; the next write adds it", fatal=False
            )
        )
    found += [tree.Problem(n, "ends with CRLF; read as LF", fatal=False) for n in lines.crlf]
    return found
