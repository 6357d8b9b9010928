"""Every hostile session file of ``fixtures/bad/`` against what convgit promises about it.

The expectations come from ``fixtures/bad/manifest.json`` (written by hand in
``tests/reliability/bad_corpus.py``, not computed by convgit). Known bugs are listed in
``KNOWN_BUGS`` below and marked ``xfail(strict=True)``: the suite stays green while they are
open and fails, asking for the mark to be removed, the day they are fixed.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.reliability import bad_corpus
from tests.reliability.harness import (
    JSON_READS,
    READING_COMMANDS,
    SID,
    backups,
    cli,
    folder_bytes,
    make_store,
    no_crash,
    one_sentence_error,
    quarantine_file,
    quarantined,
    session_file,
    split_lines,
)

CORPUS = bad_corpus.CORPUS
MANIFEST: dict[str, dict[str, Any]] = json.loads(bad_corpus.MANIFEST.read_text())
FATAL = [name for name, m in MANIFEST.items() if m["fsck"] == 3]
TOLERATED = [name for name, m in MANIFEST.items() if m["fsck"] == 0]
REPAIRABLE = [name for name, m in MANIFEST.items() if m["repair"] == "ok"]
REFUSED = [name for name, m in MANIFEST.items() if m["repair"] == "refuse"]

_DEEP = (
    "codec.decode (orjson.loads, no depth limit before orjson 3.9.15, 1,024 after) accepts"
    " lines nested deeper than codec.encode (orjson.dumps, 255) can write: fsck says ok, and"
    " show/log --json die with TypeError; decode should refuse what encode cannot write"
)
_HEADERLESS = (
    "repair quarantines every entry of a file whose header is missing (tree.Tree.add treats"
    " line 1 as a bad header, so its entry and all descendants are moved) instead of writing"
    " a new header above the valid lines"
)
_KEEPS = (
    "tree.Tree.finish accepts a compaction whose firstKeptId is not an ancestor; fsck says ok"
    " and repair does nothing while `context` refuses (its hint points at fsck)"
)
_VERSION = "tree._add_header only refuses v > 1; v 0 (an unknown version) is read as v1"
_BOOL_VERSION = (
    "tree._add_header checks header fields with a bare isinstance, so JSON true passes as the"
    " int version 1 (schema.fields_error excludes bools; the header check does not)"
)
_NO_WARNING = "fsck says ok with no warning line for this tolerated defect"
_NO_NEWLINE = (
    "an append after a complete last record without its newline glues the new record onto"
    " that line (Appender.catch_up only adds the newline for bytes appended since the read),"
    " which corrupts both records"
)
_META = (
    "entries.kind_error rejects a meta record of an unknown type (no parentId, no id) as a"
    " broken entry, against SPEC 3's forward compatibility rule"
)

# fixture -> test -> why it fails today. Tests: fsck, read, tolerated, unchanged (checking
# and reading change no byte), backup, lossless, usable (after repair), refuse.
KNOWN_BUGS: dict[str, dict[str, str]] = {}


def cases(names: list[str], test: str, *more: tuple[str, ...]) -> list[Any]:
    """``names`` as pytest params (times ``more`` when given), xfail where a bug is known."""
    out = []
    for name in names:
        reason = KNOWN_BUGS.get(name, {}).get(test)
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        for extra in more or ((),):
            ident = "-".join([name.removesuffix(".jsonl"), *extra])
            out.append(pytest.param(name, *extra, marks=marks, id=ident))
    return out


def store_for(tmp_path: Path, name: str) -> Path:
    return make_store(tmp_path, (CORPUS / name).read_bytes())


# -- the corpus itself -------------------------------------------------------------------------


def test_manifest_lists_every_fixture_and_nothing_else() -> None:
    on_disk = {p.name for p in CORPUS.iterdir()} - bad_corpus.NOT_FIXTURES
    assert on_disk == set(MANIFEST)
    assert len(MANIFEST) >= 30
    for name, expected in MANIFEST.items():
        assert expected["fsck"] in (0, 3), name
        assert expected["repair"] in ("ok", "refuse"), name
        assert expected["fsck"] == 3 or expected["read"] == 0, name


def test_fixtures_are_exactly_what_the_generator_makes(tmp_path: Path) -> None:
    bad_corpus.write(tmp_path)
    assert folder_bytes(tmp_path) == folder_bytes(CORPUS)


def test_readme_describes_every_fixture() -> None:
    readme = (CORPUS / "README.md").read_text()
    for name in MANIFEST:
        assert f"| `{name}` |" in readme


def test_the_clean_base_session_is_sound(tmp_path: Path) -> None:
    store = make_store(tmp_path, bad_corpus.base_bytes())
    result = cli(store, "fsck")
    assert result.exit_code == 0, result.output
    assert "warning" not in result.output
    log = cli(store, "log", "--json")
    assert [e["id"] for e in json.loads(log.stdout)["entries"]] == bad_corpus.BASE_PATH


# -- fsck --------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", cases(list(MANIFEST), "fsck"))
def test_fsck_names_every_bad_line(tmp_path: Path, name: str) -> None:
    expected = MANIFEST[name]
    result = cli(store_for(tmp_path, name), "fsck")
    no_crash(result)
    assert result.exit_code == expected["fsck"], result.output
    report = result.output
    for number in expected["errors"]:
        assert re.search(rf"^error: line {number}\b", report, re.M), (number, report)
    for number in expected["warnings"]:
        assert re.search(rf"^warning: line {number}\b", report, re.M), (number, report)
    if expected["fsck"] == 3:
        assert report.strip(), "fsck refused without saying why"
    if expected["fsck"] == 3 and expected["repair"] == "ok":
        assert "convgit repair" in report


# -- reading commands ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "command"), cases(FATAL, "read", *[(c,) for c in READING_COMMANDS])
)
def test_reading_commands_refuse_fatal_defects(tmp_path: Path, name: str, command: str) -> None:
    expected = MANIFEST[name]
    result = cli(store_for(tmp_path, name), *READING_COMMANDS[command])
    no_crash(result)
    assert result.exit_code == 3, result.output
    assert result.stdout == "", "a refused read printed part of a path"
    message = one_sentence_error(result.stderr)
    if expected["errors"]:
        named = {int(n) for n in re.findall(r"\bline (\d+)", message)}
        assert named & set(expected["errors"]), message
    if expected["repair"] == "ok":
        assert "convgit repair" in message


@pytest.mark.parametrize(
    ("name", "command"), cases(TOLERATED, "tolerated", *[(c,) for c in READING_COMMANDS])
)
def test_reading_commands_carry_on_past_tolerated_defects(
    tmp_path: Path, name: str, command: str
) -> None:
    expected = MANIFEST[name]
    result = cli(store_for(tmp_path, name), *READING_COMMANDS[command])
    no_crash(result)
    code = expected.get("read_exceptions", {}).get(command, expected["read"])
    assert result.exit_code == code, result.output


@pytest.mark.parametrize(
    "name", cases([n for n in TOLERATED if MANIFEST[n]["replays_like_base"]], "tolerated")
)
def test_tolerated_defects_replay_the_clean_path(tmp_path: Path, name: str) -> None:
    result = cli(store_for(tmp_path, name), "log", "--json")
    assert result.exit_code == 0, result.output
    assert [e["id"] for e in json.loads(result.stdout)["entries"]] == bad_corpus.BASE_PATH


def test_replay_drops_a_tool_result_without_call(tmp_path: Path) -> None:
    store = store_for(tmp_path, "tool-result-without-call.jsonl")
    result = cli(store, "context", "--json")
    assert result.exit_code == 0, result.output
    context = json.loads(result.stdout)
    assert context["leaf"] == "a10000f1"
    assert all(m.get("toolCallId") != "call-404" for m in context["messages"])


@pytest.mark.parametrize("name", cases(list(MANIFEST), "unchanged"))
def test_checking_and_reading_change_no_byte(tmp_path: Path, name: str) -> None:
    store = store_for(tmp_path, name)
    before = folder_bytes(store / "sessions")
    for args in (("fsck",), ("fsck", "--json"), *READING_COMMANDS.values(), *JSON_READS):
        no_crash(cli(store, *args))
    assert folder_bytes(store / "sessions") == before


# -- repair --------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", cases(REPAIRABLE, "backup"))
def test_repair_keeps_the_original_byte_for_byte(tmp_path: Path, name: str) -> None:
    store = store_for(tmp_path, name)
    original = session_file(store).read_bytes()
    result = cli(store, "repair")
    no_crash(result)
    assert result.exit_code == 0, result.output
    if session_file(store).read_bytes() == original:
        assert MANIFEST[name]["fsck"] == 0, "repair left a fatal defect in place"
        return
    [backup] = backups(store)
    assert backup.read_bytes() == original


@pytest.mark.parametrize("name", cases(REPAIRABLE, "lossless"))
def test_repair_loses_nothing_valid(tmp_path: Path, name: str) -> None:
    """Every line is either still in the file, byte for byte and in order, or in the
    quarantine with its exact bytes; and exactly the manifest's lines were moved."""
    expected = MANIFEST[name]
    store = store_for(tmp_path, name)
    original = split_lines(session_file(store).read_bytes())
    assert cli(store, "repair").exit_code == 0
    repaired = split_lines(session_file(store).read_bytes())
    if expected["new_header"]:
        header = json.loads(repaired.pop(0))
        assert (header["type"], header["v"], header["id"]) == ("session", 1, SID)
    moved = quarantined(store)
    assert sorted(moved) == expected["quarantine"]
    for number, data in moved.items():
        assert data == original[number - 1], f"line {number} was not quarantined intact"
    kept = [line for n, line in enumerate(original, 1) if n not in moved]
    assert repaired == kept


@pytest.mark.parametrize("name", cases(REPAIRABLE, "usable"))
def test_a_repaired_session_passes_fsck_and_takes_new_messages(tmp_path: Path, name: str) -> None:
    store = store_for(tmp_path, name)
    assert cli(store, "repair").exit_code == 0
    check = cli(store, "fsck")
    assert check.exit_code == 0, check.output
    appended = cli(store, "user", "hello", "--json")
    no_crash(appended)
    assert appended.exit_code == 0, appended.output
    new_id = json.loads(appended.stdout)["id"]
    again = cli(store, "fsck")
    assert again.exit_code == 0, again.output
    log = cli(store, "log", "--json")
    no_crash(log)
    assert json.loads(log.stdout)["entries"][-1]["id"] == new_id


@pytest.mark.parametrize("name", cases(REFUSED, "refuse"))
def test_repair_refuses_what_it_cannot_fix_and_touches_nothing(tmp_path: Path, name: str) -> None:
    store = store_for(tmp_path, name)
    before = folder_bytes(store / "sessions")
    result = cli(store, "repair")
    no_crash(result)
    assert result.exit_code == 3, result.output
    one_sentence_error(result.stderr)
    assert folder_bytes(store / "sessions") == before
    assert not quarantine_file(store).exists()
