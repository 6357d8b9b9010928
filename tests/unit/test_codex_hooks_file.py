"""Which hooks.json Codex reads whole and which it skips with every hook in it: the shapes the
real Codex CLI 0.171.0 accepted and refused, each tried against it (an error item of `codex exec
--json` when it refused, no hook run)."""

from typing import Any

import pytest

from convgit.agents.codex.hooks import refusal

RUN = {"type": "command", "command": "true"}


def on_stop(*handlers: Any, **group: Any) -> dict[str, Any]:
    return {"hooks": {"Stop": [{**group, "hooks": list(handlers)}]}}


ACCEPTED = [
    {"description": "mine", **on_stop(RUN)},
    {"description": None, **on_stop(RUN)},
    {"description": "no hooks at all"},
    {"hooks": {"Notification": 3, "StopFailure": [{"hooks": [5]}]}},  # events it does not know
    on_stop(RUN, description="a key of the user's in a group"),
    on_stop({**RUN, "name": "a key of the user's in a handler", "timeout": None}),
    on_stop({"type": "prompt"}, matcher=None),
    {"hooks": {"Stop": [{"matcher": "x"}]}},
]
REFUSED = [
    ({"mine": {"a": 1}, **on_stop(RUN)}, "the top-level key 'mine'"),
    ({"$schema": "x", **on_stop(RUN)}, "the top-level key '$schema'"),
    ({"description": 5, **on_stop(RUN)}, "'description' that is not a string"),
    ({"hooks": None}, "'hooks' that is not an object"),
    ({"hooks": {"SessionEnd": None}}, "hooks.SessionEnd that is not a list"),
    ({"hooks": {"Stop": [5]}}, "hooks.Stop entry 1 that is not an object"),
    (on_stop(RUN, matcher=5), "whose matcher is not a string"),
    ({"hooks": {"Stop": [{"hooks": None}]}}, "whose 'hooks' is not a list"),
    (on_stop(RUN, 5), "handler 2, that is not an object"),
    (on_stop({"command": "true"}), "whose 'type' is not one of"),
    (on_stop({"type": "http", "url": "x"}), "whose 'type' is not one of"),
    (on_stop({"type": "command"}), "without a string 'command'"),
    (on_stop({**RUN, "timeout": -1}), "'timeout' is not a whole number"),
    (on_stop({**RUN, "timeout": 1.5}), "'timeout' is not a whole number"),
    (on_stop({**RUN, "timeout": "5"}), "'timeout' is not a whole number"),
    (on_stop({**RUN, "async": "yes"}), "'async' is not true or false"),
    (on_stop({**RUN, "statusMessage": 5}), "'statusMessage' is not a string"),
]


@pytest.mark.parametrize("value", ACCEPTED)
def test_what_codex_reads_is_accepted(value: dict[str, Any]) -> None:
    assert refusal(value) is None


@pytest.mark.parametrize(("value", "said"), REFUSED)
def test_what_codex_skips_is_named(value: dict[str, Any], said: str) -> None:
    found = refusal(value)
    assert found is not None and said in found
