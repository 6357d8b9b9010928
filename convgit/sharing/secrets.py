"""The scan before anything is sent: the entries and the snapshot files a push would send,
searched with the secret detector of ``convgit redact --secrets`` (``session.detector``): each
string of a record on its own, each file by its path. A ``.env*`` file that git does not ignore
is a secret by its name, whatever it holds. What it finds is listed by where (an entry's short
id, a file's path) and by kind, never by the secret itself."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from convgit.git.run import Git
from convgit.session import detector

SCAN_CAP = 10 * 1024 * 1024  # bytes of one file scanned (snapshots leave bigger ones out anyway)
BY_NAME = "a .env file: a secret by its name"


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


def _ignored(git: Git, paths: list[str]) -> set[str]:
    """The ``paths`` git ignores (its own rules, as for the user's ``git status``)."""
    if not paths:
        return set()
    asked = "".join(f"{p}\0" for p in paths).encode()
    done = git.run("check-ignore", "-z", "--no-index", "--stdin", stdin=asked, check=False)
    return {os.fsdecode(p) for p in done.stdout.split(b"\0") if p}


def in_files(git: Git, tips: list[str], have: list[str]) -> list[Found]:
    """The secrets in the files (blobs) that ``tips`` reach and ``have`` does not: the files a
    push of ``tips`` sends to a remote that has ``have``."""
    if not tips:
        return []
    listed = git.run(
        "rev-list", "--objects", "--stdin", stdin=_revs(tips, have).encode()
    ).stdout.decode("utf-8", "surrogateescape")
    paths: dict[str, str] = {}
    for line in listed.splitlines():
        oid, _, path = line.partition(" ")
        if path and oid not in paths:
            paths[oid] = path
    if not paths:
        return []
    asked = "".join(f"{oid}\n" for oid in paths).encode()
    checked = git.run("cat-file", "--batch-check", stdin=asked).stdout.decode().splitlines()
    blobs, files = [], []
    for line in checked:
        parts = line.split()
        if len(parts) == 3 and parts[1] == "blob":
            files.append(paths[parts[0]])
            if int(parts[2]) <= SCAN_CAP:
                blobs.append(parts[0])
    named = [p for p in dict.fromkeys(files) if detector.secret_by_name(p)]
    ignored = _ignored(git, named)
    found = [Found(f"file {p}", BY_NAME) for p in named if p not in ignored]
    with git.objects() as objects:
        for oid in blobs:
            read = objects.read(oid)
            if read is None:
                continue
            text = read[2].decode("utf-8", "surrogateescape")
            path = paths[oid]
            found += [Found(f"file {path}", kind) for kind in detector.kinds(text, path)]
    return sorted(set(found), key=lambda f: (f.where, f.kind))


def _revs(tips: list[str], have: list[str]) -> str:
    return "".join(f"{t}\n" for t in tips) + "".join(f"^{h}\n" for h in have)


def sentence(found: list[Found], shown: int = 10) -> str:
    """The list as one sentence's part: the first ``shown`` of them and how many more."""
    words = ", ".join(f.words for f in found[:shown])
    more = f" and {len(found) - shown} more" if len(found) > shown else ""
    return words + more


__all__ = ["BY_NAME", "Found", "in_files", "in_records", "sentence"]
