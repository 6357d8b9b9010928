"""Where a store lives: ``--store``/``CONVGIT_STORE``, a ``.convgit`` folder, or the git common
dir; the paths of everything in it; and its ``config.toml``.

No git here: a repository's common dir is found by reading ``.git`` files the way git does, so
conversation-only commands never start a git process.
"""

from __future__ import annotations

import _thread
import os
import re
import sys
from collections.abc import Sequence
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from convgit.base.errors import CorruptStoreError, UsageError, denied

_SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


@dataclass(frozen=True)
class GitPlace:
    """A repository as git would find it from a directory (no objects are read)."""

    git_dir: Path
    common_dir: Path
    worktree: Path | None


def find_git(start: Path) -> GitPlace | None:
    """Find the repository ``start`` is in, honouring ``GIT_DIR``/``GIT_WORK_TREE`` like git."""
    env_dir = os.environ.get("GIT_DIR")
    if env_dir:
        git_dir = Path(env_dir).resolve()
        work = os.environ.get("GIT_WORK_TREE")
        worktree = Path(work).resolve() if work else Path.cwd().resolve()
        return GitPlace(git_dir, _common_dir(git_dir), worktree)
    for folder in (start.resolve(), *start.resolve().parents):
        dotgit = folder / ".git"
        if dotgit.is_dir() and _is_git_directory(dotgit):
            return GitPlace(dotgit, _common_dir(dotgit), folder)
        if dotgit.is_file():
            text = dotgit.read_text(errors="replace").strip()
            if text.startswith("gitdir:"):
                git_dir = (folder / text[len("gitdir:") :].strip()).resolve()
                return GitPlace(git_dir, _common_dir(git_dir), folder)
    return None


def _is_git_directory(git_dir: Path) -> bool:
    """What git takes for a repository: a HEAD, and objects and refs folders. Any other `.git`
    folder (a sandbox's empty mount point, say) is passed by, as git passes it by."""
    common = _common_dir(git_dir)
    return (
        (git_dir / "HEAD").is_file()
        and (common / "objects").is_dir()
        and (common / "refs").is_dir()
    )


def _key(worktree: Path) -> str:
    """A worktree's key: a hash of its folder's path."""
    import hashlib  # here: reading commands outside git never need it

    return hashlib.sha1(str(worktree).encode()).hexdigest()[:12]


def _linked_worktrees(common_dir: Path) -> list[Path]:
    """The folders of the repository's linked worktrees, as git records them (``gitdir``)."""
    found = []
    for gitdir in sorted((common_dir / "worktrees").glob("*/gitdir")):
        with suppress(OSError):
            found.append(Path(gitdir.read_text().strip()).parent.resolve())
    return found


def _same_repository(worktree: Path, common_dir: Path) -> bool:
    """Whether ``worktree`` is a folder whose ``.git`` leads to ``common_dir``."""
    dotgit = worktree / ".git"
    try:
        if dotgit.is_dir():
            return _common_dir(dotgit).resolve() == common_dir.resolve()
        text = dotgit.read_text(errors="replace").strip()
    except OSError:
        return False
    if not text.startswith("gitdir:"):
        return False
    git_dir = (worktree / text[len("gitdir:") :].strip()).resolve()
    return _common_dir(git_dir).resolve() == common_dir.resolve()


def _common_dir(git_dir: Path) -> Path:
    pointer = git_dir / "commondir"
    if pointer.is_file():
        return (git_dir / pointer.read_text().strip()).resolve()
    return git_dir


@dataclass(frozen=True)
class StoreLocation:
    """The store folder, and the repository it belongs to (None outside git)."""

    root: Path
    git: GitPlace | None

    @property
    def sessions(self) -> Path:
        return self.root / "sessions"

    @property
    def worktree_key(self) -> str:
        """Tells worktrees of one repository apart (private index, current session)."""
        if self.git is None or self.git.worktree is None:
            return "store"
        return _key(self.git.worktree)

    @property
    def trash(self) -> Path:
        """Where the sessions ``convgit sessions rm`` moved wait (``convgit.session.trash``)."""
        return self.root / "trash"

    def in_trash(self, sid: str) -> StoreLocation:
        """The trash's own store for session ``sid``: its files as its sessions folder held
        them, under ``trash/<sid>/``."""
        return StoreLocation(self.trash / sid, self.git)

    def trashed_ids(self) -> list[str]:
        """The sessions in the trash."""
        try:
            names = os.listdir(self.trash)
        except (FileNotFoundError, NotADirectoryError):
            return []
        return sorted(n for n in names if self.in_trash(n).session_path(n).is_file())

    def session_path(self, sid: str) -> Path:
        return self.sessions / f"{sid}.jsonl"

    def sidecar_path(self, sid: str) -> Path:
        return self.sessions / f"{sid}.files.jsonl"

    def index_path(self, sid: str) -> Path:
        return self.root / "index" / f"{sid}-{self.worktree_key}"

    def lock_path(self, name: str) -> Path:
        return self.root / "locks" / f"{name}.lock"

    @property
    def current_pointer(self) -> Path:
        return self.root / "current" / self.worktree_key

    def current(self) -> str | None:
        """The session made current in this worktree (or, in a store made outside git before
        the folder became a repository, the one made current then); None when there is none. A
        pointer that exists but cannot be read is a damaged store (exit 3), never "no session"."""
        for pointer in (self.current_pointer, self.root / "current" / "store"):
            try:
                sid = pointer.read_text(errors="replace").strip()
            except (FileNotFoundError, NotADirectoryError):
                continue
            except OSError as exc:
                msg = (
                    f"The store's pointer to the current session, {pointer}, cannot be read"
                    f" ({exc.strerror or exc})."
                )
                raise denied(exc, msg, pointer) or CorruptStoreError(msg) from None
            if sid:
                return sid
        return self._moved_here()

    def set_current(self, sid: str) -> None:
        """Make ``sid`` current in this worktree: the user's choice, which an agent's event
        never changes (``follow``)."""
        with suppress(FileNotFoundError, NotADirectoryError):
            self.followed_pointer.unlink()
        self._point(self.current_pointer, sid)

    def _point(self, pointer: Path, sid: str) -> None:
        """Write the current-session pointer, and beside it the worktree's folder: a hint that
        finds it again after a move (``_moved_here``), never needed."""
        write_pointer(pointer, sid)
        if self.git is not None and self.git.worktree is not None:
            with suppress(OSError):
                write_pointer(pointer.with_suffix(".path"), str(self.git.worktree))

    @property
    def followed_pointer(self) -> Path:
        """The session an agent's event made current in this worktree (``follow``)."""
        return self.current_pointer.with_name(self.worktree_key + ".agent")

    def follow(self, sid: str) -> None:
        """Make ``sid`` current for an agent's event: the user's commands follow the agent to
        the session it records, unless the current session is one the user chose (made
        current by ``init``, ``use`` or any command of theirs, not by an agent's event, and
        still there). The pointer of the followed session is written first: a crash between
        the two writes leaves the user's choice in force."""
        now = self.current()
        if now == sid:
            return
        if now is not None and self.session_path(now).is_file():
            try:
                followed = self.followed_pointer.read_text(errors="replace").strip()
            except OSError:
                followed = ""
            if followed != now:
                return
        write_pointer(self.followed_pointer, sid)
        self._point(self.current_pointer, sid)

    def _moved_here(self) -> str | None:
        """The current session of this worktree from before the repository moved (or was
        copied) to another folder: its pointer is under the key of the folder it was in. The
        one pointer whose worktree is gone (its folder is no worktree of this repository any
        more; a pointer of an older convgit, which did not say its folder, only in a repository
        of one worktree) is taken over: it moves to this worktree's key, as do the private
        indexes of that key. None when there is no such pointer or more than one."""
        if self.git is None or self.git.worktree is None:
            return None
        folder = self.root / "current"
        try:
            names = os.listdir(folder)
        except OSError:
            return None
        linked = _linked_worktrees(self.git.common_dir)
        live = {_key(path) for path in [self.git.worktree, *linked]}
        gone = []
        for name in names:
            if "." in name or name == "store" or name in live:
                continue
            try:
                was: str | None = (folder / f"{name}.path").read_text().strip()
            except OSError:
                was = None
            if was is None and linked:
                continue
            if was is not None and _same_repository(Path(was), self.git.common_dir):
                continue  # a worktree of this repository that is still there
            gone.append(name)
        if len(gone) != 1:
            return None
        old = folder / gone[0]
        try:
            sid = old.read_text(errors="replace").strip()
        except OSError:
            return None
        if not sid or not self.session_path(sid).is_file():
            return None
        with suppress(OSError):
            os.replace(old, self.current_pointer)
            (folder / f"{gone[0]}.path").unlink(missing_ok=True)
            write_pointer(self.current_pointer.with_suffix(".path"), str(self.git.worktree))
            followed = folder / f"{gone[0]}.agent"
            if followed.exists():
                os.replace(followed, self.followed_pointer)
            for index in (self.root / "index").glob(f"*-{gone[0]}*"):
                os.replace(index, index.with_name(index.name.replace(gone[0], self.worktree_key)))
        return sid

    def agent_pointer(self, agent: str, agent_session: str) -> Path:
        """Where the id of the session that mirrors ``agent``'s session ``agent_session`` is
        kept (a hint: the session's header is what counts)."""
        name = agent_session
        if not _SAFE_NAME.fullmatch(name):
            import hashlib  # here: only imports of odd ids need it

            name = hashlib.sha1(name.encode()).hexdigest()
        return self.root / "agents" / agent / name

    def agent_lock(self, agent: str, agent_session: str) -> Path:
        """The lock that makes one process at a time find, start or update the session that
        mirrors ``agent``'s session ``agent_session`` (and its live state)."""
        return self.lock_path(f"agent-{agent}-{self.agent_pointer(agent, agent_session).name}")

    def session_ids(self) -> list[str]:
        """The sessions of the store; [] when it has none yet. A store or sessions folder that
        exists but cannot be listed is a damaged store (exit 3), never an empty one."""
        try:
            names = os.listdir(self.sessions)
        except FileNotFoundError:
            return []
        except OSError as exc:
            msg = (
                f"The store's sessions folder {self.sessions} cannot be read"
                f" ({exc.strerror or exc})."
            )
            raise denied(exc, msg, self.sessions) or CorruptStoreError(
                msg, "check the folder given by --store or CONVGIT_STORE"
            ) from None
        return sorted(
            name[: -len(".jsonl")]
            for name in names
            if name.endswith(".jsonl") and name.count(".") == 1
        )


def locate(
    start: Path | str = ".", store: Path | str | None = None, *, per_user: bool = False
) -> StoreLocation:
    """The store for ``start``: ``--store``/``CONVGIT_STORE``; else, in git, a ``.convgit`` store
    between ``start`` and the worktree's root (made before the folder became a repository), else
    ``<git-common-dir>/convgit``; outside git, the nearest ``.convgit`` folder above ``start``,
    else the per-user store the hooks keep for it or a folder above (``userstore``), else
    ``<start>/.convgit`` (``per_user``, for the hooks: the per-user store of ``start``)."""
    start = Path(start)
    git = find_git(start)
    chosen = store or os.environ.get("CONVGIT_STORE")
    if chosen:
        root = Path(chosen).resolve()
        refuse_store_place(root, git)
        return StoreLocation(root, git)
    here = start.resolve()
    if git is not None:
        # a store started here before `git init` keeps its sessions (and stays out of snapshots)
        top = git.worktree.resolve() if git.worktree is not None else None
        for folder in (here, *here.parents) if top is not None else ():
            if (folder / ".convgit" / "sessions").is_dir():
                return StoreLocation(folder / ".convgit", git)
            if folder == top:
                break
        return StoreLocation(git.common_dir / "convgit", git)
    for folder in (here, *here.parents):
        if (folder / ".convgit").is_dir():
            return StoreLocation(folder / ".convgit", None)
    from convgit.store import userstore

    for folder in (here, *here.parents):  # the hooks' store of a folder outside git
        kept = userstore.folder_store(folder)
        if (kept / "sessions").is_dir():
            return StoreLocation(kept, None)
    if per_user:
        return StoreLocation(userstore.folder_store(here), None)
    return StoreLocation(here / ".convgit", None)


def refuse_store_place(root: Path, git: GitPlace | None) -> None:
    """Refuse (UsageError) a store given at a place that would harm the user's files or git:
    the working tree's root, where every snapshot would hold the store and a restore would
    rewind the conversation with the files; or git's own folder or a folder inside it (a
    worktree's git dir too), where the store's ``index`` would replace git's index. Only
    convgit's place inside git's folder, ``<git-common-dir>/convgit``, is a store's there."""
    if git is not None and git.worktree is not None and root == git.worktree.resolve():
        raise UsageError(
            f"The store cannot be the working tree's root ({root}): every snapshot would"
            " hold the conversation, and a restore would rewind it.",
            "give a folder of its own (such as ./.convgit), or leave --store and"
            " CONVGIT_STORE unset",
        )
    known = () if git is None else (git.git_dir.resolve(), git.common_dir.resolve())
    for folder in (root, *root.parents):
        if folder in known or folder.name == ".git" or _is_git_directory(folder):
            if folder.is_dir() and root.is_relative_to(_common_dir(folder) / "convgit"):
                return  # convgit's place in git's folder
            raise UsageError(
                f"The store cannot be inside git's own folder ({folder}): git keeps its"
                " index and refs there.",
                "give a folder of its own (such as ./.convgit), or leave --store and"
                " CONVGIT_STORE unset",
            )


def load_config(location: StoreLocation) -> dict[str, Any]:
    """``config.toml`` of the store, or {} when there is none."""
    path = location.root / "config.toml"
    if not path.exists():
        return {}
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    try:
        config: dict[str, Any] = tomllib.loads(path.read_text())
    except OSError as exc:
        msg = f"{path.name} cannot be read ({exc.strerror or exc})."
        raise denied(exc, msg, path) or CorruptStoreError(msg) from None
    except ValueError as exc:
        raise CorruptStoreError(f"{path.name} cannot be read: {exc}.") from None
    return config


def config_table(
    location: StoreLocation, name: str, keys: Sequence[str] | None = None
) -> dict[str, Any]:
    """The table ``[name]`` of ``config.toml`` ({} when it has none). One that is not a table,
    or (given ``keys``, its settings) has a key that is none of them, is refused in one
    sentence (CorruptStoreError) naming the file to edit."""
    given = load_config(location).get(name, {})
    where = f"edit {location.root / 'config.toml'}"
    if not isinstance(given, dict):
        raise CorruptStoreError(f"config.toml's [{name}] is not a table.", where)
    unknown = sorted(set(given) - set(keys)) if keys is not None else []
    if unknown:
        raise CorruptStoreError(
            f"config.toml's [{name}] has {unknown[0]!r}, which is no setting of it"
            f" (they are {', '.join(keys or ())}).",
            where,
        )
    return given


DEFAULT_SIZE_CAP_MIB = 10
DEFAULT_SIZE_CAP = DEFAULT_SIZE_CAP_MIB * 1024 * 1024


def size_cap(location: StoreLocation) -> int:
    """Bytes above which a file is left out of snapshots (``[snapshots] size_cap_mib``, default
    ``DEFAULT_SIZE_CAP_MIB``); a value that is not a positive number is refused
    (CorruptStoreError)."""
    value = config_table(location, "snapshots").get("size_cap_mib", DEFAULT_SIZE_CAP_MIB)
    if type(value) not in (int, float) or not 0 < value < 1 << 40:
        raise CorruptStoreError(
            f"config.toml sets size_cap_mib to {value!r}; it must be a positive number of MiB.",
            f"edit {location.root / 'config.toml'}",
        )
    return int(value * 1024 * 1024)


def fsmonitor(location: StoreLocation) -> str:
    """How snapshots find what changed (``[snapshots] fsmonitor``): "off" (the default),
    "auto", "watchman" or the path of a git fsmonitor hook (``convgit.git.index.watcher``); a value
    that is not a string is refused (CorruptStoreError)."""
    value = config_table(location, "snapshots").get("fsmonitor", "off")
    if not isinstance(value, str) or not value.strip():
        raise CorruptStoreError(
            f'config.toml sets fsmonitor to {value!r}; it must be "auto", "watchman",'
            ' "off" or the path of a git fsmonitor hook.',
            f"edit {location.root / 'config.toml'}",
        )
    return value.strip()


def write_pointer(path: Path, value: str) -> None:
    """Write a small pointer file atomically: a scratch file of this writer's own, moved into
    place (two hooks ending their turns at once each write it; one shared scratch name made
    the later move fail)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    scratch = path.with_name(f".{path.name}.{os.getpid()}.{_thread.get_ident()}.tmp")
    try:
        scratch.write_text(value + "\n")
        os.replace(scratch, path)
    except BaseException:
        with suppress(OSError):
            os.unlink(scratch)
        raise
