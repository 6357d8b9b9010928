"""config.toml is declared once (``convgit.store.config.SCHEMA``) and read by one loader: each
bad value of each key, a key or section the schema has not, and a section that is no table are
refused in one sentence of one shape and a non-zero exit, through the CLI; a new key is covered
here without a new test. docs/configuration.md is checked against the schema in
tests/test_docs_pages.py."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from convgit.git import names
from convgit.store import config
from convgit.store.location import StoreLocation
from tests.workspace.cli import convgit, one_sentence

# a value of the wrong kind for each kind of setting, as TOML writes it
WRONG = {"bool": '"yes"', "number": "-1", "text": "3", "names": '["nope"]', "switch": '"yes"'}
KEYS = [(section, key) for section, keys in config.SCHEMA.items() for key in keys]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A conversation-only store with one session: its config.toml is written by each test."""
    here = tmp_path_factory.mktemp("config")
    convgit(here, "init", "--no-snapshots")
    convgit(here, "user", "task")
    return here


def _refused(store: Path, text: str) -> str:
    """What ``convgit status`` says of a config.toml holding ``text``: one sentence (and the
    hint naming the file), exit 3, the session file untouched."""
    (store / ".convgit" / "config.toml").write_text(text)
    sessions = {p: p.read_bytes() for p in (store / ".convgit" / "sessions").iterdir()}
    try:
        stderr = convgit(store, "status", code=3).stderr
        error = one_sentence(stderr)
        assert stderr.endswith(f"  hint: edit {store / '.convgit' / 'config.toml'}\n"), stderr
    finally:
        (store / ".convgit" / "config.toml").unlink()
    assert {p: p.read_bytes() for p in (store / ".convgit" / "sessions").iterdir()} == sessions
    return error


@pytest.mark.parametrize(("section", "key"), KEYS, ids=[f"{s}.{k}" for s, k in KEYS])
def test_each_bad_value_of_each_key_is_one_sentence_naming_it(
    store: Path, section: str, key: str
) -> None:
    setting = config.SCHEMA[section][key]
    wrong = WRONG[setting.kind]
    said = _refused(store, f"[{section}]\n{key} = {wrong}\n")
    assert said == f"convgit: config.toml: [{section}] {key} must be {setting.must}, got {wrong}."


def test_a_number_too_large_is_refused_saying_the_bound_it_passed(store: Path) -> None:
    """A value that is a number, 0 or more, but too large is not told it must be "a number, 0
    or more": the refusal names the bound (the huge int, and TOML's inf, past it)."""
    setting = config.SCHEMA["retention"]["keep_days"]
    for wrong in ("99999999999999999999", "inf"):
        said = _refused(store, f"[retention]\nkeep_days = {wrong}\n")
        bound = f"{setting.must}, below {int(setting.high)}"
        assert said.startswith(f"convgit: config.toml: [retention] keep_days must be {bound}, got ")


@pytest.mark.parametrize("section", sorted(config.SCHEMA))
def test_a_key_the_schema_has_not_and_a_section_that_is_no_table_are_refused(
    store: Path, section: str
) -> None:
    names_said = ", ".join(config.SCHEMA[section])
    said = _refused(store, f"[{section}]\nnope = 1\n")
    assert f"config.toml: [{section}] nope is no setting of it (they are {names_said})." in said
    said = _refused(store, f"{section} = 3\n")
    assert f"config.toml: [{section}] must be a table, got 3." in said


def test_a_section_the_schema_has_not_is_refused(store: Path) -> None:
    said = _refused(store, "[snapshot]\nsize_cap_mib = 5\n")
    assert "config.toml: [snapshot] is no section of it (they are snapshots," in said


def test_every_key_at_a_good_value_is_read_back_and_an_unset_one_is_its_default(
    tmp_path: Path,
) -> None:
    """Every key set to a value of its kind (not its default) is what ``Config.value`` gives;
    with no file, every key is its default."""
    good = {"bool": "true", "number": "12.5", "text": '"kept"', "names": '["ai"]', "switch": "true"}
    flip = {"true": "false"}
    location = StoreLocation(tmp_path, None)
    assert all(config.load(location).value(s, k) == config.SCHEMA[s][k].default for s, k in KEYS)
    lines = []
    for section, keys in config.SCHEMA.items():
        lines.append(f"[{section}]")
        for key, setting in keys.items():
            value = good[setting.kind]
            if setting.default is True:
                value = flip[value]
            lines.append(f"{key} = {value}")
    (tmp_path / "config.toml").write_text("\n".join(lines) + "\n")
    loaded = config.load(location)
    for section, key in KEYS:
        value = loaded.value(section, key)
        assert value != config.SCHEMA[section][key].default, (section, key)
        assert json.dumps(value) in "\n".join(lines), (section, key)


def test_the_notes_a_setting_may_name_are_the_notes_convgit_writes() -> None:
    assert config.SCHEMA["share"]["notes"].choices == tuple(names.NOTES)


@pytest.mark.parametrize(
    "text",
    ["[retention]\nkeep_days = -1\n", "[retention]\nnope = 1\n", "[retension]\nkeep_days = 5\n"],
    ids=["bad value", "unknown key", "unknown section"],
)
def test_a_bad_setting_stops_the_commands_that_read_it_not_reading_or_repair(
    store: Path, text: str
) -> None:
    """A section is checked when a command reads it: a bad ``[retention]`` stops status (which
    checks the whole file) and gc, never reading the conversation, fsck or repair, the commands
    a user runs to find out what is wrong."""
    path = store / ".convgit" / "config.toml"
    path.write_text(text)
    try:
        for words in (["log"], ["tree"], ["fsck"], ["repair"], ["show", "@"]):
            convgit(store, *words)
        said = one_sentence(convgit(store, "status", code=3).stderr)
        assert said.startswith(
            "convgit: config.toml: [retens"
            if "retension" in text
            else "convgit: config.toml: [retention]"
        ), said
    finally:
        path.unlink()


def test_recorder_status_says_a_bad_recorder_setting_rather_than_how_to_turn_it_on(
    tmp_path: Path,
) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    convgit(tmp_path, "init")
    (tmp_path / ".git" / "convgit" / "config.toml").write_text('[hooks]\nrecorder = "yes"\n')
    ran = convgit(tmp_path, "recorder", "status", "--json", env={"CONVGIT_RECORDER": None})
    said = json.loads(ran.stdout)
    assert said["running"] is False and said["setting"] is None
    assert said["why"] == 'config.toml: [hooks] recorder must be true, false or "auto", got "yes".'
