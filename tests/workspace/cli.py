"""The real command line, ``python -m convgit`` in a process of its own, as a user runs it beside
an agent: its output must be UTF-8, its errors one sentence, and never a traceback."""

from __future__ import annotations

from pathlib import Path

from tests.clirun import Env, Ran, run

__all__ = ["Ran", "convgit", "one_sentence"]


def convgit(
    cwd: Path,
    *args: str,
    code: int | None = 0,
    input: bytes | str | None = None,
    env: Env | None = None,
    timeout: float = 120,
) -> Ran:
    """Run ``convgit ARGS`` in ``cwd`` (tests/clirun.py's ``run``); assert its exit code (unless
    ``code`` is None), that its output is UTF-8 and that it printed no traceback."""
    ran = run(*args, cwd=cwd, input=input, env=env, code=code, timeout=timeout)
    _ = (ran.stdout, ran.stderr)  # decoded here: output that is not UTF-8 fails the test
    return ran


def one_sentence(stderr: str) -> str:
    """``stderr`` is one ``convgit: ...`` sentence, and at most one ``  hint:`` line."""
    lines = stderr.rstrip("\n").split("\n")
    assert 1 <= len(lines) <= 2, f"expected one sentence and maybe a hint, got {stderr!r}"
    assert lines[0].startswith("convgit: ") and lines[0].rstrip().endswith("."), stderr
    assert len(lines) == 1 or lines[1].startswith("  hint: "), stderr
    return lines[0]
