"""`convgit completion bash|zsh|fish` prints the script a shell loads; bash, given that
script, completes convgit's commands and options by asking convgit (typer's machinery)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.workspace.cli import convgit, one_sentence


@pytest.fixture
def on_path(tmp_path: Path) -> dict[str, str]:
    """An environment whose PATH has a `convgit` that runs this checkout's convgit."""
    folder = tmp_path / "bin"
    folder.mkdir()
    program = folder / "convgit"
    program.write_text(f'#!/bin/sh\nexec {sys.executable} -m convgit "$@"\n')
    program.chmod(0o755)
    return {**os.environ, "PATH": f"{folder}{os.pathsep}{os.environ['PATH']}"}


def bash_completes(env: dict[str, str], cwd: Path, *words: str) -> list[str]:
    """What bash offers for the last of ``words`` after loading `convgit completion bash`."""
    quoted = " ".join(f"'{w}'" for w in words)
    script = (
        'eval "$(convgit completion bash)"\n'
        f"COMP_WORDS=({quoted}); COMP_CWORD={len(words) - 1}\n"
        f"COMP_LINE={quoted!r}; COMP_POINT=${{#COMP_LINE}}\n"
        "_convgit_completion convgit\n"
        'printf "%s\\n" "${COMPREPLY[@]}"\n'
    )
    done = subprocess.run(
        ["bash", "--norc", "--noprofile", "-c", script],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    return [line for line in done.stdout.splitlines() if line]


def test_bash_completes_commands_and_options_with_the_printed_script(
    on_path: dict[str, str], tmp_path: Path
) -> None:
    assert bash_completes(on_path, tmp_path, "convgit", "lo") == ["log"]
    assert sorted(bash_completes(on_path, tmp_path, "convgit", "res")) == [
        "restore",
        "restores",
        "resume",
    ]
    assert "--max-count" in bash_completes(on_path, tmp_path, "convgit", "log", "--m")
    assert "--no-pager" in bash_completes(on_path, tmp_path, "convgit", "--no")
    assert bash_completes(on_path, tmp_path, "convgit", "hooks", "inst") == ["install"]


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_each_shells_script_asks_convgit_through_one_variable(tmp_path: Path, shell: str) -> None:
    script = convgit(tmp_path, "completion", shell).stdout
    assert "_CONVGIT_COMPLETE=complete_" + shell in script
    assert "convgit" in script.split("_CONVGIT_COMPLETE", 1)[1]


def test_an_unknown_shell_is_one_sentence(tmp_path: Path) -> None:
    error = convgit(tmp_path, "completion", "tcsh", code=2).stderr
    assert one_sentence(error) == "convgit: convgit completes in bash, zsh or fish, not 'tcsh'."
