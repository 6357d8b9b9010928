"""The scan before anything is sent: the entries and the snapshot files a push would send,
searched with the built-in secret patterns of ``convgit redact --secrets`` (``scrub.SECRETS``).
What it finds is listed by where (an entry's short id, a file's path) and by kind, never by the
secret itself."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from convgit.base import codec
from convgit.git.run import Git
from convgit.session.scrub import SECRETS

SCAN_CAP = 10 * 1024 * 1024  # bytes of one file scanned (snapshots leave bigger ones out anyway)
_PATTERNS = [(kind, re.compile(pattern)) for kind, pattern in SECRETS.items()]
_ANY = re.compile("|".join(f"(?:{pattern})" for pattern in SECRETS.values()))  # one pass first


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


def kinds(text: str) -> list[str]:
    """The kinds of secret ``text`` holds."""
    if not _ANY.search(text):
        return []
    return [kind for kind, pattern in _PATTERNS if pattern.search(text)]


def in_records(records: Iterable[tuple[str, dict[str, Any]]]) -> list[Found]:
    """The secrets in records, each given with how it is named (``entry 1a2b3c4d``)."""
    found: list[Found] = []
    for where, record in records:
        text = codec.encode(record).decode("utf-8", "surrogateescape")
        found += [Found(where, kind) for kind in kinds(text)]
    return found


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
    blobs = []
    for line in checked:
        parts = line.split()
        if len(parts) == 3 and parts[1] == "blob" and int(parts[2]) <= SCAN_CAP:
            blobs.append(parts[0])
    found: list[Found] = []
    with git.objects() as objects:
        for oid in blobs:
            read = objects.read(oid)
            if read is None:
                continue
            text = read[2].decode("utf-8", "surrogateescape")
            found += [Found(f"file {paths[oid]}", kind) for kind in kinds(text)]
    return sorted(set(found), key=lambda f: (f.where, f.kind))


def _revs(tips: list[str], have: list[str]) -> str:
    return "".join(f"{t}\n" for t in tips) + "".join(f"^{h}\n" for h in have)


def sentence(found: list[Found], shown: int = 10) -> str:
    """The list as one sentence's part: the first ``shown`` of them and how many more."""
    words = ", ".join(f.words for f in found[:shown])
    more = f" and {len(found) - shown} more" if len(found) > shown else ""
    return words + more


__all__ = ["Found", "in_files", "in_records", "kinds", "sentence"]
