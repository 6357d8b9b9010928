"""The scan before anything is sent: the entries, the snapshot files and the paths in snapshot
trees a push would send, searched with the secret detector of ``convgit redact --secrets``
(``session.detector``): each string of a record on its own, each file by its path, each name
in a new tree on its own. A ``.env*`` file that git does not ignore is a secret by its name,
whatever it holds (a template, ``.env.example``, is not). What the remote holds already (a
file of the user's own commits it has) is no new leak and is not reported again. What it
finds is listed by where (an entry's short id, a file's path) and by kind, never by the
secret itself (a secret in a path is shown ``[redacted]``)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from convgit.session import detector, scrub
from convgit.workspace import Workspace

ASK_OVER = 1000  # new objects over which the remote is asked first which it holds
SCAN_CAP = 10 * 1024 * 1024  # bytes of one file scanned (snapshots leave bigger ones out anyway)
BY_NAME = "a .env file: a secret by its name"
IN_PATH = "path "  # how a secret in a name in a tree is placed: ``path src/[redacted]``


@dataclass(frozen=True)
class Found:
    """A secret found: ``where`` (``entry 1a2b3c4d`` or ``file src/app.py``) and its kind."""

    where: str
    kind: str

    @property
    def words(self) -> str:
        return f"{self.where} ({self.kind})"

    def to_json(self) -> dict[str, Any]:
        return {"where": self.where, "kind": self.kind}


def _strings(value: Any) -> Iterator[str]:
    """Every string of a JSON value, object keys included."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _strings(item)


def in_records(records: Iterable[tuple[str, dict[str, Any]]]) -> list[Found]:
    """The secrets in records, each given with how it is named (``entry 1a2b3c4d``)."""
    found: list[Found] = []
    for where, record in records:
        kinds = [k for text in _strings(record) for k in detector.kinds(text)]
        found += [Found(where, kind) for kind in dict.fromkeys(kinds)]
    return found


def _ignored(git: Workspace, paths: list[str]) -> set[str]:
    """The ``paths`` git ignores (its own rules, as for the user's ``git status``)."""
    if not paths:
        return set()
    asked = "".join(f"{p}\0" for p in paths).encode()
    done = git.run("check-ignore", "-z", "--no-index", "--stdin", stdin=asked, check=False)
    return {os.fsdecode(p) for p in done.stdout.split(b"\0") if p}


def in_files(
    git: Workspace, tips: list[str], have: list[str], held: Callable[[], list[str]] | None = None
) -> list[Found]:
    """The secrets in the files (blobs) and the paths (the names in trees) that ``tips`` reach
    and ``have`` does not: what a push of ``tips`` sends to a remote that has ``have``.

    ``held``, asked when something is found or more than ``ASK_OVER`` objects are new: more
    commits the remote holds (the tips of its branches). A blob or tree in their trees is on
    the remote already, no new leak: it is not scanned (what is found in it is left out).
    Nothing else is (a file of convgit's own that the remote lacks is always scanned: its
    bytes are new there)."""
    if not tips:
        return []
    listed = _listed(git, tips, have, check=True)
    assert listed is not None
    more = held() if held is not None and len(listed) > ASK_OVER else None
    narrowed = _listed(git, tips, have + more, whole_trees=True) if more else None
    if narrowed is not None:  # a walk that fails leaves nothing out
        listed = narrowed
    found = _in_objects(git, listed)
    if found and more is None and held is not None and (more := held()):
        still = _listed(git, tips, have + more, whole_trees=True)
        if still is not None:  # a walk that fails excuses nothing
            found = [(oid, f) for oid, f in found if oid in still]
    return sorted({f for _, f in found}, key=lambda f: (f.where, f.kind))


def _listed(
    git: Workspace,
    tips: list[str],
    have: list[str],
    *,
    check: bool = False,
    whole_trees: bool = False,
) -> dict[str, str] | None:
    """Each object ``tips`` reach and ``have`` does not, with a path it has (``""``: a root
    tree or a commit); None when git could not walk (an error, with ``check``). git leaves
    out the trees of a commit of ``have`` only where it is a parent of one walked; with
    ``whole_trees`` every tree of ``have``'s commits is left out, whatever their history
    (a branch of the user's shares no history with convgit's snapshots)."""
    walk = "--objects-edge-aggressive" if whole_trees else "--objects"
    done = git.run("rev-list", walk, "--stdin", stdin=_revs(tips, have).encode(), check=check)
    if done.returncode != 0:
        return None
    paths: dict[str, str] = {}
    for line in done.stdout.decode("utf-8", "surrogateescape").splitlines():
        if line.startswith("-"):  # an edge git names (a commit of ``have``)
            continue
        oid, _, path = line.partition(" ")
        paths.setdefault(oid, path)
    return paths


def _in_objects(git: Workspace, listed: dict[str, str]) -> list[tuple[str, Found]]:
    """What the new objects ``listed`` hold, each finding with the object it is in: a
    blob's contents and its ``.env`` names (``BY_NAME``), a tree's names."""
    asked = "".join(f"{oid}\n" for oid in listed).encode()
    checked = git.run("cat-file", "--batch-check", stdin=asked).stdout.decode().splitlines()
    blobs: dict[str, int] = {}
    trees: list[str] = []
    for line in checked:
        parts = line.split()
        if len(parts) == 3 and parts[1] == "blob":
            blobs[parts[0]] = int(parts[2])
        elif len(parts) == 3 and parts[1] == "tree":
            trees.append(parts[0])
    found: list[tuple[str, Found]] = []
    named: dict[str, str] = {}  # a path of a new blob that is a secret by its name -> blob
    with git.objects() as objects:
        for tree in trees:
            folder = listed[tree]
            for name, _mode, oid in objects.tree(tree):
                path = f"{folder}/{name}" if folder else name
                found += [(tree, Found(IN_PATH + _shown(path), k)) for k in detector.kinds(name)]
                if oid in blobs and detector.secret_by_name(path):
                    named[path] = oid
        for oid, size in blobs.items():
            if size > SCAN_CAP or (read := objects.read(oid)) is None:
                continue
            text = read[2].decode("utf-8", "surrogateescape")
            path = listed[oid]
            found += [(oid, Found(f"file {_shown(path)}", k)) for k in detector.kinds(text, path)]
    ignored = _ignored(git, sorted(named))
    found += [
        (o, Found(f"file {_shown(p)}", BY_NAME)) for p, o in named.items() if p not in ignored
    ]
    return found


def _shown(path: str) -> str:
    """``path`` as a finding names it: a secret in it replaced, as redaction writes it."""
    return scrub.Scrubber(None, secrets=True).text(path)[0]


def _revs(tips: list[str], have: list[str]) -> str:
    return "".join(f"{t}\n" for t in tips) + "".join(f"^{h}\n" for h in have)


def sentence(found: list[Found], shown: int = 10) -> str:
    """The list as one sentence's part: the first ``shown`` of them and how many more."""
    words = ", ".join(f.words for f in found[:shown])
    more = f" and {len(found) - shown} more" if len(found) > shown else ""
    return words + more


__all__ = ["BY_NAME", "IN_PATH", "Found", "in_files", "in_records", "sentence"]
