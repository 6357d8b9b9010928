"""Short ids: 8 characters, longer only where needed, and every short id resolves back to
its entry through the same references the CLI takes."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from convgit.conversation.shortids import SHORT_ID_LENGTH, ShortIds


def test_an_id_is_cut_to_eight_characters_and_a_shared_prefix_makes_it_longer() -> None:
    uuid = "5f0c3a2e-1111-2222-3333-444455556666"
    short = ShortIds(["abcdef0123", "abcdef0199", "12345678", uuid])
    assert short("12345678") == "12345678"
    assert short(uuid) == "5f0c3a2e"
    assert short("abcdef0123") == "abcdef012"
    assert short("abcdef0199") == "abcdef019"


@given(
    st.lists(
        st.text("0123456789abcdef", min_size=SHORT_ID_LENGTH, max_size=12), unique=True, max_size=40
    )
)
def test_every_short_id_is_a_prefix_of_its_id_and_of_no_other(ids: list[str]) -> None:
    short = ShortIds(ids)
    for ident in ids:
        prefix = short(ident)
        assert ident.startswith(prefix)
        others = [other for other in ids if other != ident and other.startswith(prefix)]
        # an id that is itself a prefix of another resolves by exact match
        assert not others or prefix == ident
