"""The real command line, ``python -m convgit`` in a process of its own, as a user runs it beside
an agent: its output must be UTF-8, its errors one sentence, and never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson


@dataclass
class Ran:
    args: tuple[str, ...]
    code: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        return orjson.loads(self.stdout)


def convgit(
    cwd: Path,
    *args: str,
    code: int | None = 0,
    input: bytes | str | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 120,
) -> Ran:
    """Run ``convgit ARGS`` in ``cwd``; assert its exit code (unless ``code`` is None), that its
    output is UTF-8 and that it printed no traceback."""
    data = input.encode() if isinstance(input, str) else input
    proc = subprocess.run(
        [sys.executable, "-m", "convgit", *args],
        cwd=cwd,
        input=data,
        stdin=None if data is not None else subprocess.DEVNULL,
        capture_output=True,
        env={**os.environ, **(env or {})},
        timeout=timeout,
        check=False,
    )
    ran = Ran(args, proc.returncode, proc.stdout.decode("utf-8"), proc.stderr.decode("utf-8"))
    assert "Traceback" not in ran.stderr, ran.stderr
    if code is not None:
        assert ran.code == code, f"convgit {' '.join(args)} exited {ran.code}: {ran.stderr}"
    return ran


def one_sentence(stderr: str) -> str:
    """``stderr`` is one ``convgit: ...`` sentence, and at most one ``  hint:`` line."""
    lines = stderr.rstrip("\n").split("\n")
    assert 1 <= len(lines) <= 2, f"expected one sentence and maybe a hint, got {stderr!r}"
    assert lines[0].startswith("convgit: ") and lines[0].rstrip().endswith("."), stderr
    assert len(lines) == 1 or lines[1].startswith("  hint: "), stderr
    return lines[0]
