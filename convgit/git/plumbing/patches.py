"""Unified diffs between trees, as git writes them: the output of one
``git diff-tree --stdin -p`` over many pairs of trees, split into one patch per pair and path.

git echoes each input line (``<tree> <tree>``) before that pair's patches; a patch starts at its
``diff --git a/P b/P`` line (renames are off, so both names are P, C-quoted when unusual).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

# what `git diff-tree -p` is run with: git's own prefixes and algorithm, never the user's
# external diff, text conversion or colours
DIFF_TREE = (
    "diff-tree", "--stdin", "-r", "-p", "--no-renames", "--no-color", "--no-ext-diff",
    "--no-textconv", "--src-prefix=a/", "--dst-prefix=b/",
)  # fmt: skip
_HEADER = "diff --git "
_ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}
_OCTAL = re.compile(r"[0-7]{3}")


def git_diff_args(
    a: str, b: str, *, stat: int | None, patch: bool, colour: bool, leave_out: Sequence[str]
) -> list[str]:
    """``git diff`` of two commits or trees as the user's git writes it (their diff settings
    and colours, never an external diff program or a text conversion): the unified diff
    (``patch``), the ``--stat`` summary ``stat`` columns wide (0: git's own width), or both;
    coloured only when ``colour``. The paths of ``leave_out`` are not shown."""
    args = ["diff", "--no-ext-diff", "--no-textconv", f"--color={'always' if colour else 'never'}"]
    if stat is not None:
        args.append(f"--stat={stat}" if stat else "--stat")
        if patch:
            args.append("--patch")
    args += [a, b, "--"]
    args += [f":(exclude,literal){path}" for path in leave_out]
    return args


def stdin(pairs: Sequence[tuple[str, str]]) -> bytes:
    """The input of ``DIFF_TREE`` for these (old tree id, new tree id) pairs."""
    return "".join(f"{a} {b}\n" for a, b in pairs).encode()


def split(output: bytes, pairs: Sequence[tuple[str, str]]) -> list[dict[str, str]]:
    """The patch of every changed path, one dict per pair in order (path -> patch text, decoded
    as UTF-8 with replacement characters where the bytes are not)."""
    out: list[dict[str, str]] = [{} for _ in pairs]
    echoes = [f"{a} {b}".encode() for a, b in pairs]
    at = -1
    path: str | None = None
    lines: list[bytes] = []

    def flush() -> None:
        if path is not None and at >= 0:
            out[at][path] = b"".join(lines).decode("utf-8", "replace")

    for line in output.splitlines(keepends=True):
        if at + 1 < len(pairs) and line.rstrip(b"\n") == echoes[at + 1]:
            flush()
            at, path, lines = at + 1, None, []
        elif line.startswith(_HEADER.encode()):
            flush()
            path, lines = header_path(line.rstrip(b"\n")), [line]
        else:
            lines.append(line)
    flush()
    return out


def header_path(line: bytes) -> str:
    """P of ``diff --git a/P b/P`` (both sides name the same path when renames are off)."""
    rest = line[len(_HEADER) :]
    if rest.startswith(b'"'):
        quoted = rest[: _end_of_quoted(rest) + 1]
        return os.fsdecode(unquote(quoted))[2:]
    return os.fsdecode(rest[2 : 2 + (len(rest) - 5) // 2])


def _end_of_quoted(text: bytes) -> int:
    at = 1
    while text[at : at + 1] not in (b'"', b""):
        at += 2 if text[at : at + 1] == b"\\" else 1
    return at


def unquote(quoted: bytes) -> bytes:
    """The bytes of a C-quoted name as git writes it (``"a/t\\tb"``, octal for other bytes)."""
    body = quoted[1:-1].decode("latin-1")
    out = bytearray()
    at = 0
    while at < len(body):
        char = body[at]
        if char != "\\":
            out.append(ord(char))
            at += 1
        elif _OCTAL.match(body, at + 1):
            out.append(int(body[at + 1 : at + 4], 8))
            at += 4
        else:
            out.append(_ESCAPES.get(body[at + 1 : at + 2], ord(body[at + 1 : at + 2] or "\\")))
            at += 2
    return bytes(out)
