"""The folders above a path in a working tree or a tree, computed one way for every caller:
the restore plan and its checks, the ignore rules on the way to a path, the status of a path
some folder of which a snapshot left out, the links of a side-by-side run, and the staging's
look at the folders it walks through. A path here is as git writes it: relative, ``/``
between its parts, as ``str`` or (on the staging's hot path) as ``bytes``."""

from __future__ import annotations

from typing import overload


@overload
def folders_above(path: str) -> list[str]: ...
@overload
def folders_above(path: bytes) -> list[bytes]: ...
def folders_above(path: str | bytes) -> list[str] | list[bytes]:
    """The folders above ``path``, outermost first: ``a/b/c`` -> ``a``, ``a/b``; none for
    ``c``."""
    if isinstance(path, str):
        found, at = [], path.find("/")
        while at != -1:
            found.append(path[:at])
            at = path.find("/", at + 1)
        return found
    found_b, at = [], path.find(b"/")
    while at != -1:
        found_b.append(path[:at])
        at = path.find(b"/", at + 1)
    return found_b


def and_above(path: str) -> list[str]:
    """``path`` and the folders above it, nearest first: ``a/b/c`` -> ``a/b/c``, ``a/b``,
    ``a`` (where a rule for a folder holds for what is in it, the nearest one found wins)."""
    return [path, *reversed(folders_above(path))]
