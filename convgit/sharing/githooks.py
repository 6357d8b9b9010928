"""convgit's hooks in git itself: ``post-commit`` and ``post-rewrite`` (the git notes of
attribution, ``commit_notes``), ``prepare-commit-msg`` (``[attribution] trailers``: trailers
naming the conversation) and ``pre-push`` (``[share] on_push``: ``git push`` sends the shared
sessions too). Each chains the hook that was there: it is kept beside ours as
``<name>.convgit-chained`` and run first, with the same arguments and input; its failure is the
hook's failure. Uninstalling puts it back.

The hooks folder is git's own answer (``core.hooksPath`` honoured). A post-commit during a
rebase starts no convgit (the shell looks for git's rebase folders first): the post-rewrite hook
carries the notes once the rebase is done."""

from __future__ import annotations

import os
import shlex
import stat
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from convgit.base.errors import RefusedError, UsageError
from convgit.workspace import Workspace

MARK = "# convgit hook"
HOOKS = ("prepare-commit-msg", "post-commit", "post-rewrite", "pre-push")
WITH_INPUT = ("pre-push", "post-rewrite")  # git writes lines on their stdin


@dataclass(frozen=True)
class HookChange:
    hook: str
    path: Path
    chained: bool  # a hook that was there runs first
    changed: bool
    config: list[str] = field(default_factory=list)  # git config values added (or taken out)

    def to_json(self) -> dict[str, Any]:
        return {
            "hook": self.hook,
            "path": str(self.path),
            "chained": self.chained,
            "changed": self.changed,
            "config": self.config,
        }


def with_config(change: HookChange, values: list[str]) -> HookChange:
    """``change`` with the git config values added (or taken out) beside it."""
    return replace(change, config=values, changed=change.changed or bool(values))


def folder(git: Workspace) -> Path:
    """Where git looks for hooks in this repository."""
    listed = git.run("rev-parse", "--path-format=absolute", "--git-path", "hooks", config=())
    return Path(os.fsdecode(listed.stdout).strip())


def default_program() -> str:
    return f"{shlex.quote(sys.executable)} -m convgit"


def script(hook: str, program: str) -> str:
    """The hook: the chained one first (its failure stops git), then convgit's part (which never
    stops git: it says what failed and exits 0)."""
    run_ours = f'{program} git-hook {hook} "$@"'
    if hook == "post-commit":  # during a rebase: the post-rewrite hook does it, once
        run_ours = (
            'for d in rebase-merge rebase-apply; do [ -d "$(git rev-parse --git-path "$d")" ]'
            f" && exit 0; done\n{run_ours}"
        )
    if hook in WITH_INPUT:
        keep = (
            "input=$(cat)\n"
            'if [ -x "$chained" ]; then printf "%s\\n" "$input" | "$chained" "$@" || exit $?; fi\n'
        )
        ours = f'printf "%s\\n" "$input" | {run_ours} || true\n'
    else:
        keep = 'if [ -x "$chained" ]; then "$chained" "$@" || exit $?; fi\n'
        ours = f"{run_ours} || true\n"
    return (
        f"#!/bin/sh\n{MARK}: {hook} (`convgit hooks uninstall git` takes it out)\n"
        f'chained="$(dirname "$0")/{hook}.convgit-chained"\n{keep}{ours}exit 0\n'
    )


def _ours(path: Path) -> bool:
    try:
        return MARK in path.read_text(errors="replace")
    except OSError:
        return False


def install(git: Workspace, hook: str, program: str | None = None) -> HookChange:
    if hook not in HOOKS:
        raise UsageError(f"convgit has no git hook {hook!r}.")
    place = folder(git)
    place.mkdir(parents=True, exist_ok=True)
    path, chained = place / hook, place / f"{hook}.convgit-chained"
    text = script(hook, program or default_program())
    if path.exists() and not _ours(path):
        if chained.exists():
            raise RefusedError(
                f"{path} is not convgit's and {chained.name} is taken; nothing was changed.",
                "move one of them aside, then install again",
            )
        os.replace(path, chained)
    changed = not (path.exists() and path.read_text(errors="replace") == text)
    if changed:
        temporary = path.with_name(f"{hook}.convgit-new")
        temporary.write_text(text)
        temporary.chmod(temporary.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        os.replace(temporary, path)
    return HookChange(hook, path, chained.exists(), changed)


def uninstall(git: Workspace, hook: str) -> HookChange:
    place = folder(git)
    path, chained = place / hook, place / f"{hook}.convgit-chained"
    if not _ours(path):
        return HookChange(hook, path, False, False)
    if chained.exists():
        os.replace(chained, path)
    else:
        path.unlink()
    return HookChange(hook, path, False, True)
