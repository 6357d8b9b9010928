"""The real command line, run as a user runs it: ``python -m convgit`` in a folder."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson


class Shell:
    """One folder and the convgit commands run in it, each in a fresh interpreter."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def run(
        self, *args: str | bytes, input: bytes | None = None, code: int | None = 0, **kw: Any
    ) -> subprocess.CompletedProcess[bytes]:
        done = subprocess.run(
            [sys.executable, "-m", "convgit", *args],
            cwd=self.folder,
            input=input,
            capture_output=True,
            env=dict(os.environ),
            timeout=120,
            **kw,
        )
        if code is not None:
            assert done.returncode == code, (args, done.returncode, done.stdout, done.stderr)
        assert b"Traceback" not in done.stderr, done.stderr
        return done

    def json(self, *args: str, input: bytes | None = None) -> Any:
        return orjson.loads(self.run(*args, "--json", input=input).stdout)

    def append(self, *records: dict[str, Any], code: int = 0) -> subprocess.CompletedProcess[bytes]:
        lines = b"".join(orjson.dumps(r) + b"\n" for r in records)
        return self.run("append", "--json", input=lines, code=code)

    def session_file(self) -> Path:
        found = sorted(self.folder.rglob("sessions/*.jsonl"))
        found = [p for p in found if p.name.count(".") == 1]
        assert len(found) == 1, found
        return found[0]
