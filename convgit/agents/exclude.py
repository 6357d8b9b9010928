"""Files of the agents' settings kept out of git through the repository's ``info/exclude``:
Claude Code's ``.claude/settings.local.json`` (as Claude keeps it when it makes one), and a file
in the working tree that is convgit's own (pi's extension, OpenCode's plugin, a settings file the
install made: ``.gemini/settings.json``), unless git ignores it already or it is tracked (then
it is the project's). Each line added is recorded (Claude's file's too), so that uninstalling
takes out exactly that line and nothing of the user's."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from convgit.agents import settings
from convgit.base.errors import RefusedError


def keep_out_of_git(project: Path, path: Path, record: Path | None = None) -> str | None:
    """Add ``path`` (a file in the working tree at ``project``) to the repository's
    ``info/exclude`` when git does not ignore it already; the pattern added, or None when
    nothing was (no repository, outside it, ignored already, or tracked: then it is the
    project's, and git would not ignore it anyway). The line goes at the end, below every line
    of the user's (the same text among them too: a later ``!`` line had let the file back in).
    ``record``: where the line added is noted, for ``let_back_into_git``."""
    found = _exclude_file(project, path)
    if found is None:
        return None
    exclude, relative = found
    if _git(project, "check-ignore", "-q", "--no-index", "--", relative).returncode == 0:
        return None
    if _git(project, "ls-files", "--error-unmatch", "--", relative).returncode == 0:
        return None
    pattern = "/" + relative
    try:
        before = exclude.read_text() if exclude.exists() else ""
        exclude.parent.mkdir(parents=True, exist_ok=True)
        with exclude.open("a") as out:
            if before and not before.endswith("\n"):
                out.write("\n")
            out.write(pattern + "\n")
    except OSError as exc:
        raise RefusedError(
            f"{exclude} cannot be written ({exc.strerror}); the hooks are installed, but git"
            f" does not ignore {relative}."
        ) from None
    if record is not None:
        added = _recorded(record)
        settings.write_atomically(
            record, json.dumps([*added, [str(exclude), pattern]]).encode(), 0o600
        )
    return pattern


def let_back_into_git(project: Path, path: Path, record: Path) -> str | None:
    """Take out of ``info/exclude`` the line ``keep_out_of_git`` added for ``path`` (as
    ``record`` notes it), and nothing else; the pattern taken out, or None. Of the lines of
    that text it is the last: the install appended it below the user's."""
    found = _exclude_file(project, path)
    if found is None:
        return None
    exclude, relative = found
    wanted = [str(exclude), "/" + relative]
    added = _recorded(record)
    if wanted not in added:
        return None
    try:
        lines = exclude.read_text().splitlines(keepends=True)
    except FileNotFoundError:
        lines = []
    except OSError as exc:
        raise RefusedError(f"{exclude} cannot be read ({exc.strerror}).") from None
    kept = list(lines)
    same = [number for number, line in enumerate(lines) if line.rstrip("\r\n") == wanted[1]]
    if same:
        del kept[same[-1]]
    if kept != lines:
        mode = exclude.stat().st_mode & 0o7777
        settings.write_atomically(exclude, "".join(kept).encode(), mode)
    left = [pair for pair in added if pair != wanted]
    if left:
        settings.write_atomically(record, json.dumps(left).encode(), 0o600)
    else:
        record.unlink(missing_ok=True)
    return wanted[1] if kept != lines else None


def _exclude_file(project: Path, path: Path) -> tuple[Path, str] | None:
    """The repository's ``info/exclude`` and ``path`` relative to the working tree at
    ``project``; None outside a repository or the working tree."""
    try:
        relative = path.resolve().relative_to(project.resolve()).as_posix()
    except ValueError:
        return None
    if _git(project, "rev-parse", "--is-inside-work-tree").stdout.strip() != "true":
        return None
    found = _git(project, "rev-parse", "--git-path", "info/exclude").stdout.strip()
    if not found:
        return None
    exclude = Path(found) if Path(found).is_absolute() else project / found
    return exclude.resolve(), relative


def _git(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", *args], cwd=project, capture_output=True, text=True, stdin=subprocess.DEVNULL
    )


def _recorded(record: Path) -> list[list[str]]:
    try:
        value = json.loads(record.read_bytes())
    except (OSError, ValueError):
        return []
    if not isinstance(value, list):
        return []
    return [[str(a), str(b)] for a, b in (p for p in value if isinstance(p, list) and len(p) == 2)]
