"""Every error convgit raises on purpose. Each knows its exit code and, where one exists,
the command that fixes it; the CLI prints ``message`` (and ``hint``) and never a traceback."""

from __future__ import annotations

import errno


class ConvgitError(Exception):
    """Base class: an expected failure with one clear sentence for the user."""

    exit_code = 1
    report: tuple[str, ...] = ()  # lines printed after the sentence (fsck's, for a corrupt store)

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message if self.hint is None else f"{self.message} ({self.hint})"


class NotFoundError(ConvgitError):
    """A session, entry, label or snapshot that does not exist."""


class AmbiguousRefError(ConvgitError):
    """An id prefix that matches more than one entry."""


class RefusedError(ConvgitError):
    """An operation that would break a promise (lose work, build on the wrong leaf...)."""


class LeafMovedError(RefusedError):
    """Another writer moved the active leaf since this Session loaded it."""


class StoreLockedError(RefusedError):
    """A lock of the store could not be taken in time (another writer holds it)."""


class RestoreBlockedError(RefusedError):
    """A restore that would write through a symlink, or delete files outside the snapshot view."""


class HostileSnapshotError(RefusedError):
    """A snapshot whose tree would write outside the working tree, into .git or through a link."""


class SnapshotSkippedError(RefusedError):
    """A turn's snapshot not taken: it would take more new or changed files (``changed``) than
    ``[snapshots] max_files_per_turn`` (``cap``) allows. Nothing was written."""

    def __init__(self, changed: int, cap: int) -> None:
        super().__init__(
            f"The files were not snapshotted: {over_cap(changed, cap)}.",
            "ignore them in .gitignore, or raise the cap in config.toml",
        )
        self.changed = changed
        self.cap = cap

    def words(self, entry: str | None = None) -> str:
        """The skip in a few words, for a log line; with ``entry``, the turn's entry named."""
        if entry is None:
            return f"the files were not snapshotted: {over_cap(self.changed, self.cap)}"
        return skipped_words(entry, self.changed, self.cap)


def over_cap(changed: int, cap: int) -> str:
    return f"{changed:,} files are new or changed, over [snapshots] max_files_per_turn ({cap:,})"


def skipped_words(entry: str, changed: int, cap: int) -> str:
    """The words that say ``entry``'s turn has no snapshot, skipped over the cap (the hook
    log, ``status``)."""
    return f"the snapshot of {entry} was skipped: {over_cap(changed, cap)}"


class UnjudgeableRepositoryError(RefusedError):
    """A repository in which git cannot prove what is unreachable (a broken ref, a tree only a
    promisor remote has): ``convgit gc`` deletes nothing there."""


class NotARolloutError(RefusedError):
    """The file is not a Codex rollout."""


class NotAPiSessionError(RefusedError):
    """The file is not a pi session this convgit can read."""


class NotAGeminiSessionError(RefusedError):
    """The file is not a Gemini CLI chat this convgit can read."""


class NotAnOpenCodeSessionError(RefusedError):
    """The file is not an OpenCode export this convgit can read."""


class NotACopilotSessionError(RefusedError):
    """The file is not a GitHub Copilot CLI events file this convgit can read."""


class NotAQwenSessionError(RefusedError):
    """The file is not a Qwen Code chat file this convgit can read."""


class InvalidEntryError(ConvgitError):
    """An entry given to append that breaks the schema or the tree; nothing is written."""


class NoWorkspaceError(ConvgitError):
    """The workspace track is needed but there is no git repository (or the sidecar is off)."""


class WorkspaceError(ConvgitError):
    """A git command that convgit runs failed; the message carries git's own words."""


class AccessDeniedError(ConvgitError):
    """The file system denied convgit a file or folder (its permissions, a read-only file
    system): nothing is damaged, so exit 1 (never 3), with a hint to give access."""


DENIED = frozenset({errno.EPERM, errno.EACCES, errno.EROFS})


def denied(exc: OSError, message: str, path: object = None) -> AccessDeniedError | None:
    """``message`` as an ``AccessDeniedError`` when ``exc`` is the file system denying access
    to ``path`` (default: the file ``exc`` names), with the hint that gives it; else None."""
    if exc.errno not in DENIED:
        return None
    import os  # here: only a denied access needs it

    where = path if path is not None else exc.filename
    shown = os.fsdecode(where) if isinstance(where, str | bytes | os.PathLike) else "the store"
    if exc.errno == errno.EROFS:
        hint = (
            f"{shown} is on a read-only file system; make it writable, or keep the store"
            " elsewhere with --store DIR or CONVGIT_STORE"
        )
    else:
        hint = f"this user may not use {shown}: check its owner and mode (ls -ld {shown})"
    return AccessDeniedError(message, hint)


class RestoreIncompleteError(ConvgitError):
    """A restore that stopped, for a reason other than a signal (a full disk), after it began
    changing files: the message says how far it got and that ``restore --undo`` returns the
    files to the state it saved first. No file is left half-written."""


class UsageError(ConvgitError):
    """Bad arguments that the command line parser could not catch."""

    exit_code = 2


class CorruptStoreError(ConvgitError):
    """The store cannot be read without guessing: fsck names the problem, repair fixes it.
    ``report`` holds fsck's lines for it, when there is more to say than the first problem."""

    exit_code = 3

    def __init__(self, message: str, hint: str | None = None, report: tuple[str, ...] = ()) -> None:
        super().__init__(message, hint)
        self.report = report


class UnsupportedVersionError(CorruptStoreError):
    """The header names a format version this convgit does not know."""


class RunInterruptedError(ConvgitError):
    """A side-by-side run stopped by SIGINT or SIGTERM, after stopping its commands and removing
    its temporary worktrees; the exit code is the shell's for that signal (130, 143)."""

    def __init__(self, signum: int) -> None:
        import signal  # here: no other command needs it

        name = signal.Signals(signum).name
        super().__init__(
            f"The run was interrupted by {name}: its commands were stopped and its temporary"
            " worktrees removed."
        )
        self.signum = signum
        self.exit_code = 128 + signum


class SignalReceived(BaseException):
    """SIGINT, SIGTERM or SIGHUP received inside ``process_groups.stopping_on_signals``: raised
    where the main thread is, so every clean-up runs (a git convgit started is stopped and
    waited for) before the command exits. Not an ``Exception``: nothing swallows it."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


class StoppedError(ConvgitError):
    """A command stopped by a signal, with one sentence on the state it left; the exit code is
    the shell's for that signal (130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP)."""

    def __init__(self, signum: int, message: str, hint: str | None = None) -> None:
        super().__init__(message, hint)
        self.signum = signum
        self.exit_code = 128 + signum


def signal_name(signum: int) -> str:
    """SIGINT, SIGTERM...: the name of a signal number."""
    import signal  # here: only an interrupted command needs it

    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"
