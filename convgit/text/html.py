"""The page of a session: one self-contained HTML file showing both tracks.

It takes values (``Page``), never a Session, and returns the text of the file. The template,
script and stylesheet are package files (``page/``), inlined here; the data goes in as JSON in a
``<script type="application/json">`` with ``<``, ``>`` and ``&`` escaped, so no entry text can
end that element or be read as markup. The script only ever writes text (``textContent``), and a
Content-Security-Policy runs no script but the page's own (by its hash) and loads nothing.

What the page can compare without git: each snapshot carries its file-level changes from the
previous snapshot on its path, with the blob id and mode of each side, so any two snapshots'
differences are composed in the page exactly as ``convgit diff A B`` computes them; file contents
come from git's own unified diffs (per snapshot) and, for comparisons, from the blobs embedded
within ``BLOB_CAP`` and ``PAGE_BUDGET``.
"""

from __future__ import annotations

import base64
import hashlib
import html
import re
from dataclasses import dataclass
from importlib import resources
from typing import Any

from convgit.base import codec
from convgit.conversation.shortids import ShortIds
from convgit.text import layout

PATCH_CAP = 256 * 1024  # a file's diff longer than this is named, not shown
BLOB_CAP = 256 * 1024  # a file longer than this is not embedded for comparisons
PAGE_BUDGET = 6 * 1024 * 1024  # diffs and file contents in all; past it, files are named only
ROOT_FILES_CAP = 5_000  # a first snapshot with more files lists none (comparisons across roots)
_PLACEHOLDER = re.compile(r"\{\{(\w+)\}\}")
_BINARY_PROBE = 8000  # git calls a file binary when a NUL byte is in its first 8000 bytes


@dataclass(frozen=True)
class FileChange:
    """One path that differs from the previous snapshot: git's status words, and the (mode,
    blob id) of each side (None: absent); ``patch`` is git's unified diff when it was made."""

    path: str
    status: str
    old: tuple[int, str] | None
    new: tuple[int, str] | None
    patch: str | None = None


@dataclass(frozen=True)
class SnapshotView:
    """A snapshot and what changed since ``previous`` (the entry of the previous snapshot on
    its path; None: the first). ``changes`` is None when there were too many to list."""

    entry: str
    commit: str
    tree_id: str
    files: int
    ts: str
    previous: str | None
    changes: list[FileChange] | None
    skipped: list[dict[str, str]]


@dataclass(frozen=True)
class RestoreView:
    """A restore: the files brought to ``commit`` (the snapshot of ``target``; None for an
    undo, to the state saved before the last restore), after saving them as ``saved``.
    ``at`` is the entry where it happened: its note, else the last entry written before it."""

    target: str | None
    commit: str
    saved: str
    undo: bool
    changed: dict[str, int]
    paths: list[str] | None
    ts: str
    finished: bool
    at: str | None


@dataclass(frozen=True)
class Page:
    """Everything the page shows. ``entries`` are raw records in file order; ``status`` the
    words of ``convgit status``; ``blobs`` the contents of files the page may compare."""

    session: str
    name: str | None
    entries: list[dict[str, Any]]
    children: dict[str | None, list[str]]
    path: list[str]
    labels: dict[str, str]
    leaf: str | None
    files_at: str | None
    workspace: bool
    status: list[str]
    snapshots: list[SnapshotView]
    restores: list[RestoreView]
    blobs: dict[str, bytes | None]


def render(page: Page) -> str:
    """The whole HTML file."""
    script = _asset("page.js")
    style = _asset("page.css")
    for text, end in ((script, "</script"), (style, "</style")):
        if end in text.lower():  # a package file, never input: caught by the tests
            raise ValueError(f"an asset contains {end}")
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    csp = f"default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-{digest}'"
    title = f"convgit · session {page.session}" + (f" · {page.name}" if page.name else "")
    values = {
        "csp": csp,
        "title": html.escape(title),
        "style": style,
        "data": embedded_json(_data(page)),
        "script": script,
    }
    # one pass: a value is never searched for placeholders (entry text may contain "{{script}}")
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], _asset("page.html"))


def embedded_json(value: Any) -> str:
    """JSON that is safe inside a ``<script>`` element: nothing in it can close the element or
    open a comment, and JSON.parse reads it back unchanged."""
    raw = codec.dumps(value)
    for char, escape in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026")):
        raw = raw.replace(char, escape)
    return raw.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def _asset(name: str) -> str:
    return (resources.files("convgit.text") / "page" / name).read_text(encoding="utf-8")


class _Budget:
    """Bytes of diffs and file contents still allowed in the page."""

    def __init__(self, total: int) -> None:
        self.left = total
        self.spent_out = False

    def take(self, size: int) -> bool:
        if size > self.left:
            self.spent_out = True
            return False
        self.left -= size
        return True


def _data(page: Page) -> dict[str, Any]:
    budget = _Budget(PAGE_BUDGET)
    snapshots = [_snapshot(s, budget) for s in page.snapshots]
    blobs, blob_notes = _blobs(page.blobs, budget)
    by_id = {record["id"]: record for record in page.entries}
    rows = layout.rows(page.children, set(page.path))
    short = ShortIds(by_id)
    prefixes: dict[str, int] = {}
    notes = []
    if budget.spent_out:
        notes.append(
            f"This page holds at most {PAGE_BUDGET // (1024 * 1024)} MiB of diffs and file"
            " contents; past that, files are named only (`convgit diff A B` lists them all)."
        )
    return {
        "session": page.session,
        "name": page.name,
        "leaf": page.leaf,
        "filesAt": page.files_at,
        "workspace": page.workspace,
        "status": page.status,
        "path": page.path,
        "labels": page.labels,
        "entries": [by_id[row.entry] for row in rows],
        "short": [short(row.entry) for row in rows],
        "opens": opening(page),
        "rows": [
            [prefixes.setdefault(row.prefix, len(prefixes)), row.depth, int(row.head)]
            for row in rows
        ],
        "prefixes": list(prefixes),
        "snapshots": snapshots,
        "restores": [_restore(r) for r in page.restores],
        "blobs": blobs,
        "blobNotes": blob_notes,
        "notes": notes,
    }


def opening(page: Page) -> str | None:
    """The entry the page opens on: the newest reply with a snapshot on the active path (what
    the model said last, with the files it left), else the newest reply with a snapshot
    anywhere, else the newest reply on the path, else the active leaf. A restore note at the
    leaf says only that files moved; the reply shows what they are."""
    by_id = {record["id"]: record for record in page.entries}
    snapped = {s.entry for s in page.snapshots}

    def reply(ident: str) -> bool:
        record = by_id.get(ident, {})
        return record.get("type") == "message" and record.get("role") == "assistant"

    newest_first = list(reversed(page.path))
    for ident in newest_first:
        if reply(ident) and ident in snapped:
            return ident
    anywhere = [s for s in page.snapshots if reply(s.entry)]
    if anywhere:
        return max(anywhere, key=lambda s: s.ts).entry
    return next((i for i in newest_first if reply(i)), page.leaf)


def _snapshot(snap: SnapshotView, budget: _Budget) -> dict[str, Any]:
    changes = None
    if snap.changes is not None:
        changes = [
            [
                _shown(c.path),
                c.status,
                *(c.old or (0, "")),
                *(c.new or (0, "")),
                *_patch(c.patch, budget),
            ]
            for c in snap.changes
        ]
    return {
        "entry": snap.entry,
        "commit": snap.commit,
        "tree": snap.tree_id,
        "files": snap.files,
        "ts": snap.ts,
        "previous": snap.previous,
        "changes": changes,
        "skipped": snap.skipped,
    }


def _shown(path: str) -> str:
    """A path as the page can carry it: bytes that are not UTF-8 become U+FFFD."""
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _patch(patch: str | None, budget: _Budget) -> tuple[str | None, str | None]:
    """(the patch to show, why none is shown)."""
    if patch is None:
        return None, None
    if "\n@@" not in patch and "\nBinary files " in patch:
        return None, "binary file: not shown"
    if len(patch) > PATCH_CAP:
        return None, f"its diff is over the page's cap ({PATCH_CAP // 1024} KiB): not shown"
    if not budget.take(len(patch)):
        return None, "not shown: the page's budget for diffs is spent"
    return patch, None


def _blobs(
    found: dict[str, bytes | None], budget: _Budget
) -> tuple[dict[str, str], dict[str, str]]:
    texts: dict[str, str] = {}
    notes: dict[str, str] = {}
    for oid, data in found.items():
        if data is None or len(data) > BLOB_CAP:
            notes[oid] = f"over the page's cap ({BLOB_CAP // 1024} KiB)"
        elif b"\0" in data[:_BINARY_PROBE]:
            notes[oid] = "binary"
        elif not budget.take(len(data)):
            notes[oid] = "not in the page: its budget for file contents is spent"
        else:
            texts[oid] = data.decode("utf-8", "replace")
    return texts, notes


def _restore(r: RestoreView) -> dict[str, Any]:
    return {
        "target": r.target,
        "commit": r.commit,
        "saved": r.saved,
        "undo": r.undo,
        "changed": r.changed,
        "paths": r.paths,
        "ts": r.ts,
        "finished": r.finished,
        "at": r.at,
    }
