"""The folders above a path (``convgit.git.plumbing.paths``), the one way every caller computes
them: as str and as bytes alike, outermost first, and nearest first with the path itself."""

from __future__ import annotations

import pytest

from convgit.git.plumbing.paths import and_above, folders_above


@pytest.mark.parametrize(
    ("path", "above"),
    [
        ("a/b/c.txt", ["a", "a/b"]),
        ("c.txt", []),
        ("", []),
        ("a/", ["a"]),  # a folder named with its slash: itself
        ("a//b", ["a", "a/"]),  # as git never writes it, still read part by part
        (".venv/lib/x", [".venv", ".venv/lib"]),
    ],
)
def test_the_folders_above_a_path_are_each_leading_part_outermost_first(
    path: str, above: list[str]
) -> None:
    assert folders_above(path) == above
    assert folders_above(path.encode()) == [folder.encode() for folder in above]


def test_a_path_and_the_folders_above_it_come_nearest_first() -> None:
    assert and_above("a/b/c.txt") == ["a/b/c.txt", "a/b", "a"]
    assert and_above("c.txt") == ["c.txt"]
