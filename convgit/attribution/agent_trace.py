"""Agent Trace (the specification's version 0.1.0, https://agent-trace.dev): a commit's
attribution as one trace record, the git note convgit keeps under ``refs/notes/agent-trace``;
and a record read back, convgit's or another tool's.

The record says ``"version": "0.1"``: the specification calls itself 0.1.0, but its published
JSON schema takes a version of two numbers only (``^[0-9]+\\.[0-9]+$``), and a record must pass
the schema (the tests validate every record convgit writes against it).

convgit's facts ride where the specification leaves room. Each file's lines are grouped by what
wrote them, one group (a "conversation") each: its ``url`` names the convgit session and entry
(``convgit:session/<sid>/<entry>``), its ``contributor`` says ``ai``, ``human`` or ``unknown``
(with the model as ``provider/model``, the models.dev way), and the record's
``metadata.convgit.conversations`` keeps, by that url, the session, entry, agent (and its own
session id), model and provider as convgit names them, so a reader without the session still
has them all.
"""

from __future__ import annotations

import uuid
from typing import Any
from urllib.parse import quote, unquote

from convgit.attribution import AI, KINDS, UNKNOWN, Author, Lines, grouped
from convgit.base import codec
from convgit.schema import now

VERSION = "0.1"
TOOL = "convgit"
METADATA = "convgit"  # the key of convgit's facts under the record's metadata
URL_PREFIX = "convgit:session/"
MODEL_ID_MAX = 250  # the schema's limit
LINES_MAX = 1_000_000  # lines read from one record at most: a note is untrusted input
_FACTS = ("session", "entry", "agent", "agent_session", "model", "provider")


def url_of(author: Author) -> str | None:
    """The conversation's URL: another tool's as it was, else the convgit session's and its
    entry's (None when neither is known)."""
    if author.link is not None:
        return author.link
    if author.session is None:
        return None
    url = URL_PREFIX + quote(author.session, safe="")
    return url + "/" + quote(author.entry, safe="") if author.entry is not None else url


def model_id(author: Author) -> str | None:
    """The model as Agent Trace names it: ``provider/model`` when the provider is known and the
    model does not name one already."""
    if author.foreign_model is not None:
        found = author.foreign_model
    elif author.model is None:
        return None
    elif author.provider and "/" not in author.model:
        found = f"{author.provider}/{author.model}"
    else:
        found = author.model
    return found if len(found) <= MODEL_ID_MAX else None


def record(commit: str, lines: Lines[Author], version: str) -> dict[str, Any]:
    """The trace record of ``commit``'s ``lines``, recorded now by convgit ``version``."""
    files: list[dict[str, Any]] = []
    facts: dict[str, dict[str, str]] = {}
    for path in sorted(lines):
        conversations = []
        for author, ranges in grouped(lines[path]):
            contributor: dict[str, Any] = {"type": author.kind}
            model = model_id(author)
            if model is not None and author.kind == AI:
                contributor["model_id"] = model
            group: dict[str, Any] = {}
            url = url_of(author)
            if url is not None:
                group["url"] = url
            group["contributor"] = contributor
            group["ranges"] = [{"start_line": a, "end_line": b} for a, b in ranges]
            conversations.append(group)
            if url is not None and author.session is not None:
                facts[url] = {k: v for k in _FACTS if (v := getattr(author, k)) is not None}
        files.append({"path": path, "conversations": conversations})
    made: dict[str, Any] = {
        "version": VERSION,
        "id": str(uuid.uuid4()),
        "timestamp": now(),
        "vcs": {"type": "git", "revision": commit},
        "tool": {"name": TOOL, "version": version},
        "files": files,
    }
    if facts:
        made["metadata"] = {METADATA: {"conversations": facts}}
    return made


def dumps(made: dict[str, Any]) -> bytes:
    return (codec.dumps(made, pretty=True) + "\n").encode()


def read(data: bytes) -> Lines[Author] | None:
    """The lines a trace record attributes (None when ``data`` is no trace record). What does
    not fit the specification is passed over, never trusted: a note is anyone's text."""
    parsed = _parsed(data)
    if parsed is None or not isinstance(parsed.get("files"), list):
        return None
    metadata = parsed.get("metadata")
    ours = metadata.get(METADATA) if isinstance(metadata, dict) else None
    known = ours.get("conversations") if isinstance(ours, dict) else None
    facts = known if isinstance(known, dict) else {}
    out: Lines[Author] = {}
    budget = LINES_MAX
    for file in parsed["files"]:
        path = file.get("path") if isinstance(file, dict) else None
        groups = file.get("conversations") if isinstance(file, dict) else None
        if not isinstance(path, str) or not path or not isinstance(groups, list):
            continue
        into = out.setdefault(path, {})
        for group in groups:
            if not isinstance(group, dict) or not isinstance(group.get("ranges"), list):
                continue
            base = _author(group.get("url"), group.get("contributor"), facts)
            for span in group["ranges"]:
                if not isinstance(span, dict):
                    continue
                start, end = span.get("start_line"), span.get("end_line")
                if type(start) is not int or type(end) is not int or not 1 <= start <= end:
                    continue
                end = min(end, start + budget - 1)
                budget -= end - start + 1
                who = base
                if isinstance(span.get("contributor"), dict):
                    who = _author(group.get("url"), span["contributor"], facts)
                for n in range(start, end + 1):
                    into[n] = who
                if budget <= 0:
                    return {p: lines for p, lines in out.items() if lines}
    return {p: lines for p, lines in out.items() if lines}


def _parsed(data: bytes) -> dict[str, Any] | None:
    try:
        parsed = codec.decode(data)
    except ValueError:
        return None
    return parsed if isinstance(parsed, dict) else None


def _author(url: Any, contributor: Any, facts: dict[str, Any]) -> Author:
    kind = contributor.get("type") if isinstance(contributor, dict) else None
    kind = kind if kind in KINDS else UNKNOWN
    model = contributor.get("model_id") if isinstance(contributor, dict) else None
    model = model if isinstance(model, str) else None
    link = url if isinstance(url, str) else None
    given = facts.get(link) if link is not None else None
    if isinstance(given, dict) and isinstance(given.get("session"), str):
        said = {k: v for k in _FACTS if isinstance(v := given.get(k), str)}
        return Author(kind, **said)
    if link is not None and link.startswith(URL_PREFIX):
        sid, _, entry = link[len(URL_PREFIX) :].partition("/")
        if sid:
            return Author(kind, unquote(sid), unquote(entry) or None, foreign_model=model)
    return Author(kind, link=link, foreign_model=model)
