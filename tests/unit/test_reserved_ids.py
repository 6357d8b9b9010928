"""The ids an entry may not have include every folder of a session's refs (``git/names.py``):
the two lists are kept in step."""

from convgit.conversation import refs
from convgit.git import names


def test_every_folder_of_a_sessions_refs_is_a_reserved_id() -> None:
    folders = {names.REPLACED.rstrip("/"), names.SAVED_STATES.rstrip("/")}
    assert folders == set(refs.REF_FOLDERS) and folders <= refs.RESERVED_IDS
