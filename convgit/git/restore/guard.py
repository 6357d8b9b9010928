"""A restore's last look at each path before it changes it: is the path still what the plan
saw, and so what the saved state holds?

Another writer (an agent, a build, an editor's autosave) may change files while a restore
runs. A restore overwrites or deletes only bytes it saved, so just before it changes a path it
checks that path, and leaves alone (and lists) one that changed since the plan:

* ``Guard`` first compares every path to change with git's stat data of it in the private
  index (type, size, modification and change times, inode: what git itself trusts), from when
  the plan staged the files. A path whose stat data differs, or that git may have indexed in
  the same clock tick as it changed (git's "racy" entries), is hashed again as git would
  (through its filters) and compared with the saved blob. What matches is remembered by its
  stat data now; what does not is changed since the plan.
* ``Guard.changed`` then looks at one path immediately before it is written or deleted: its
  stat data must be the one remembered (a path the saved state lacks must still be absent),
  and the folders above a file to write must be real folders or absent (git would delete a
  file or symlink in the way). A folder that stands where a file goes is removed only when
  empty: what is in it was not saved.

What is left: a change made in the same clock tick as that last look (a few milliseconds) that
keeps the file's size, or made between the look and the file's move into place (git writes the
restored files beside their places first: the look is one ``lstat`` before the ``rename``).
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable, Sequence
from pathlib import Path

from convgit.git.plumbing.objects import GITLINK, LINK, Delta, Objects
from convgit.git.plumbing.paths import folders_above
from convgit.git.plumbing.run import WHOLE_INDEX, Git
from convgit.git.restore.plan import lstat

CHANGED = "changed since the restore was planned; left alone"
CREATED = "created since the restore was planned; left alone"
FOLDER = "a folder with files the saved state lacks stands where the file goes; left alone"
IN_THE_WAY = "a file or symlink created since the restore was planned is in the way; left alone"
REFUSED = "the file system refused to {} it ({}); left alone"  # write or delete; its reason

# one entry of `git ls-files --debug -z`: path, ctime, mtime, inode, size
_DEBUG = re.compile(
    rb"([^\0]*)\0  ctime: (\d+):(\d+)\n  mtime: (\d+):(\d+)\n  dev: \d+\tino: (\d+)\n"
    rb"  uid: \d+\tgid: \d+\n  size: (\d+)\tflags: [0-9a-f]+\n"
)
_LOW32 = 0xFFFFFFFF
_NS = 1_000_000_000

Seen = tuple[int, int, int, int, int]  # mode, size, mtime ns, ctime ns, inode (of an lstat)


def _seen(info: os.stat_result | None) -> Seen | None:
    if info is None:
        return None
    return (info.st_mode, info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino)


class Guard:
    """The checks of one restore's ``deltas`` against the disk (see the module's note)."""

    def __init__(self, git: Git, index: Path, objects: Objects, deltas: Sequence[Delta]) -> None:
        self._git, self._objects = git, objects
        self._root = os.fsencode(git.root)
        self._expected: dict[str, Seen | None] = {}
        self.late: dict[str, str] = {}  # path -> why it was left alone
        self._settle(index, deltas)

    def _settle(self, index: Path, deltas: Sequence[Delta]) -> None:
        known = [d for d in deltas if d.old is not None and d.old[0] != GITLINK]
        for delta in deltas:
            if delta.old is None:
                self._expected[delta.path] = None
        if not known:
            return
        recorded = self._index_stats(index)
        try:
            index_mtime = os.stat(index).st_mtime_ns
        except OSError:
            index_mtime = 0
        doubtful: list[tuple[Delta, os.stat_result]] = []
        for delta in known:
            info = lstat(os.path.join(self._root, os.fsencode(delta.path)))
            if info is None:
                self.late[delta.path] = CHANGED
                continue
            stats = recorded.get(os.fsencode(delta.path))
            if stats is not None and _same(stats, info) and info.st_mtime_ns < index_mtime:
                self._expected[delta.path] = _seen(info)
            else:
                doubtful.append((delta, info))
        self._rehash(doubtful)

    def _index_stats(self, index: Path) -> dict[bytes, tuple[int, ...]]:
        proc = self._git.run("ls-files", "--debug", "-z", index=index, config=WHOLE_INDEX)
        return {
            m[1]: (int(m[2]), int(m[3]), int(m[4]), int(m[5]), int(m[6]), int(m[7]))
            for m in _DEBUG.finditer(proc.stdout)
        }

    def _rehash(self, doubtful: list[tuple[Delta, os.stat_result]]) -> None:
        """Keep what still holds the saved bytes, hashed as git would; the rest is late."""
        files = [  # git reads one path a line: a name with a line break is taken as changed
            (d, info) for d, info in doubtful if stat.S_ISREG(info.st_mode) and "\n" not in d.path
        ]
        hashed: list[str] = []
        if files:
            paths = b"\n".join(os.fsencode(d.path) for d, _ in files) + b"\n"
            proc = self._git.run("hash-object", "--stdin-paths", stdin=paths, check=False)
            hashed = os.fsdecode(proc.stdout).split() if proc.returncode == 0 else []
        found = {d.path: oid for (d, _), oid in zip(files, hashed, strict=False)}
        for delta, info in doubtful:
            assert delta.old is not None
            if stat.S_ISLNK(info.st_mode) and delta.old[0] == LINK:
                try:
                    same = os.fsencode(os.readlink(self._git.root / delta.path)) == (
                        self._objects.blob(delta.old[1])
                    )
                except OSError:
                    same = False
            else:
                same = found.get(delta.path) == delta.old[1]
            if same:
                self._expected[delta.path] = _seen(info)
            else:
                self.late[delta.path] = CHANGED

    def changed(self, delta: Delta) -> str | None:
        """Why ``delta`` must not be applied now (the path changed since the plan, or a file
        or a folder of files stands in its way), or None: go ahead."""
        path = delta.path
        if path in self.late:
            return self.late[path]
        full = os.path.join(self._root, os.fsencode(path))
        if delta.new is not None:
            why = self._way_clear(path)
            if why is not None:
                return self._late(path, why)
        now = lstat(full)
        expected = self._expected.get(path, now and _seen(now))
        if expected is None and now is not None:
            if stat.S_ISDIR(now.st_mode) and delta.new is not None:
                try:
                    os.rmdir(full)  # an empty folder where the file goes: nothing of anyone's
                    return None
                except OSError:
                    return self._late(path, FOLDER)
            if delta.old is None and delta.new is not None and delta.new[0] == GITLINK:
                return None
            return self._late(path, CREATED)
        if expected is not None and _seen(now) != expected:
            return self._late(path, CHANGED)
        return None

    def _way_clear(self, path: str) -> str | None:
        """None when every folder above ``path`` is a real folder or absent."""
        for folder in folders_above(os.fsencode(path)):
            info = lstat(os.path.join(self._root, folder))
            if info is None:
                return None
            if not stat.S_ISDIR(info.st_mode):
                return IN_THE_WAY
        return None

    def _late(self, path: str, why: str) -> str:
        self.late[path] = why
        return why

    def leave(self, path: str, why: str) -> None:
        """``path`` was left alone after all, for ``why`` (the file system refused to change it)."""
        self._late(path, why)

    def left_alone(self, paths: Iterable[str]) -> list[tuple[str, str]]:
        """(path, why) of the ``paths`` left alone, in order."""
        return [(p, self.late[p]) for p in paths if p in self.late]


def _same(stats: tuple[int, ...], info: os.stat_result) -> bool:
    """True when git's stat data of an entry matches ``info`` (git keeps 32 bits of the size
    and inode, and nanoseconds only where the system gives them)."""
    c_sec, c_ns, m_sec, m_ns, ino, size = stats
    return (
        size == info.st_size & _LOW32
        and ino == info.st_ino & _LOW32
        and _time_same(m_sec, m_ns, info.st_mtime_ns)
        and _time_same(c_sec, c_ns, info.st_ctime_ns)
    )


def _time_same(sec: int, ns: int, actual: int) -> bool:
    return sec == (actual // _NS) & _LOW32 and (ns == 0 or ns == actual % _NS)
