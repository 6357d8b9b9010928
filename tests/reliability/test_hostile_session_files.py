"""Hostile session files that cannot live in ``fixtures/bad/`` (too big, not regular files, or
crashing the parser itself), hostile input to ``append``, and the corpus's promises checked once
more at process level: exit codes and no traceback from a real ``python -m convgit``."""

from __future__ import annotations

import json
import os
import stat
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

import convgit.text.render  # noqa: F401  (imported before dropping privileges, see below)
from tests.reliability import bad_corpus
from tests.reliability.harness import (
    READING_COMMANDS,
    backups,
    cli,
    folder_bytes,
    make_store,
    no_crash,
    one_sentence_error,
    process,
    quarantined,
    session_file,
    split_lines,
)

MB = 1024 * 1024
NOBODY = 65534

_SEGFAULT = (
    "orjson < 3.9.15 has no depth limit in loads and overflows the C stack (CVE-2024-27454):"
    " every command, fsck and repair included, dies with SIGSEGV"
)
_FIFO = (
    "store.read_bytes opens the session file with a blocking read: a FIFO with no writer hangs"
    " every command forever"
)
_DUMPS = (
    "append decodes input of any depth but codec.encode (orjson.dumps) raises TypeError past"
    " 255 levels; the TypeError escapes as a traceback"
)
_NO_NEWLINE = (
    "Appender.catch_up adds the missing newline only to bytes appended since the last read, so"
    " the first append after a complete last record without its newline glues onto that line"
)


# -- too big for git ------------------------------------------------------------------------


def test_a_50_mb_unparsable_line_is_refused_then_quarantined_intact(tmp_path: Path) -> None:
    lines = bad_corpus.base_lines()
    monster = b'{"type":"message","content":"' + b"x" * (50 * MB)  # never closed
    lines.insert(8, monster)
    store = make_store(tmp_path, b"".join(x + b"\n" for x in lines))
    started = time.monotonic()

    check = cli(store, "fsck")
    assert check.exit_code == 3
    assert "error: line 9 " in check.output
    assert len(check.output) < 10_000, "the report quoted the 50 MB line"
    read = cli(store, "log")
    assert read.exit_code == 3 and read.stdout == ""
    one_sentence_error(read.stderr)

    assert cli(store, "repair").exit_code == 0
    assert quarantined(store) == {9: monster}
    assert split_lines(session_file(store).read_bytes()) == lines[:8] + lines[9:]
    assert cli(store, "fsck").exit_code == 0
    assert time.monotonic() - started < 20


def test_a_50_mb_message_is_read_in_full(tmp_path: Path) -> None:
    text = "y" * (50 * MB)
    big = {"type": "message", "id": "b1000001", "parentId": "a1000009", "ts": bad_corpus.ts(30)}
    big |= {"role": "user", "content": text}
    store = make_store(tmp_path, bad_corpus.base_bytes() + bad_corpus.line(big) + b"\n")
    assert cli(store, "fsck").exit_code == 0
    shown = cli(store, "show", "@", "--json")
    assert shown.exit_code == 0
    assert json.loads(shown.stdout)["entry"]["content"] == text


# -- parser crashes: only a subprocess can survive them --------------------------------------


def test_a_line_nested_100000_levels_deep_is_refused_without_crashing(tmp_path: Path) -> None:
    depth = 100_000
    raw = b'{"type":"custom","id":"a10000f1","parentId":"a100000d","ts":"x","kind":"k","data":'
    raw += b'{"a":' * depth + b"1" + b"}" * depth + b"}"
    store = make_store(tmp_path, bad_corpus.base_bytes() + raw + b"\n")
    before = folder_bytes(store / "sessions")
    done = process(store, "fsck")
    assert done.returncode == 3, f"exit {done.returncode} (negative: killed by a signal)"
    assert "error: line 18 " in done.stderr
    assert folder_bytes(store / "sessions") == before


# -- not a regular file -------------------------------------------------------------------------


def test_a_directory_in_place_of_the_session_file_is_refused(tmp_path: Path) -> None:
    store = make_store(tmp_path, b"")
    session_file(store).unlink()
    session_file(store).mkdir()
    for args in (("fsck",), *READING_COMMANDS.values(), ("repair",), ("user", "hello")):
        result = cli(store, *args)
        no_crash(result)
        assert result.exit_code == 3, (args, result.output)
        assert "is a directory" in one_sentence_error(result.stderr)
    assert session_file(store).is_dir() and not any(session_file(store).iterdir())
    assert sorted(p.name for p in (store / "sessions").iterdir()) == [session_file(store).name]


def test_a_fifo_in_place_of_the_session_file_is_refused_without_hanging(tmp_path: Path) -> None:
    store = make_store(tmp_path, b"")
    session_file(store).unlink()
    os.mkfifo(session_file(store))
    for args in (("fsck",), ("repair",)):
        try:
            done = process(store, *args, timeout=3)
        except Exception as exc:  # subprocess.TimeoutExpired: the child is killed
            pytest.fail(f"`convgit {args[0]}` on a FIFO did not return: {exc}")
        assert done.returncode == 3
        one_sentence_error(done.stderr)
    assert stat.S_ISFIFO(session_file(store).lstat().st_mode)


@contextmanager
def cannot_read(path: Path) -> Iterator[None]:
    """Mode 000, and the process may not read it. Root reads anything, so as root the effective
    uid becomes nobody's for the duration (and comes back after): the honest way to be denied.
    Fails (never skips) when the uid cannot be changed or the denial does not take."""
    path.chmod(0)
    dropped = False
    if os.geteuid() == 0:
        os.seteuid(NOBODY)  # raises PermissionError without CAP_SETUID: the test fails
        dropped = True
    try:
        assert os.geteuid() != 0, "still root: the file would be readable"
        assert not os.access(path, os.R_OK, effective_ids=True), "mode 000 did not deny reading"
        yield
    finally:
        if dropped:
            os.seteuid(0)
        path.chmod(0o644)


def test_an_unreadable_session_file_is_refused_and_left_alone() -> None:
    # Not tmp_path: pytest's temp folders are 0700, which nobody could not even enter.
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        root.chmod(0o755)
        store = make_store(root, bad_corpus.base_bytes())
        # Once while readable: click imports modules lazily, from a site-packages that nobody
        # may not be able to reach.
        assert cli(store, "fsck").exit_code == 0
        results = {}
        with cannot_read(session_file(store)):
            for args in (("fsck",), *READING_COMMANDS.values(), ("repair",)):
                results[args[0]] = cli(store, *args)
        for command, result in results.items():
            no_crash(result)
            # a permission is no damage: exit 1 (3 is a damaged store), with the way to read it
            assert result.exit_code == 1, (command, result.output)
            said = one_sentence_error(result.stderr)
            assert "cannot be read (Permission denied)" in said, command
            assert f"hint: this user may not use {session_file(store)}" in said, command
        assert session_file(store).read_bytes() == bad_corpus.base_bytes()
        assert backups(store) == []


# -- writers meeting a damaged end of file ------------------------------------------------------


@pytest.mark.parametrize("name", ["torn-last-line.jsonl", "nul-block-at-end.jsonl"])
def test_the_next_append_quarantines_a_torn_last_line(tmp_path: Path, name: str) -> None:
    data = (bad_corpus.CORPUS / name).read_bytes()
    torn = data[len(bad_corpus.base_bytes()) :]
    store = make_store(tmp_path, data)
    appended = cli(store, "user", "hello", "--json")
    assert appended.exit_code == 0, appended.output
    assert quarantined(store) == {18: torn}
    lines = split_lines(session_file(store).read_bytes())
    assert lines[:17] == bad_corpus.base_lines()
    assert json.loads(lines[17])["id"] == json.loads(appended.stdout)["id"]
    assert cli(store, "fsck").exit_code == 0


def test_appending_after_a_last_record_without_its_newline_keeps_both(tmp_path: Path) -> None:
    store = make_store(tmp_path, bad_corpus.base_bytes()[:-1])
    appended = cli(store, "user", "hello", "--json")
    assert appended.exit_code == 0, appended.output
    lines = split_lines(session_file(store).read_bytes())
    assert lines[:17] == bad_corpus.base_lines()
    assert json.loads(lines[17])["content"] == "hello"
    check = cli(store, "fsck")
    assert check.exit_code == 0, check.output


def test_append_refuses_too_deep_input_in_one_sentence(tmp_path: Path) -> None:
    store = make_store(tmp_path, bad_corpus.base_bytes())
    deep = '{"type":"custom","kind":"k","data":' + "[" * 300 + "]" * 300 + "}\n"
    result = cli(store, "append", input=deep)
    no_crash(result)
    assert result.exit_code == 1
    one_sentence_error(result.stderr)
    assert session_file(store).read_bytes() == bad_corpus.base_bytes()


# -- at process level ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "command", "code"),
    [
        ("unparsable-middle-line.jsonl", "log", 3),
        ("future-version.jsonl", "context", 3),
        ("empty-file.jsonl", "tree", 3),
        ("tool-result-without-call.jsonl", "show", 0),
    ],
)
def test_a_real_process_exits_with_the_promised_code_and_no_traceback(
    tmp_path: Path, name: str, command: str, code: int
) -> None:
    store = make_store(tmp_path, (bad_corpus.CORPUS / name).read_bytes())
    done = process(store, *READING_COMMANDS[command])
    assert done.returncode == code, done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    if code:
        assert done.stdout == ""
        one_sentence_error(done.stderr)
    assert session_file(store).read_bytes() == (bad_corpus.CORPUS / name).read_bytes()
