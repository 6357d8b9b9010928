"""Running the CLI against one session file, and reading back what it left behind."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from typer.testing import Result

from tests.clirun import Ran, invoke, run

SID = "bad0000000"
BOM = b"\xef\xbb\xbf"
READING_COMMANDS: dict[str, tuple[str, ...]] = {
    "log": ("log",),
    "tree": ("tree",),
    "context": ("context",),
    "show": ("show", "@"),
}
JSON_READS = (("log", "--json"), ("tree", "--json"), ("context", "--json"), ("show", "@", "--json"))


def make_store(root: Path, content: bytes) -> Path:
    """A store whose session ``SID`` is exactly ``content``; returns the store folder."""
    store = root / "store"
    (store / "sessions").mkdir(parents=True)
    session_file(store).write_bytes(content)
    return store


def session_file(store: Path) -> Path:
    return store / "sessions" / f"{SID}.jsonl"


def quarantine_file(store: Path) -> Path:
    return store / "sessions" / f"{SID}.quarantine.jsonl"


def backups(store: Path) -> list[Path]:
    return sorted((store / "sessions").glob(f"{SID}.jsonl.bak-*"))


def cli(store: Path, *args: str, input: str | None = None) -> Result:
    """``convgit --store STORE --session SID -C <store's parent> ARGS`` in this process.
    ``-C`` points outside any git repository, so only the conversation track is involved.
    The corpus makes about 2,000 of these: ``invoke`` builds the click command once."""
    base = ["--store", str(store), "--session", SID, "-C", str(store.parent)]
    result: Result = invoke(*base, *args, input=input)
    return result


def process(store: Path, *args: str, timeout: float = 60) -> Ran:
    """The same, as a real ``python -m convgit`` process (whatever its exit code)."""
    base = ["--store", str(store), "--session", SID, "-C", str(store.parent)]
    return run(*base, *args, cwd=store.parent, code=None, timeout=timeout)


def no_crash(result: Result) -> None:
    """In process, a traceback is an exception the command let escape."""
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(
            f"the command crashed with {type(result.exception).__name__}: {result.exception}"
        ) from result.exception
    assert "Traceback" not in result.output


def one_sentence_error(stderr: str) -> str:
    """Assert ``stderr`` is one ``convgit: ...`` sentence, then (for a corrupt store) fsck's
    report of it, one ``  error:`` or ``  warning:`` line per problem, and at most one
    ``  hint:`` line; return the whole text."""
    lines = stderr.rstrip("\n").split("\n")
    report = [line for line in lines[1:] if line.startswith(("  error: ", "  warning: "))]
    lines = [lines[0], *lines[1 + len(report) :]]
    assert 1 <= len(lines) <= 2, f"expected one sentence and maybe a hint, got {stderr!r}"
    assert lines[0].startswith("convgit: "), stderr
    assert lines[0].rstrip().endswith("."), f"not a sentence: {lines[0]!r}"
    if report:
        assert lines[0].startswith("convgit: Session ") and "cannot be read" in lines[0], stderr
    if len(lines) == 2:
        assert lines[1].startswith("  hint: "), stderr
    assert "Traceback" not in stderr
    return stderr


def folder_bytes(folder: Path) -> dict[str, bytes]:
    """Every regular file directly in ``folder``, by name (what "no byte changed" compares)."""
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def split_lines(data: bytes) -> list[bytes]:
    """Lines as convgit numbers them: a leading BOM is not part of line 1; a final newline
    does not start another line."""
    if data.startswith(BOM):
        data = data[len(BOM) :]
    if not data:
        return []
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    return lines


def quarantined(store: Path) -> dict[int, bytes]:
    """The quarantine file as line number -> the exact bytes of the line moved there."""
    path = quarantine_file(store)
    if not path.exists():
        return {}
    found: dict[int, bytes] = {}
    for raw in path.read_bytes().splitlines():
        record: dict[str, Any] = json.loads(raw)
        assert isinstance(record.get("reason"), str) and record["reason"], record
        if "text" in record:
            data = record["text"].encode("utf-8")
        else:
            data = base64.b64decode(record["base64"], validate=True)
        assert record["line"] not in found, f"line {record['line']} quarantined twice"
        found[record["line"]] = data
    return found
