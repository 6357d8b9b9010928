"""No traceback, ever, for what a shell can hand convgit: text arguments that are not UTF-8 (stored
with U+FFFD in place of the bad bytes), odd references, and a stdout that is closed, full, or
stops reading."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from tests.clirun import Shell


@pytest.fixture
def sh(tmp_path: Path) -> Shell:
    shell = Shell(tmp_path)
    shell.run("init")
    return shell


def test_text_arguments_that_are_not_utf8_are_stored_with_replacement(sh: Shell) -> None:
    first = orjson.loads(sh.run("user", b"caf\xe9 \xff", "--json").stdout)
    assert first["content"] == "caf\ufffd \ufffd"
    calls = [{"type": "tool_call", "id": "c1", "name": "cat", "input": {}}]
    sh.append({"type": "message", "role": "assistant", "content": calls})
    sh.run("tool", "c1", b"binary \x80\x81 output")
    sh.run("assistant", b"r\xe9ponse")
    sh.run("fork", first["id"], b"\xc3(", "--summary", b"\xa0gone")
    sh.run("edit", "@", b"edited \xfe")
    sh.run("name", b"n\xe4me")
    texts = [m["content"] for m in sh.json("context")["messages"]]
    assert texts[0] == "caf\ufffd \ufffd"
    assert texts[1].endswith("\ufffdgone")
    assert texts[2] == "edited \ufffd"
    log = [x["content"] for x in sh.json("tree")["entries"] if x["type"] == "message"]
    assert "binary \ufffd\ufffd output" in log and "r\ufffdponse" in log
    assert sh.json("sessions")["sessions"][0]["name"] == "n\ufffdme"
    assert sh.run("fsck").returncode == 0


@pytest.mark.parametrize(
    ("ref", "code"),
    [("@~²", 2), ("@~-1", 2), ("@~x", 2), ("~~", 2), ("@~99999999999999999999", 1), (b"\xff", 1)],
    ids=["superscript", "negative", "letter", "tildes", "huge", "not-utf8"],
)
def test_odd_references_are_one_sentence(sh: Shell, ref: str | bytes, code: int) -> None:
    sh.run("user", "one")
    for command in ("show", "log"):
        done = sh.run(command, ref, code=code)
        assert done.stderr.startswith(b"convgit: ") and done.stderr.count(b"\n") <= 2


def _shell(command: str, folder: Path) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        ["bash", "-c", command.replace("CONVGIT", f"{sys.executable} -m convgit")],
        cwd=folder,
        capture_output=True,
        env=dict(os.environ),
        timeout=120,
    )


def test_a_full_stdout_is_one_sentence_and_exit_1(sh: Shell) -> None:
    sh.run("user", "one")
    for command in ("CONVGIT log >/dev/full", "CONVGIT context --format openai >/dev/full"):
        done = _shell(command, sh.cwd)
        assert done.returncode == 1, done.stderr
        assert (
            done.stderr == b"convgit: the output could not be written (No space left on device).\n"
        )


def test_a_closed_stdout_is_one_sentence_and_the_command_still_runs(sh: Shell) -> None:
    done = _shell("CONVGIT user 'said with stdout closed' >&-", sh.cwd)
    assert done.returncode == 1, done.stderr
    assert done.stderr == b"convgit: the output could not be written (standard output is closed).\n"
    assert [m["content"] for m in sh.json("log")["entries"]] == ["said with stdout closed"]


def test_a_reader_that_stops_early_gets_no_traceback(sh: Shell) -> None:
    lines = b"".join(
        orjson.dumps({"type": "message", "role": "user", "content": f"line {i} " + "x" * 200})
        + b"\n"
        for i in range(3000)
    )
    sh.run("append", input=lines)
    done = _shell("set -o pipefail; CONVGIT log | head -c 10", sh.cwd)
    assert len(done.stdout) == 10 and done.stderr == b""
    assert done.returncode in (0, 1)  # 1: convgit's output was cut, said by the pipe itself
