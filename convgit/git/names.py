"""The names convgit writes into a repository, said once: its refs and the trailers of its
commits. Each family of refs has its prefix as a constant, a builder and a parser; the parsers
take a whole name or none of it (a name of another family, or one convgit never writes, is
refused with None, never half read). Nothing else spells these names.

The refs (all under ``refs/convgit/``, which keeps their commits from git gc):

* ``refs/convgit/<sid>/<entry>``: the snapshot of an entry of session ``sid``;
* ``refs/convgit/<sid>/replaced/<entry>-<commit>``: a snapshot a newer one of the same entry
  replaced (``commit``: the first 12 hex digits of the replaced commit);
* ``refs/convgit/<sid>/safety/<time>``: the state saved before a restore (a saved state);
* ``refs/convgit/_trash/<sid>/…``: the refs of a session in the trash, each the name it had
  without ``_trash/``;
* ``refs/convgit/_gc/<commit>``: a commit a running gc wrote, kept until its refs have moved;
* ``refs/convgit/_shared/<sid>``: the session commit of shared session ``sid`` (its file and
  sidecar; ``convgit.sharing``): here the one last made, on a remote the one last pushed;
* ``refs/convgit/_remote/<remote>/…``: what was fetched from (or pushed to) ``remote``, the
  names after ``refs/convgit/`` kept (``_remote/origin/_shared/<sid>``,
  ``_remote/origin/<sid>/…``). A shared session's own refs have the same names on a remote;
  a git note ref of attribution fetched or pushed is kept as ``_remote/<remote>/_notes/<name>``.

Beside them, outside ``refs/convgit/``, the two git note refs of attribution
(``convgit.attribution.commit_notes``), written only by the git hooks a user installs and by
``convgit attribution rewrite``: ``refs/notes/agent-trace`` (Agent Trace records) and
``refs/notes/ai`` (Git AI authorship logs, with ``[attribution] git_ai = true``).

A session id never starts with ``_``, so convgit's own folders (``_trash``, ``_gc``,
``_shared``, ``_remote``) are never
read as a session's. Ref names are path-like names, which is why they live with git.
"""

from __future__ import annotations

import re

from convgit.base.valueclass import valueclass

PREFIX = "refs/convgit/"
REPLACED = "replaced/"  # under a session's folder
# under a session's folder; the folder keeps its first name, "safety", so the refs of every
# repository convgit wrote before stay saved states (the code says "saved state" alone)
SAVED_STATES = "safety/"
TRASH_PREFIX = PREFIX + "_trash/"
GC_PREFIX = PREFIX + "_gc/"
SHARED_PREFIX = PREFIX + "_shared/"
REMOTE_PREFIX = PREFIX + "_remote/"
# the git note refs of attribution, by the name `[share] notes` gives each
NOTES_PREFIX = "refs/notes/"
AGENT_TRACE_NOTES = NOTES_PREFIX + "agent-trace"
GIT_AI_NOTES = NOTES_PREFIX + "ai"
NOTES = {"agent-trace": AGENT_TRACE_NOTES, "ai": GIT_AI_NOTES}
NOTES_TRACKING = "_notes/"  # under a remote's folder: the note refs fetched or pushed
# every saved state's ref, as a for-each-ref pattern: listing by it skips the snapshot refs
SAVED_STATE_PATTERN = PREFIX + "*/" + SAVED_STATES + "*"

# the families a parsed name belongs to
SNAPSHOT_FAMILY = "snapshot"
REPLACED_FAMILY = "replaced"
SAVED_STATE_FAMILY = "saved"
GC_FAMILY = "gc"

# the trailers of convgit's commits
SESSION_TRAILER = "Convgit-Session"  # the session whose commit it is
ENTRY_TRAILER = "Convgit-Entry"  # the entry a snapshot was taken for
RESTORE_TRAILER = "Convgit-Restore"  # the restore that saved the files (one commit each)
# on a user's commit (`[attribution] trailers`): "exact", or "nearest, N files differ"
FILES_TRAILER = "Convgit-Files"
AGENT_SESSION_TRAILER = "Convgit-Agent-Session"  # the agent's session, before convgit's is known

SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")  # as the store names sessions
_COMMIT = re.compile(r"[0-9a-f]{4,64}")
_TRAILER_LINE = re.compile(r"(Convgit-[A-Za-z-]+): (.*)")
SHORT_COMMIT = 12  # the hex digits of a replaced commit in its ref's name


@valueclass(frozen=True)
class RefName:
    """One ref convgit writes, read back: its ``family``, its ``session`` (None for a gc's),
    ``name`` (the entry, ``<entry>-<commit>``, the time, or the commit for a gc's) and whether
    it is in the trash."""

    family: str
    session: str | None
    name: str
    trashed: bool = False

    @property
    def ref(self) -> str:
        """The full name again (``parse_ref(x).ref == x``)."""
        if self.family == GC_FAMILY:
            return gc_ref(self.name)
        sid = str(self.session)
        folder = trash_prefix(sid) if self.trashed else session_prefix(sid)
        below = {REPLACED_FAMILY: REPLACED, SAVED_STATE_FAMILY: SAVED_STATES}.get(self.family, "")
        return folder + below + self.name

    @property
    def owner(self) -> str:
        """The folder right under ``refs/convgit/``: the session id, or ``_trash``/``_gc``."""
        return self.ref[len(PREFIX) :].split("/", 1)[0]

    @property
    def entry(self) -> str | None:
        """The entry whose snapshot this is (a snapshot's or a replaced one's), else None."""
        if self.family == SNAPSHOT_FAMILY:
            return self.name
        if self.family == REPLACED_FAMILY:
            return self.name.rpartition("-")[0]
        return None


# -- builders --


def session_prefix(sid: str) -> str:
    """The folder of session ``sid``'s refs: every ref of the session starts with it."""
    return f"{PREFIX}{sid}/"


def trash_prefix(sid: str) -> str:
    """The folder of session ``sid``'s refs while it is in the trash."""
    return f"{TRASH_PREFIX}{sid}/"


def snapshot_ref(sid: str, entry: str) -> str:
    """The ref of ``entry``'s snapshot in session ``sid``."""
    return session_prefix(sid) + entry


def replaced_ref(sid: str, entry: str, commit: str) -> str:
    """The ref that keeps ``commit``, a snapshot of ``entry`` that a newer one replaced."""
    return f"{session_prefix(sid)}{REPLACED}{entry}-{commit[:SHORT_COMMIT]}"


def saved_state_ref(sid: str, stamp: str) -> str:
    """The ref of the state a restore of session ``sid`` saved at ``stamp`` (compact UTC)."""
    return session_prefix(sid) + SAVED_STATES + stamp


def gc_ref(commit: str) -> str:
    """The ref a running gc keeps ``commit`` by until the refs have moved to it."""
    return GC_PREFIX + commit


def shared_ref(sid: str) -> str:
    """The ref of shared session ``sid``'s session commit, here and on a remote."""
    return SHARED_PREFIX + sid


def remote_prefix(remote: str) -> str:
    """The folder of what was fetched from (or pushed to) ``remote``."""
    return f"{REMOTE_PREFIX}{remote}/"


def tracking_ref(remote: str, ref: str) -> str:
    """Where ``ref`` (a name under ``refs/convgit/``, or a git note ref of ``NOTES``) of
    ``remote`` is kept here."""
    if ref.startswith(NOTES_PREFIX):
        return remote_prefix(remote) + NOTES_TRACKING + ref[len(NOTES_PREFIX) :]
    return remote_prefix(remote) + ref[len(PREFIX) :]


def untracked_ref(remote: str, name: str) -> str:
    """The remote's own name of the tracking ref ``name`` (``tracking_ref`` undone)."""
    rest = name[len(remote_prefix(remote)) :]
    if rest.startswith(NOTES_TRACKING):
        return NOTES_PREFIX + rest[len(NOTES_TRACKING) :]
    return PREFIX + rest


def commit_message(
    subject: str,
    *,
    session: str | None = None,
    entry: str | None = None,
    restore: str | None = None,
    agent_session: str | None = None,
) -> str:
    """``subject``, a blank line, and the trailers given, in this order (the bytes of a
    commit's message decide its id: the order never changes)."""
    given = [
        (SESSION_TRAILER, session),
        (ENTRY_TRAILER, entry),
        (RESTORE_TRAILER, restore),
        (AGENT_SESSION_TRAILER, agent_session),
    ]
    lines = "".join(f"{key}: {value}\n" for key, value in given if value is not None)
    return f"{subject}\n\n{lines}"


# -- parsers --


def parse_ref(ref: str) -> RefName | None:
    """The ref convgit wrote that ``ref`` names, read whole; None for anything else (a ref
    outside ``refs/convgit/``, a folder convgit does not write, a name with a part missing or
    one too many)."""
    if not ref.startswith(PREFIX):
        return None
    if ref.startswith(GC_PREFIX):
        commit = ref[len(GC_PREFIX) :]
        return RefName(GC_FAMILY, None, commit) if _COMMIT.fullmatch(commit) else None
    rest, trashed = ref[len(PREFIX) :], ref.startswith(TRASH_PREFIX)
    if trashed:
        rest = ref[len(TRASH_PREFIX) :]
    sid, _, below = rest.partition("/")
    if SESSION_ID.fullmatch(sid) is None:
        return None
    for folder, family in ((REPLACED, REPLACED_FAMILY), (SAVED_STATES, SAVED_STATE_FAMILY)):
        if below.startswith(folder):
            name = below[len(folder) :]
            if family == REPLACED_FAMILY and not _replaced_name(name):
                return None
            return RefName(family, sid, name, trashed) if _one_part(name) else None
    return RefName(SNAPSHOT_FAMILY, sid, below, trashed) if _one_part(below) else None


def parse_saved_state_ref(ref: str) -> tuple[str, str] | None:
    """(session id, time) of a saved state's ref outside the trash; None for any other name."""
    found = parse_ref(ref)
    if found is None or found.family != SAVED_STATE_FAMILY or found.trashed:
        return None
    return str(found.session), found.name


def session_of(ref: str) -> str | None:
    """The session whose ref (outside the trash) ``ref`` is; None for convgit's own refs (the
    trash's, a gc's) and for names convgit does not write."""
    found = parse_ref(ref)
    return None if found is None or found.trashed else found.session


def within_session(ref: str, sid: str) -> str | None:
    """What follows session ``sid``'s folder in ``ref`` (``<entry>``, ``replaced/…``,
    ``safety/…``); None when ``ref`` is not one of that session's refs."""
    found = parse_ref(ref)
    if found is None or found.trashed or found.session != sid:
        return None
    return ref[len(session_prefix(sid)) :]


def parse_trailers(message: str) -> dict[str, str]:
    """The Convgit- trailers of a commit message (the last paragraph), name -> value."""
    last = message.rstrip("\n").rpartition("\n\n")[2]
    found = (_TRAILER_LINE.fullmatch(line) for line in last.splitlines())
    return {m.group(1): m.group(2) for m in found if m is not None}


def _one_part(name: str) -> bool:
    return bool(name) and "/" not in name


def _replaced_name(name: str) -> bool:
    entry, dash, commit = name.rpartition("-")
    return bool(entry) and bool(dash) and _COMMIT.fullmatch(commit) is not None
