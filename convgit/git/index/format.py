"""git's index file format (versions 2 to 4), read in Python; no git process here.

convgit's private index is git's own index file, written only by git (``GIT_INDEX_FILE``), so
the trees it gives are git's answer to ``git add -A``. What is read here is only what git
cannot tell cheaply: entries git would trust blindly (skip-worktree, assume-unchanged), files
above the size cap, the entry count, the shared index a split index builds on, a torn file.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Generator, Iterator

TYPE_CHECKING = False  # no pathlib: the survey plan reads identities as the process starts
if TYPE_CHECKING:
    from os import PathLike
    from pathlib import Path

# Flags of an entry, as git's read-cache.c and dulwich's index.py name them; the extended
# flags (version 3 and up) are shifted into the high 16 bits.
FLAG_ASSUME_VALID = 0x8000  # assume-unchanged: git does not look at the file
FLAG_EXTENDED = 0x4000  # two more bytes of flags follow
FLAG_STAGEMASK = 0x3000  # the merge stage: non-zero in a conflict
FLAG_NAMEMASK = 0x0FFF  # the path's length (0xFFF: that long or longer)
EXTENDED_SKIP_WORKTREE = 0x4000 << 16  # sparse checkout: git does not look at the file
# entries git would take as they are without looking at the file
TRUSTED_BLINDLY = FLAG_ASSUME_VALID | EXTENDED_SKIP_WORKTREE
# what ``entries(above=...)`` always decodes, whatever the entry's size
FLAGS_OF_NOTE = FLAG_ASSUME_VALID | FLAG_EXTENDED | FLAG_STAGEMASK


def entries(
    data: bytes, hash_len: int, *, above: int | None = None
) -> Iterator[tuple[bytes, int, int, bytes, int]]:
    """Entries of a git index file (v2-v4) as (path, mode, size, oid, flags); ``flags`` carries
    ``FLAG_ASSUME_VALID``, ``FLAG_STAGEMASK`` and, from the extended flags,
    ``EXTENDED_SKIP_WORKTREE``. With ``above``, only entries larger than that or with any flag
    (the rest is skipped without being decoded). Raises ValueError for what we do not read
    (split or sparse index, unknown version)."""
    offset = yield from _walk(data, hash_len, above)
    for signature in _extensions_at(data, offset, hash_len):
        if signature in (b"link", b"sdir"):
            raise ValueError(f"index extension {signature.decode()}")


def _walk(
    data: bytes, hash_len: int, above: int | None
) -> Generator[tuple[bytes, int, int, bytes, int], None, int]:
    """Yield the entries ``entries`` describes; return the offset where the extensions start."""
    if data[:4] != b"DIRC":
        raise ValueError("not an index file")
    version, count = struct.unpack_from(">II", data, 4)
    if version not in (2, 3, 4):
        raise ValueError(f"index version {version}")
    offset, previous = 12, b""
    head = struct.Struct(f">24xI8xI{hash_len}xH").unpack_from
    fixed = 42 + hash_len
    for _ in range(count):
        mode, size, flags = head(data, offset)
        cursor = offset + fixed
        if flags & FLAG_EXTENDED and version >= 3:
            flags |= struct.unpack_from(">H", data, cursor)[0] << 16
            cursor += 2
        wanted = above is None or size > above or flags & FLAGS_OF_NOTE
        if version == 4:  # paths are prefix-compressed: every one must be decoded
            strip, cursor = _varint(data, cursor)
            end = data.index(b"\0", cursor)
            previous = previous[: len(previous) - strip] + data[cursor:end]
            path, start, offset = previous, offset, end + 1
        else:
            length = flags & FLAG_NAMEMASK
            end = cursor + length if length < FLAG_NAMEMASK else data.index(b"\0", cursor)
            path, start = data[cursor:end] if wanted else b"", offset
            offset += (end - offset + 8) & ~7
        if wanted:
            oid = data[start + 40 : start + 40 + hash_len]
            yield path, mode, size, oid, flags
    return offset


def _extensions_at(data: bytes, offset: int, hash_len: int) -> dict[bytes, bytes]:
    found: dict[bytes, bytes] = {}
    while offset + 8 <= len(data) - hash_len:
        signature = data[offset : offset + 4]
        (length,) = struct.unpack_from(">I", data, offset + 4)
        found[signature] = data[offset + 8 : offset + 8 + length]
        offset += 8 + length
    return found


def extensions(index: Path, hash_len: int) -> dict[bytes, bytes]:
    """The extensions of an index file by signature. Found through the EOIE extension (git
    writes one for convgit: index.recordEndOfIndexEntries) by reading only the file's tail;
    without one, every entry is skipped to reach them. Empty when the file is not an index."""
    eoie = 4 + hash_len
    try:
        with open(index, "rb") as handle:
            size = handle.seek(0, os.SEEK_END)
            tail_at = size - hash_len - 8 - eoie
            if tail_at > 12:
                handle.seek(tail_at)
                tail = handle.read(8 + eoie)
                if tail[:4] == b"EOIE" and struct.unpack_from(">I", tail, 4)[0] == eoie:
                    (start,) = struct.unpack_from(">I", tail, 8)
                    if 12 <= start <= tail_at:
                        handle.seek(start)
                        data = handle.read()
                        return _extensions_at(data, 0, hash_len)
            handle.seek(0)
            data = handle.read()
    except OSError:
        return {}
    walk = _walk(data, hash_len, 1 << 62)
    try:
        while True:
            next(walk)
    except StopIteration as done:
        return _extensions_at(data, done.value, hash_len)
    except (ValueError, IndexError, struct.error):
        return {}


def shared_index(index: Path, hash_len: int) -> str | None:
    """The id of the shared index a split index file builds on (None for a whole index)."""
    link = extensions(index, hash_len).get(b"link", b"")
    oid = link[:hash_len]
    return oid.hex() if len(oid) == hash_len and any(oid) else None


def _varint(data: bytes, cursor: int) -> tuple[int, int]:
    byte = data[cursor]
    cursor += 1
    value = byte & 127
    while byte & 128:
        byte = data[cursor]
        cursor += 1
        value = ((value + 1) << 7) | (byte & 127)
    return value, cursor


def intact(index: Path, hash_len: int) -> bool:
    """True when the index file's trailing checksum matches (git itself skips this check)."""
    try:
        data = index.read_bytes()
    except OSError:
        return False
    if len(data) < 12 + hash_len or data[:4] != b"DIRC":
        return False
    trailer = data[-hash_len:]
    algorithm = "sha256" if hash_len == 32 else "sha1"
    import hashlib  # here: a turn whose index did not change since it was checked never needs it

    return (
        trailer == bytes(hash_len) or hashlib.new(algorithm, data[:-hash_len]).digest() == trailer
    )


def identity(index: str | PathLike[str]) -> str:
    """Size, inode and change times of the index file ("" when missing): any write changes it."""
    try:
        info = os.stat(index)
    except FileNotFoundError:
        return ""
    return f"{info.st_size}:{info.st_ino}:{info.st_mtime_ns}:{info.st_ctime_ns}"


def entry_count(index: Path, hash_len: int) -> int | None:
    """The number of entries: the root of the cache tree when it is valid (a split index keeps
    only what changed in its own file), else the header's count for a whole index; None when
    neither tells (a split index whose cache tree is out of date)."""
    try:
        with open(index, "rb") as handle:
            header = handle.read(12)
    except FileNotFoundError:
        return 0
    if len(header) != 12:
        return 0
    found = extensions(index, hash_len)
    tree = found.get(b"TREE", b"")
    if tree[:1] == b"\0" and b"\n" in tree:
        root = tree[1 : tree.index(b"\n")].split(b" ")[0]
        if root.isdigit():
            return int(root)
    return None if b"link" in found else int(struct.unpack(">I", header[8:12])[0])
