"""The names convgit writes into a repository (``convgit.git.names``), with no git and no store:
each builder's name parses back to what built it, and a name of another family, or one convgit
never writes, is refused whole (None), never half read."""

from __future__ import annotations

import pytest

from convgit.git import names
from convgit.git.names import RefName

SID = "07a55b66342f"
COMMIT = "219b5438d00c4f1e9a0b6f2e7c1d3a5b8e9f0a1b"


@pytest.mark.parametrize(
    ("built", "family", "name", "entry"),
    [
        (names.snapshot_ref(SID, "a1b2c3"), names.SNAPSHOT_FAMILY, "a1b2c3", "a1b2c3"),
        (names.snapshot_ref(SID, "msg-1_x"), names.SNAPSHOT_FAMILY, "msg-1_x", "msg-1_x"),
        (
            names.replaced_ref(SID, "msg-1", COMMIT),
            names.REPLACED_FAMILY,
            f"msg-1-{COMMIT[:12]}",
            "msg-1",
        ),
        (
            names.saved_state_ref(SID, "20261201T212108548Z"),
            names.SAVED_STATE_FAMILY,
            "20261201T212108548Z",
            None,
        ),
    ],
)
def test_a_session_ref_parses_back_to_what_built_it(
    built: str, family: str, name: str, entry: str | None
) -> None:
    parsed = names.parse_ref(built)
    assert parsed == RefName(family, SID, name)
    assert parsed.ref == built
    assert parsed.entry == entry
    assert parsed.owner == SID
    assert names.session_of(built) == SID
    assert built.startswith(names.session_prefix(SID))
    assert names.within_session(built, SID) == built[len(names.session_prefix(SID)) :]


def test_the_spelling_of_each_family_is_the_documented_one() -> None:
    assert names.snapshot_ref(SID, "e1") == f"refs/convgit/{SID}/e1"
    assert names.replaced_ref(SID, "e1", COMMIT) == f"refs/convgit/{SID}/replaced/e1-{COMMIT[:12]}"
    assert names.saved_state_ref(SID, "20261201T0Z") == f"refs/convgit/{SID}/safety/20261201T0Z"
    assert names.gc_ref(COMMIT) == f"refs/convgit/_gc/{COMMIT}"
    assert names.trash_prefix(SID) == f"refs/convgit/_trash/{SID}/"


@pytest.mark.parametrize(
    "built",
    [
        names.snapshot_ref(SID, "e1"),
        names.replaced_ref(SID, "e1", COMMIT),
        names.saved_state_ref(SID, "20261201T212108548Z"),
    ],
)
def test_a_ref_in_the_trash_parses_as_trashed_and_belongs_to_no_session(built: str) -> None:
    trashed = names.trash_prefix(SID) + built[len(names.session_prefix(SID)) :]
    parsed = names.parse_ref(trashed)
    assert parsed is not None and parsed.trashed and parsed.session == SID
    assert parsed.ref == trashed
    assert parsed.owner == "_trash"
    assert names.session_of(trashed) is None, "a trashed session's refs are nobody's now"
    assert names.within_session(trashed, SID) is None
    assert names.parse_saved_state_ref(trashed) is None


def test_a_gc_ref_parses_back_and_belongs_to_no_session() -> None:
    built = names.gc_ref(COMMIT)
    parsed = names.parse_ref(built)
    assert parsed == RefName(names.GC_FAMILY, None, COMMIT)
    assert parsed.ref == built and parsed.owner == "_gc" and parsed.entry is None
    assert names.session_of(built) is None
    assert names.parse_saved_state_ref(built) is None


def test_the_saved_state_parser_takes_a_saved_states_ref_and_refuses_every_other_family() -> None:
    built = names.saved_state_ref(SID, "20261201T0Z")
    assert names.parse_saved_state_ref(built) == (SID, "20261201T0Z")
    for other in (
        names.snapshot_ref(SID, "safety"),  # an entry whose id is the folder's word
        names.replaced_ref(SID, "e1", COMMIT),
        names.gc_ref(COMMIT),
    ):
        assert names.parse_saved_state_ref(other) is None, other


@pytest.mark.parametrize(
    "ref",
    [
        "refs/heads/main",  # the user's
        "refs/convgit",  # the folder itself
        "refs/convgit/",
        f"refs/convgit/{SID}",  # a session's folder, no name
        f"refs/convgit/{SID}/",
        f"refs/convgit/{SID}/a/b",  # a folder convgit does not write
        f"refs/convgit/{SID}/safety/",  # a family's folder, no name
        f"refs/convgit/{SID}/safety/a/b",  # one part too many
        f"refs/convgit/{SID}/replaced/e1",  # no commit after the entry
        f"refs/convgit/{SID}/replaced/e1-nothex",
        "refs/convgit/_gc/",
        "refs/convgit/_gc/not-a-commit",
        f"refs/convgit/_gc/{COMMIT}/x",
        "refs/convgit/_watch/x",  # a folder of convgit's it does not know
        "refs/convgit/_trash/",
        "refs/convgit/_trash/_gc/x",  # no session id starts with _
        f"refs/convgit/_trash/{SID}",
        "refs/convgit/-bad/e1",
    ],
)
def test_a_name_convgit_does_not_write_is_refused_whole(ref: str) -> None:
    assert names.parse_ref(ref) is None
    assert names.session_of(ref) is None
    assert names.within_session(ref, SID) is None
    assert names.parse_saved_state_ref(ref) is None


def test_another_sessions_ref_is_not_within_this_one() -> None:
    assert names.within_session(names.snapshot_ref("other1", "e1"), SID) is None
    assert names.within_session(names.snapshot_ref(SID + "x", "e1"), SID) is None


@pytest.mark.parametrize(
    ("kwargs", "text"),
    [
        ({"session": SID}, f"subject\n\nConvgit-Session: {SID}\n"),
        (
            {"session": SID, "entry": "e1"},
            f"subject\n\nConvgit-Session: {SID}\nConvgit-Entry: e1\n",
        ),
        (
            {"restore": "r1", "session": SID},  # the order is the module's, not the caller's
            f"subject\n\nConvgit-Session: {SID}\nConvgit-Restore: r1\n",
        ),
        ({"agent_session": "9f8e-77"}, "subject\n\nConvgit-Agent-Session: 9f8e-77\n"),
    ],
)
def test_a_commit_message_carries_its_trailers_in_one_order_and_they_parse_back(
    kwargs: dict[str, str], text: str
) -> None:
    message = names.commit_message("subject", **kwargs)
    assert message == text, "the bytes decide the commit's id: they never change"
    keys = {
        "session": names.SESSION_TRAILER,
        "entry": names.ENTRY_TRAILER,
        "restore": names.RESTORE_TRAILER,
        "agent_session": names.AGENT_SESSION_TRAILER,
    }
    assert names.parse_trailers(message) == {keys[k]: v for k, v in kwargs.items()}


def test_trailer_like_lines_outside_the_last_paragraph_are_not_trailers() -> None:
    message = f"subject\n\nConvgit-Session: fake\n\nbody\n\nConvgit-Session: {SID}\n"
    assert names.parse_trailers(message) == {names.SESSION_TRAILER: SID}
    assert names.parse_trailers("subject only\n") == {}
