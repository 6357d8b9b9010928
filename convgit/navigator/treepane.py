"""The conversation tree of ``convgit ui``: textual's Tree, its rows made from ``shape.Layout``
only as they are opened (a branch off the active path, the older part of a long line), labelled
as ``convgit tree`` labels entries, the marks before the text. It reads the session; it never
writes.

textual draws every child with ``├─``/``└─``, as if each forked from its parent. The rest of a
branch hangs below the branch's first entry as its children, but it is one line, not a fork: so
those rows are drawn with no connector of their own (``render_line``), as ``convgit tree`` draws
a straight run of entries, and a connector means a fork."""

from __future__ import annotations

from typing import Any, ClassVar

from rich.segment import Segment
from rich.text import Text
from textual.binding import Binding, BindingType
from textual.strip import Strip
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from convgit.base.errors import ConvgitError
from convgit.conversation.view import SessionView
from convgit.navigator import shape
from convgit.session import Session
from convgit.text import render


class ConversationTree(Tree[str]):
    """Every entry of a session (a row's ``data`` is its id; a fold's is None)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("left", "fold", "fold", show=False),
        Binding("right", "unfold", "unfold", show=False),
    ]

    def __init__(self, session: Session, *, stable: bool = False, **kwargs: Any) -> None:
        super().__init__(f"session {session.id}", **kwargs)
        self.show_root = False
        self.guide_depth = 3
        self.session = session
        self.stable = stable  # lines follow the branch written first, wherever the context is
        self.view: SessionView = session.view()
        self.files_at: str | None = None
        self.marked: str | None = None  # the entry ``d`` compares with
        self.on_path: set[str] = set()
        self.placed = shape.Layout([])
        self.nodes: dict[str, TreeNode[str]] = {}  # the entries' rows made so far
        self.fold_nodes: dict[shape.Fold, TreeNode[str]] = {}
        self.folds: dict[int, shape.Fold] = {}  # a fold's row by its node's id
        self.filled: set[str | shape.Fold | None] = set()  # what has its rows made

    def fill(self, cursor: str | None) -> None:
        """(Re)draw the tree from the session as it is, the cursor on ``cursor``; the folds the
        reader opened or closed stay so. Only what is open is made: a branch off the active
        path, or the older part of a long line, gets its rows when it is opened."""
        made = [*self.nodes.items(), *self.fold_nodes.items()]
        opened = [key for key, node in made if node.allow_expand and node.is_expanded]
        closed = {key for key, node in made if node.allow_expand and not node.is_expanded}
        self.view = self.session.view()
        self.files_at = self._files_at()
        self.on_path = set(
            self.session.conversation.path_ids() if self.session.conversation.leaf else []
        )
        found = shape.places(self.session.conversation.children(), self.on_path, stable=self.stable)
        self.placed = shape.Layout(found)
        self.clear()
        self.nodes, self.fold_nodes, self.folds, self.filled = {}, {}, {}, set()
        self._make_rows(None, self.root)
        for key in opened:
            if key in self.placed.place or isinstance(key, shape.Fold):
                self.open(key)
        for ident, node in self.nodes.items():
            if ident in closed:
                node.collapse()
        self.go(cursor if cursor in self.placed.place else self.session.conversation.leaf)

    def _make_rows(self, under: str | shape.Fold | None, parent: TreeNode[str]) -> None:
        """The rows below ``under`` (None: the top), made once."""
        self.filled.add(under)
        if isinstance(under, shape.Fold):
            rows: list[str | shape.Fold] = list(self.placed.folded(under))
        else:
            rows = self.placed.rows(under)
        for row in rows:
            if isinstance(row, shape.Fold):
                node = parent.add(self._fold_label(row), data=None)
                self.fold_nodes[row] = node
                self.folds[node.id] = row
                continue
            place = self.placed.place[row]
            label = self._label(place, row in self.on_path)
            if place.head or len(self.placed.below.get(row, ())) > 0:
                self.nodes[row] = parent.add(label, data=row)
                if not place.head:  # a fork point: the branches that leave it are drawn
                    self.open(row)
            else:
                self.nodes[row] = parent.add_leaf(label, data=row)

    def open(self, key: str | shape.Fold) -> None:
        """Open ``key``'s fold, making its rows first (and the folds it is in: ``route``)."""
        if isinstance(key, shape.Fold):
            route: list[str | shape.Fold] = (
                [key] if key.under is None else [*self.placed.route(key.under), key]
            )
        else:
            route = self.placed.route(key)
        for step in route:
            node = self.fold_nodes.get(step) if isinstance(step, shape.Fold) else None
            node = node or (None if isinstance(step, shape.Fold) else self.nodes.get(step))
            if node is None:
                return  # not made: what it hangs below is not open (a route opens that first)
            if step not in self.filled and node.allow_expand:
                self._make_rows(step, node)
            if node.allow_expand and not node.is_expanded:
                node.expand()

    def on_tree_node_expanded(self, event: Tree.NodeExpanded[str]) -> None:
        key = event.node.data if event.node.data is not None else self.folds.get(event.node.id)
        if key is not None and key not in self.filled:
            self._make_rows(key, event.node)

    def _fold_label(self, fold: shape.Fold) -> Text:
        line = self.placed.folded(fold)
        short = self.view.short_id
        return Text(f"… {len(line)} entries: {short(line[0])} to {short(line[-1])}", style="dim")

    def _label(self, place: shape.Place, on_path: bool) -> Text:
        line = render.entry_line(
            self.view, place.entry, on_path=on_path, files_at=self.files_at, marks_first=True
        )
        if place.head and place.size > 1:
            line.append(f"  (+{place.size - 1})", style="dim")
        if place.entry == self.marked:
            line.append("  ● marked", style="bold blue")
        return line.to_rich()

    def _files_at(self) -> str | None:
        """The entry whose snapshot the files are at, as ``convgit tree`` marks it."""
        try:
            if self.session.track.sidecar.snapshots and self.session.location.git is not None:
                return self.session.snapshots.status().matches
        except ConvgitError:
            return None
        return None

    def continues(self, node: TreeNode[str]) -> bool:
        """Whether ``node``'s row continues a branch's line below its first entry (or is a fold
        of that line): drawn with no connector, as it forks from nothing."""
        if node.data is None:
            fold = self.folds.get(node.id)
            return fold is not None and fold.under is not None
        place = self.placed.place.get(node.data)
        return place is not None and not place.head and place.under is not None

    def render_line(self, y: int) -> Strip:
        """textual's row, with the connectors of the rows that continue a line taken out: on
        their own row and below them (``continues``)."""
        strip = super().render_line(y)
        scroll_x, scroll_y = self.scroll_offset
        node = self.get_node_at_line(y + scroll_y)
        path: list[TreeNode[str]] = []
        while node is not None and node is not self.root:
            path.append(node)
            node = node.parent
        width = self.guide_depth
        for depth, step in reversed(list(enumerate(reversed(path), 1))):  # right to left
            if depth >= 2 and self.continues(step):  # the top rows have no connector
                start = (depth - 2) * width - scroll_x
                strip = _blank(strip, max(start, 0), max(start + width, 0))
        return strip

    def go(self, ident: str | None) -> None:
        """The cursor on ``ident``, opening the folds it is in."""
        if ident is None or ident not in self.placed.place:
            return
        for step in self.placed.route(ident)[:-1]:
            self.open(step)
        node = self.nodes[ident]
        self.call_after_refresh(self.move_cursor, node)

    def action_fold(self) -> None:
        """Fold the branch at the cursor; on a row that does not fold, go to what it hangs below."""
        node = self.cursor_node
        if node is None:
            return
        if node.allow_expand and node.is_expanded:
            node.collapse()
        elif node.parent is not None and node.parent is not self.root:
            self.move_cursor(node.parent)

    def action_unfold(self) -> None:
        node = self.cursor_node
        if node is not None and node.allow_expand:
            node.expand()


def _blank(strip: Strip, start: int, end: int) -> Strip:
    """``strip`` with its cells from ``start`` to ``end`` made one space fewer, their style
    kept: a continuing row's text then starts where its first entry's text does (after that
    entry's fold mark), and the line keeps its width (a space at its end)."""
    length = strip.cell_length
    end = min(end, length)
    if start >= end:
        return strip
    cut = list(strip.crop(start, end))
    middle = Strip([Segment(" " * (end - start - 1), cut[0].style if cut else None)])
    tail = list(strip.crop(length - 1, length))
    pad = Strip([Segment(" ", tail[0].style if tail else None)])
    return Strip.join([strip.crop(0, start), middle, strip.crop(end, length), pad])
