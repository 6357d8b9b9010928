"""Which parts of a text are secrets: what ``convgit push`` refuses to send and what
``convgit redact --secrets`` replaces, over entries, snapshot files and saved states alike.

Two finders, one answer. detect-secrets (Yelp's detector) brings its plugins: the issuers'
formats it knows, its keyword detector (a value assigned to a name such as ``password``,
``secret`` or ``api_key``: ``AWS_SECRET_ACCESS_KEY=…`` in a ``.env``) and its entropy check
of quoted strings, each hit passed through its own heuristic filters (ids, UUIDs, templates,
``${VAR}`` references, lock files). convgit's own patterns (``PATTERNS``) add the issuers'
formats detect-secrets 1.5 lacks (Anthropic and current OpenAI keys, Google API keys,
fine-grained GitHub tokens, bearer tokens) and a private key's whole block.

Left out of detect-secrets' set, measured on the transcripts and fixtures convgit is tested
with: the hex entropy check (every git object id in a tool's output is one), the IBM Cloud,
IBM COS, SoftLayer and Cloudant detectors (they take any long word near "ibm" or "cloudant":
test names in transcripts; and they are the slowest) and public IP addresses (no credential).

A file whose name starts with ``.env`` (``.env``, ``.env.local``…) is a secret by its name,
whatever it holds (``secret_by_name``), but for a template of one, committed by design: a name
ending in ``.example`` (Laravel, dotenv-safe, dotenvx), ``.sample``, ``.template`` (the dotenv
gem's ``dotenv -t``) or ``.dist`` (Symfony), as ``.env.example`` or ``.env.local.example``.
A template's contents are scanned as any file's.

detect-secrets is imported on the first scan only: commands that never scan never load it
(nor ``requests``, which its plugins import).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

# convgit's own patterns: credentials as their issuers write them (those detect-secrets 1.5
# lacks, and a private key's whole block, where detect-secrets finds its first line)
PATTERNS: dict[str, str] = {
    "private key": (
        r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?"
        r"-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
    ),
    "AWS access key id": r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",
    # not \b: a token after ``_`` (``cache_ghp_…``, ``TOKEN_ghp_…``) is one too
    "GitHub token": (
        r"(?<![A-Za-z0-9])(?:gh[pousr]_[A-Za-z0-9]{36,255}(?![A-Za-z0-9])"
        r"|github_pat_[A-Za-z0-9_]{22,255}\b)"
    ),
    "GitLab token": r"\bglpat-[A-Za-z0-9_-]{20,}",
    "Anthropic or OpenAI API key": r"\bsk-(?:ant-|proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}",
    "Slack token": r"\bxox[abposr]-[A-Za-z0-9-]{10,}",
    "Google API key": r"\bAIza[0-9A-Za-z_-]{35}",
    "Stripe key": r"\b(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,}",
    "npm token": r"\bnpm_[A-Za-z0-9]{36}\b",
    "JSON web token": r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
    "bearer token": r"(?<=[Bb]earer )[A-Za-z0-9._~+/-]{20,}=*",
}
_ANY = re.compile("|".join(f"(?:{p})" for p in PATTERNS.values()))
_EACH = [(kind, re.compile(p)) for kind, p in PATTERNS.items()]

# detect-secrets' plugins left out (see the module's note)
_LEFT_OUT = frozenset(
    {
        "HexHighEntropyString",
        "IbmCloudIamDetector",
        "IbmCosHmacDetector",
        "SoftlayerDetector",
        "CloudantDetector",
        "IPPublicDetector",
    }
)
BASE64_LIMIT = 4.5  # detect-secrets' default entropy limit for base64 strings
# a line no plugin can take: no run of 8 token characters and no sign of an assignment
_CANDIDATE = re.compile(r"[A-Za-z0-9+/_=.-]{8}|[:=]\s*\S")
_ENV_NAME = re.compile(r"(?:^|/)\.env[^/]*$")
_ENV_TEMPLATE = re.compile(r"(?:^|/)\.env(?:\.[^/]*)?\.(?:example|sample|template|dist)$", re.I)
# convgit's two filters beside detect-secrets' own (measured: every hit they take out of the
# transcripts and fixtures was no secret): a value given to a key named as an id (``"id":``,
# ``"messageID":``, which detect-secrets' id filter takes only at a line's start), and a
# value that is code or a placeholder (a call, ``...``, ``<your key>``), which the keyword
# detector takes when it reads text as configuration (or prose: a value with a space in it)
_ID_KEY = re.compile(r"(?:\b|_|(?<=[a-z]))(?:id|ID|Id)s?[\"'`]?\s*[:=]\s*[\"'`]?$")
_NOT_A_VALUE = re.compile(r"[(){}<>;`\s]|\.\.\.|…")
_CONFIG = "text.cfg"  # the name the keyword detector is given for text of no known language


def secret_by_name(path: str) -> bool:
    """A file that is a secret by its name: ``.env`` and every ``.env*`` beside it, but a
    template (``.env.example``, ``.env.sample``, ``.env.template``, ``.env.dist`` and
    ``.env.<anything>.example`` alike)."""
    return _ENV_NAME.search(path) is not None and _ENV_TEMPLATE.search(path) is None


@dataclass(frozen=True)
class Hit:
    """A secret in a text: its kind and where it is (``text[start:end]``)."""

    kind: str
    start: int
    end: int


def hits(text: str, name: str = "") -> list[Hit]:
    """Every secret in ``text`` (the contents of the file ``name``, or of an entry when no name
    is given), overlapping ones merged, in order."""
    found = [Hit(kind, m.start(), m.end()) for kind, m in _pattern_hits(text)]
    found += _detected(text, name)
    return _merged(found)


def kinds(text: str, name: str = "") -> list[str]:
    """The kinds of secret ``text`` holds, each once, in order."""
    return list(dict.fromkeys(hit.kind for hit in hits(text, name)))


def _pattern_hits(text: str) -> Iterator[tuple[str, re.Match[str]]]:
    if not _ANY.search(text):
        return
    for kind, pattern in _EACH:
        for match in pattern.finditer(text):
            if match.group():
                yield kind, match


def _merged(found: list[Hit]) -> list[Hit]:
    out: list[Hit] = []
    for hit in sorted(found, key=lambda h: (h.start, -h.end)):
        if out and hit.start < out[-1].end:
            last = out[-1]
            out[-1] = Hit(last.kind, last.start, max(last.end, hit.end))
        else:
            out.append(hit)
    return out


def _detected(text: str, name: str) -> list[Hit]:
    """detect-secrets' plugins, line by line, each hit passed through its filters. A plugin
    runs only on the lines its gate lets by (a gate no secret it finds can miss: the keyword
    detector's own keywords, the entropy check's run of 20 characters of its alphabet)."""
    plugins, keep, keyword_name = _detect_secrets()
    keyword_as = keyword_name(name)
    found: list[Hit] = []
    at = 0
    for line in text.split("\n"):
        start, at = at, at + len(line) + 1
        if not _CANDIDATE.search(line):
            continue
        for plugin, gate in plugins:
            if gate is not None and not gate.search(line):
                continue
            given = keyword_as if type(plugin).__name__ == "KeywordDetector" else name or _CONFIG
            for secret in plugin.analyze_line(filename=given, line=line, line_number=1):
                value = secret.secret_value
                if not value or not keep(value, line, plugin, name):
                    continue
                whole = _whole(plugin, line)
                for match in re.finditer(re.escape(value), line):
                    begin, end = match.start(), match.end()
                    for a, b in whole:  # the value is the start of the match: take it whole
                        if a == begin and end <= b:
                            begin, end = a, b
                            break
                    found.append(Hit(secret.type, start + begin, start + end))
    return found


def _whole(plugin: Any, line: str) -> list[tuple[int, int]]:
    """Where a pattern-based plugin's patterns match ``line`` whole. Some give a group that
    starts the match as the secret (the GitHub and GitLab detectors give ``ghp`` of ``ghp_…``):
    the hit is then the whole match. A group inside one (the AWS secret key after its name,
    the password of a URL) is the secret alone."""
    patterns = getattr(plugin, "denylist", None)
    if not isinstance(patterns, (list, tuple)):
        return []
    return [m.span() for p in patterns if isinstance(p, re.Pattern) for m in p.finditer(line)]


@cache
def _detect_secrets() -> tuple[
    list[tuple[Any, re.Pattern[str] | None]], Callable[..., bool], Callable[[str], str]
]:
    """detect-secrets' plugins (those kept), the test of its filters, and the name its keyword
    detector is given for a file (a ``.env*`` file, template or not, or an entry is read as
    configuration)."""
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.filters import heuristic
    from detect_secrets.plugins.base import RegexBasedDetector
    from detect_secrets.plugins.high_entropy_strings import Base64HighEntropyString
    from detect_secrets.plugins.keyword import DENYLIST, KeywordDetector
    from detect_secrets.util.filetype import FileType, determine_file_type

    plugins: list[tuple[Any, re.Pattern[str] | None]] = []
    plugin_type: Any
    for plugin_type in get_mapping_from_secret_type_to_class().values():
        if plugin_type.__name__ in _LEFT_OUT:
            continue
        if plugin_type is Base64HighEntropyString:
            plugin = plugin_type(limit=BASE64_LIMIT)
            alphabet = re.escape(plugin.charset)
            plugins.append((plugin, re.compile(f"[{alphabet}]{{20}}")))
        elif plugin_type is KeywordDetector:
            plugins.append((plugin_type(), re.compile("|".join(DENYLIST), re.IGNORECASE)))
        else:
            plugins.append((plugin_type(), None))
    plugins.sort(key=lambda p: type(p[0]).__name__)

    def keep(secret: str, line: str, plugin: Any, name: str) -> bool:
        """What detect-secrets' default filters, and convgit's two, let through."""
        if not isinstance(plugin, RegexBasedDetector):
            before = line[: max(line.find(secret), 0)]
            if _ID_KEY.search(before) or _NOT_A_VALUE.search(secret):
                return False
        return not (
            heuristic.is_sequential_string(secret)
            or heuristic.is_potential_uuid(secret)
            or heuristic.is_likely_id_string(secret, line, plugin)
            or heuristic.is_templated_secret(secret)
            or heuristic.is_prefixed_with_dollar_sign(secret)
            or heuristic.is_indirect_reference(line)
            or (bool(name) and heuristic.is_lock_file(name))
            or heuristic.is_not_alphanumeric_string(secret)
            or (bool(name) and heuristic.is_swagger_file(name))
        )

    def keyword_name(name: str) -> str:
        env = _ENV_NAME.search(name) is not None  # a template too: it is configuration
        if not name or env or determine_file_type(name) is FileType.OTHER:
            return _CONFIG
        return name

    return plugins, keep, keyword_name


__all__ = ["PATTERNS", "Hit", "hits", "kinds", "secret_by_name"]
