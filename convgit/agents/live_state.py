"""The live state of one agent session, in a small file beside its pointer
(``agents/<agent>/<id>.live``), read and written under the agent session's lock; and the
prompt that needs nothing more than it.

The state says which convgit session mirrors the agent session, where its turn is (``turn``:
prompt, open or closed), the last snapshot taken for it (``last``: commit and tree), a
snapshot waiting for its entry (``pending``, the files at a prompt; ``unsettled``, the files
at the end of a turn whose reply is not in the transcript yet), the working tree as found the
first time (``workspace``) and whether the session snapshots (``sidecar``, with the size of the
sidecar file it was read from: the file only grows, so another size means read it again).

``quick_prompt`` is the common prompt: the turn was closed, the files are compared with the
last snapshot, and nothing else is read (no session, no transcript, no ``git rev-parse``).
``BackgroundSnapshot`` takes the files at the end of a turn while the transcript is read.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from convgit.base import codec
from convgit.base.errors import NotFoundError
from convgit.store.location import StoreLocation, fsmonitor, size_cap, write_pointer

if TYPE_CHECKING:
    from convgit.session import Session
    from convgit.store.sidecar import SnapshotInfo
    from convgit.workspace import Snapshot, Workspace


class Live:
    """The live state of one agent session."""

    def __init__(self, path: Path, data: dict[str, Any]) -> None:
        self.path = path
        self.data = data
        self._saved = dict(data)

    @classmethod
    def load(cls, location: StoreLocation, agent: str, agent_session: str) -> Live:
        pointer = location.agent_pointer(agent, agent_session)
        path = pointer.with_name(pointer.name + ".live")
        try:
            data = codec.decode(path.read_bytes())
        except (OSError, ValueError):
            data = {}
        return cls(path, data if isinstance(data, dict) else {})

    def save(self) -> None:
        if self.data != self._saved:
            write_pointer(self.path, codec.dumps(self.data))
            self._saved = dict(self.data)

    def get(self, key: str) -> dict[str, Any] | None:
        """A part of the state that is an object (turn, pending, last, unsettled...)."""
        value = self.data.get(key)
        return value if isinstance(value, dict) else None

    def set(self, key: str, value: Any) -> None:
        if value is None:
            self.data.pop(key, None)
        else:
            self.data[key] = value

    def open_turn(self, prompt: str | None) -> None:
        self.set("turn", {"prompt": prompt, "open": True, "ts": now()})

    def remember(self, location: StoreLocation, sid: str, snapshots: bool) -> None:
        """Whether session ``sid`` snapshots, as of its sidecar file's present size."""
        self.set("sidecar", {"size": _size(location.sidecar_path(sid)), "enabled": snapshots})

    def snapshots(self, location: StoreLocation, sid: str) -> bool:
        """True when the state knows session ``sid`` snapshots, as of its sidecar file now."""
        sidecar = self.get("sidecar")
        if sidecar is None or sidecar.get("size") != _size(location.sidecar_path(sid)):
            return False
        return sidecar.get("enabled") is True

    def remember_workspace(self, ws: Workspace) -> None:
        found = {"root": str(ws.root), "git_dir": str(ws.git_dir), "common": str(ws.common_dir)}
        self.set("workspace", {**found, "format": ws.object_format})

    def workspace(self, location: StoreLocation) -> Workspace | None:
        """The working tree as found before, if it is still there, with ``location``'s store
        kept out of its snapshots and restores (as ``session_files.find_workspace`` does)."""
        known = self.get("workspace")
        if known is None:
            return None
        from convgit.workspace import Workspace

        root, git_dir = Path(str(known["root"])), Path(str(known["git_dir"]))
        if not root.is_dir() or not git_dir.is_dir():
            return None
        found = Workspace(
            root, git_dir, Path(str(known["common"])), object_format=str(known["format"])
        )
        found.keep_out(location.root)
        found.track_changes(fsmonitor(location))
        return found


def now() -> str:
    """When, for the state (not a record of the session: seconds are enough)."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return -1


def snapshot_json(snap: Snapshot | SnapshotInfo, **more: Any) -> dict[str, Any]:
    skipped = [
        s if isinstance(s, dict) else {"path": s.path, "reason": s.reason} for s in snap.skipped
    ]
    found = {"commit": snap.commit, "tree": snap.tree_id, "files": snap.files, "skipped": skipped}
    if snap.rules:
        found["rules"] = snap.rules
    return {**found, **more}


def snapshot_of(data: dict[str, Any]) -> Snapshot:
    from convgit.git.restoreplan import Skipped
    from convgit.workspace import Snapshot

    skipped = tuple(Skipped(str(s["path"]), str(s["reason"])) for s in data.get("skipped", []))
    rules = str(data.get("rules") or "")
    return Snapshot(
        str(data["commit"]), str(data["tree"]), int(data["files"]), skipped, True, rules=rules
    )


def after(parent: str | None, snap: Callable[[str | None], Snapshot]) -> Snapshot:
    """``snap(parent)``; when ``parent`` (the state's ``last``, which no ref may keep yet: a
    snapshot waiting for its entry) is gone, collected by `git gc --prune=now`, the files are
    snapshotted without a parent rather than every later turn failing."""
    try:
        return snap(parent)
    except NotFoundError:
        if parent is None:
            raise
        return snap(None)


def prompt_message(title: str, prompt: str | None) -> str:
    return f"at a prompt of {title} ({prompt})"


def take(
    location: StoreLocation, sid: str, ws: Workspace, parent: str | None, what: str
) -> Snapshot:
    """The files now as a commit with parent ``parent`` (``Session.take_snapshot``, without
    the session: its private index, its lock and the size cap are all it needs)."""
    index = location.index_path(sid)
    index.parent.mkdir(parents=True, exist_ok=True)
    return ws.snapshot(
        index,
        message=f"convgit snapshot {what}\n\nConvgit-Session: {sid}\n",
        parent=parent,
        size_cap=size_cap(location),
    )


def quick_prompt(location: StoreLocation, live: Live, title: str, prompt: str | None) -> str | None:
    """A prompt whose turn is closed, told from the state alone: the files are snapshotted if
    they changed since the last snapshot (kept ``pending`` for the prompt's entry) and the
    turn opens. None when the state does not say enough (the caller reads the session)."""
    sid, turn, last, sidecar = (
        live.data.get("session"),
        live.get("turn"),
        live.get("last"),
        live.get("sidecar"),
    )
    if not isinstance(sid, str) or not location.session_path(sid).exists():
        return None
    if turn is not None and turn.get("open"):
        return None
    if sidecar is None or sidecar.get("size") != _size(location.sidecar_path(sid)):
        return None
    location.set_current(sid)
    if not sidecar.get("enabled") or location.git is None:
        live.open_turn(prompt)
        return f"session {sid}: turn open"
    ws = live.workspace(location)
    if last is None or ws is None:
        return None
    message = prompt_message(title, prompt)
    snap = after(str(last["commit"]), lambda parent: take(location, sid, ws, parent, message))
    live.open_turn(prompt)
    if snap.reused:
        return f"session {sid}: files unchanged; turn open"
    live.set("pending", snapshot_json(snap, prompt=prompt))
    live.set("last", {"commit": snap.commit, "tree": snap.tree_id})
    return f"session {sid}: files changed: snapshot taken for the prompt; turn open"


class BackgroundSnapshot:
    """The files snapshotted on another thread (at the end of a turn, while the transcript is
    imported), the parent being the last snapshot, for session ``session_id``. Locks are
    reentrant within a process, not a thread: the caller takes no workspace lock until
    ``result()`` returned."""

    def __init__(
        self, session_id: str, parent: str, snap: Callable[[str | None], Snapshot]
    ) -> None:
        self.session_id = session_id
        self.parent = parent
        self._snap: Snapshot | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._take, args=(snap,), daemon=True)
        self._thread.start()

    @classmethod
    def start(cls, session: Session, live: Live) -> BackgroundSnapshot | None:
        last = live.get("last")
        if last is None or not session.snapshots_enabled:
            return None
        session.workspace()  # found before the thread starts: it is not shared while found
        what = "at a turn's end"
        return cls(session.id, str(last["commit"]), lambda p: session.take_snapshot(p, what))

    @classmethod
    def from_state(cls, location: StoreLocation, live: Live) -> BackgroundSnapshot | None:
        """Started from the state alone, before the session is read (its snapshot then runs
        beside the reading): None when the state does not say enough (``start`` then)."""
        sid, last = live.data.get("session"), live.get("last")
        if not isinstance(sid, str) or last is None or not live.snapshots(location, sid):
            return None
        ws = live.workspace(location)
        if ws is None or not location.session_path(sid).exists():
            return None
        what = "at a turn's end"
        return cls(sid, str(last["commit"]), lambda p: take(location, sid, ws, p, what))

    def _take(self, snap: Callable[[str | None], Snapshot]) -> None:
        try:
            self._snap = after(self.parent, snap)
        except BaseException as exc:  # given to the thread that asks for the result
            self._error = exc

    def wait(self) -> None:
        self._thread.join()

    def result(self) -> Snapshot:
        self.wait()
        if self._error is not None:
            raise self._error
        assert self._snap is not None
        return self._snap
