"""The reference grammar, said once, and the places references lead to in a conversation tree:
resolving ``@``, ``@~N``, ``root``, ``:N``, labels and id prefixes; the newest leaf below an
entry; the tool calls still waiting at an entry. Pure functions over a ``Tree``.

Every reserved word and sign of the grammar is a constant here; the commands, the store's
``saved:`` and ``REF@{N}`` readers, the label and id checks and the importers ask this module
instead of spelling them:

* ``@`` (or git's ``HEAD``): the leaf; ``root``: the first entry of the active path;
* ``:N``: the N-th user message of the active path (``:-N`` counts from its end);
* ``X~N``: N entries up from X (``X~`` is ``X~1``);
* ``X@{N}``: the snapshot of X's entry N back (a replaced one);
* ``saved:ID``: a saved state of the working tree (``saved:`` and 4 or more hex digits);
* ``.``: in ``run``, the files of the working tree now.
"""

from __future__ import annotations

import re
from typing import Any, Protocol

from convgit.base.errors import AmbiguousRefError, NotFoundError, UsageError
from convgit.schema import tool_call_ids


class Tree(Protocol):
    """What references read of a conversation's index (``convgit.conversation.tree.Tree``,
    which asks this module to resolve them: a protocol here, so neither imports the other)."""

    entries: dict[str, dict[str, Any]]
    leaf: str | None
    labels: dict[str, str]

    @property
    def children(self) -> dict[str | None, list[str]]: ...

    @property
    def lines(self) -> dict[str, int]: ...

    def path(self, leaf: str | None = None) -> list[str]: ...


LEAF = "@"
LEAF_ALIAS = "HEAD"  # git's word for where you are, read as @
ROOT = "root"
USER_MESSAGE = ":"  # begins `:N`
BACK = "~"  # joins `X~N`
SNAPSHOT_BACK = "@{"  # begins the `@{N}` of `X@{N}`
SAVED = "saved:"  # begins `saved:ID`
WORKING_TREE = "."  # the REF of `run` that means the files of the working tree now
SAVED_DIGITS = 12  # the hex digits of a saved state's commit in its printed name
# words that are references whatever the tree holds: never a label
RESERVED_WORDS = (LEAF, LEAF_ALIAS, ROOT, WORKING_TREE)
# an id `resolve` can never read as something else: no '~', '@', spaces, capitals or leading
# '-', and not a reserved word that ids could spell (lowercase)
SAFE_ID = re.compile(r"[a-z0-9][a-z0-9_-]{0,127}")
# the folders of a session's refs beside its entries' snapshot refs (``git/names.py``'s REPLACED
# and SAVED_STATES): git cannot keep ``refs/convgit/<sid>/safety`` beside ``…/safety/<time>``
REF_FOLDERS = ("replaced", "safety")
RESERVED_IDS = frozenset({ROOT, *REF_FOLDERS})
_SNAPSHOT_BACK = re.compile(r"(.*)" + re.escape(SNAPSHOT_BACK) + r"([0-9]+)\}")


def is_safe_id(ident: str) -> bool:
    """True for an entry id that no reference form could misread."""
    return SAFE_ID.fullmatch(ident) is not None and ident not in RESERVED_IDS


def saved_id(commit: str) -> str:
    """The name a saved state is printed and addressed by: ``saved:`` and 12 hex digits."""
    return SAVED + commit[:SAVED_DIGITS]


def is_saved_ref(ref: str) -> bool:
    """True for a reference to a saved state rather than to an entry."""
    return ref.strip().startswith(SAVED)


def saved_digits(ref: str) -> str:
    """What follows ``saved:`` in ``ref`` (the prefix of a saved state's commit), lowercased."""
    return ref.strip()[len(SAVED) :].lower()


def snapshot_back(ref: str) -> tuple[str, int]:
    """``REF@{N}``: REF (``@`` when only ``@{N}`` is given) and N, how many snapshots back of
    REF's entry (0: its snapshot now, 1: the one that replaced, ...); any other ref: (ref, 0)."""
    found = _SNAPSHOT_BACK.fullmatch(ref.strip())
    if found is None:
        return ref, 0
    return found.group(1) or LEAF, int(found.group(2))


def label_problem(name: str) -> str | None:
    """Why ``name`` cannot be a label (a reference would read it as something else), else None."""
    if (
        not name
        or name != name.strip()
        or any(c in name for c in BACK + " \t\n")
        or name.startswith(USER_MESSAGE)  # `:N` is the N-th user message
        or name in RESERVED_WORDS
        or name.startswith(SAVED)
        or SNAPSHOT_BACK in name  # REF@{N} names a replaced snapshot
    ):
        words = ", ".join(RESERVED_WORDS[:-1]) + " or " + RESERVED_WORDS[-1]
        return (
            f"'{name}' cannot be a label: use a word without spaces, '{BACK}' or"
            f" '{SNAPSHOT_BACK}', not starting with '{USER_MESSAGE}' or {SAVED} (which name user"
            f" messages and saved states), and not {words}"
        )
    return None


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
    base, _, back = ref.partition(BACK)
    steps = 0
    if back or ref.endswith(BACK):
        if back and not (back.isascii() and back.isdigit()):  # '²' is a digit to isdigit
            raise UsageError(f"'{ref}' is not a reference: what follows '{BACK}' must be a number.")
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
    if base in (LEAF, LEAF_ALIAS, ""):
        if tree.leaf is None:
            raise NotFoundError("The session has no entries yet.", 'convgit user "..."')
        return tree.leaf
    if base == ROOT:
        if tree.leaf is None:
            raise NotFoundError("The session has no entries yet.", 'convgit user "..."')
        return tree.path()[0]
    if base.startswith(USER_MESSAGE):
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
