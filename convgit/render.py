"""What a person sees: one-line entries, the tree drawing, status in words, changes.

rich is imported only to print in colour on a terminal: piped, plain text and ``--json`` never
pay for it (a per-turn hook runs convgit hundreds of times a session)."""

from __future__ import annotations

import os
import sys
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from convgit import codec, layout
from convgit.conversation import tree as tree_mod
from convgit.schema import tool_calls_of

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

    from convgit.agents.hooks import Change as HooksChange
    from convgit.agents.hooks import ScopeState
    from convgit.branching import Fork
    from convgit.resume import Resumed
    from convgit.session import RestoreResult, SessionView
    from convgit.session_files import Status
    from convgit.session_import import ImportResult
    from convgit.session_runs import RunReport
    from convgit.store.sidecar import SavedState, SnapshotInfo
    from convgit.workspace import Change

SNAPSHOT_MARK = "◆"
SHORT_ID = 8  # characters of a long id a listing shows
STATUS_LETTERS = {"added": "A", "modified": "M", "deleted": "D", "typechange": "T"}


class Styled:
    """A line of text with styles (rich's style words), shown in colour only on a terminal."""

    def __init__(self, text: str = "", style: str = "") -> None:
        self.style = style  # the whole line's style, as rich's Text(style=...)
        self.spans: list[tuple[str, str]] = [(text, "")] if text else []

    def append(self, text: str, style: str = "") -> Styled:
        self.spans.append((text, style))
        return self

    def append_text(self, other: Styled) -> Styled:
        self.spans += [(text, _join(other.style, style)) for text, style in other.spans]
        return self

    @property
    def plain(self) -> str:
        return "".join(text for text, _ in self.spans)

    def __str__(self) -> str:
        return self.plain

    def to_rich(self) -> Text:
        from rich.text import Text

        out = Text(style=self.style)
        for text, style in self.spans:
            out.append(codec.shown(text), style=style or None)
        return out


def _join(outer: str, inner: str) -> str:
    return f"{outer} {inner}".strip()


def colour(stream: Any) -> bool:
    """True when ``stream`` is a terminal (or FORCE_COLOR asks for colour anyway)."""
    isatty = getattr(stream, "isatty", None)
    return bool(os.environ.get("FORCE_COLOR")) or (isatty is not None and isatty())


def console(stderr: bool = False) -> Console:
    from rich.console import Console

    return Console(stderr=stderr, highlight=False, soft_wrap=True)


def print_lines(lines: Sequence[Any], stream: Any = None) -> None:
    """Print through rich on a terminal; elsewhere write the plain text, without importing it."""
    stream = sys.stdout if stream is None else stream
    if colour(stream):
        shown = console(stderr=stream is sys.stderr)
        for line in lines:
            # plain strings carry paths and messages: never read them as rich markup
            text = line.to_rich() if isinstance(line, Styled) else codec.shown(str(line))
            shown.print(text, markup=False)
        return
    stream.write(codec.shown("".join(f"{line}\n" for line in lines)))
    stream.flush()


def summary(record: dict[str, Any], width: int = 72) -> str:
    """One line that says what an entry is."""
    kind = record.get("type")
    if kind == "message":
        content = record.get("content")
        if isinstance(content, str):
            text = content
        else:
            parts = content if isinstance(content, list) else []
            text = " ".join(
                str(p.get("text", "")) if p.get("type") == "text" else f"[{p.get('type')}]"
                for p in parts
                if isinstance(p, dict)
            )
            calls = [p.get("name") for p in tool_calls_of(record)]
            if calls:
                text = (text + " " if text else "") + "→ " + ", ".join(str(c) for c in calls)
        head = str(record.get("role"))
        if head == "tool":
            head = f"tool[{record.get('toolCallId')}]" + (" error" if record.get("isError") else "")
    elif kind == "model":
        head, text = "model", f"{record.get('provider')}/{record.get('model')}"
    elif kind == "thinking":
        head, text = "thinking", str(record.get("level"))
    elif kind == "system":
        prompt = record.get("text")
        head, text = "system prompt", "(none)" if prompt is None else str(prompt)
    elif kind == "compaction":
        head, text = "compaction", str(record.get("summary"))
    elif kind == "branch_summary":
        head, text = "branch summary", str(record.get("summary"))
    elif kind == "note":
        head, text = f"note ({record.get('source', 'convgit')})", str(record.get("text"))
    elif kind == "custom":
        head, text = f"custom {record.get('kind')}", ""
    else:
        head, text = f"{kind}", ""
    text = " ".join(text.split())
    if len(text) > width:
        text = text[: width - 1] + "…"
    return f"{head}: {text}" if text else head


def entry_line(
    view: SessionView, ident: str, *, on_path: bool, files_at: str | None = None
) -> Styled:
    record = view.entries[ident]
    line = Styled()
    line.append(shown_id(view.entries, ident), style="yellow" if on_path else "dim yellow")
    line.append(" ")
    line.append(summary(record), style="bold" if on_path else "dim")
    label = view.labels.get(ident)
    if label:
        line.append(f" [{label}]", style="cyan")
    if ident in view.snapshots:
        line.append(f" {SNAPSHOT_MARK}", style="magenta")
    if ident == files_at:
        line.append(" ← files", style="bold magenta")
    if ident == view.leaf:
        line.append(" ← context", style="bold green")
    return line


def shown_id(ids: Collection[str], ident: str) -> str:
    """How a listing shows an id among the session's ``ids``: a long one (an agent's uuid) by
    its first ``SHORT_ID`` characters, or as many more as it takes to name it alone (any prefix
    is a reference)."""
    if len(ident) <= SHORT_ID + 4:
        return ident
    return _abbreviations(ids).get(ident, ident)


_ABBREVIATED: dict[int, tuple[int, dict[str, str]]] = {}


def _abbreviations(known: Collection[str]) -> dict[str, str]:
    found = _ABBREVIATED.get(id(known))
    if found is not None and found[0] == len(known):
        return found[1]
    ids = sorted(known)
    shown: dict[str, str] = {}
    for at, ident in enumerate(ids):
        if len(ident) <= SHORT_ID + 4:
            continue
        neighbours = ids[max(0, at - 1) : at] + ids[at + 1 : at + 2]
        need = max([SHORT_ID, *(_shared(ident, n) + 1 for n in neighbours)])
        shown[ident] = ident[:need]
    _ABBREVIATED.clear()  # one tree is drawn per command
    _ABBREVIATED[id(known)] = (len(known), shown)
    return shown


def _shared(a: str, b: str) -> int:
    """How many leading characters two ids share."""
    for at, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return at
    return min(len(a), len(b))


def draw_tree(
    view: SessionView,
    children: Mapping[str | None, list[str]],
    path: Sequence[str],
    files_at: str | None = None,
) -> Styled:
    """The whole tree (each entry's ``children``), drawn as ``layout.rows`` places it. The
    active ``path`` is bold and listed first, the rest dim."""
    title = f"session {view.id}" + (f" — {view.name}" if view.name else "")
    out = Styled(title, style="bold")
    on_path = set(path)
    for row in layout.rows(children, on_path):
        out.append("\n" + row.prefix, style="dim")
        out.append_text(
            entry_line(view, row.entry, on_path=row.entry in on_path, files_at=files_at)
        )
    return out


def log_lines(view: SessionView, ids: list[str], files_at: str | None = None) -> list[Styled]:
    return [entry_line(view, i, on_path=True, files_at=files_at) for i in ids]


def status_words(status: Status) -> list[str]:
    """Both tracks in words, every time."""
    out: list[str] = []
    name = f" ({status.name})" if status.name else ""
    leaf = status.leaf or "(empty)"
    out.append(f"session {status.session}{name}")
    out.append(f"context: at {leaf}")
    if not status.workspace:
        out.append("files:   not tracked (no git repository; the workspace track is off)")
        return out
    if not status.sidecar and not status.leaf_snapshot:
        out.append("files:   snapshots are off (`convgit snapshots on` to record them)")
    if status.interrupted_restore is not None:
        before = str(status.interrupted_restore["before"])
        out.append(
            f"warning: a restore was interrupted; `convgit restore --undo` returns the files to"
            f" the saved state saved:{before[:12]}"
        )
    if status.not_recorded is not None:
        entry, error = status.not_recorded["entry"], str(status.not_recorded["error"])
        out.append(
            f"warning: the files of entry {entry} were not recorded ({error.rstrip('.')});"
            f" `convgit snapshot {entry}` tries again"
        )
    if status.files_error is not None:
        out.append(f"files:   cannot be read now: {status.files_error}")
        return out
    if status.leaf_snapshot is None:
        out.append("files:   no snapshot on this branch yet")
        if status.matches:
            out.append(
                f"         the files are at the snapshot of {status.matches}, on another branch"
            )
        return out
    where = f"the snapshot of {status.leaf_snapshot}"
    if status.matches is not None and not status.diverged:
        if status.matches == status.leaf_snapshot:
            out.append(f"files:   match {where} exactly")
        else:
            out.append(f"files:   match the snapshot of {status.matches}, earlier on this branch")
    elif status.matches is not None:
        out.append(f"files:   at the snapshot of {status.matches}, on another branch")
    else:
        out.append("files:   match no snapshot")
    if status.changed:
        n = len(status.changed)
        out.append(
            f"         {files(n)} {'differs' if n == 1 else 'differ'} from {where}:"
            f" {_names(status.changed)}"
        )
        out.append(f"         `convgit restore {status.leaf_snapshot}` would change {files(n)}")
    for alone in status.left_alone:
        out.append(f"         left alone ({alone['reason']}): {alone['path']}")
    if status.diverged:
        out.append(
            "warning: the context's branch and the files' snapshot are on different branches"
        )
    return out


def boundary_line(status: Status) -> str:
    """The one line that ends switch/fork/edit/retry: files were not changed, and what differs."""
    if not status.workspace:
        return "files: not changed (no git repository here)"
    if status.leaf_snapshot is None:
        if status.matches is not None:
            return f"files: not changed; they are at the snapshot of {status.matches}"
        return "files: not changed (no snapshot on this branch to compare with)"
    n = len(status.changed)
    if n == 0:
        return f"files: not changed; they match the snapshot of {status.leaf_snapshot}"
    return (
        f"files: not changed; {files(n)} {'differs' if n == 1 else 'differ'} from the snapshot of "
        f"{status.leaf_snapshot} ({_names(status.changed)}); `convgit restore "
        f"{status.leaf_snapshot}` brings them back"
    )


def files(n: int) -> str:
    return f"{n} file" if n == 1 else f"{n} files"


def _names(paths: list[str], limit: int = 5) -> str:
    shown = ", ".join(paths[:limit])
    return shown + (f", and {len(paths) - limit} more" if len(paths) > limit else "")


def changes_lines(changes: Sequence[Change], *, name_only: bool = False) -> list[str]:
    if name_only:
        return [c.path for c in changes]
    return [
        f"left alone ({c.reason}): {c.path}"
        if c.status == "left alone"
        else f"{STATUS_LETTERS.get(c.status, '?')} {c.path}"
        for c in changes
    ]


def stat_line(changes: Sequence[Change]) -> str:
    counts: dict[str, int] = {}
    for change in changes:
        counts[change.status] = counts.get(change.status, 0) + 1
    parts = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
    return f"{len(changes)} files changed" + (f" ({parts})" if parts else "")


def restore_words(result: RestoreResult) -> list[str]:
    if result.undo:
        what = f"the state before the last restore, {result.saved_target}"
    elif result.saved_target is not None:
        what = f"the saved state {result.saved_target}"
    else:
        what = f"the snapshot of {result.target}"
    lines = changes_lines(result.changes)
    lines += [f"left alone: {s.path} ({_why(s.reason)})" for s in result.changes.left_alone]
    replaced = result.changes.replaced
    if result.dry_run:
        if not result.changes:
            return [f"nothing to restore: the files already are {what}", *lines]
        head = f"would restore {files(len(result.changes))} to {what} (dry run, nothing changed)"
        if replaced:
            lines.append(
                f"it replaces {files(len(replaced))} changed since that restore, saving them"
                f" first: {_names(list(replaced))}"
            )
        return [head, *lines]
    if result.before is None:
        return [f"nothing to restore: the files already are {what} (nothing saved)", *lines]
    head = f"restored {files(len(result.changes))} to {what}"
    if replaced:
        lines.append(
            f"replaced {files(len(replaced))} changed since that restore (kept in"
            f" {result.saved}): {_names(list(replaced))}"
        )
    if result.note_skipped:
        lines.append(f"warning: {result.note_skipped}")
    tail = f"saved the previous state as {result.saved}: `convgit restore --undo` returns"
    return [head, *lines, tail]


def _why(reason: str) -> str:
    """A left-alone reason without the words its line starts with."""
    return reason.removesuffix(", left alone").removesuffix("; left alone")


def saved_lines(saved: Sequence[SavedState]) -> list[str]:
    """``convgit restores``: one line per saved state, newest first."""
    if not saved:
        return ["no saved states yet (a restore saves the files before it changes them)"]
    out = []
    for state in saved:
        names = _names(state.files, 3) if state.files else "no file"
        count = sum(state.changed.values())
        out.append(f"{state.id}  {state.ts}  before `{state.preceded}`: {files(count)} ({names})")
    return out


def snapshot_words(snap: SnapshotInfo, *, unchanged: bool = False) -> list[str]:
    head = f"snapshot {SNAPSHOT_MARK} {snap.commit[:12]} of {snap.entry}: {files(snap.files)}"
    if unchanged:
        head += " (unchanged: the files are those of its snapshot)"
    elif snap.replaces:
        head += f" (its previous snapshot {snap.replaces[:12]} is kept as the parent)"
    out = [head]
    out += [f"  skipped {s['path']}: {s['reason']}" for s in snap.skipped]
    return out


def problem_lines(problems: list[tree_mod.Problem]) -> list[str]:
    return [("error: " if p.fatal else "warning: ") + p.sentence() for p in problems]


def import_words(result: ImportResult, title: str) -> list[str]:
    """What an import of one file did, what it kept without interpreting, and its notes."""
    new = len(result.new)
    entry_word = "entry" if new == 1 else "entries"
    head = (
        f"{Path(result.source).name}: {new} new {entry_word} in session {result.session}"
        f" ({title} session {result.agent_session_id}), {result.entries} in all"
    )
    if result.skipped:
        head += f"; {result.skipped} already there"
    lines = [head]
    kept = result.report.kept
    if kept:
        counted = sorted(kept.items(), key=lambda item: (-len(item[1]), item[0]))
        lines.append(
            "  kept, not interpreted: " + ", ".join(f"{len(ls)} {kind}" for kind, ls in counted)
        )
    for line, what in result.report.notes:
        lines.append(f"  {'line ' + str(line) if line is not None else 'the file'} {what}")
    return lines


def dropped_lines(dropped: list[dict[str, Any]], target: str) -> list[str]:
    """One line per kind of thing a context or request body left out, naming the entries."""
    groups: dict[tuple[str, str], list[str]] = {}
    for item in dropped:
        idents = groups.setdefault((item["what"], item["why"]), [])
        if item["entry"] is not None:
            idents.append(str(item["entry"]))
    lines = []
    for (what, why), idents in groups.items():
        where = ""
        if idents:
            more = f" and {len(idents) - 5} more" if len(idents) > 5 else ""
            where = f" (entr{'y' if len(idents) == 1 else 'ies'} {', '.join(idents[:5])}{more})"
        lines.append(f"convgit: not sent to {target}: {what}{where}: {why}")
    return lines


def run_lines(view: SessionView, report: RunReport) -> list[Styled]:
    """A row per REF of a run: its label (else the REF), entry, how the command ended, how
    long it took and the entry's first line; below it the last lines of the output and the
    path of the log that holds all of it."""
    heads: list[tuple[str, str, str, str, str]] = []
    for row in report.rows:
        outcome = row.outcome
        if row.entry is None:
            name, ident, what = row.ref, "files", "the files of the working tree"
        else:
            name = view.labels.get(row.entry) or row.ref
            ident, what = row.entry, summary(view.entries[row.entry], width=60)
        ended = "timed out" if outcome.timed_out else f"exit {outcome.exit_code}"
        heads.append((name, ident, ended, f"{outcome.seconds:.2f} s", what))
    widths = [max(len(head[column]) for head in heads) for column in range(4)]
    out: list[Styled] = []
    for row, (name, ident, ended, took, what) in zip(report.rows, heads, strict=True):
        outcome = row.outcome
        style = "yellow" if outcome.timed_out else "green" if outcome.exit_code == 0 else "red"
        line = Styled(name.ljust(widths[0]), style="bold").append("  ")
        line.append(ident.ljust(widths[1]), style="yellow").append("  ")
        line.append(ended.ljust(widths[2]), style=style).append("  ")
        line.append(took.rjust(widths[3])).append("  ").append(what, style="dim")
        out.append(line)
        indent = " " * (widths[0] + 2)
        out += [Styled(f"{indent}│ {text}") for text in outcome.tail or ("(no output)",)]
        noted = f" (recorded as note {row.note})" if row.note else ""
        out.append(Styled(f"{indent}log: {outcome.log}{noted}", style="dim"))
    return out


def hooks_change_words(change: HooksChange, verb: str) -> list[str]:
    """What `convgit hooks install|uninstall` did to one settings file."""
    where = _shown_path(change.path)
    if verb == "install":
        events = ", ".join(change.events)
        head = (
            f"installed convgit's hooks in {where} ({len(change.events)} events: {events})"
            if change.changed
            else f"convgit's hooks are in {where} already; nothing changed"
        )
    else:
        head = (
            f"removed convgit's hooks from {where}; everything else in it is as it was"
            if change.changed
            else f"there are no convgit hooks in {where}; nothing changed"
        )
    lines = [head]
    if change.backup is not None:
        lines.append(f"the file as it was is kept as {_shown_path(change.backup)}")
    return lines


def hooks_status_words(
    found: dict[str, list[ScopeState]], on_path: str | None, log: str, report: dict[str, Any]
) -> list[str]:
    """`convgit hooks status`: every settings file, convgit on PATH, and the hook log."""
    lines = []
    for agent, states in found.items():
        lines.append(f"{agent} hooks:")
        for state in states:
            words = state.state if state.problem is None else f"{state.state}: {state.problem}"
            if state.state == "out of date":
                words += f" (`convgit hooks install {agent} --scope {state.scope}` updates it)"
            lines.append(f"  {state.scope:<8}{_shown_path(state.path)}: {words}")
    lines.append(
        f"convgit on PATH: {on_path}"
        if on_path
        else "convgit on PATH: not found; the hooks do nothing until it is"
    )
    counted = f"{report['events']} events, {report['problems']} problems"
    lines.append(f"hook log: {_shown_path(Path(log))} ({counted})")
    if report["last"]:
        lines.append(f"  last: {report['last']}")
    if report["last_problem"] and report["last_problem"] != report["last"]:
        lines.append(f"  last problem: {report['last_problem']}")
    return lines


def resume_words(result: Resumed, shown: str) -> list[str]:
    """What `convgit resume` wrote, and the command that continues there (``shown``: how the
    entry is listed)."""
    where = _shown_path(result.path)
    return [
        f"wrote a {result.title} session of the path to {shown} ({result.lines} lines): {where}",
        f"to continue there: {result.command.replace(str(result.path), where)}",
    ]


def _shown_path(path: Path) -> str:
    """A path as a person would type it here: from the current folder when it is below it,
    else from the home folder, else whole."""
    for base, shown in ((Path.cwd(), ""), (Path.home(), "~/")):
        try:
            return shown + path.relative_to(base).as_posix()
        except ValueError:
            continue
    return str(path)


def session_lines(found: list[dict[str, Any]]) -> list[str]:
    """A line per session of ``list_sessions``: current mark, id, name, size, leaf, when it was
    created, and where it comes from (the session and entry it was forked from, the agent's
    session it mirrors)."""
    out = []
    for s in found:
        mark = "*" if s["current"] else " "
        name = f"  {s['name']}" if s.get("name") else ""
        count = s["entries"]
        facts = [f"{count} entr{'y' if count == 1 else 'ies'}", f"leaf {s['leaf']}"]
        if s.get("created"):
            facts.append(f"created {_when(str(s['created']))}")
        source = s.get("source")
        if isinstance(source, dict):
            facts.append(f"forked from {source.get('session')} at {source.get('entry')}")
        if s.get("agent"):
            facts.append(f"mirrors {s['agent']} session {s.get('agent_session_id')}")
        problem = f"  ({s['error']})" if s.get("error") else ""
        out.append(f"{mark} {s['id']}{name}  {', '.join(facts)}{problem}")
    return out


def _when(ts: str) -> str:
    """An ISO 8601 UTC time as a listing shows it: to the minute."""
    return ts[:16].replace("T", " ") + " UTC" if ts.endswith("Z") and len(ts) >= 16 else ts


def branch_lines(
    view: SessionView, fork: Fork, path: Sequence[str], ref: str | None = None
) -> list[Styled]:
    """``convgit branches``: the fork point (bold when on the active ``path``), then a row per
    branch: its number (``*`` where the active leaf is), first entry and newest deepest leaf,
    how many entries lead there, the leaf's first line, the branch's labels and its newest
    snapshot."""
    ids = view.entries
    if fork.at is None:
        head = Styled("branches at the roots of the tree", style="bold")
    else:
        head = Styled("branches at ", style="bold").append_text(
            entry_line(view, fork.at, on_path=fork.at in set(path))
        )
    out = [head]
    for branch in fork.branches:
        line = Styled("* " if branch.active else "  ", style="bold green")
        line.append(f"{branch.number}  ", style="bold")
        line.append(shown_id(ids, branch.first), style="yellow")
        if branch.leaf != branch.first:
            line.append(" … ", style="dim").append(shown_id(ids, branch.leaf), style="yellow")
        count = f"{branch.length} entr{'y' if branch.length == 1 else 'ies'}"
        line.append(f"  {count}  ").append(summary(view.entries[branch.leaf], width=60))
        for label in branch.labels.values():
            line.append(f" [{label}]", style="cyan")
        if branch.snapshot is not None:
            line.append(f" {SNAPSHOT_MARK} {shown_id(ids, branch.snapshot)}", style="magenta")
        if branch.leaf == view.leaf:
            line.append(" ← context", style="bold green")
        out.append(line)
    if fork.branches:
        at = "" if ref is None else f"{ref} "
        out.append(Styled(f"`convgit switch {at}--branch N` goes to the end of branch N", "dim"))
    return out


def redact_lines(report: Any, described: str) -> list[str]:
    """What a redaction did (or would do): per session, the entries and other lines rewritten,
    the files of the store scrubbed, the snapshots rewritten and the page removed; then the run
    logs, what it did not cover, and how the old git objects go."""
    would = report.dry_run
    out = [] if report.sessions else ["no sessions here to redact"]
    for found in report.sessions:
        if not found.changed:
            out.append(f"session {found.session}: no match of {described}")
            continue
        verb = "would redact" if would else "redacted"
        count = found.matches + sum(found.files.values())
        out.append(
            f"session {found.session}: {verb} {count} match{'es' if count != 1 else ''} of"
            f" {described}"
        )
        out += [f"  entry {e}: {', '.join(fields)}" for e, fields in found.entries.items()]
        out += [f"  line {n} of the session file" for n in found.lines]
        out += [f"  {name}: {n} match{'es' if n != 1 else ''}" for name, n in found.files.items()]
        for ref, paths in found.snapshots.items():
            what = "saved state" if "/" in ref else "snapshot of"
            out.append(f"  {what} {ref}: {', '.join(paths) or 'rewritten (its parent was)'}")
        if found.page is not None:
            out.append(
                f"  {'would remove' if would else 'removed'} the page {Path(found.page).name}"
                " (`convgit html` writes it again)"
            )
        if found.agent is not None:
            out.append(
                f"  it mirrors {found.agent}: that agent's own transcript still holds the text"
            )
    for path, n in report.runs.items():
        out.append(f"run log {path}: {'would redact' if would else 'redacted'} {n}")
    out += [f"warning: {sentence}" for sentence in report.elsewhere]
    out += [
        f"warning: {path} in the working tree still holds a match (redact never changes your files)"
        for path in report.working_tree
    ]
    if report.rewrote_commits and not would:
        out.append(
            "the old snapshot commits are unreachable now: `git gc --prune=now` removes them"
            " from the repository"
        )
    if would:
        out.append("dry run: nothing was changed")
    return out
