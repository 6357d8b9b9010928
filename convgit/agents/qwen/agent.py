"""Qwen Code, declared: its parts, each imported when first asked for."""

from __future__ import annotations

from typing import TYPE_CHECKING

from convgit.agents.protocol import Declaration, Writing
from convgit.agents.qwen import NAME, TITLE

if TYPE_CHECKING:
    from convgit.agents.protocol import Live, Reading, Resuming, SettingsHooks


def _reading() -> Reading:
    from convgit.agents.qwen import reading

    return reading


def _resume() -> Resuming:
    from convgit.agents.qwen import resume

    return resume


def _writing() -> Writing:
    from convgit.agents.qwen import writing

    return writing


def _live() -> Live:
    from convgit.agents.qwen import live

    return live


def _settings() -> SettingsHooks:
    from convgit.agents.qwen import live

    return live


AGENT = Declaration(
    NAME,
    TITLE,
    order=30,
    reading=_reading,
    resume=_resume,
    writing=_writing,
    live=_live,
    settings=_settings,
)
