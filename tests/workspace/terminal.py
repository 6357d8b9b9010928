"""The real command line on a real terminal: ``python -m convgit`` with a pseudo-terminal as
its stdout (the pty module), as a person runs it; stderr is read apart."""

from __future__ import annotations

import fcntl
import os
import re
import struct
import sys
import termios
from dataclasses import dataclass
from pathlib import Path

from tests.clirun import start

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


@dataclass
class OnTerminal:
    code: int
    shown: str  # what reached the terminal, colours taken out, \r\n read as \n
    raw: bytes
    stderr: str


def on_terminal(
    cwd: Path,
    *args: str,
    env: dict[str, str] | None = None,
    whole_env: bool = False,
    columns: int = 100,
) -> OnTerminal:
    """Run ``convgit ARGS`` in ``cwd`` with a terminal ``columns`` wide as stdout, in this
    environment plus ``env`` (``whole_env``: in ``env`` alone)."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    given: dict[str, str | None] = dict(env or {})
    if whole_env:  # every other variable of this process removed
        given = {**{name: None for name in os.environ}, **given}
    proc = start(*args, cwd=cwd, env=given, stdout=slave)
    os.close(slave)
    chunks = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: every writer of the terminal has closed it
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(master)
    assert proc.stderr is not None
    stderr = proc.stderr.read().decode()
    code = proc.wait(timeout=120)
    assert "Traceback" not in stderr, stderr
    raw = b"".join(chunks)
    shown = ANSI.sub("", raw.decode("utf-8", "replace")).replace("\r\n", "\n")
    return OnTerminal(code, shown, raw, stderr)


RECORDER = """\
import os, sys
out = sys.argv[1]
data = sys.stdin.buffer.read()
with open(out, "wb") as f:
    f.write(data)
with open(out + ".env", "w") as f:
    f.write(repr({"args": sys.argv[2:], "LESS": os.environ.get("LESS")}))
"""


def recording_pager(folder: Path, name: str = "pager") -> tuple[str, Path]:
    """A pager command that keeps what it was given in a file (and its arguments and $LESS in
    FILE.env): (the command, the file)."""
    script = folder / f"{name}.py"
    script.write_text(RECORDER)
    out = folder / f"{name}.out"
    return f"{sys.executable} {script} {out}", out
