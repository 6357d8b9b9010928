"""git's objects as convgit reads them: the modes of tree entries, one ``git cat-file --batch``
process per operation (no git library is imported, so a restore does not pay for loading one),
tree parsing, and the file-level diff of two trees. Only subtrees whose ids differ are opened,
so the cost follows the change, not the size of the tree. Validates a tree before a restore
writes anything from it.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator, Sequence

from convgit.base.errors import HostileSnapshotError, NotFoundError
from convgit.base.valueclass import valueclass

TREE, BLOB, EXEC, LINK, GITLINK = 0o040000, 0o100644, 0o100755, 0o120000, 0o160000
LEGACY_BLOB = 0o100664  # old git wrote group-writable blobs; git reads them as 100644
FILE_MODES = frozenset({BLOB, EXEC, LINK, GITLINK, LEGACY_BLOB})
KIND_MASK = 0o170000  # the object-type bits of a mode (file, link, folder, gitlink)

TreeEntry = tuple[int, str]  # (mode, hex object id)

# Code points HFS+ ignores in names, so ".g\u200cit" is ".git" there (git's own list).
_HFS_IGNORABLE = dict.fromkeys(
    map(
        ord,
        "\u200c\u200d\u200e\u200f\u202a\u202b\u202c\u202d\u202e"
        "\u206a\u206b\u206c\u206d\u206e\u206f\ufeff",
    )
)


@valueclass(frozen=True)
class Delta:
    """A change with the (mode, oid) of the non-tree entry on each side (None: absent or folder)."""

    path: str
    status: str
    old: TreeEntry | None
    new: TreeEntry | None


@valueclass(frozen=True)
class Change:
    """One path that differs from side a to side b: added, modified, deleted or typechange
    (or "left alone", with ``reason``, where one side does not know the file's content)."""

    path: str
    status: str
    reason: str = ""


def bad_name(name: str) -> bool:
    """True for a tree entry name git itself would refuse to check out (git's verify_path)."""
    separators = "/\\\0" if os.name == "nt" else "/\0"  # a backslash is a plain character on POSIX
    if name in ("", ".", "..") or any(c in name for c in separators):
        return True
    folded = name.translate(_HFS_IGNORABLE).lower()
    return folded.split(":")[0].rstrip(". ") == ".git" or folded == "git~1"


class Objects:
    """Objects read through one running ``git cat-file --batch`` (``process``), closed by
    ``close`` or at the end of a ``with`` block."""

    def __init__(self, process: subprocess.Popen[bytes], hash_len: int) -> None:
        self._process = process
        self._hash_len = hash_len
        self._trees: dict[str, list[tuple[str, int, str]]] = {}

    def __enter__(self) -> Objects:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        process = self._process
        if process.stdin is not None:
            process.stdin.close()
        if process.stdout is not None:
            process.stdout.close()
        process.wait()

    def read(self, name: str) -> tuple[str, str, bytes] | None:
        """(id, type, content) of the object ``name`` (an id or ``rev^{tree}``-like name);
        None when git knows no such object."""
        if not name or any(c in name for c in "\n\r\0") or name.startswith("-"):
            return None
        stdin, stdout = self._process.stdin, self._process.stdout
        assert stdin is not None and stdout is not None
        stdin.write(name.encode() + b"\n")
        stdin.flush()
        header = stdout.readline().split()
        if len(header) != 3:
            if header[-1:] in ([b"missing"], [b"ambiguous"]):
                return None
            raise OSError(f"git cat-file stopped answering: {header!r}")
        data = stdout.read(int(header[2]) + 1)[:-1]
        return header[0].decode(), header[1].decode(), data

    def peel(self, rev: str, kind: str) -> str:
        """The id of the ``kind`` ("commit" or "tree") that ``rev`` names; NotFoundError."""
        found = self.read(f"{rev}^{{{kind}}}")
        if found is None or found[1] != kind:
            raise NotFoundError(f"There is no {kind} {rev!r} in this repository.")
        return found[0]

    def tree(self, oid: str) -> list[tuple[str, int, str]]:
        """The entries (name, mode, id) of tree ``oid``, in git's order, names undecoded
        beyond the file system's encoding."""
        if oid not in self._trees:
            found = self.read(oid)
            if found is None or found[1] != "tree":
                raise NotFoundError(f"There is no tree {oid!r} in this repository.")
            self._trees[oid] = list(self._parse(found[2]))
        return self._trees[oid]

    def known(self, oid: str, entries: list[tuple[str, int, str]]) -> None:
        """Remember the entries of tree ``oid``, written by convgit itself (in git's order):
        reading it needs no git then."""
        self._trees[oid] = entries

    def _parse(self, data: bytes) -> Iterator[tuple[str, int, str]]:
        at, size = 0, self._hash_len
        while at < len(data):
            space = data.index(b" ", at)
            end = data.index(b"\0", space)
            mode = int(data[at:space], 8)
            yield os.fsdecode(data[space + 1 : end]), mode, data[end + 1 : end + 1 + size].hex()
            at = end + 1 + size

    def lookup(self, tree_id: str | None, path: str) -> TreeEntry | None:
        """The (mode, id) at ``path`` (``a/b/c``) in tree ``tree_id``; None when absent."""
        if tree_id is None:
            return None
        found: TreeEntry = (TREE, tree_id)
        for part in path.split("/"):
            if found[0] != TREE:
                return None
            match = [(mode, oid) for name, mode, oid in self.tree(found[1]) if name == part]
            if not match:
                return None
            found = match[0]
        return found

    def blobs(self, oids: Sequence[str], chunk: int = 256) -> Iterator[bytes]:
        """The contents of the blobs ``oids``, in order: asked ``chunk`` at a time (the
        names of one chunk fit in the pipe, so git never waits on us while we wait on it).
        Nothing else may read through this reader until the iterator is done."""
        stdin, stdout = self._process.stdin, self._process.stdout
        assert stdin is not None and stdout is not None
        for start in range(0, len(oids), chunk):
            names = oids[start : start + chunk]
            if not all(len(n) == 2 * self._hash_len and n.isalnum() for n in names):
                yield from (self.blob(n) for n in names)
                continue
            stdin.write(b"".join(n.encode() + b"\n" for n in names))
            stdin.flush()
            for name in names:
                header = stdout.readline().split()
                if len(header) != 3 or header[1] != b"blob":
                    raise NotFoundError(f"There is no file content {name!r} in this repository.")
                yield stdout.read(int(header[2]) + 1)[:-1]

    def blob(self, oid: str) -> bytes:
        found = self.read(oid)
        if found is None or found[1] != "blob":
            raise NotFoundError(f"There is no file content {oid!r} in this repository.")
        return found[2]


def diff(
    objects: Objects,
    a: str | None,
    b: str | None,
    *,
    validate: bool = False,
    ignore_case: bool = False,
) -> list[Delta]:
    """File-level deltas from tree ``a`` to tree ``b`` (ids; None is an empty tree), sorted by
    path. A file replaced by a folder is a deletion plus additions; file <-> symlink is a
    typechange. With ``validate``, ``b`` is checked as a checkout would need it (names, modes,
    duplicates, case folding when ``ignore_case``): a hostile tree is refused
    (HostileSnapshotError) before anything is returned."""
    out: list[Delta] = []
    _diff_into(objects, out, a, b, "", validate, validate and ignore_case)
    out.sort(key=lambda d: d.path)
    return out


def _diff_into(
    objects: Objects,
    out: list[Delta],
    a: str | None,
    b: str | None,
    prefix: str,
    validate: bool,
    folding: bool,
) -> None:
    old = _entries(objects, a, prefix, False, False)
    new = _entries(objects, b, prefix, validate, folding)
    for name in old.keys() | new.keys():
        x, y = old.get(name), new.get(name)
        if x == y:
            continue
        path = prefix + name
        x_tree = x is not None and x[0] == TREE
        y_tree = y is not None and y[0] == TREE
        if x_tree or y_tree:
            _diff_into(
                objects,
                out,
                x[1] if x is not None and x_tree else None,
                y[1] if y is not None and y_tree else None,
                path + "/",
                validate,
                folding,
            )
        x_file = None if x is None or x_tree else x
        y_file = None if y is None or y_tree else y
        if x_file and y_file:
            kinds_differ = (x_file[0] ^ y_file[0]) & KIND_MASK
            out.append(Delta(path, "typechange" if kinds_differ else "modified", x_file, y_file))
        elif x_file:
            out.append(Delta(path, "deleted", x_file, None))
        elif y_file:
            out.append(Delta(path, "added", None, y_file))


def _entries(
    objects: Objects, tree_id: str | None, prefix: str, validate: bool, ignore_case: bool
) -> dict[str, TreeEntry]:
    entries: dict[str, TreeEntry] = {}
    if tree_id is None:
        return entries
    folded: set[str] = set()
    for name, raw_mode, oid in objects.tree(tree_id):
        mode = BLOB if raw_mode == LEGACY_BLOB else raw_mode
        if validate:
            shown = prefix + name
            if bad_name(name):
                raise HostileSnapshotError(
                    f"The snapshot holds the path {shown!r}, which would escape the working "
                    "tree or write into .git; nothing was restored."
                )
            if mode != TREE and mode not in FILE_MODES:
                raise HostileSnapshotError(
                    f"The snapshot holds {shown!r} with file mode {mode:o}; nothing was restored."
                )
            key = name.casefold() if ignore_case else name
            if name in entries or key in folded:
                raise HostileSnapshotError(
                    f"The snapshot holds {shown!r} twice (a file and a folder, or two "
                    "spellings of one name); nothing was restored."
                )
            folded.add(key)
        entries[name] = (mode, oid)
    return entries
