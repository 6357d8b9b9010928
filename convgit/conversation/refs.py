"""References and the places they lead to in a conversation tree: resolving ``@``, ``@~N``,
``root``, ``:N``, labels and id prefixes; the newest leaf below an entry; the tool calls still
waiting at an entry. Pure functions over a ``Tree``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from convgit.base.errors import AmbiguousRefError, NotFoundError, UsageError
from convgit.schema import tool_call_ids

if TYPE_CHECKING:
    from convgit.conversation.tree import Tree


def newest_leaf(tree: Tree, ident: str) -> str:
    """The newest deepest leaf of the subtree at ``ident``: of the entries at or below it
    that have no children (the ends of its branches), the one appended last; ``ident``
    itself when nothing hangs below it. Where the subtree forks, this is the end of the
    fork written to most recently, so after an edit or a retry lower down, the newer
    attempt wins over an older and longer one. It is where "the branch at ``ident``"
    continues: a run's ``note`` is appended there."""
    children, lines = tree.children, tree.lines
    newest, newest_line = ident, -1
    stack, seen = [ident], set()
    while stack:
        node = stack.pop()
        if node in seen:  # only a tree that fails ``check`` can loop
            continue
        seen.add(node)
        below = children.get(node)
        if below:
            stack.extend(below)
        elif lines[node] > newest_line:
            newest, newest_line = node, lines[node]
    return newest


def open_tool_calls(tree: Tree, ident: str) -> list[str]:
    """The tool calls still waiting for a result at ``ident``: when ``ident`` is an
    assistant message with tool calls, or one of the tool results or other entries (a note,
    a setting) that follow it, the calls no result up to ``ident`` answers. Anything but a
    tool result appended below ``ident`` would then come between a call and its result."""
    answered: set[str] = set()
    node: str | None = ident
    for _ in range(len(tree.entries)):  # bounded: the parent chain may loop in a broken file
        if node is None:
            break
        record = tree.entries[node]
        if record["type"] != "message":
            node = record["parentId"]
            continue
        if record["role"] == "user":
            break
        if record["role"] == "assistant":
            return [call for call in tool_call_ids(record) if call not in answered]
        answered.add(str(record.get("toolCallId")))
        node = record["parentId"]
    return []


def resolve(tree: Tree, ref: str) -> str:
    """An entry id from ``@``, ``@~N``, ``root``, ``:N`` (the N-th user message of the active
    path; ``:-N`` counts from its end), a label, a unique id prefix, or ``X~N``. An empty
    reference names nothing: it is refused, never taken for ``@``."""
    ref = ref.strip()
    if not ref:
        raise UsageError("An empty reference names no entry; give one (@ is the leaf).")
    base, _, back = ref.partition("~")
    steps = 0
    if back or ref.endswith("~"):
        if back and not (back.isascii() and back.isdigit()):  # '²' is a digit to isdigit
            raise UsageError(f"'{ref}' is not a reference: what follows '~' must be a number.")
        steps = int(back) if back else 1
    ident = _resolve_base(tree, base)
    for _ in range(steps):
        parent = tree.entries[ident]["parentId"]
        if parent is None:
            raise NotFoundError(f"'{ref}' goes past the root of the conversation.")
        ident = parent
    return ident


def _user_message(tree: Tree, base: str) -> str:
    number = _count(base[1:])
    if number is None:
        raise UsageError(
            f"'{base}' is not a reference: ':N' takes a whole number other than 0 (':1' is"
            " the first user message of the active path, ':-1' the last)."
        )
    if tree.leaf is None:
        raise NotFoundError("The session has no entries yet.", 'convgit user "..."')
    users = [
        ident
        for ident in tree.path()
        if tree.entries[ident]["type"] == "message" and tree.entries[ident]["role"] == "user"
    ]
    if not 1 <= abs(number) <= len(users):
        count = len(users)
        raise NotFoundError(
            f"The active path has {count} user message{'' if count == 1 else 's'}; '{base}'"
            " is not one of them.",
            "convgit log",
        )
    return users[number - 1 if number > 0 else number]


def _resolve_base(tree: Tree, base: str) -> str:
    if base in ("@", "HEAD", ""):
        if tree.leaf is None:
            raise NotFoundError("The session has no entries yet.", 'convgit user "..."')
        return tree.leaf
    if base == "root":
        if tree.leaf is None:
            raise NotFoundError("The session has no entries yet.", 'convgit user "..."')
        return tree.path()[0]
    if base.startswith(":"):
        return _user_message(tree, base)
    if base in tree.entries:
        return base
    labelled = [ident for ident, name in tree.labels.items() if name == base]
    if labelled:
        return labelled[-1]
    matches = [ident for ident in tree.entries if ident.startswith(base.lower())]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        import difflib

        close = difflib.get_close_matches(base, sorted(set(tree.labels.values())), n=1)
        hint = (
            f"did you mean '{close[0]}'? (`convgit tree` lists them)" if close else "convgit tree"
        )
        raise NotFoundError(f"No entry, label or id prefix matches '{base}'.", hint)
    shown = ", ".join(matches[:5]) + (", ..." if len(matches) > 5 else "")
    raise AmbiguousRefError(
        f"'{base}' matches {len(matches)} entries ({shown}).",
        "give more characters of the id",
    )


def _count(text: str) -> int | None:
    """``N`` or ``-N`` as a whole number other than 0, else None."""
    digits = text[1:] if text.startswith("-") else text
    if not (digits.isascii() and digits.isdigit()) or int(digits) == 0:
        return None
    return int(text)
