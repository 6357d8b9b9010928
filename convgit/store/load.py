"""The one load path of a session file and its sidecar: where byte-level quirks (a torn last line,
a byte-order mark, CRLF, a missing final newline, a header naming another session) become
tolerated problems beside what validation found, and where a file of an older format version
is brought to the current one (``migrations``). ``Session``, fsck and repair all read through
here, so they see the same file the same way.
"""

from __future__ import annotations

import gc

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
