"""A store's ``config.toml``, declared once: ``SCHEMA`` names each section, each key, what its
value must be and its default; ``load`` is the one reader of the file, which checks every key
against the schema and refuses a bad value in one sentence of one shape ("config.toml:
[section] key must be ..., got ..."), naming the file to edit. Every setting is read through
``load`` (``Config.value``); docs/configuration.md is checked against ``SCHEMA``.

The file is checked whole whenever it is read, so a wrong value anywhere is named by the first
command that reads the file, before it writes anything."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from convgit.base.errors import CorruptStoreError, denied
from convgit.base.valueclass import valueclass
from convgit.store.location import StoreLocation


@valueclass(frozen=True)
class Setting:
    """One key: its ``kind`` ("bool", "number", "text", "names": a list of ``choices``, or
    "switch": true, false or one of ``choices``), its
    ``default`` (None: unset), and for a number the range it must be in (``low`` and up,
    above ``low`` when ``open_low``, below ``high``); ``must`` is what a value must be, as the
    sentence refusing another says it."""

    kind: str
    default: Any
    must: str
    low: float = 0
    open_low: bool = False
    high: float = 1 << 30
    choices: tuple[str, ...] = ()

    def fits(self, value: Any) -> bool:
        if self.kind == "bool":
            return type(value) is bool
        if self.kind == "number":
            return (
                type(value) in (int, float)
                and (value > self.low if self.open_low else value >= self.low)
                and value < self.high
            )
        if self.kind == "text":
            return isinstance(value, str) and bool(value.strip())
        if self.kind == "switch":
            return type(value) is bool or value in self.choices
        return isinstance(value, list) and all(v in self.choices for v in value)


BOOL = "true or false"
DAYS = "a number, 0 or more"
NOTES = ("agent-trace", "ai")  # the git notes of attribution (convgit.git.names.NOTES)

SCHEMA: dict[str, dict[str, Setting]] = {
    "snapshots": {
        "size_cap_mib": Setting(
            "number", 10, "a positive number of MiB", open_low=True, high=1 << 40
        ),
        "fsmonitor": Setting(
            "text", "auto", '"auto", "watchman", "off" or the path of a git fsmonitor hook'
        ),
        "agent_ignored": Setting("bool", True, BOOL),
        "max_files_per_turn": Setting("number", 50_000, "a number of files, 0 or more (0: no cap)"),
    },
    "hooks": {
        "tool_snapshots": Setting("bool", False, BOOL),
        "recorder": Setting("switch", "auto", 'true, false or "auto"', choices=("auto",)),
    },
    "retention": {
        "keep_days": Setting("number", 30, DAYS),
        "saved_days": Setting("number", 30, DAYS),
        "max_mib": Setting("number", None, DAYS),
        "auto": Setting("bool", False, BOOL),
    },
    "attribution": {
        "git_ai": Setting("bool", False, BOOL),
        "trailers": Setting("bool", False, BOOL),
    },
    "share": {
        "remote": Setting("text", None, "a remote's name"),
        "on_push": Setting("bool", False, BOOL),
        "notes": Setting(
            "names", None, f"a list of {' and '.join(repr(n) for n in NOTES)}", choices=NOTES
        ),
    },
}


class Config:
    """A store's settings: every key of ``SCHEMA``, its value or its default. A section is
    checked whole when a command first reads a key of it (``value``), so a bad value refuses
    the commands that read its section and no other (a bad ``[retention]`` value stops gc and
    status, not log, fsck or repair); ``check`` checks the whole file, sections the schema has
    not included (``convgit status`` says it)."""

    def __init__(self, given: dict[str, Any], path: Path | None = None) -> None:
        self._given = given
        self._path = path
        self._checked: set[str] = set()

    def value(self, section: str, key: str) -> Any:
        """``[section] key``: its value, else its default (None: unset); the section refused
        in one sentence (CorruptStoreError) when a value or key of it is not the schema's."""
        if key not in SCHEMA[section]:
            raise KeyError(f"[{section}] {key} is no setting of config.toml")
        if section not in self._checked:
            self._refuse(_section_problem(section, self._given.get(section, {})))
            self._checked.add(section)
        return self._given.get(section, {}).get(key, SCHEMA[section][key].default)

    def check(self) -> None:
        """Refuse the whole file's first problem, sections the schema has not included."""
        self._refuse(_problem(self._given))

    def _refuse(self, problem: str | None) -> None:
        if problem is not None:
            raise CorruptStoreError(f"config.toml: {problem}.", f"edit {self._path}")


def load(location: StoreLocation) -> Config:
    """The store's ``config.toml`` read (none: every default); a file that cannot be read or
    parsed is refused in one sentence (CorruptStoreError). Its values are checked as they are
    read, a section at a time (``Config``)."""
    path = location.root / "config.toml"
    try:
        text = path.read_text()
    except (FileNotFoundError, NotADirectoryError):
        return Config({})
    except OSError as exc:
        msg = f"{path.name} cannot be read ({exc.strerror or exc})."
        raise denied(exc, msg, path) or CorruptStoreError(msg) from None
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    try:
        found: dict[str, Any] = tomllib.loads(text)
    except ValueError as exc:
        raise CorruptStoreError(f"{path.name} cannot be read: {exc}.") from None
    return Config(found, path)


def _problem(found: dict[str, Any]) -> str | None:
    """What is wrong with the file, in the words after "config.toml: ", or None."""
    for section, keys in found.items():
        if section not in SCHEMA:
            return f"[{section}] is no section of it (they are {', '.join(SCHEMA)})"
        problem = _section_problem(section, keys)
        if problem is not None:
            return problem
    return None


def _section_problem(section: str, keys: Any) -> str | None:
    """What is wrong with ``[section]`` (one of ``SCHEMA``'s), or None."""
    if not isinstance(keys, dict):
        return f"[{section}] must be a table, got {shown(keys)}"
    for key, value in keys.items():
        setting = SCHEMA[section].get(key)
        if setting is None:
            names = ", ".join(SCHEMA[section])
            return f"[{section}] {key} is no setting of it (they are {names})"
        if not setting.fits(value):
            must = setting.must
            if setting.kind == "number" and type(value) in (int, float) and value >= setting.high:
                must = f"{must}, below {int(setting.high)}"  # not "0 or more" alone: it is
            return f"[{section}] {key} must be {must}, got {shown(value)}"
    return None


def shown(value: Any) -> str:
    """``value`` as TOML writes it (a string quoted, true and false lower-case)."""
    import json  # here: only a refusal needs it

    return json.dumps(value, default=str)


DEFAULT_SIZE_CAP = SCHEMA["snapshots"]["size_cap_mib"].default * 1024 * 1024


def size_cap(location: StoreLocation) -> int:
    """Bytes above which a file is left out of snapshots (``[snapshots] size_cap_mib``)."""
    return int(load(location).value("snapshots", "size_cap_mib") * 1024 * 1024)


def max_files(location: StoreLocation) -> int:
    """How many new or changed files a turn's snapshot may take (``[snapshots]
    max_files_per_turn``; 0: no cap): above it the snapshot is skipped, and said."""
    return int(load(location).value("snapshots", "max_files_per_turn"))


def fsmonitor(location: StoreLocation) -> str:
    """How snapshots find what changed (``[snapshots] fsmonitor``): "auto" (the default),
    "watchman", "off" or the path of a git fsmonitor hook (``convgit.git.index.watcher``)."""
    return str(load(location).value("snapshots", "fsmonitor")).strip()


def recorder(location: StoreLocation) -> bool:
    """Whether hooks start a recorder (``convgit.agents.live.recorder``) for the working tree
    (``recorder_choice``)."""
    return recorder_choice(location)[0]


def recorder_choice(location: StoreLocation) -> tuple[bool, str]:
    """Whether hooks start a recorder for the working tree, and what says so, in a few words:
    ``CONVGIT_RECORDER=on`` or ``off`` (any other value is refused: ``UsageError``), else
    ``[hooks] recorder``: true or false, or "auto" (the default): on where a ``watchman`` is on
    PATH, which a recorder patches its snapshots through, off where there is none."""
    said = os.environ.get("CONVGIT_RECORDER", "")
    if said in ("on", "off"):
        return said == "on", f"CONVGIT_RECORDER={said}"
    if said:  # a value the variable does not take is said, never read as "auto"
        from convgit.base.errors import UsageError

        raise UsageError(
            f"CONVGIT_RECORDER must be on or off, got {said!r}.",
            "unset it to follow config.toml's [hooks] recorder",
        )
    value = load(location).value("hooks", "recorder")
    if type(value) is bool:
        return value, f"[hooks] recorder = {shown(value)}"
    import shutil  # here: only "auto" asks

    if shutil.which("watchman") is not None:
        return True, '[hooks] recorder = "auto", and watchman is on PATH'
    return False, '[hooks] recorder = "auto", and no watchman is on PATH'
