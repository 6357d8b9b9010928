"""The live state of one agent session, in a small file beside its pointer
(``agents/<agent>/<id>.live``), read and written under the agent session's lock.

The state says which convgit session mirrors the agent session, where its turn is (``turn``:
prompt, open or closed, when it opened), the entry up to which every turn is recorded or named
(``seen``: the leaf after the last event that caught up; a session's history from before its
live events is not theirs to catch up), whether the session holds entries (``entries``: the
user's commands may follow the agent to it), the last snapshot taken for it (``last``: commit
and tree), a snapshot waiting for its entry (``pending``, the files at a prompt; ``unsettled``,
the files at the end of a turn whose reply is not in the transcript yet), the working tree as
found the first time (``workspace``) and whether the session snapshots (``sidecar``, with the
size of the sidecar file it was read from: the file only grows, so another size means read it
again).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from convgit.base import codec
from convgit.store.config import fsmonitor
from convgit.store.location import StoreLocation, write_pointer

if TYPE_CHECKING:
    from convgit.store.sidecar import SnapshotInfo
    from convgit.workspace import Snapshot, Workspace


class LiveState:
    """The live state of one agent session."""

    def __init__(self, path: Path, data: dict[str, Any], agent: str) -> None:
        self.path = path
        self.data = data
        self.agent = agent
        self._saved = dict(data)
        self.unrecorded: list[str] = []  # this event's: replies no snapshot can cover any more

    @classmethod
    def load(cls, location: StoreLocation, agent: str, agent_session: str) -> LiveState:
        pointer = location.agent_pointer(agent, agent_session)
        path = pointer.with_name(pointer.name + ".live")
        try:
            data = codec.decode(path.read_bytes())
        except (OSError, ValueError):
            data = {}
        return cls(path, data if isinstance(data, dict) else {}, agent)

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
        self.set("turn", {"prompt": prompt, "open": True, "ts": now(), "at": time.time()})

    def remember(self, location: StoreLocation, sid: str, snapshots: bool) -> None:
        """Whether session ``sid`` snapshots, as of its sidecar file's present size."""
        self.set("sidecar", {"size": _size(location.sidecar_path(sid)), "enabled": snapshots})

    def snapshots(self, location: StoreLocation, sid: str) -> bool:
        """True when the state knows session ``sid`` snapshots, as of its sidecar file now."""
        return self.knows_snapshots(location, sid) is True

    def knows_snapshots(self, location: StoreLocation, sid: str) -> bool | None:
        """Whether session ``sid`` snapshots, as of its sidecar file now; None when the state
        does not know (never asked, or the sidecar file grew since)."""
        sidecar = self.get("sidecar")
        if sidecar is None or sidecar.get("size") != _size(location.sidecar_path(sid)):
            return None
        return sidecar.get("enabled") is True

    def remember_workspace(self, ws: Workspace) -> None:
        found = {"root": str(ws.root), "git_dir": str(ws.git_dir), "common": str(ws.common_dir)}
        self.set("workspace", {**found, "format": ws.object_format})

    def workspace(self, location: StoreLocation) -> Workspace | None:
        """The working tree as found before, if it is still there, with ``location``'s store
        kept out of its snapshots and restores (as ``Track.workspace`` does)."""
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


def skip_json(changed: int, cap: int, **more: Any) -> dict[str, Any]:
    """A snapshot the turn skipped (over ``[snapshots] max_files_per_turn``), kept in the state
    where a taken one would be (``pending``, ``unsettled``) and recorded for its entry as
    skipped (``over_cap``) once the transcript has it."""
    return {"over_cap": {"changed": changed, "cap": cap}, **more}


def snapshot_of(data: dict[str, Any]) -> Snapshot:
    from convgit.git.restore.plan import LeftAlone
    from convgit.workspace import Snapshot

    skipped = tuple(LeftAlone(str(s["path"]), str(s["reason"])) for s in data.get("skipped", []))
    rules = str(data.get("rules") or "")
    return Snapshot(
        str(data["commit"]), str(data["tree"]), int(data["files"]), skipped, True, rules=rules
    )
