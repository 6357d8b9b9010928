"""The Git AI Standard v3.0.0's rules for an authorship log (section 1.2), written from the
standard as a checker: it publishes no schema. Independent of convgit's own reader."""

from __future__ import annotations

import hashlib
import json
import re

KEY_SESSION = re.compile(r"s_[0-9a-f]{14}::t_[0-9a-f]{14}")
KEY_HUMAN = re.compile(r"h_[0-9a-f]{14}")
KEY_LEGACY = re.compile(r"[0-9a-f]{16}|[0-9a-f]{7}")
RANGES = re.compile(r"[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*")
IDENTITY = re.compile(r"[^<>]+ <[^<>]*>")


def _sha14(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:14]


def problems(text: str) -> list[str]:
    """Every way ``text`` breaks the standard (empty: it is a valid log)."""
    found: list[str] = []
    lines = text.rstrip("\n").split("\n")
    dividers = [i for i, line in enumerate(lines) if line == "---"]
    if not dividers:
        return ["no divider line '---'"]
    at = dividers[0]
    try:
        metadata = json.loads("\n".join(lines[at + 1 :]))
    except ValueError as exc:
        return [f"the metadata is not JSON: {exc}"]
    if not isinstance(metadata, dict):
        return ["the metadata is not a JSON object"]
    if metadata.get("schema_version") != "authorship/3.0.0":
        found.append(f"schema_version is {metadata.get('schema_version')!r}")
    if not re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", str(metadata.get("base_commit_sha"))):
        found.append("base_commit_sha is no commit id")
    if not isinstance(metadata.get("prompts"), dict):
        found.append("prompts is missing or not an object")
    sessions = metadata.get("sessions", {})
    humans = metadata.get("humans", {})
    for key, record in sessions.items():
        agent = record.get("agent_id") if isinstance(record, dict) else None
        if not isinstance(agent, dict) or not all(
            isinstance(agent.get(k), str) for k in ("tool", "id", "model")
        ):
            found.append(f"session {key} has no agent_id with tool, id and model")
            continue
        if key != "s_" + _sha14(f"{agent['tool']}:{agent['id']}"):
            found.append(f"session {key} is not derived from {agent['tool']}:{agent['id']}")
        for banned in ("messages", "messages_url", "total_additions", "total_deletions"):
            if banned in record:
                found.append(f"session {key} has {banned}")
    for key, record in humans.items():
        author = record.get("author") if isinstance(record, dict) else None
        if not isinstance(author, str) or not IDENTITY.fullmatch(author):
            found.append(f"human {key} has no author 'Name <email>'")
        elif key != "h_" + _sha14(author):
            found.append(f"human {key} is not derived from {author!r}")
    path = None
    entries = 0
    for number, line in enumerate(lines[:at], 1):
        if not line.startswith(" "):
            if path is not None and entries == 0:
                found.append(f"file {path} has no attestation")
            path, entries = line, 0
            if any(c in line.strip('"') for c in " \t") and not (
                line.startswith('"') and line.endswith('"')
            ):
                found.append(f"line {number}: a path with a space is not quoted")
            continue
        entries += 1
        if path is None or not line.startswith("  ") or line.startswith("   "):
            found.append(f"line {number}: an attestation not indented by two spaces under a path")
            continue
        key, _, ranges = line[2:].partition(" ")
        if KEY_SESSION.fullmatch(key):
            if key.split("::")[0] not in sessions:
                found.append(f"line {number}: {key} has no session record")
        elif KEY_HUMAN.fullmatch(key):
            if key not in humans:
                found.append(f"line {number}: {key} has no human record")
        elif KEY_LEGACY.fullmatch(key):
            if key not in metadata.get("prompts", {}):
                found.append(f"line {number}: {key} has no prompt record")
        else:
            found.append(f"line {number}: {key!r} is no attestation key")
        if not RANGES.fullmatch(ranges):
            found.append(f"line {number}: {ranges!r} is no line range")
            continue
        numbers = [int(n) for part in ranges.split(",") for n in part.split("-")]
        if min(numbers) < 1 or numbers != sorted(numbers):
            found.append(f"line {number}: ranges {ranges} are not positive and ascending")
    if path is not None and entries == 0:
        found.append(f"file {path} has no attestation")
    return found


def attested(text: str) -> dict[str, dict[int, str]]:
    """path -> line -> key, as the attestation section says."""
    out: dict[str, dict[int, str]] = {}
    path = ""
    for line in text.split("\n---\n", 1)[0].split("\n"):
        if not line.startswith(" "):
            path = line.strip('"')
            continue
        key, _, ranges = line[2:].partition(" ")
        for part in ranges.split(","):
            a, _, b = part.partition("-")
            for n in range(int(a), int(b or a) + 1):
                out.setdefault(path, {})[n] = key
    return out
