"""What redaction replaces in text, bytes and records: every match, never an id, parent, time,
kind or tool call id; base64 text decoded, scrubbed and encoded again. And the built-in
`--secrets` set catches each kind of credential it names."""

from __future__ import annotations

import base64

import pytest

from convgit.base.errors import RefusedError, UsageError
from convgit.session import detector, scrub

# Made-up credentials in each issuer's shape (none is real).
FAKE = {
    "private key": "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n"
    "-----END OPENSSH PRIVATE KEY-----",
    "AWS access key id": "AKIAIOSFODNN7EXAMPLE",
    "GitHub token": "ghp_" + "a1B2c3D4e5" * 4,
    "GitLab token": "glpat-" + "x" * 20,
    "Anthropic or OpenAI API key": "sk-ant-api03-" + "Q" * 30,
    "Slack token": "xoxb-123456789012-abcdefghij",
    "Google API key": "AIza" + "S" * 35,
    "Stripe key": "sk_live_" + "4" * 24,
    "npm token": "npm_" + "n" * 36,
    "JSON web token": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJlLXBhcnQ",
    "bearer token": "Bearer " + "t0k3n" * 5,
}


@pytest.mark.parametrize("kind", sorted(FAKE))
def test_the_built_in_set_catches_each_kind(kind: str) -> None:
    assert set(FAKE) == set(detector.PATTERNS)
    secrets = scrub.Scrubber(None, secrets=True)
    text, count = secrets.text(f"before {FAKE[kind]} after")
    assert count == 1 and FAKE[kind].removeprefix("Bearer ") not in text
    assert text.startswith("before ") and text.endswith(" after")
    # inside JSON text, where a key's line ends are written as \n
    quoted = '{"key": "' + FAKE[kind].replace("\n", "\\n") + '"}'
    assert secrets.text(quoted)[1] == 1


def test_ordinary_text_and_ids_are_not_secrets() -> None:
    secrets = scrub.Scrubber(None, secrets=True)
    ordinary = [
        "toolu_01Gt5oW3ra7ndK4Zy283vVdM",
        "call_7BjPOqFW5SBNNMRchUmIqrvS",
        "9f1c0d2a",
        "ac25b691-daf7-4da8-afa0-0b32d83c517c",
        "sk-short",
        "the skeleton key",
    ]
    for text in ordinary:
        assert secrets.text(text) == (text, 0)


def test_a_message_keeps_its_tree_fields_kinds_and_call_ids() -> None:
    hide = scrub.Scrubber("hunter2")
    record = {
        "type": "message",
        "id": "a1",
        "parentId": "u1",
        "ts": "2026-01-01T00:00:00.000Z",
        "role": "assistant",
        "content": [
            {"type": "text", "text": "the password is hunter2"},
            {"type": "tool_call", "id": "c1", "name": "login", "input": {"hunter2": "hunter2!"}},
        ],
        "native": {"key": "k1", "base64": base64.b64encode(b"\xffpw=hunter2").decode()},
    }
    done = scrub.session_line(hide, record, 2)
    assert done.matches == 4 and done.fields == ["content", "native"]
    value = done.value
    assert {k: value[k] for k in ("type", "id", "parentId", "ts", "role")} == {
        k: record[k] for k in ("type", "id", "parentId", "ts", "role")
    }
    assert list(value) == list(record)
    assert value["content"][0] == {"type": "text", "text": "the password is [redacted]"}
    assert value["content"][1]["id"] == "c1" and value["content"][1]["input"] == {
        "[redacted]": "[redacted]!"
    }
    assert base64.b64decode(value["native"]["base64"]) == b"\xffpw=[redacted]"
    assert value["native"]["key"] == "k1"


def test_a_pattern_that_matches_a_tree_field_is_refused() -> None:
    entry = {"type": "note", "id": "deadbeef", "parentId": None, "ts": "t", "text": "x"}
    with pytest.raises(RefusedError, match="matches the 'id' field of line 2"):
        scrub.session_line(scrub.Scrubber("dead"), entry, 2)
    call = {"type": "tool_call", "id": "secret-call", "name": "n", "input": {}}
    message = {"type": "message", "id": "m", "parentId": None, "ts": "t", "role": "assistant"}
    with pytest.raises(RefusedError, match="id of tool call secret-call"):
        scrub.session_line(scrub.Scrubber("secret"), {**message, "content": [call]}, 3)


def test_snapshot_records_keep_the_entries_and_commits_they_name() -> None:
    commit = "0f" * 20
    line = f'{{"type":"snapshot","entry":"e1","commit":"{commit}","skipped":[{{"path":"k.pem"}}]}}'
    new, count = scrub.sidecar_line(scrub.Scrubber(r"k\.pem"), line.encode(), 3)
    assert count == 1 and commit.encode() in new and b'"path":"[redacted]"' in new
    with pytest.raises(RefusedError, match="'commit' field of line 3 of the snapshot records"):
        scrub.sidecar_line(scrub.Scrubber("0f0f0f"), line.encode(), 3)


def test_lines_of_other_files_are_scrubbed_whole_json_or_not() -> None:
    hide = scrub.Scrubber("hunter2")
    quarantined = b'{"type":"quarantined","line":4,"text":"{\\"pw\\": \\"hunter2\\""}'
    data = quarantined + b"\r\nnot json: hunter2\n\n"
    new, count = scrub.lines(hide, data)
    assert count == 2 and b"hunter2" not in new
    assert new.endswith(b"\r\nnot json: [redacted]\n\n")


@pytest.mark.parametrize("bad", ["(", "a*", "x|"])
def test_patterns_that_cannot_be_used_are_usage_errors(bad: str) -> None:
    with pytest.raises(UsageError):
        scrub.Scrubber(bad)
    with pytest.raises(UsageError, match="PATTERN or --secrets"):
        scrub.Scrubber("x", secrets=True)
    with pytest.raises(UsageError, match="PATTERN or --secrets"):
        scrub.Scrubber(None)
