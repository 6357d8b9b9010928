"""Retention: which snapshots and saved states ``convgit gc`` keeps, and why.

The policy is ``[retention]`` of config.toml. Held whatever the budget (the keep rules): every
labelled entry's files, every active leaf's path, the saved states of the last ``saved_days``
days and the newest one (where ``restore --undo`` goes), and a shared session's commits that no
remote has yet ("not pushed", ``collecting``). Kept unless the budget (``max_mib``)
needs the room, oldest first: everything of the last ``keep_days`` days, and the files at each
branch end. Everything else is let go. An entry's files are its nearest snapshot at or above it,
so an entry held holds that snapshot. A commit stays while any session keeps it (forks share
commits), and so does everything a ref gc does not look at reaches (a session in the trash, one
whose files cannot be read, what was fetched from or pushed to a remote).
"""

from __future__ import annotations

from dataclasses import field
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any

from convgit.base.valueclass import valueclass
from convgit.store import config, load
from convgit.store.location import StoreLocation

if TYPE_CHECKING:
    from convgit.conversation.tree import Tree
    from convgit.store.sidecar import Sidecar


@valueclass(frozen=True)
class Policy:
    """``[retention]`` of config.toml, defaults filled in."""

    keep_days: float = 30
    saved_days: float = 30
    max_mib: float | None = None
    auto: bool = False

    @classmethod
    def of(cls, location: StoreLocation) -> Policy:
        """The store's policy; config.toml refused as ``config.load`` refuses it."""
        settings = config.load(location)
        return cls(
            **{name: settings.value("retention", name) for name in config.SCHEMA["retention"]}
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "keep_days": self.keep_days,
            "saved_days": self.saved_days,
            "max_mib": self.max_mib,
            "auto": self.auto,
        }

    @property
    def words(self) -> str:
        """The policy in one line."""
        budget = f"a budget of {self.max_mib:g} MiB" if self.max_mib is not None else "no budget"
        auto = "gc runs by itself once a day" if self.auto else "gc runs when you run it"
        return (
            f"keep {self.keep_days:g} days, labels, active paths and branch ends; saved states"
            f" {self.saved_days:g} days; {budget}; {auto}"
        )


# why a commit is kept: held (the budget never lets it go) or kept while there is room
HELD = (
    "label",
    "active path",
    "saved state",
    "undo",
    "untold",
    "no entry",
    "held elsewhere",  # another session, or a ref gc does not look at, keeps the commit
    "not pushed",  # a shared session's commit no remote has yet (``convgit push`` sends it)
)
SOFT = ("recent", "branch end")


@valueclass
class Item:
    """One commit a session's records name: ``entry``'s snapshot, one a newer snapshot of it
    replaced, or a saved state (``entry`` ""), of time ``ts``; ``why``: the rule keeping it
    (None: let go)."""

    session: str
    entry: str
    commit: str
    what: str  # "snapshot", "replaced" or "saved"
    ts: str
    why: str | None = None
    short: str = ""  # the entry's short id, as people read it
    also: str | None = None  # a saved state's: the commit its restore went to (an undo reads it)

    def to_json(self) -> dict[str, Any]:
        return {
            "session": self.session,
            "entry": self.entry or None,
            "commit": self.commit,
            "what": self.what,
            "ts": self.ts,
            "kept": self.why,
        }


@valueclass
class Looked:
    """What the policy says of every live session: its items, and the sessions not looked at
    (with why), whose refs are kept as they are."""

    items: list[Item] = field(default_factory=list)
    sessions: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)


def judge(location: StoreLocation, policy: Policy, now: datetime | None = None) -> Looked:
    """Every live session's snapshots and saved states, each with the rule that keeps it."""
    now = now or datetime.now(timezone.utc)
    recent = _stamp(now - timedelta(days=policy.keep_days))
    saved_since = _stamp(now - timedelta(days=max(policy.saved_days, policy.keep_days)))
    looked = Looked()
    for sid in location.session_ids():
        found = load.session(_session_file(location, sid), sid)[1]
        sidecar = load.sidecar(_sidecar_file(location, sid))[1]
        if found.fatal or any(p.fatal for p in sidecar.problems):
            looked.skipped[sid] = "its files cannot be read safely (`convgit fsck`)"
            continue
        looked.sessions.append(sid)
        items = _items(sid, found, sidecar, recent, saved_since)
        from convgit.conversation.shortids import ShortIds

        shorts = ShortIds(found.entries)
        for item in items:
            item.short = shorts.short(item.entry) if item.entry in found.entries else item.entry
        looked.items += items
    return looked


def _items(sid: str, found: Tree, sidecar: Sidecar, recent: str, saved_since: str) -> list[Item]:
    snapshots = sidecar.snapshots
    held: dict[str, str] = {}  # entry whose files are held -> why

    def files_of(entry: str | None) -> str | None:
        node = entry
        while node is not None and node in found.entries:
            if node in snapshots:
                return node
            node = found.entries[node]["parentId"]
        return None

    def hold(entry: str | None, why: str) -> None:
        at = files_of(entry)
        if at is not None and (at not in held or (why in HELD and held[at] in SOFT)):
            held[at] = why

    for entry in found.labels:
        hold(entry, "label")
    for entry in found.path() if found.leaf else []:
        hold(entry, "active path")
    children = found.children
    for entry, record in found.entries.items():
        if str(record.get("ts", "")) >= recent:
            hold(entry, "recent")
        if not children.get(entry):
            hold(entry, "branch end")
    items: list[Item] = []
    for entry, snap in snapshots.items():
        known = found.entries.get(entry)
        ts = str(known.get("ts", snap.ts)) if known is not None else snap.ts
        why = held.get(entry) if known is not None else "no entry"  # not ours to judge
        items.append(Item(sid, entry, snap.commit, "snapshot", ts, why))
    for entry, older in sidecar.replaced.items():
        for snap in older:
            why = "recent" if snap.ts >= recent else None
            items.append(Item(sid, entry, snap.commit, "replaced", snap.ts, why))
    newest = max(sidecar.saved, key=lambda s: (s.ts, s.line), default=None)
    from convgit.session import restore_notes

    untold = {s.commit for s in restore_notes.pending_in(sidecar, found.entries)}
    for state in sidecar.saved:
        why = "saved state" if state.ts >= saved_since else None
        if state.commit in untold:  # the next turn's note compares with it
            why = "untold"
        if state is newest:
            why = "undo"
        item = Item(sid, "", state.commit, "saved", state.ts, why)
        item.also = state.restored_to or None
        items.append(item)
    return items


def _stamp(when: datetime) -> str:
    return when.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _session_file(location: StoreLocation, sid: str) -> Any:
    from convgit.store import sessions

    return sessions.session_file(location, sid)


def _sidecar_file(location: StoreLocation, sid: str) -> Any:
    from convgit.store import sessions

    return sessions.sidecar_file(location, sid)
