"""The navigator's windows over the tree: a confirmation that lists what would change, the
branches at a fork point, and the keys."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from convgit.text.render import Styled

_FRAME = """
{name} {{ align: center middle; }}
{name} > VerticalScroll {{
    width: 90%; height: auto; max-height: 80%;
    border: round $accent; background: $surface; padding: 0 1;
}}
"""


def shown(lines: Sequence[Styled | str]) -> Text:
    """Lines of render's or reports' as one rich text (a plain string is never read as markup)."""
    out = Text()
    for n, line in enumerate(lines):
        if n:
            out.append("\n")
        out.append_text(line.to_rich() if isinstance(line, Styled) else Text(str(line)))
    return out


class Confirm(ModalScreen[bool]):
    """What a move would change, as the command prints it, and a question: ``y`` goes ahead,
    ``n`` or escape changes nothing."""

    DEFAULT_CSS = _FRAME.format(name="Confirm")
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "yes"),
        Binding("n,escape", "answer(False)", "no"),
    ]

    def __init__(self, lines: Sequence[Styled | str], question: str) -> None:
        super().__init__()
        self.lines = list(lines)
        self.question = question

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(shown([*self.lines, "", f"{self.question} (y/n)"]), id="confirm")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)


class Branches(ModalScreen[str | None]):
    """``convgit branches`` at a fork point; a digit moves the cursor to that branch's newest
    deepest leaf (nothing is written: ``s`` then switches there), escape closes."""

    DEFAULT_CSS = _FRAME.format(name="Branches")
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,b", "pick(0)", "close"),
        *(Binding(str(n), f"pick({n})", show=False) for n in range(1, 10)),
    ]

    def __init__(self, lines: Sequence[Styled | str], leaves: Sequence[str]) -> None:
        super().__init__()
        self.lines = list(lines)
        self.leaves = list(leaves)

    def compose(self) -> ComposeResult:
        hint = "1-9: go to the end of that branch (s then switches there) · escape: close"
        with VerticalScroll():
            yield Static(shown([*self.lines[:-1], "", hint]), id="branches")

    def action_pick(self, number: int) -> None:
        if 1 <= number <= len(self.leaves):
            self.dismiss(self.leaves[number - 1])
        elif number == 0:
            self.dismiss(None)


class Help(ModalScreen[None]):
    """Every key of the navigator, with what it does."""

    DEFAULT_CSS = _FRAME.format(name="Help")
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q,question_mark", "close", "close")]

    def __init__(self, keys: Sequence[tuple[str, str]]) -> None:
        super().__init__()
        self.keys = list(keys)

    def compose(self) -> ComposeResult:
        lines: list[Any] = ["keys of convgit ui", ""]
        lines += [f"{key:<14}{what}" for key, what in self.keys]
        lines += ["", "escape closes this"]
        with VerticalScroll():
            yield Static(shown(lines), id="help")

    def action_close(self) -> None:
        self.dismiss(None)
