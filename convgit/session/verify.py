"""Verification over files and what was loaded from them (never a Session): what ``fsck``
reports, and how ``repair`` moves bad lines aside.

Repair never edits or drops a line: a line fsck rejects, every entry that hangs below a
rejected entry, and every meta record pointing at one are moved, byte for byte, to the
quarantine file; the original file is kept as a timestamped backup; what remains is a file
fsck accepts. The sidecar of snapshot records is repaired the same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from convgit import schema
from convgit.base import codec
from convgit.conversation import tree
from convgit.store import jsonl, load
from convgit.store.sidecar import Sidecar


@dataclass(frozen=True)
class RepairReport:
    moved: int  # lines moved to a quarantine file
    backup: Path | None  # the original session file, kept (None when it needed no repair)
    new_header: bool
    records: int = 0  # saved states whose lost sidecar record was written again from their ref

    def to_json(self) -> dict[str, Any]:
        return {
            "moved": self.moved,
            "backup": str(self.backup) if self.backup else None,
            "new_header": self.new_header,
            "records": self.records,
        }


def problems(found: tree.Tree, sidecar: Sidecar) -> list[tree.Problem]:
    """Everything fsck reports of a session's tree and sidecar, fatal and tolerated, in line
    order."""
    listed = list(found.problems) + sidecar.problems
    if not found.fatal:
        listed += _orphan_tool_results(found)
        listed += [
            tree.Problem(
                None,
                f"has a snapshot of entry {entry} (in the sidecar), which is not in it",
                fatal=False,
            )
            for entry in sidecar.snapshots
            if entry not in found.entries
        ]
    return sorted(listed, key=lambda p: (p.line or 0, p.what))


def repair(file: jsonl.JsonlFile, sidecar_file: jsonl.JsonlFile, sid: str) -> RepairReport:
    """Repair the session file ``sid``, then its sidecar, each under its lock, read through the
    one load path (``convgit.store.load``)."""
    with file.lock():
        lines, found = load.session(file, sid)
        header = None
        if found.header is None:
            header = codec.encode(schema.header(sid, str(Path.cwd()))).rstrip(b"\n")
        moved, backup = _move_aside(file, lines, _with_dependents(found), found.problems, header)
    if sidecar_file.path.exists():
        with sidecar_file.lock():
            lines, sidecar = load.sidecar(sidecar_file)
            bad = {p.line for p in sidecar.problems if p.fatal and p.line is not None}
            moved += _move_aside(sidecar_file, lines, bad, sidecar.problems)[0]
    return RepairReport(moved, backup, header is not None)


def _with_dependents(found: tree.Tree) -> set[int]:
    """The bad lines, the entries below a bad entry, and meta records pointing at either."""
    bad = set(found.bad_lines)
    removed = {i for i, n in found.lines.items() if n in bad}
    queue = list(removed)
    while queue:  # entries below a quarantined entry would lose their parent
        for child in found.children.get(queue.pop(), []):
            if child not in removed:
                removed.add(child)
                queue.append(child)
    bad |= {found.lines[i] for i in removed}
    for number, target in (*found.leaf_records, *found.label_records, *found.kept_records):
        if target in removed or target not in found.entries:
            bad.add(number)
    return bad


def _move_aside(
    file: jsonl.JsonlFile,
    lines: jsonl.Lines,
    bad: set[int],
    found: list[tree.Problem],
    header: bytes | None = None,
) -> tuple[int, Path | None]:
    """Quarantine ``bad`` lines (and a torn tail) and replace the file; call with its lock."""
    moved = [
        jsonl.quarantine_record(n, lines.raw[n - 1], _reason(found, n))
        for n in sorted(bad)
        if n <= len(lines.raw)
    ]
    if lines.torn is not None:
        moved.append(jsonl.quarantine_record(len(lines.raw) + 1, lines.torn, "torn last line"))
    if not moved and header is None and not lines.bom:
        return 0, None
    keep = [line for n, line in enumerate(lines.raw, 1) if n not in bad]
    if header is not None:
        keep.insert(0, header)
    return len(moved), jsonl.replace_with(file, keep, moved)


def _reason(found: list[tree.Problem], number: int) -> str:
    for problem in found:
        if problem.line == number and problem.fatal:
            return problem.sentence()
    return f"line {number} hangs off a quarantined entry"


def _orphan_tool_results(found: tree.Tree) -> list[tree.Problem]:
    """Tool results whose call is nowhere in the session: tolerated (replay drops them). Only
    a session with tool results has its assistant messages' calls gathered: one look at each
    entry for a ``toolCallId`` is all most sessions cost."""
    entries = found.entries
    results = [
        (ident, record)
        for ident, record in entries.items()
        if "toolCallId" in record and record["type"] == "message" and record["role"] == "tool"
    ]
    if not results:
        return []
    calls: set[str] = set()
    for record in entries.values():
        if (
            type(record.get("content")) is list
            and record["type"] == "message"
            and record["role"] == "assistant"
        ):
            calls.update(schema.tool_call_ids(record))
    return [
        tree.Problem(
            found.lines[ident],
            f"is a tool result for call {record['toolCallId']}, which no assistant message made;"
            " replay drops it",
            ident,
            fatal=False,
        )
        for ident, record in results
        if record["toolCallId"] not in calls
    ]
