"""The real command line, run as a user runs it: ``python -m convgit`` in a folder, in a process
of its own. This is the tests' one CLI runner (the ``cli`` fixture of tests/conftest.py is a
``Cli``): the helpers of the test folders (tests/workspace/cli.py, tests/agents/hooked.py, the
reliability harnesses, tests/agents/reading/agentfiles.py) are words over it, not runners of
their own.

``run`` waits for the command and checks what every command promises: the exit code it was told
to expect (1 user error, 2 usage, 3 damage), and never a traceback. ``start`` gives the running
process, for the tests that interrupt or race it. ``invoke`` runs the same typer app in this
process, for the few tests that make thousands of calls (a process costs a quarter of a second).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

import orjson

COMMAND = (sys.executable, "-m", "convgit")
TIMEOUT = 120.0
Env = Mapping[str, str | None]
Arg = str | bytes  # an argument as the shell passes it: bytes for the words no codec reads


@dataclass(frozen=True)
class Ran:
    """A finished command: its arguments, exit code and the bytes it wrote."""

    args: tuple[Arg, ...]
    code: int
    out: bytes
    err: bytes

    @property
    def stdout(self) -> str:
        """Standard output as text (convgit writes UTF-8: anything else fails here)."""
        return self.out.decode("utf-8")

    @property
    def stderr(self) -> str:
        return self.err.decode("utf-8")

    def json(self) -> Any:
        return orjson.loads(self.out)

    def completed(self) -> subprocess.CompletedProcess[bytes]:
        """The same, as ``subprocess.run`` gives it (for the helpers whose tests read bytes)."""
        return subprocess.CompletedProcess(list(self.args), self.code, self.out, self.err)


def environment(env: Env | None = None) -> dict[str, str]:
    """This process's environment with ``env`` over it; a name given ``None`` is removed."""
    made = dict(os.environ)
    for name, value in (env or {}).items():
        if value is None:
            made.pop(name, None)
        else:
            made[name] = value
    return made


def run(
    *args: Arg,
    cwd: Path,
    input: bytes | str | None = None,
    env: Env | None = None,
    code: int | None = 0,
    timeout: float | None = TIMEOUT,
    logs_tracebacks: bool = False,
    **popen: Any,
) -> Ran:
    """``convgit ARGS`` in ``cwd``, standard input ``input`` (nothing when None), the
    environment of ``environment(env)``; assert its exit code is ``code`` (unless None) and that it
    printed no traceback (unless ``logs_tracebacks``: the hook, with no store to log to, writes
    its log, tracebacks of the problems it caught included, to standard error). ``popen``
    goes to ``subprocess.run`` as it is (``preexec_fn`` for a resource limit)."""
    data = input.encode() if isinstance(input, str) else input
    proc = subprocess.run(
        [*COMMAND, *args],
        cwd=cwd,
        input=data,
        stdin=None if data is not None else subprocess.DEVNULL,
        capture_output=True,
        env=environment(env),
        timeout=timeout,
        check=False,
        **popen,
    )
    ran = Ran(tuple(args), proc.returncode, proc.stdout, proc.stderr)
    words = ran.err.decode("utf-8", errors="replace")
    assert logs_tracebacks or "Traceback" not in words, words
    if code is not None:
        assert ran.code == code, f"convgit {_words(args)} exited {ran.code}: {words}"
    return ran


def start(
    *args: str, cwd: Path, env: Env | None = None, group: bool = False, **popen: Any
) -> subprocess.Popen[Any]:
    """``convgit ARGS`` running in ``cwd`` (pipes for its output unless ``popen`` says
    otherwise); with ``group``, in a process group of its own, as a terminal starts it."""
    streams: dict[str, Any] = {
        "stdin": subprocess.DEVNULL, "stdout": subprocess.PIPE, "stderr": subprocess.PIPE,
    }  # fmt: skip
    return subprocess.Popen(
        [*COMMAND, *args],
        cwd=cwd,
        env=environment(env),
        start_new_session=group,
        **{**streams, **popen},
    )


def _words(args: tuple[Arg, ...]) -> str:
    return " ".join(a.decode(errors="replace") if isinstance(a, bytes) else a for a in args)


_COMMAND_CACHE: list[Any] = []


def invoke(*args: str, input: bytes | str | None = None) -> Any:
    """``convgit ARGS`` as the typer app in this process (a ``typer.testing.Result``); an
    exception the command let escape fails the test, as a traceback would."""
    import typer
    from typer.testing import CliRunner

    from convgit.cli import app

    if not _COMMAND_CACHE:  # typer rebuilds the click command on every call: 10 ms. Build it once.
        _COMMAND_CACHE.append(typer.main.get_command(app))
    with mock.patch("typer.testing._get_command", lambda _: _COMMAND_CACHE[0]):
        result = CliRunner().invoke(app, list(args), input=input)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(
            f"convgit {' '.join(args)} crashed with {type(result.exception).__name__}: "
            f"{result.exception}"
        ) from result.exception
    return result


class Cli:
    """The ``cli`` fixture: ``run`` in one folder (``cwd=`` for another), ``json`` to parse."""

    def __init__(self, cwd: Path, env: Env | None = None) -> None:
        self.cwd = cwd
        self.env = dict(env or {})

    def at(self, cwd: Path) -> Cli:
        return Cli(cwd, self.env)

    def __call__(
        self,
        *args: Arg,
        cwd: Path | None = None,
        input: bytes | str | None = None,
        env: Env | None = None,
        code: int | None = 0,
        timeout: float | None = TIMEOUT,
    ) -> Ran:
        return run(
            *args, cwd=cwd or self.cwd, input=input, env={**self.env, **(env or {})}, code=code,
            timeout=timeout,
        )  # fmt: skip

    def json(self, *args: Arg, **kw: Any) -> Any:
        """``convgit ARGS --json``, which must succeed: its output, parsed."""
        return self(*args, "--json", **kw).json()

    def start(self, *args: str, cwd: Path | None = None, **kw: Any) -> subprocess.Popen[Any]:
        return start(*args, cwd=cwd or self.cwd, env={**self.env, **kw.pop("env", {})}, **kw)


class Shell(Cli):
    """A ``Cli`` whose results are ``subprocess.CompletedProcess`` (bytes), for the tests of
    the conversation track that read them so."""

    def run(
        self, *args: Arg, input: bytes | None = None, code: int | None = 0
    ) -> subprocess.CompletedProcess[bytes]:
        return self(*args, input=input, code=code).completed()

    def append(self, *records: dict[str, Any], code: int = 0) -> subprocess.CompletedProcess[bytes]:
        lines = b"".join(orjson.dumps(r) + b"\n" for r in records)
        return self.run("append", "--json", input=lines, code=code)

    def session_file(self) -> Path:
        found = sorted(self.cwd.rglob("sessions/*.jsonl"))
        found = [p for p in found if p.name.count(".") == 1]
        assert len(found) == 1, found
        return found[0]
