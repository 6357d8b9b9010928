"""The conversation tree of ``convgit ui``: textual's Tree, its rows made from ``shape.Layout``
only as they are opened (a branch off the active path, the older part of a long line), labelled
as ``convgit tree`` labels entries. It reads the session; it never writes."""

from __future__ import annotations

from typing import Any, ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
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

    def __init__(self, session: Session, **kwargs: Any) -> None:
        super().__init__(f"session {session.id}", **kwargs)
        self.show_root = False
        self.guide_depth = 3
        self.session = session
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
        self.placed = shape.Layout(shape.places(self.session.conversation.children(), self.on_path))
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
        line = render.entry_line(self.view, place.entry, on_path=on_path, files_at=self.files_at)
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
