"""The pager: a command's long output on a terminal goes through a pager, as git's does.

``CONVGIT_PAGER``, else ``PAGER``, else ``less`` (with ``LESS=FRX`` unless ``LESS`` is set, as
git runs it: it quits when the output fits on one screen, keeps colours and leaves the output on
the screen). An empty value or ``cat`` means no pager. Never when stdout is not a terminal, never
for ``--json``, ``--help`` or ``--no-pager`` (``-P``)."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
from collections.abc import Collection, Sequence

# the commands whose output can be long (the others print a line or two, or ask questions)
PAGED = frozenset(
    {"log", "tree", "show", "context", "sessions", "branches", "restores", "diff", "fsck", "search"}
)
_NO_PAGER = frozenset({"--no-pager", "-P"})

_running: subprocess.Popen[bytes] | None = None
_columns: int | None = None  # the terminal's width, kept while stdout goes to the pager


def chosen() -> str | None:
    """The pager command the environment asks for (None: no pager)."""
    for name in ("CONVGIT_PAGER", "PAGER"):
        value = os.environ.get(name)
        if value is not None:
            value = value.strip()
            return None if value in ("", "cat") else value
    return "less" if shutil.which("less") else None


def wanted(args: Sequence[str], command: str | None, with_value: Collection[str]) -> bool:
    """Whether this command line's output goes through the pager."""
    if command not in PAGED or not sys.stdout.isatty():
        return False
    if {"--json", "--help", "-h"} & set(args):
        return False
    words = iter(args)
    for word in words:  # the global options, before the command word
        if word == command:
            break
        if word in _NO_PAGER:
            return False
        if word in with_value:
            next(words, None)
    return True


def start(args: Sequence[str], command: str | None, with_value: Collection[str]) -> None:
    """Start the pager when ``wanted``: stdout (fd 1) becomes the pager's stdin."""
    global _running, _columns
    pager = chosen() if wanted(args, command, with_value) else None
    if pager is None:
        return
    columns = shutil.get_terminal_size().columns
    env = dict(os.environ)
    env.setdefault("LESS", "FRX")
    env.setdefault("LV", "-c")
    try:
        process = subprocess.Popen(pager, shell=True, stdin=subprocess.PIPE, env=env)
    except OSError:
        return  # no shell to start it with: print straight to the terminal
    assert process.stdin is not None
    sys.stdout.flush()
    os.dup2(process.stdin.fileno(), sys.stdout.fileno())
    process.stdin.close()
    _running, _columns = process, columns
    os.environ.setdefault("FORCE_COLOR", "1")  # the pager shows the colours (less -R)


def active() -> bool:
    return _running is not None


def columns() -> int | None:
    """The width of the terminal the output is read on: the terminal's, also while paged;
    None when stdout is no terminal (a file or a pipe takes whole lines)."""
    if _columns is not None:
        return _columns
    if not sys.stdout.isatty():
        return None
    return shutil.get_terminal_size().columns


def finish() -> None:
    """Close the pager's input and wait until the reader quits it."""
    global _running
    process, _running = _running, None
    if process is None:
        return
    with contextlib.suppress(OSError):  # the reader quit before the end: nothing more to show
        sys.stdout.flush()
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    while True:
        try:
            process.wait()
            return
        except KeyboardInterrupt:  # Ctrl-C goes to the pager too; it decides when to quit
            continue
