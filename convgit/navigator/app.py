"""``convgit ui``: the tree on the left, the selected entry on the right, a key per move. Every
move goes through the same ``Session`` methods as the commands and says what it did in the
commands' words (``render``, ``reports``); a move that changes files asks first, listing what
would change as ``restore --dry-run`` does. The session file is followed: what another process
appends (an agent's hook, another shell) shows up in the tree."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Input, Static, Tree

from convgit.base.errors import ConvgitError, StoppedError, signal_name
from convgit.base.process_groups import STOPPING
from convgit.conversation import branching
from convgit.conversation.view import SessionView
from convgit.navigator import shape
from convgit.navigator.screens import Branches, Confirm, Help, shown
from convgit.navigator.treepane import ConversationTree
from convgit.session import Session
from convgit.text import readable, render, reports

# (key, what it does): the footer shows the short words, ``?`` and the README these
KEYS: list[tuple[str, str]] = [
    ("↑ ↓", "move"),
    ("← →, space", "fold and unfold a branch"),
    ("/", "search text, ids, labels, tool calls (file names): the cursor goes to a match"),
    ("n", "the next match"),
    ("s", "switch the context here (the files are not changed)"),
    ("r", "restore the files to this entry's snapshot, after listing what changes"),
    ("u", "undo the last restore, after listing what changes"),
    ("d", "diff this snapshot against the files now, or the marked entry's against this"),
    ("m", "mark this entry for d (again: unmark)"),
    ("b", "the branches at this point (1-9 goes to the end of one)"),
    ("e", "edit: a new version of this message, beside it"),
    ("f", "fork here with a new user message"),
    ("l", "label this entry (empty: take its label off)"),
    ("a", "resume here in the session's agent; the command is printed after quitting"),
    ("q", "quit"),
    ("?", "these keys"),
]

PATCH_SHOWN = 256 * 1024  # the most of a diff drawn on the right (as the page caps a file)
FOLLOW_SECONDS = 0.5  # how often the session's files are looked at (their size and time only)

_CSS = """
#panes { height: 1fr; }
#tree { width: 1fr; min-width: 30; }
#detail { width: 1fr; border-left: solid $accent; padding: 0 1; }
#status { height: auto; max-height: 8; padding: 0 1; background: $boost; }
#keys { height: auto; background: $panel; padding: 0 1; }
#line { display: none; }
#line.open { display: block; }
"""


class Navigator(App[list[str]]):
    """A session's two tracks, browsable with the keyboard. ``run()`` returns the lines to print
    once the terminal is given back (``a``'s command to resume with), or None."""

    TITLE = "convgit ui"
    CSS = _CSS
    AUTO_FOCUS = "#tree"
    ENABLE_COMMAND_PALETTE = False
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("slash", "ask('search')", "search"),
        Binding("n", "next_match", "next", show=False),
        Binding("s", "switch", "switch"),
        Binding("r", "restore", "restore"),
        Binding("u", "undo", "undo"),
        Binding("d", "diff", "diff"),
        Binding("m", "mark", "mark", show=False),
        Binding("b", "branches", "branches"),
        Binding("e", "ask('edit')", "edit"),
        Binding("f", "ask('fork')", "fork"),
        Binding("l", "ask('label')", "label"),
        Binding("a", "resume", "resume"),
        Binding("q", "quit", "quit"),
        Binding("question_mark", "help", "help"),
    ]

    def __init__(self, session: Session, *, stable: bool = False) -> None:
        super().__init__()
        self.session = session
        self.stable = stable  # the tree's lines follow the branch written first
        # what the right pane shows was asked for at this count: a diff that comes back after
        # another was asked for (the cursor moved, d was pressed) is not drawn
        self.asked = 0
        self.diffed: str | None = None  # the entry d was pressed on, while the cursor stays
        self.asking: str | None = None  # what the input line is open for
        self.found: list[str] = []  # the last search's matches, in tree order
        self.seen = self._stamp()
        self.stopped: StoppedError | None = None  # a signal quit it: what to say, how to exit

    # -- building -------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        with Horizontal(id="panes"):
            yield ConversationTree(self.session, stable=self.stable, id="tree")
            with VerticalScroll(id="detail"):
                yield Static(id="entry")
        yield Static(id="status")
        yield Input(id="line")
        yield Static(id="keys")

    def on_resize(self) -> None:
        """The footer's keys, in as many lines as the width needs (none cut off)."""
        self.query_one("#keys", Static).update(_footer(self.BINDINGS, self.size.width - 2))

    def on_mount(self) -> None:
        self.on_resize()
        self.drawn.fill(self.session.conversation.leaf)
        self.say(self._both_tracks())
        self.set_interval(FOLLOW_SECONDS, self._follow)
        # SIGTERM, SIGHUP or a SIGINT sent from outside (a Ctrl-C here is a key) quit as `q`
        # does, giving the terminal back; a restore running then stops first, as the
        # command does, and its sentence is said once the terminal is back
        loop = asyncio.get_running_loop()
        for signum in STOPPING:
            if signal.getsignal(signum) != signal.SIG_IGN:
                loop.add_signal_handler(signum, self._stop, signum)

    def _stop(self, signum: int) -> None:
        if self.stopped is None:
            name = signal_name(signum)
            self.stopped = StoppedError(signum, f"Interrupted by {name}; the navigator closed.")
        self.exit()

    @property
    def drawn(self) -> ConversationTree:
        return self.query_one("#tree", ConversationTree)

    @property
    def view(self) -> SessionView:
        return self.drawn.view

    @property
    def selected(self) -> str | None:
        node = self.drawn.cursor_node
        return None if node is None else node.data

    # -- the entry on the right -----------------------------------------------------------------

    def on_tree_node_highlighted(self, event: Tree.NodeHighlighted[str]) -> None:
        """The entry the cursor came to, on the right. Keys typed fast arrive before the tree
        says where the cursor went: a row the cursor has left already is passed over, and so is
        the row ``d`` was pressed on (its diff stays)."""
        if event.node is not self.drawn.cursor_node:
            return
        ident = event.node.data
        if ident is not None and ident == self.diffed:
            return
        self.diffed = None
        if ident is not None:
            self._show_entry(ident)
        else:
            self.asked += 1
            self._detail(Text("older entries of this line, folded: → or space opens them"))

    def _show_entry(self, ident: str) -> None:
        self.asked += 1
        session = self.session
        snap = session.track.read_sidecar().snapshots.get(ident)
        parent = session.conversation.tree.entries[ident]["parentId"]
        previous = session.track.nearest_snapshot(parent) if snap is not None and parent else None
        lines = readable.entry_lines(
            self.view,
            ident,
            snapshot=snap,
            previous=previous,
            children=session.conversation.children().get(ident, []),
        )
        self._detail(shown(lines))
        if snap is not None:
            before = None if previous is None else previous.entry
            asked = self.asked
            self.run_worker(
                lambda: self._patch(before, ident, lines, asked),
                thread=True,
                exclusive=True,
                group="detail",
            )

    def _patch(self, a: str | None, b: str | None, head: Sequence[Any], asked: int) -> None:
        """``head`` then git's diff from ``a``'s files to ``b``'s (None: the files now), as
        ``show -p`` and ``diff -p`` print it (run in a worker thread: git takes its time), drawn
        only if nothing else was asked for the right pane since (``asked``)."""

        def draw(text: Text) -> None:
            self.call_from_thread(self._answer, asked, text)

        try:
            patch, changes = self.session.snapshots.git_diff(a, b, patch=True)
        except ConvgitError as exc:
            draw(shown([*head, "", _sentence(exc)]))
            return
        except OSError as exc:  # git could not be run, a file could not be read
            draw(shown([*head, "", f"convgit: {exc}."]))
            return
        text = shown(head)
        text.append("\n\n")
        shown_patch = patch[:PATCH_SHOWN].decode("utf-8", "replace")
        text.append_text(_coloured(shown_patch) if patch else Text("no changes"))
        if len(patch) > PATCH_SHOWN:
            text.append(
                f"\n… cut at {PATCH_SHOWN // 1024} KiB of {len(patch) // 1024} KiB:"
                " `convgit diff A B -p` prints it whole",
                style="bold",
            )
        alone = [c for c in changes if c.status == "left alone"]
        if alone:
            text.append("\n" + "\n".join(render.changes_lines(alone)), style="dim")
        draw(text)

    def _answer(self, asked: int, text: Text) -> None:
        """A worker's answer for the right pane, drawn if it is still what was asked for."""
        if asked == self.asked:
            self._detail(text)

    def _detail(self, text: Text) -> None:
        self.query_one("#entry", Static).update(text)

    def say(self, lines: Sequence[Any]) -> None:
        """Tell what happened, in the commands' words, in the line above the footer."""
        self.query_one("#status", Static).update(shown(lines))

    def _both_tracks(self) -> list[str]:
        try:
            return render.status_words(self.session.snapshots.status(), render.Names(self.view))[1:]
        except ConvgitError as exc:
            return [_sentence(exc)]

    @contextmanager
    def _refusals(self) -> Iterator[None]:
        """A move the session refuses: its sentence (and hint), as the command prints it."""
        try:
            yield
        except StoppedError as exc:  # a signal stopped a restore: the navigator quits
            self.stopped = exc
            self.exit()
        except ConvgitError as exc:
            self.say([_sentence(exc)])
        except OSError as exc:
            self.say([f"convgit: {exc.strerror or exc} ({exc.filename or 'a file'})."])

    # -- following the session ------------------------------------------------------------------

    def _stamp(self) -> tuple[tuple[int, int], ...]:
        """The size and time of the session's two files: a cheap look, no read."""
        found = []
        for path in (self.session.conversation.file.path, self.session.track.file.path):
            try:
                info = os.stat(path)
            except OSError:
                found.append((-1, -1))
            else:
                found.append((info.st_size, info.st_mtime_ns))
        return tuple(found)

    def _follow(self) -> None:
        now = self._stamp()
        if now != self.seen:
            self._reload()

    def _reload(self) -> None:
        self.seen = self._stamp()
        with self._refusals():
            self.session.reload()
            self.drawn.fill(self.selected)
            self.found = []

    # -- moves ----------------------------------------------------------------------------------

    def action_switch(self) -> None:
        ident = self.selected
        if ident is None:
            return
        with self._refusals():
            leaf = self.session.moves.switch(ident)
            self._reload()
            line = render.entry_line(self.view, leaf, on_path=True)
            self.say([render.Styled("switched to ").append_text(line), self._boundary()])

    def _boundary(self) -> str:
        try:
            return render.boundary_line(self.session.snapshots.status(), render.Names(self.view))
        except ConvgitError as exc:
            return f"files: not changed ({exc.message})"

    def action_restore(self) -> None:
        ident = self.selected
        if ident is not None:
            self._restore(ident, undo=False)

    def action_undo(self) -> None:
        self._restore(None, undo=True)

    def _restore(self, ident: str | None, *, undo: bool) -> None:
        """Ask with the list of what would change (``restore --dry-run``), then restore."""
        with self._refusals():
            preview = self.session.restoring.restore(ident, dry_run=True, undo=undo, settle=True)
            words = render.restore_words(preview, render.Names(self.view))
            if not preview.changes:
                self.say(words)
                return

            def answered(yes: bool | None) -> None:
                if not yes:
                    self.say(["nothing was restored"])
                    return
                with self._refusals():
                    done = self.session.restoring.restore(ident, undo=undo)
                    self._reload()
                    self.say(render.restore_words(done, render.Names(self.view)))

            self.push_screen(Confirm(words, "restore these files?"), answered)

    def action_diff(self) -> None:
        ident = self.selected
        if ident is None:
            return
        with self._refusals():
            if self.drawn.marked is not None and self.drawn.marked != ident:
                a, b = self.drawn.marked, ident
                what = f"diff from {self.view.short_id(a)} to {self.view.short_id(b)}"
            else:
                a, b = ident, None
                what = f"diff from {self.view.short_id(a)} to the files now"
            self.session.snapshots.diff(a, b)  # refuses an entry without a snapshot, in its words
            self.diffed = ident
            self.asked += 1
            asked = self.asked
            self._detail(Text(what + " …"))
            self.run_worker(
                lambda: self._patch(a, b, [what], asked),
                thread=True,
                exclusive=True,
                group="detail",
            )
            self.say([what])

    def action_mark(self) -> None:
        ident = self.selected
        if ident is None:
            return
        self.drawn.marked = None if self.drawn.marked == ident else ident
        self.drawn.fill(ident)
        self.say(
            [f"marked {self.view.short_id(ident)}: d compares it with the entry at the cursor"]
            if self.drawn.marked
            else ["no entry is marked"]
        )

    def action_branches(self) -> None:
        ident = self.selected
        if ident is None:
            return
        with self._refusals():
            tree = self.session.conversation.tree
            at = ident if len(tree.children.get(ident, ())) > 1 else None
            if at is None:
                at = branching.fork_point(tree, ident)
            if at is None:  # the roots
                fork = branching.fork_at(tree, None, self.session.track.read_sidecar().snapshots)
            else:
                fork = self.session.moves.branches(at)
            lines = reports.branch_lines(self.view, fork, self.session.conversation.path_ids(), at)

            def picked(leaf: str | None) -> None:
                if leaf is not None:
                    self.drawn.go(leaf)
                    self.say([f"at the end of that branch, {self.view.short_id(leaf)}: s switches"])

            self.push_screen(Branches(lines, [b.leaf for b in fork.branches]), picked)

    def action_ask(self, what: str) -> None:
        ident = self.selected
        if ident is None and what != "search":
            return
        line = self.query_one("#line", Input)
        short = "" if ident is None else self.view.short_id(ident)
        prompts = {
            "search": "search: text, an id, a label, a file name",
            "edit": f"the new text of {short} (enter: edit, escape: cancel)",
            "fork": f"the user message that starts a branch at {short} (enter: fork)",
            "label": f"a label for {short} (empty: take its label off)",
        }
        self.asking = what
        line.placeholder = prompts[what]
        line.value = self.view.labels.get(str(ident), "") if what == "label" else ""
        line.add_class("open")
        line.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        what, text = self.asking, event.value
        self._close_line()
        ident = self.selected
        if what == "search":
            self._search(text)
        elif ident is not None and what in ("edit", "fork", "label"):
            self._write(what, ident, text)

    def on_key(self, event: Any) -> None:
        if event.key == "escape" and self.asking is not None:
            self._close_line()
            self.say(["cancelled: nothing was written"])
            event.stop()

    def _close_line(self) -> None:
        line = self.query_one("#line", Input)
        line.remove_class("open")
        self.asking = None
        self.drawn.focus()

    def _write(self, what: str, ident: str, text: str) -> None:
        moves: dict[str, Callable[[], str]] = {
            "edit": lambda: self.session.moves.edit(ident, text),
            "fork": lambda: self.session.moves.fork(ident, text or None),
            "label": lambda: self.session.moves.label(
                ident,
                text or None,
                force=False,
                replace=True,  # its label was in the line
            ),
        }
        with self._refusals():
            done = moves[what]()
            self._reload()
            if what == "label":
                self.say(
                    [f"{self.view.short_id(done)} {'labelled ' + text if text else 'unlabelled'}"]
                )
                return
            self.drawn.go(done)
            line = render.entry_line(self.view, done, on_path=True)
            verb = "edited: " if what == "edit" else "forked: "
            told = self.session.moves.note
            note = [] if told is None else [render.note_line(self.view, told)]
            self.say([render.Styled(verb).append_text(line), *note, self._boundary()])

    def _search(self, query: str) -> None:
        self.found = shape.matches(self.view, query, self.drawn.placed.drawing_order())
        if not self.found:
            self.say([f"nothing matches {query!r}"])
            return
        self.action_next_match()

    def action_next_match(self) -> None:
        if not self.found:
            self.say(["no search yet: / searches"])
            return
        at = self.selected
        after = self.found.index(at) + 1 if at in self.found else 0
        ident = self.found[after % len(self.found)]
        self.drawn.go(ident)
        self.say([f"match {self.found.index(ident) + 1} of {len(self.found)} (n: the next)"])

    def action_resume(self) -> None:
        ident = self.selected
        if ident is None:
            return
        from convgit.agents import registry
        from convgit.agents import resume as handback

        with self._refusals():
            agent = str(self.session.conversation.header().get("agent") or registry.DEFAULT)
            result = handback.resume(self.session, ident, agent)
            git = self.session.location.git
            tree = None if git is None or git.worktree is None else Path(git.worktree).resolve()
            self.exit(reports.resume_words(result, self.view.short_id(result.entry), tree))

    def action_help(self) -> None:
        self.push_screen(Help(KEYS))


def _footer(bindings: Sequence[BindingType], width: int) -> Text:
    """The keys the footer lists: each key bold, then its word, in lines of at most ``width``
    columns, a key never parted from its word (text, not a widget per key: textual's own
    footer costs a fifth of the start on a big session, and cuts what does not fit)."""
    out = Text()
    used = 0
    for binding in bindings:
        if isinstance(binding, Binding) and binding.show:
            key = {"slash": "/", "question_mark": "?"}.get(binding.key, binding.key)
            size = len(key) + 1 + len(binding.description)
            if used and used + 2 + size > width:
                out.append("\n")
                used = 0
            elif used:
                out.append("  ")
                used += 2
            out.append(f"{key} ", style="bold").append(binding.description)
            used += size
    return out


def _sentence(exc: ConvgitError) -> str:
    """The error as the commands print it: its sentence, its report's lines and its hint."""
    lines = [f"convgit: {exc.message}", *(f"  {line}" for line in exc.report)]
    if exc.hint:
        lines.append(f"  hint: {exc.hint}")
    return "\n".join(lines)


def _coloured(patch: str) -> Text:
    """git's unified diff with its additions green and its deletions red."""
    out = Text()
    for line in patch.splitlines(keepends=True):
        if line.startswith(("+++", "---", "diff ", "index ")):
            style = "bold"
        elif line.startswith("+"):
            style = "green"
        elif line.startswith("-"):
            style = "red"
        elif line.startswith("@@"):
            style = "cyan"
        else:
            style = ""
        out.append(line, style=style or None)
    return out
