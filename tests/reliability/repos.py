"""Real repositories for the reliability tests, and git's own checks of them."""

from __future__ import annotations

import subprocess
from pathlib import Path


def git_fsck(path: Path) -> str:
    """`git fsck --full --strict`: assert it is clean (dangling objects are fine) and return
    its report."""
    proc = subprocess.run(
        ["git", "fsck", "--full", "--strict", "--no-progress"],
        cwd=path,
        capture_output=True,
        text=True,
        check=False,
    )
    report = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"git fsck failed: {report}"
    bad = [line for line in report.splitlines() if not line.startswith("dangling ")]
    assert not bad, f"git fsck reported: {bad}"
    return report
