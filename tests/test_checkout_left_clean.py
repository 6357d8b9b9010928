"""A test run leaves `git status` of the checkout clean (tests/checkout.py): a run whose test
writes beside the code fails and names the file; the same run writing into tmp_path passes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.workspace.gitrepo import git

ROOT = Path(__file__).resolve().parent.parent

WRITES = {
    "beside the code": 'Path(__file__).with_name("notes.txt").write_text("x")',
    "a tracked file": 'Path(__file__).with_name("kept.txt").write_text("changed")',
    "its tmp_path": '(tmp_path / "notes.txt").write_text("x")',
}


def run_in_checkout(tmp_path: Path, writes: str) -> subprocess.CompletedProcess[str]:
    """pytest, with the checkout guard, on one test that ``writes``, in a checkout of its own."""
    checkout = tmp_path / "checkout"
    checkout.mkdir(parents=True)
    git(checkout, "init", "-q")
    (checkout / "kept.txt").write_text("kept")
    (checkout / "test_one.py").write_text(
        f"from pathlib import Path\n\ndef test_one(tmp_path):\n    {writes}\n"
    )
    git(checkout, "add", ".")
    git(checkout, "commit", "-qm", "a checkout")
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "tests.checkout", "-p", "no:cacheprovider"],
        cwd=checkout,
        env={**os.environ, "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1"},
        capture_output=True,
        text=True,
        check=False,
    )


def test_a_run_that_writes_into_the_checkout_fails_and_names_the_file(tmp_path: Path) -> None:
    stray = run_in_checkout(tmp_path / "stray", WRITES["beside the code"])
    assert stray.returncode == 1, stray.stdout + stray.stderr
    assert "1 passed" in stray.stdout
    assert "the run changed the checkout" in stray.stdout and "?? notes.txt" in stray.stdout
    tracked = run_in_checkout(tmp_path / "tracked", WRITES["a tracked file"])
    assert tracked.returncode == 1 and " M kept.txt" in tracked.stdout


def test_a_run_that_writes_into_tmp_path_passes(tmp_path: Path) -> None:
    clean = run_in_checkout(tmp_path, WRITES["its tmp_path"])
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert "changed the checkout" not in clean.stdout
