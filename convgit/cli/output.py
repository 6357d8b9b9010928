"""Writing what a command prints and its one-sentence errors, without typer (the lean entries of
``convgit.__main__`` use it too). An output that cannot be written (a closed or full stdout) is
one sentence on stderr and exit code 1, never a traceback."""

import errno
import os
import sys
from typing import Any

from convgit.base import codec
from convgit.base.errors import ConvgitError


def sentence(exc: ConvgitError) -> str:
    """The error as the user reads it: its sentence, its report's lines and its hint."""
    message = f"convgit: {exc.message}"
    message += "".join(f"\n  {line}" for line in exc.report)
    if exc.hint:
        message += f"\n  hint: {exc.hint}"
    return codec.shown(message)


def error(exc: ConvgitError) -> None:
    sys.stderr.write(sentence(exc) + "\n")


def warn(text: str) -> None:
    sys.stderr.write(codec.shown(text) + "\n")


def write_line(text: str) -> None:
    """Write ``text`` and a newline on stdout; a stdout that refuses it is one sentence, exit 1."""
    try:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()
    except OSError as exc:
        output_failed(exc)


def show(*lines: Any) -> None:
    """Print lines (text or ``render.Styled``), in colour only on a terminal."""
    from convgit.text import render

    try:
        render.print_lines(lines)
    except OSError as exc:
        output_failed(exc)


def utf8(value: Any) -> Any:
    """A text argument as UTF-8 text: bytes that are not UTF-8 (which Python hands over as lone
    surrogates) become U+FFFD, the replacement character. Paths are Path values, kept as given."""
    if not isinstance(value, str) or value.isascii():
        return value
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        try:
            raw = value.encode("utf-8", "surrogateescape")  # back to the bytes that were given
        except UnicodeEncodeError:  # a surrogate no byte made
            raw = value.encode("utf-8", "replace")
        return raw.decode("utf-8", "replace")
    return value


def os_sentence(exc: OSError) -> str:
    where = f" at {os.fsdecode(exc.filename)}" if exc.filename is not None else ""
    return f"The file system refused{where}: {exc.strerror or exc}; nothing more was written."


def os_error(exc: OSError) -> ConvgitError:
    """The file system's refusal as an error: exit 1, with a hint when access was denied."""
    from convgit.base.errors import denied

    sentence = os_sentence(exc)
    return denied(exc, sentence) or ConvgitError(sentence)


def occupy_closed_stdout() -> bool:
    """With fd 1 closed, the next file opened would become "stdout": park /dev/null there, and
    let the output go to it (the run still ends with the sentence saying it was lost)."""
    if sys.stdout is not None:
        return False
    fd = os.open(os.devnull, os.O_WRONLY)
    if fd != 1:
        os.dup2(fd, 1)
        os.close(fd)
    sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115 - lives as stdout
    return True


def flush(closed: bool) -> None:
    """Flush stdout at the end of a run; output that was lost is one sentence and exit 1."""
    try:
        if sys.stdout is not None:
            sys.stdout.flush()
    except OSError as exc:
        output_failed(exc)
    if closed:
        output_failed(OSError(errno.EBADF, "standard output is closed"))


def output_failed(exc: OSError) -> None:
    try:  # Python flushes stdout again at exit: give that flush somewhere to go
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno() if sys.stdout is not None else 1)
    except (OSError, ValueError):
        pass
    if exc.errno != errno.EPIPE:  # a reader that stopped reading (`| head`) needs no sentence
        reason = exc.strerror or str(exc)
        sys.stderr.write(f"convgit: the output could not be written ({reason}).\n")
    from convgit.cli import pager

    raise SystemExit(0 if exc.errno == errno.EPIPE and pager.active() else 1)
