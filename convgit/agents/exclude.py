"""A settings file of the user's own kept out of git, as the agent keeps it when it makes one:
``.claude/settings.local.json`` goes into ``.git/info/exclude`` unless git ignores it already."""

from __future__ import annotations

import subprocess
from pathlib import Path

from convgit.base.errors import RefusedError


def keep_out_of_git(project: Path, path: Path) -> str | None:
    """Add ``path`` (a file in the working tree at ``project``) to the repository's
    ``info/exclude`` when git does not ignore it already; the pattern added, or None when
    nothing was (no repository, outside it, ignored already, or tracked: then it is the
    project's, and git would not ignore it anyway)."""
    try:
        relative = path.resolve().relative_to(project.resolve()).as_posix()
    except ValueError:
        return None

    def git(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["git", *args], cwd=project, capture_output=True, text=True, stdin=subprocess.DEVNULL
        )

    if git("rev-parse", "--is-inside-work-tree").stdout.strip() != "true":
        return None
    if git("check-ignore", "-q", "--no-index", "--", relative).returncode == 0:
        return None
    if git("ls-files", "--error-unmatch", "--", relative).returncode == 0:
        return None
    found = git("rev-parse", "--git-path", "info/exclude").stdout.strip()
    if not found:
        return None
    exclude = Path(found) if Path(found).is_absolute() else project / found
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
    return pattern
