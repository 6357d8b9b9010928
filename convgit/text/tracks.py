"""Both tracks side by side, for ``convgit tree --files``: the conversation tree on the left, as
``convgit tree`` draws it, and on the right, on the row of each entry, what the workspace track
holds there: the entry's snapshot (its commit, the commit git has as its parent, the files
changed since) and the restores made there (where the files were brought, and the saved state
that holds them as they were before). The README's picture, from the session itself.

A restore is shown at the entry where it happened (``sessionpage.restores``: the note that told
the model of it, else the last entry written before it); a row with more than one thing on the
right goes on over the lines below it, the tree's lines carried down."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from convgit.conversation.refs import saved_id
from convgit.text import layout
from convgit.text.render import (
    SNAPSHOT_MARK,
    STATUS_LETTERS,
    Names,
    Styled,
    columns,
    entry_line,
    files,
)

if TYPE_CHECKING:
    from convgit.conversation.view import SessionView
    from convgit.session.snapshots import Lineage
    from convgit.text.html import RestoreView

RESTORE_MARK = "⟲"
NAMED = 3  # the files a snapshot's line names (its count covers them all)
WIDTH = 160  # the width drawn to when the output is no terminal
GAP = "  "


def short(commit: str) -> str:
    """A commit as ``git log --oneline`` shows it."""
    return commit[:7]


def snapshot_words(lineage: Lineage) -> str:
    """``◆ c844696 from 95e372a: M calc.py``: the commit, its parent, what changed."""
    head = f"{SNAPSHOT_MARK} {short(lineage.commit)}"
    if lineage.parent is None:
        return f"{head}, the first: {files(len(lineage.changes))}"
    changed = [f"{STATUS_LETTERS.get(c.status, '?')} {c.path}" for c in lineage.changes]
    more = len(changed) - NAMED
    said = ", ".join(changed[:NAMED]) + (f", +{more} more" if more > 0 else "")
    return f"{head} from {short(lineage.parent)}: {said or 'no file changed'}"


def restore_words(restore: RestoreView, names: Names) -> str:
    """``⟲ restore task → 95e372a, saving saved:4a396920bf39 first``: the command (an entry by
    its label, else its short id), the commit the files went to, the saved state of before."""
    if restore.undo:
        what = "restore --undo"
    elif restore.target is not None:
        what = f"restore {names.label_or_id(restore.target)}"
    else:
        what = f"restore {saved_id(restore.commit)}"
    tail = "" if restore.finished else " (interrupted)"
    return (
        f"{RESTORE_MARK} {what} → {short(restore.commit)}, saving {saved_id(restore.saved)}"
        f" first{tail}"
    )


def draw(
    view: SessionView,
    children: Mapping[str | None, list[str]],
    path: Sequence[str],
    lineage: Mapping[str, Lineage],
    restores: Sequence[RestoreView],
    *,
    files_at: str | None = None,
    width: int | None = None,
    stable: bool = False,
    where: str = "",
) -> list[Styled]:
    """The two tracks, row by row, in ``width`` columns (``WIDTH`` when None). ``where`` names
    the git command that shows the workspace track, said below it."""
    total = WIDTH if width is None else width
    names = Names(view)
    on_path = set(path)
    rows = layout.rows(children, on_path, stable=stable)
    right: dict[str, list[tuple[str, str]]] = {}
    for ident, found in lineage.items():
        right.setdefault(ident, []).append((snapshot_words(found), "magenta"))
    for restore in restores:
        if restore.at is not None:
            right.setdefault(restore.at, []).append((restore_words(restore, names), "yellow"))
    widest = max((len(text) for said in right.values() for text, _ in said), default=0)
    room = max(min(widest, total // 2), 0)
    left = max(total - room - len(GAP) - 1, 20)
    title = f"session {view.id}" + (f" — {view.name}" if view.name else "")
    out = [Styled(title, style="bold")]
    heading = Styled(_padded("conversation track (what the model knows)", left), "dim")
    heading.append(GAP + "workspace track (what the files are)", "dim")
    out.append(heading.cut(total))
    for row in rows:
        line = Styled(row.prefix, "dim").append_text(
            entry_line(
                view,
                row.entry,
                on_path=row.entry in on_path,
                files_at=files_at,
                width=left - len(row.prefix),
            )
        )
        said = right.get(row.entry, [])
        if not said:
            out.append(line)
            continue
        carried = _carried(row.prefix)
        for n, (text, style) in enumerate(said):
            drawn = line if n == 0 else Styled(carried, "dim")
            used = columns(drawn.plain)
            # a rule across to the entry's snapshot, as the README draws it
            leader = " " + "─" * max(left - used - 1, 0) if n == 0 else " " * max(left - used, 0)
            joined = drawn.append(leader + GAP, "dim")
            out.append(joined.append(text, style).cut(total))
    if where:
        out.append(Styled(f"the workspace track as git shows it: {where}", "dim"))
    return out


def _carried(prefix: str) -> str:
    """The tree's lines below a row whose prefix is ``prefix``: its branch goes on."""
    return prefix.replace("├─", "│ ").replace("└─", "  ")


def _padded(text: str, width: int) -> str:
    return text + " " * max(width - len(text), 0)
