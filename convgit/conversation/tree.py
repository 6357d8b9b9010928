"""The conversation tree, as pure functions over raw records: index, validate, path (references
and the places they lead to are in ``convgit.conversation.refs``).

Nothing here reads a file or knows git. ``Tree.add`` takes records in file order, so loading is
one linear pass (a dict per id, no searching), and a writer that finds new lines under its lock
adds just those. Validation never guesses: every problem is recorded with its line number, and
``check`` refuses a tree with a fatal problem, so replay never returns a plausible but wrong path.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import field
from itertools import chain, islice
from typing import Any

from convgit.base.errors import CorruptStoreError, UnsupportedVersionError
from convgit.base.valueclass import valueclass
from convgit.conversation import refs
from convgit.schema import (
    FORMAT_VERSION,
    HEADER_FIELDS,
    META_FIELDS,
    fields_error,
    kind_error,
    message_parts_error,
)


@valueclass(frozen=True)
class Problem:
    """One thing wrong with a store. ``fatal`` problems stop replay; others are tolerated."""

    line: int | None
    what: str
    entry: str | None = None
    fatal: bool = True

    def sentence(self) -> str:
        where = f"line {self.line}" if self.line is not None else "the file"
        about = f" (entry {self.entry})" if self.entry else ""
        return f"{where}{about} {self.what}"


_NO_ENTRY = object()  # "no entry before this one": equal to no parentId, not even null
# the kinds ``_add_fast`` checks itself (a compaction goes the careful way: ``finish`` needs it)
_FAST_KINDS = frozenset(
    {"message", "note", "model", "thinking", "system", "branch_summary", "custom"}
)
_NEAR = (64, 4096)  # how far above an entry ``path`` looks for its parent before using ``lines``


def _add_fast(
    tree: Tree,
    records: Iterable[Any],
    number: int,
    previous: object,
    leaf: str | None,
    checked: bool = False,
) -> None:
    """``Tree.add_records``'s loop: the lines after line ``number``, ``previous`` being the id of
    the last entry indexed and ``leaf`` the active leaf. A valid entry whose id is new costs its
    check, written out here without a call, and two dict stores; anything else (compactions,
    which ``finish`` needs noted, included) goes to ``tree._careful``, which records exactly what
    is wrong or indexes an entry it accepted after all. A valid ``native`` record (an agent's
    line an import kept: most lines of an imported session) is noted here too. Each check is
    true only when ``schema.kind_error`` finds nothing wrong: tests/test_loading.py holds them
    to that. ``checked``: ``schema.kind_error`` found nothing wrong with any of the records, so
    an entry of a kind checked here needs only the fields every entry has looked at."""
    entries, starts, forward, careful = tree.entries, tree._starts, tree._forward, tree._careful
    kept, kept_records, mark_run = tree.kept, tree.kept_records, tree._mark_run
    for r in records:
        number += 1
        try:
            kind = r["type"]
            if kind == "native":
                if (
                    "parentId" not in r
                    and type(key := r["key"]) is str
                    and ((at := r["at"]) is None or type(at) is str)
                    and type(r["ts"]) is str
                    and ("text" not in r or type(r["text"]) is str)
                    and ("base64" not in r or type(r["base64"]) is str)
                ):
                    kept.setdefault(key, r)
                    if at is not None:
                        kept_records.append((number, at))
                    mark_run(number + 1)
                    continue
                ok = False
            elif not (
                type(ident := r["id"]) is str
                and ident != ""
                and ((parent := r["parentId"]) is None or type(parent) is str)
                and type(r["ts"]) is str
            ):
                ok = False
            elif checked:
                ok = kind in _FAST_KINDS
            elif kind == "message":
                ok = (
                    ("toolCallId" not in r or type(r["toolCallId"]) is str)
                    and ("isError" not in r or type(r["isError"]) is bool)
                    and (
                        (role := r["role"]) == "user"
                        or role == "assistant"
                        or (role == "tool" and type(r.get("toolCallId")) is str)
                    )
                    and (
                        type(content := r["content"]) is str
                        or (type(content) is list and message_parts_error(content) is None)
                    )
                )
            elif kind == "note":
                ok = type(r["text"]) is str and ("source" not in r or type(r["source"]) is str)
            elif kind == "model":
                ok = type(r["provider"]) is str and type(r["model"]) is str
            elif kind == "thinking":
                ok = (level := r["level"]) is None or type(level) is str or type(level) is int
            elif kind == "system":
                ok = (text := r["text"]) is None or type(text) is str
            elif kind == "branch_summary":
                ok = type(r["fromId"]) is str and type(r["summary"]) is str
            elif kind == "custom":
                ok = type(r["kind"]) is str
            else:
                ok = False
        except (KeyError, TypeError):
            ok = False
        if ok and ident not in entries:
            if parent != previous:
                starts.append(len(entries))
                if parent is not None and parent not in entries:
                    forward.append((ident, number))  # only these can lack a parent or loop
            entries[ident] = r
            leaf = previous = ident
            continue
        tree.leaf = leaf
        careful(number, r)
        leaf = tree.leaf
        previous = next(reversed(entries), _NO_ENTRY)
    tree.leaf = leaf


@valueclass
class Tree:
    """Every entry of one session, indexed, with the active leaf, labels and problems found."""

    header: dict[str, Any] | None = None
    entries: dict[str, dict[str, Any]] = field(default_factory=dict)
    leaf: str | None = None
    labels: dict[str, str] = field(default_factory=dict)
    name: str | None = None
    problems: list[Problem] = field(default_factory=list)
    bad_lines: set[int] = field(default_factory=set)
    leaf_records: list[tuple[int, str]] = field(default_factory=list)
    label_records: list[tuple[int, str]] = field(default_factory=list)
    # an agent's records kept beside the entries, by key; where each import of a file got to
    kept: dict[str, dict[str, Any]] = field(default_factory=dict)
    kept_records: list[tuple[int, str]] = field(default_factory=list)
    imports: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    # (agent, agent session id) of the other agent sessions this one mirrors: resumed, forked
    agent_sessions: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    redactions: list[dict[str, Any]] = field(default_factory=list)  # what `redact` rewrote
    # the older format version the file was read from through its migrations (else None)
    read_from_version: int | None = None
    # positions in ``entries`` of the entries whose parent is not the entry just before them
    _starts: list[int] = field(default_factory=list)
    # position and line of the first entry of each run of entries on consecutive lines
    _run_positions: list[int] = field(default_factory=list)
    _run_lines: list[int] = field(default_factory=list)
    _lines: dict[str, int] = field(default_factory=dict)
    _ids: list[str] = field(default_factory=list)
    _children: dict[str | None, list[str]] | None = None
    # (id, line) of entries whose parent came later or never, and of compactions
    _forward: list[tuple[str, int]] = field(default_factory=list)
    _compactions: list[tuple[str, int]] = field(default_factory=list)

    # -- building -----------------------------------------------------------------------------

    def add(self, number: int, record: Any) -> None:
        """Take one parsed line (line 1 is the header)."""
        self.add_records([record], number)

    def add_many(self, parsed: Iterable[tuple[int, Any]]) -> None:
        """Take parsed lines, numbered, in file order."""
        run: list[Any] = []
        first = 0
        for number, record in parsed:
            if run and number != first + len(run):
                self.add_records(run, first)
                run = []
            if not run:
                first = number
            run.append(record)
        if run:
            self.add_records(run, first)

    def add_records(self, records: list[Any], first: int = 1, *, checked: bool = False) -> None:
        """Take parsed lines in file order, the first of them being line ``first`` (line 1 is
        the header). The common case, a valid new entry whose parent is the entry before it,
        costs the check of its kind, one dict lookup and one dict store;
        anything else takes the careful path, which records exactly what is wrong (or indexes
        an entry it accepted after all). ``checked``: the writer found ``schema.kind_error``
        had nothing to say about any of them (an import's batch), so their fields are not
        checked twice; the tree is the same."""
        self._mark_run(first)
        rest: Iterable[Any] = records
        if first == 1 and records:
            self._careful(1, records[0])
            rest = islice(records, 1, None)
            first = 2
        previous = next(reversed(self.entries), _NO_ENTRY)
        _add_fast(self, rest, first - 1, previous, self.leaf, checked)
        self._children = None

    def _careful(self, number: int, record: Any) -> None:
        self._add_checked(number, record)
        self._mark_run(number + 1)

    def _mark_run(self, line: int) -> None:
        """The next entry, if it is on ``line``, starts a run of entries on consecutive lines."""
        if self._run_positions and self._run_positions[-1] == len(self.entries):
            self._run_lines[-1] = line
        else:
            self._run_positions.append(len(self.entries))
            self._run_lines.append(line)

    def _add_checked(self, number: int, record: Any) -> None:
        """The careful path: a header, a meta record, or a problem; indexes an entry it accepts."""
        if number == 1:
            record = self._add_header(record)
            if record is not None:
                self._index(number, record)
            return
        if type(record) is not dict:
            what = getattr(record, "reason", None) or "is not a JSON object"
            self._bad(number, what)
            return
        problem = kind_error(record)
        if problem is not None:
            self._bad(number, problem, record.get("id") if type(record.get("id")) is str else None)
            return
        kind = record["type"]
        if kind in META_FIELDS:
            self._add_meta(number, kind, record)
            return
        if "id" not in record:
            return  # a newer writer's meta record: kept in the file, ignored here
        ident = record["id"]
        if ident in self.entries:
            first = self.lines[ident]
            self._bad(number, f"repeats the id of line {first}", ident)
            return
        self._index(number, record)

    def _index(self, number: int, record: dict[str, Any]) -> None:
        ident = record["id"]
        parent = record["parentId"]
        if parent != next(reversed(self.entries), _NO_ENTRY):
            self._starts.append(len(self.entries))
        if parent is not None and parent not in self.entries:
            self._forward.append((ident, number))
        self.entries[ident] = record
        self.leaf = ident
        if record["type"] == "compaction":
            self._compactions.append((ident, number))

    @property
    def lines(self) -> dict[str, int]:
        """The line of every entry, built when first asked (loading does not need it)."""
        if len(self._lines) != len(self.entries):
            ends = [*self._run_positions[1:], len(self.entries)]
            runs = zip(self._run_lines, self._run_positions, ends, strict=True)
            numbers = chain.from_iterable(range(line, line + end - at) for line, at, end in runs)
            self._lines = dict(zip(self.entries, numbers, strict=True))
        return self._lines

    def _add_header(self, record: Any) -> dict[str, Any] | None:
        entry = type(record) is dict and record.get("type") != "session" and "id" in record
        if entry and kind_error(record) is None:  # the header is missing, not the entry: keep it
            self.problems.append(Problem(1, "is an entry: the session header is missing"))
            headless: dict[str, Any] = record
            return headless
        if type(record) is not dict or record.get("type") != "session":
            what = getattr(record, "reason", None) or "is not a session header"
            self._bad(1, f"{what}; the first line must be the session header")
            return None
        version = record.get("v")
        if type(version) is int and version != FORMAT_VERSION:
            raise UnsupportedVersionError(
                f"This session was written in format v{version}; this convgit reads v"
                f"{FORMAT_VERSION} only.",
                "upgrade convgit" if version > FORMAT_VERSION else "no convgit writes that format",
            )
        problem = fields_error(record, HEADER_FIELDS)
        if problem is None and version != FORMAT_VERSION:
            problem = f"has an unknown format version {version!r}"
        if problem is not None:
            self._bad(1, f"is a session header that {problem}")
            return None
        self.header = record
        return None

    def _add_meta(self, number: int, kind: str, record: dict[str, Any]) -> None:
        if kind == "leaf":
            self.leaf = record["target"]
            self.leaf_records.append((number, record["target"]))
        elif kind == "label":
            target, name = record["target"], record["label"]
            self.label_records.append((number, target))
            if name is None:
                self.labels.pop(target, None)
            else:
                self.labels[target] = name
        elif kind == "native":
            self.kept.setdefault(record["key"], record)
            if record["at"] is not None:
                self.kept_records.append((number, record["at"]))
        elif kind == "import":
            self.imports[(record["agent"], record["source"])] = record
        elif kind == "agent_session":
            self.agent_sessions.setdefault((record["agent"], record["agentSession"]), record)
        elif kind == "redaction":
            self.redactions.append(record)
        else:
            self.name = record["name"]

    def _bad(self, number: int, what: str, entry: str | None = None) -> None:
        self.problems.append(Problem(number, what, entry))
        self.bad_lines.add(number)

    def finish(self, *, since: int = 0) -> Tree:
        """Check what needs the whole file: parents, cycles, leaf and label targets, compaction
        anchors. ``since``: only entries and meta records from that line on (an incremental add,
        on a tree with no fatal problem: a line that names an entry before it is written may
        close a parent cycle, which is looked for in the whole tree)."""
        if self.header is None and since == 0 and not any(p.line == 1 for p in self.problems):
            self.problems.append(Problem(None, "is empty: it has no session header"))
        entries = self.entries
        for ident, number in self._forward:
            parent = entries[ident]["parentId"]
            if number >= since and parent not in entries:
                self._bad(number, f"has a parent {parent} that does not exist", ident)
        for ident, number in self._compactions:
            kept = entries[ident]["firstKeptId"]
            if number < since or kept is None:
                continue
            if kept not in entries:
                self._bad(number, f"keeps from {kept}, which does not exist", ident)
            elif not self._before_on_path(kept, ident):
                self._bad(number, f"keeps from {kept}, which is not its ancestor", ident)
        if self._forward and (since == 0 or self._forward[-1][1] >= since):
            self._find_cycles()  # with every parent before its child, no cycle exists
        for number, target in self.leaf_records:
            if number >= since and target not in entries:
                self._bad(number, f"moves the leaf to {target}, which does not exist")
        for number, target in self.label_records:
            if number >= since and target not in entries:
                self._bad(number, f"labels {target}, which does not exist")
        for number, target in self.kept_records:
            if number >= since and target not in entries:
                self._bad(number, f"keeps an agent's record at {target}, which does not exist")
        return self

    def _before_on_path(self, ancestor: str, ident: str) -> bool:
        entries = self.entries
        node = entries[ident]["parentId"]
        for _ in range(len(entries)):  # bounded: the parent chain may loop in a broken file
            if node is None or node not in entries:
                return False
            if node == ancestor:
                return True
            node = entries[node]["parentId"]
        return False

    def _find_cycles(self) -> None:
        entries = self.entries
        state: dict[str, int] = {}  # 1 = on the walk being made, 2 = known to reach a root
        for start in entries:
            if start in state:
                continue
            walk: list[str] = []
            node: str | None = start
            while node is not None and node in entries and node not in state:
                state[node] = 1
                walk.append(node)
                node = entries[node]["parentId"]
            if node is not None and state.get(node) == 1:
                loop = walk[walk.index(node) :]
                first = min(loop, key=self.lines.__getitem__)
                self._bad(
                    self.lines[first],
                    f"is in a parent cycle of {len(loop)} entries ({' -> '.join(loop[:6])}"
                    + (" ...)" if len(loop) > 6 else ")"),
                    first,
                )
                for member in loop:
                    self.bad_lines.add(self.lines[member])
            for member in walk:
                state[member] = 2

    def tolerate(self, problem: Problem) -> None:
        self.problems.append(problem)

    # -- reading ------------------------------------------------------------------------------

    @property
    def fatal(self) -> list[Problem]:
        return [p for p in self.problems if p.fatal]

    def check(self, what: str = "This session") -> None:
        """Refuse (exit 3) when the tree has a fatal problem: replaying it could be wrong."""
        fatal = sorted(self.fatal, key=lambda p: p.line or 0)
        if fatal:
            extra = len(fatal) - 1
            more = f" (and {extra} more problem{'s' if extra > 1 else ''})" if extra else ""
            report = tuple(
                ("error: " if p.fatal else "warning: ") + p.sentence()
                for p in sorted(self.problems, key=lambda p: p.line or 0)
            )
            raise CorruptStoreError(
                f"{what} cannot be read safely: {fatal[0].sentence()}{more}.",
                "run `convgit fsck` for the full report and `convgit repair` to fix it",
                report,
            )

    @property
    def children(self) -> dict[str | None, list[str]]:
        if self._children is None:
            children: dict[str | None, list[str]] = {}
            for ident, record in self.entries.items():
                children.setdefault(record["parentId"], []).append(ident)
            self._children = children
        return self._children

    def newest_leaf(self, ident: str) -> str:
        """The newest deepest leaf of the subtree at ``ident`` (``refs.newest_leaf``)."""
        return refs.newest_leaf(self, ident)

    def open_tool_calls(self, ident: str) -> list[str]:
        """The tool calls still waiting for a result at ``ident`` (``refs.open_tool_calls``)."""
        return refs.open_tool_calls(self, ident)

    def path(self, leaf: str | None = None) -> list[str]:
        """Ids from the root to ``leaf`` (default: the active leaf). A run of entries that each
        follow their parent in the file is copied in one slice, so a long conversation costs a
        step per branch point, not per entry."""
        node = self.leaf if leaf is None else leaf
        if node is None:
            return []
        entries, ids, starts = self.entries, self._entry_ids(), self._starts
        runs: list[list[str]] = []
        length = 0
        end = self._position(node, len(ids))
        while True:
            start = starts[bisect_right(starts, end) - 1]  # the first entry is always a start
            runs.append(ids[start : end + 1])
            length += end + 1 - start
            if length > len(entries):
                raise CorruptStoreError("The parent chain loops.", "convgit fsck")
            parent = entries[ids[start]]["parentId"]
            if parent is None:
                break
            end = self._position(parent, start)
        return list(chain.from_iterable(reversed(runs)))

    def _entry_ids(self) -> list[str]:
        if len(self._ids) != len(self.entries):
            self._ids = list(self.entries)
        return self._ids

    def _position(self, ident: str, before: int) -> int:
        """Where ``ident`` is in ``entries``: looked for just above ``before`` (a parent is
        usually close above its child), else found by its line; KeyError if it is no entry."""
        ids = self._entry_ids()
        if before and ids[before - 1] == ident:  # the active leaf is usually the last entry
            return before - 1
        for near in _NEAR:
            try:
                return ids.index(ident, before - near if before > near else 0, before)
            except ValueError:
                if near >= before:
                    break
        line = self.lines[ident]
        run = bisect_right(self._run_lines, line) - 1
        return self._run_positions[run] + line - self._run_lines[run]

    def resolve(self, ref: str) -> str:
        """An entry id from a reference (``refs.resolve``: ``@``, ``@~N``, ``root``, ``:N``, a
        label, a unique id prefix, ``X~N``)."""
        return refs.resolve(self, ref)


def build(parsed: Iterable[tuple[int, Any]]) -> Tree:
    """Index and validate numbered parsed lines in one pass."""
    tree = Tree()
    tree.add_many(parsed)
    return tree.finish()


def build_records(records: list[Any], first: int = 1) -> Tree:
    """Index and validate parsed lines (``store.Lines.records``) in one pass."""
    tree = Tree()
    tree.add_records(records, first)
    tree._entry_ids()  # the index ``path`` slices, made with the rest of the load
    return tree.finish()
