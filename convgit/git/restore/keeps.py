"""What a restore leaves alone beyond git's view, for the sake of the people and agents around
the session (``Keeps``, handed to ``convgit.git.restore.operation.restoring``):

* the agents' own settings files: Claude Code's ``.claude/settings*.json``, where ``hooks
  install`` writes convgit's handlers. Rewinding them would change the agent's permissions and
  hooks behind its back; they are left as they are, whatever the target holds, and listed;
* the user's own files: a file the target lacks that no snapshot of the session ever held (made
  after the last snapshot, never seen by convgit) is not the session's to delete. It is left
  alone and listed, unless ``clean`` (``restore --clean``), which deletes it like any other
  file the target lacks, saved first;
* and never in silence: a file another snapshot of the session held, that the target lacks and
  that git does not see now (ignored since, or over the size cap now), is left where it is and
  listed (``held_elsewhere``), as a file the target holds that git ignores now already is.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from dataclasses import dataclass

from convgit.git.plumbing.objects import GITLINK, TREE, Objects, diff

AGENT_SETTINGS = (".claude/settings*.json",)  # every file `hooks install` writes in a project
SETTINGS = "an agent's settings file, where convgit's hooks live; left alone"
NEVER_HELD = "no snapshot of the session held it; `--clean` removes it"
RECENT = 16  # the newest snapshots ``held_elsewhere`` compares with the target


@dataclass(frozen=True)
class Keeps:
    """``held``: the tree ids of the session's snapshots, newest first (None: no such check,
    as for a restore outside a session); ``clean``: delete unheld files too."""

    held: Sequence[str] | None = None
    clean: bool = False
    settings: tuple[str, ...] = AGENT_SETTINGS

    def setting(self, path: str) -> str | None:
        """Why ``path`` is left alone as an agent's settings file, or None."""
        matched = any(fnmatch.fnmatchcase(path, pattern) for pattern in self.settings)
        return SETTINGS if matched else None

    def never_held(self, objects: Objects, paths: Sequence[str]) -> dict[str, str]:
        """path -> why, for each of ``paths`` no snapshot of the session held (none when
        ``clean``). Each path is looked up in the newest snapshots first, where an agent's file
        usually is, so only the user's own files are looked up in every one."""
        if self.clean or self.held is None or not paths:
            return {}
        left = list(paths)
        for tree_id in dict.fromkeys(self.held):
            left = [path for path in left if not _file_at(objects, tree_id, path)]
            if not left:
                break
        return dict.fromkeys(left, NEVER_HELD)

    def held_elsewhere(self, objects: Objects, target: str, current: str) -> list[str]:
        """The files one of the ``RECENT`` newest snapshots of the session held that neither
        the ``target`` tree nor the ``current`` one (what git sees now) holds: candidates for a
        file left alone in silence. A file ignored since was held by a snapshot taken before
        the rule came, the newest ones as a rule; comparing every snapshot would read each one's
        trees (about 3 ms a snapshot)."""
        if self.held is None:
            return []
        found: set[str] = set()
        for tree_id in list(dict.fromkeys(self.held))[:RECENT]:
            if tree_id in (target, current):
                continue
            found.update(  # compared with the files now, which the newest snapshots are near
                d.path
                for d in diff(objects, current, tree_id)
                if d.old is None and d.new is not None and d.new[0] != GITLINK
            )
        return sorted(p for p in found if not _file_at(objects, target, p))


def _file_at(objects: Objects, tree_id: str, path: str) -> bool:
    """True when tree ``tree_id`` holds a file, link or submodule (not a folder) at ``path``."""
    found = objects.lookup(tree_id, path)
    return found is not None and found[0] != TREE
