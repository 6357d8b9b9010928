"""The reference grammar on a tree in memory (no store, no git, no process): what each form
names, and the one sentence each wrong form gets. Milliseconds a case, so every form is here."""

from __future__ import annotations

from typing import Any

import pytest

from convgit.base.errors import AmbiguousRefError, NotFoundError, UsageError
from convgit.conversation.tree import Tree, build_records

HEADER = {"type": "session", "v": 1, "id": "s1", "created": "2026-12-01T00:00:00Z", "cwd": "."}


def _message(ident: str, parent: str | None, role: str) -> dict[str, Any]:
    return {
        "type": "message", "id": ident, "parentId": parent, "role": role, "content": ident,
        "ts": "2026-12-01T00:00:00Z",
    }  # fmt: skip


@pytest.fixture(scope="module")
def tree() -> Tree:
    """u1 - a1 - u2 - a2 (the active path), and a branch a1 - u3 - a3 labelled "planB";
    a2's id shares its first letters with a20 on a branch of its own."""
    records = [
        HEADER,
        _message("aa11", None, "user"),
        _message("bb11", "aa11", "assistant"),
        _message("cc33", "bb11", "user"),
        _message("dd33", "cc33", "assistant"),
        {"type": "label", "target": "dd33", "label": "planB", "ts": "2026-12-01T00:00:00Z"},
        _message("cc22", "bb11", "user"),
        _message("dd22", "cc22", "assistant"),
        _message("dd2f", "cc22", "assistant"),
        {"type": "leaf", "target": "dd22", "ts": "2026-12-01T00:00:00Z"},
    ]
    return build_records(records)


@pytest.mark.parametrize(
    ("ref", "names"),
    [
        ("@", "dd22"),
        ("HEAD", "dd22"),
        ("@~1", "cc22"),
        ("@~", "cc22"),
        ("@~3", "aa11"),
        ("root", "aa11"),
        (":1", "aa11"),
        (":2", "cc22"),
        (":-1", "cc22"),
        (":-2", "aa11"),
        ("planB", "dd33"),
        ("planB~2", "bb11"),
        ("cc3", "cc33"),
        ("CC3", "cc33"),  # ids are lowercase hex: a prefix is read so
        ("dd22", "dd22"),
        ("  @  ", "dd22"),
    ],
)
def test_each_form_names_its_entry(tree: Tree, ref: str, names: str) -> None:
    assert tree.resolve(ref) == names


@pytest.mark.parametrize(
    ("ref", "error", "words"),
    [
        ("", UsageError, "An empty reference names no entry"),
        ("   ", UsageError, "An empty reference names no entry"),
        ("@~x", UsageError, "what follows '~' must be a number"),
        ("@~²", UsageError, "what follows '~' must be a number"),
        (":0", UsageError, "':N' takes a whole number other than 0"),
        (":x", UsageError, "':N' takes a whole number other than 0"),
        (":3", NotFoundError, "The active path has 2 user messages; ':3' is not one of them."),
        ("@~4", NotFoundError, "'@~4' goes past the root of the conversation."),
        ("ee", NotFoundError, "No entry, label or id prefix matches 'ee'."),
        ("dd2", AmbiguousRefError, "'dd2' matches 2 entries"),
    ],
)
def test_each_wrong_form_gets_its_sentence(
    tree: Tree, ref: str, error: type[Exception], words: str
) -> None:
    with pytest.raises(error) as raised:
        tree.resolve(ref)
    assert words in str(raised.value)


def test_a_label_misspelt_is_named_in_the_hint(tree: Tree) -> None:
    with pytest.raises(NotFoundError) as raised:
        tree.resolve("planb")
    assert raised.value.hint == "did you mean 'planB'? (`convgit tree` lists them)"


def test_an_empty_session_names_no_entry_for_the_leaf_forms() -> None:
    empty = build_records([HEADER])
    for ref in ("@", "root", ":1"):
        with pytest.raises(NotFoundError, match=r"The session has no entries yet\."):
            empty.resolve(ref)
