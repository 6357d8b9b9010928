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


class _Counted(str):
    """An id that counts the comparisons a sort makes of it."""

    compared = 0

    def __lt__(self, other: str) -> bool:
        _Counted.compared += 1
        return str.__lt__(self, other)


def test_showing_a_few_ids_of_a_long_session_sorts_none_of_them() -> None:
    """A command that shows a few entries of 300,000 must not pay for ordering every id: only
    ids whose first eight characters another id shares are ever sorted, and then only those."""
    ids = [_Counted(f"{n:08x}") for n in range(20_000)] + [_Counted("0000000a-twin")]
    _Counted.compared = 0
    short = ShortIds(ids)
    assert short("00004e1f") == "00004e1f"
    assert _Counted.compared == 0
    assert short("0000000a") == "0000000a" and short("0000000a-twin") == "0000000a-"
    assert _Counted.compared <= 2  # the two ids sharing "0000000a", not the 20,001
