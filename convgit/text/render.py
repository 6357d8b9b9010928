"""What a person sees: one-line entries, the tree drawing, status in words, changes.

rich is imported only to print in colour on a terminal: piped, plain text and ``--json`` never
pay for it (a per-turn hook runs convgit hundreds of times a session)."""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from convgit.base import codec
from convgit.conversation import tree as tree_mod
from convgit.schema import tool_calls_of
from convgit.text import layout

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

    from convgit.conversation.view import SessionView
    from convgit.session.restoring import RestoreResult
    from convgit.session.snapshots import Status
    from convgit.store.sidecar import SavedState, SnapshotInfo
    from convgit.workspace import Change

SNAPSHOT_MARK = "◆"
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

    def cut(self, width: int) -> Styled:
        """This line in at most ``width`` terminal columns: a longer one ends in ``…``."""
        if columns(self.plain) <= width:
            return self
        out, room = Styled(style=self.style), max(width - 1, 0)
        for text, style in self.spans:
            kept = ""
            for char in text:
                size = columns(char)
                if size > room:
                    break
                kept, room = kept + char, room - size
            else:
                out.append(kept, style)
                continue
            out.append(kept + "…", style)
            break
        return out

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


def columns(text: str) -> int:
    """How many terminal columns ``text`` takes (wide East Asian characters take two)."""
    if text.isascii():
        return len(text)
    import unicodedata

    return sum(
        0
        if unicodedata.combining(char)
        else 2
        if unicodedata.east_asian_width(char) in ("W", "F")
        else 1
        for char in text
    )


def _join(outer: str, inner: str) -> str:
    return f"{outer} {inner}".strip()


def colour(stream: Any) -> bool:
    """True when ``stream`` is a terminal (or FORCE_COLOR asks for colour anyway)."""
    isatty = getattr(stream, "isatty", None)
    return bool(os.environ.get("FORCE_COLOR")) or (isatty is not None and isatty())


def console(stderr: bool = False) -> Console:
    from rich.console import Console

    class Shown(Console):
        def on_broken_pipe(self) -> None:
            # a reader that quit (the pager): convgit's output module decides the exit code
            self.quiet = True
            raise BrokenPipeError(errno.EPIPE, os.strerror(errno.EPIPE))

    return Shown(stderr=stderr, highlight=False, soft_wrap=True)


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
        agent = record.get("agent")
        if isinstance(agent, str):  # an agent other than the session's wrote it (a handoff)
            head += f" ({agent})"
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
    view: SessionView,
    ident: str,
    *,
    on_path: bool,
    files_at: str | None = None,
    width: int | None = None,
    marks_first: bool = False,
) -> Styled:
    """An entry in one line: its short id, what it is, its label, ◆ when it has a snapshot,
    ``← files`` and ``← context``. With ``width``, its text gives way (ending in ``…``) so the
    line fits and the marks stay; ``marks_first`` puts the marks before the text (where a
    narrow pane never cuts them)."""
    record = view.entries[ident]
    marks = Styled()
    label = view.labels.get(ident)
    if label and not marks_first:
        marks.append(f" [{label}]", style="cyan")
    if ident in view.snapshots:
        marks.append(f" {SNAPSHOT_MARK}", style="magenta")
    if ident == files_at:
        marks.append(" ← files", style="bold magenta")
    if ident == view.leaf:
        marks.append(" ← context", style="bold green")
    if label and marks_first:  # the arrows first: a long label is what a narrow pane cuts
        marks.append(f" [{label}]", style="cyan")
    line = Styled()
    line.append(view.short_id(ident), style="yellow" if on_path else "dim yellow")
    if marks_first:
        line.append_text(marks)
    line.append(" ")
    said = summary(record)
    if width is not None:
        room = width - columns(line.plain) - (0 if marks_first else columns(marks.plain))
        if columns(said) > room:
            said = Styled(said).cut(max(room, 2)).plain
    line.append(said, style="bold" if on_path else "dim")
    if not marks_first:
        line.append_text(marks)
    return line


def note_line(view: SessionView, ident: str) -> Styled:
    """The line a write that told restores prints under its entry: the note above it."""
    return Styled("above it: ").append_text(entry_line(view, ident, on_path=True))


class Names:
    """How a command names entries where people read: by short id, with the label beside it
    (``7ba30997 [planB]``). Without a view, ids are shown whole (``--json`` keeps them so)."""

    def __init__(self, view: SessionView | None = None) -> None:
        self._view = view
        self._labels: Mapping[str, str] = {} if view is None else view.labels

    def id(self, ident: str) -> str:
        return ident if self._view is None else self._view.short_id(ident)

    def label_or_id(self, ident: str) -> str:
        """The entry as a command takes it: its label, else its short id."""
        return self._labels.get(ident) or self.id(ident)

    def named(self, ident: str) -> str:
        label = self._labels.get(ident)
        return self.id(ident) + (f" [{label}]" if label else "")


def draw_tree(
    view: SessionView,
    children: Mapping[str | None, list[str]],
    path: Sequence[str],
    files_at: str | None = None,
    depth: int | None = None,
    *,
    width: int | None = None,
    stable: bool = False,
) -> Styled:
    """The whole tree (each entry's ``children``), drawn as ``layout.rows`` places it. The
    active ``path`` is bold and listed first at each fork (with ``stable``, branches stay in
    the order they were written, wherever the context is), the rest dim. With ``depth``, only
    entries below at most ``depth`` forks (``layout.Row.depth``) are drawn; each branch left out
    is counted on one line where it starts. With ``width``, an entry's text gives way so its
    line fits and its marks stay."""
    title = f"session {view.id}" + (f" — {view.name}" if view.name else "")
    out = Styled(title, style="bold")
    on_path = set(path)
    hidden: list[layout.Row] = []
    limit = -1 if depth is None else depth

    def counted() -> None:
        if not hidden:
            return
        n, heads = len(hidden), sum(1 for row in hidden if row.head and row.depth == limit + 1)
        words = f"… {n} more entr{'y' if n == 1 else 'ies'} in {heads} branch"
        words += "" if heads == 1 else "es"
        marks = [
            mark
            for mark, at in ((" ← files", files_at), (" ← context", view.leaf))
            if any(row.entry == at for row in hidden)
        ]
        prefix = hidden[0].prefix[:-3] + "└─ "  # one line stands for every hidden branch
        out.append("\n" + prefix, style="dim").append(words, style="dim")
        out.append("".join(marks), style="bold")
        hidden.clear()

    for row in layout.rows(children, on_path, stable=stable):
        if depth is not None and row.depth > limit:
            hidden.append(row)
            continue
        counted()
        out.append("\n" + row.prefix, style="dim")
        room = None if width is None else width - columns(row.prefix)
        out.append_text(
            entry_line(view, row.entry, on_path=row.entry in on_path, files_at=files_at, width=room)
        )
    counted()
    return out


def fitted(drawn: Styled, width: int | None) -> list[Styled]:
    """``drawn``'s lines, each cut to ``width`` columns with an ellipsis (None: whole)."""
    lines: list[Styled] = [Styled(style=drawn.style)]
    for text, style in drawn.spans:
        first, *rest = text.split("\n")
        if first:
            lines[-1].append(first, style)
        for part in rest:
            lines.append(Styled(style=drawn.style))
            if part:
                lines[-1].append(part, style)
    return lines if width is None else [line.cut(width) for line in lines]


def log_lines(view: SessionView, ids: list[str], files_at: str | None = None) -> list[Styled]:
    return [entry_line(view, i, on_path=True, files_at=files_at) for i in ids]


def status_words(status: Status, names: Names | None = None, *, verbose: bool = False) -> list[str]:
    """Both tracks in words, every time; entries by ``names`` (default: whole ids). How
    snapshots find changed files only when ``verbose`` or when the watcher fell back."""
    watcher = status.watcher
    shown = verbose or (watcher is not None and bool(watcher.get("note")))
    return [*_status_words(status, names), *(watcher_words(watcher) if shown else [])]


def watcher_words(watcher: dict[str, str | None] | None) -> list[str]:
    """How snapshots find what changed, and why they fell back to stat'ing every file."""
    if watcher is None:
        return []
    path, setting, note = watcher["path"], watcher["setting"], watcher["note"]
    if note:
        return [f"watcher: fell back to stat'ing every file: {note}"]
    if path == "watchman":
        return [
            "watcher: watchman, through the recorder (a snapshot hashes only what changed;"
            " without a recorder it stats every file)"
        ]
    if path == "hook":
        return [f"watcher: the fsmonitor hook {setting}"]
    return ["watcher: off (a snapshot stats every file)"]


def _status_words(status: Status, names: Names | None = None) -> list[str]:
    n = Names() if names is None else names
    out: list[str] = []
    name = f" ({status.name})" if status.name else ""
    leaf = n.named(status.leaf) if status.leaf else "(empty)"
    out.append(f"session {status.session}{name}")
    out.append(f"context: at {leaf}")
    if not status.workspace:
        out.append("files:   not tracked (no git repository; the workspace track is off)")
        return out
    if not status.sidecar and not status.leaf_snapshot:
        out.append("files:   snapshots are off (`convgit snapshots on` to record them)")
    out += interrupted_lines(status.interrupted, status.session)
    if status.not_recorded is not None:
        entry, error = n.id(str(status.not_recorded["entry"])), str(status.not_recorded["error"])
        out.append(
            f"warning: the files of entry {entry} were not recorded ({error.rstrip('.')});"
            f" `convgit snapshot {entry}` tries again"
        )
    if status.snapshot_skipped is not None:
        from convgit.base.errors import skipped_words

        skipped = status.snapshot_skipped
        entry = n.id(str(skipped["entry"]))
        out.append(
            f"warning: {skipped_words(entry, int(skipped['changed']), int(skipped['cap']))};"
            " that turn has no snapshot to restore, and later turns are skipped too while those"
            " files stay new or changed: ignore them in .gitignore or raise the cap in config.toml,"
            f" or `convgit snapshot {entry}` takes this one whatever the cap"
        )
    if status.files_error is not None:
        out.append(f"files:   cannot be read now: {status.files_error}")
        return out
    if status.leaf_snapshot is None:
        out.append("files:   no snapshot on this branch yet")
        if status.matches:
            where = "further down this branch" if status.further_down else "on another branch"
            out.append(
                f"         the files are at the snapshot of {n.named(status.matches)}, {where}"
            )
            if status.further_down:
                out.append(f"         {ahead_words(leaf)}")
        return out
    where = f"the snapshot of {n.named(status.leaf_snapshot)}"
    if status.matches is not None and status.further_down:
        out.append(
            f"files:   ahead of the context: at the snapshot of {n.named(status.matches)},"
            " further down this branch"
        )
        out.append(f"         {ahead_words(leaf)}")
    elif status.matches is not None and not status.diverged:
        if status.matches == status.leaf_snapshot:
            out.append(f"files:   match {where} exactly")
        else:
            out.append(
                f"files:   match the snapshot of {n.named(status.matches)}, earlier on this branch"
            )
    elif status.matches is not None:
        out.append(f"files:   at the snapshot of {n.named(status.matches)}, on another branch")
    else:
        out.append("files:   match no snapshot")
    if status.changed:
        count = len(status.changed)
        out.append(
            f"         {files(count)} {'differs' if count == 1 else 'differ'} from {where}:"
            f" {_names(status.changed)}"
        )
        out.append(
            f"         `convgit restore {n.id(status.leaf_snapshot)}` would change {files(count)}"
        )
    for alone in status.left_alone:
        out.append(f"         left alone ({alone['reason']}): {alone['path']}")
    if status.diverged:
        out.append(
            "warning: the context's branch and the files' snapshot are on different branches"
        )
    return out


def boundary_line(status: Status, names: Names | None = None) -> str:
    """The one line that ends switch/fork/edit/retry: files were not changed, and what differs."""
    ids = Names() if names is None else names
    if not status.workspace:
        return "files: not changed (no git repository here)"
    if status.leaf_snapshot is None:
        if status.matches is not None:
            return f"files: not changed; they are at the snapshot of {ids.named(status.matches)}"
        return "files: not changed (no snapshot on this branch to compare with)"
    n = len(status.changed)
    if n == 0:
        return f"files: not changed; they match the snapshot of {ids.named(status.leaf_snapshot)}"
    return (
        f"files: not changed; {files(n)} {'differs' if n == 1 else 'differ'} from the snapshot of "
        f"{ids.named(status.leaf_snapshot)} ({_names(status.changed)}); `convgit restore "
        f"{ids.id(status.leaf_snapshot)}` brings them back"
    )


def ahead_words(leaf: str, model: str = "the model") -> str:
    """What files ahead of the context mean for the next turn (after a resume or a switch back
    without a restore): said to the user, never to the model."""
    return (
        f"a turn from here starts from these files, and {model} is not told: its conversation"
        f" ends at {leaf}"
    )


def resume_files_line(status: Status, title: str, names: Names | None = None) -> str:
    """The line that ends a resume that changed no file: where the files are against REF (the
    leaf now), and that the agent's model is not told when they are not REF's."""
    ids = Names() if names is None else names
    if not status.workspace or status.leaf is None or not status.changed:
        return boundary_line(status, ids)
    n = len(status.changed)
    differ = f"{files(n)} {'differ' + 's' * (n == 1)}"
    ref = status.leaf_snapshot
    against = f"{differ} from the snapshot of {ids.named(ref)}" if ref else differ
    listed = _names(status.changed)
    if status.matches is not None:
        whose = "ahead of the context" if status.further_down else "another branch's"
        where = "further down this branch" if status.further_down else "on another branch"
        said = (
            f"files: not changed: they are {whose}, at the snapshot of"
            f" {ids.named(status.matches)}, {where} ({against}: {listed})"
        )
    else:
        said = f"files: not changed; {against} ({listed})"
    model = f"{title}'s model"
    said += f"; {ahead_words(ids.named(status.leaf), model)}"
    if ref is not None:
        said += f"; `convgit restore {ids.id(ref)}` brings its files back"
    return said


def files(n: int) -> str:
    return f"{n} file" if n == 1 else f"{n} files"


def _names(paths: list[str], limit: int = 5, total: int | None = None) -> str:
    """The first ``limit`` of ``paths``, and how many more of ``total`` (default: all of
    ``paths``; a record lists only the first of the files it counts)."""
    total = len(paths) if total is None else max(total, len(paths))
    shown = ", ".join(paths[:limit])
    return shown + (f", and {total - min(limit, len(paths))} more" if total > limit else "")


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


def restore_words(result: RestoreResult, names: Names | None = None) -> list[str]:
    n = Names() if names is None else names
    if result.undo and result.interrupted > 1:
        what = (
            f"the state before the {result.interrupted} interrupted restores, {result.saved_target}"
        )
    elif result.undo:
        what = f"the state before the last restore, {result.saved_target}"
    elif result.saved_target is not None:
        what = f"the saved state {result.saved_target}"
    else:
        what = f"the snapshot of {n.named(str(result.target))}"
    lines = changes_lines(result.changes)
    lines += [f"left alone: {s.path} ({_why(s.reason)})" for s in result.changes.left_alone]
    if result.agent_files:
        them = "it" if len(result.agent_files) == 1 else "them"
        lines.append(
            f"ignored by git, restored because the agent wrote {them}:"
            f" {_names(list(result.agent_files))}"
        )
    replaced = result.changes.replaced
    already = f"the files already are {what}"
    if result.changes.left_alone:  # what differs is left alone: the files are not the target
        already = f"what differs from {what} is left alone"
    if result.dry_run:
        if not result.changes:
            return [f"nothing to restore: {already}", *lines]
        head = f"would restore {files(len(result.changes))} to {what} (dry run, nothing changed)"
        if replaced:
            lines.append(
                f"it replaces {files(len(replaced))} changed since that restore, saving them"
                f" first: {_names(list(replaced))}"
            )
        return [head, *lines]
    if result.before is None:
        return [f"nothing to restore: {already} (nothing saved)", *lines]
    head = f"restored {files(len(result.changes))} to {what}"
    if replaced:
        lines.append(
            f"replaced {files(len(replaced))} changed since that restore (kept in"
            f" {result.saved}): {_names(list(replaced))}"
        )
    if result.note is not None:
        lines.append(
            "the model will be told where the files are by a note above the next user message"
        )
    elif result.note_skipped:
        lines.append(result.note_skipped)
    tail = f"saved the previous state as {result.saved}: `convgit restore --undo` returns"
    return [head, *lines, tail]


def _why(reason: str) -> str:
    """A left-alone reason without the words its line starts with."""
    return reason.removesuffix(", left alone").removesuffix("; left alone")


def interrupted_lines(chain: Sequence[SavedState], session: str) -> list[str]:
    """``status``'s warning about restores that never finished (newest first in ``chain``)."""
    if not chain:
        return []
    first = chain[-1]
    if len(chain) == 1:
        what = "an undo was" if first.undo else "a restore was"
        before = "before it"
    else:
        what = f"{len(chain)} restores were"
        before = "before the first"
    done = ", then ".join(f"`{s.preceded}`{_elsewhere(s, session)}" for s in reversed(chain))
    return [
        f"warning: {what} interrupted ({done}), the files may be half-written;"
        f" `convgit restore --undo` returns them to the state {before}, {first.id}"
    ]


def saved_lines(saved: Sequence[SavedState], session: str) -> list[str]:
    """``convgit restores``: one line per saved state, newest first (``session``: the one
    running the command; the others' are named)."""
    if not saved:
        return ["no saved states yet (a restore saves the files before it changes them)"]
    out = []
    for state in saved:
        if not state.recorded or state.rebuilt:
            what = (
                "its record was lost; repair wrote it again from its ref"
                if state.rebuilt
                else "no record in the sidecar, found from its ref (`convgit repair` records it)"
            )
            out.append(f"{state.id}  {state.ts}  {what}{_elsewhere(state, session)}")
            continue
        count = sum(state.changed.values())
        names = _names(state.files, 3, count) if state.files else "no file"
        line = f"{state.id}  {state.ts}  before `{state.preceded}`: {files(count)} ({names})"
        if not state.finished:
            line += ", interrupted"
        out.append(line + _elsewhere(state, session))
    return out


def saved_state_lines(state: SavedState, session: str, names: Names | None = None) -> list[str]:
    """``convgit show saved:ID``: one saved state, as a person reads it."""
    ids = Names() if names is None else names
    lines = [f"saved state {state.id}{_elsewhere(state, session)}", f"commit  {state.commit}"]
    lines.append(f"time    {state.ts}")
    if not state.recorded or state.rebuilt:
        lines.append(
            "its record was lost; repair wrote it again from its ref"
            if state.rebuilt
            else "no record in the sidecar, found from its ref (`convgit repair` records it)"
        )
    else:
        if state.undo:
            went = "the state before the last restore"
        elif state.target:
            went = f"the saved state {state.target}"
        elif state.entry:
            went = f"the snapshot of {ids.named(state.entry)}"
        else:
            went = f"commit {state.restored_to[:12]}"
        lines.append(f"saved   before `{state.preceded}`, which brought the files to {went}")
        count = sum(state.changed.values())
        names_ = _names(state.files, 10, count) if state.files else "no file"
        lines.append(f"files   {files(count)} that restore changed: {names_}")
        if not state.finished:
            lines.append("that restore was interrupted: the files may have been half-written")
    lines.append(f"`convgit restore {state.id}` brings the files back to it")
    return lines


def _elsewhere(state: SavedState, session: str) -> str:
    return f" (session {state.session})" if state.session and state.session != session else ""


def snapshot_words(
    snap: SnapshotInfo, *, unchanged: bool = False, names: Names | None = None
) -> list[str]:
    entry = (Names() if names is None else names).id(snap.entry)
    head = f"snapshot {SNAPSHOT_MARK} {snap.commit[:12]} of {entry}: {files(snap.files)}"
    if unchanged:
        head += " (unchanged: the files are those of its snapshot)"
    elif snap.replaces:
        head += f" (its previous snapshot {snap.replaces[:12]} is kept as the parent)"
    out = [head]
    out += [f"  skipped {s['path']}: {s['reason']}" for s in snap.skipped]
    return out


def problem_lines(problems: list[tree_mod.Problem]) -> list[str]:
    return [("error: " if p.fatal else "warning: ") + p.sentence() for p in problems]
