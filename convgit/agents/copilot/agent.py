"""GitHub Copilot CLI, declared: its parts, each imported when first asked for."""

from __future__ import annotations

from typing import TYPE_CHECKING

from convgit.agents.copilot import NAME, TITLE
from convgit.agents.protocol import Declaration, Writing

if TYPE_CHECKING:
    from convgit.agents.protocol import Live, Reading, Resuming, SettingsHooks


def _reading() -> Reading:
    from convgit.agents.copilot import reading

    return reading


def _resume() -> Resuming:
    from convgit.agents.copilot import resume

    return resume


def _writing() -> Writing:
    from convgit.agents.copilot import writing

    return writing


def _live() -> Live:
    from convgit.agents.copilot import live

    return live


def _settings() -> SettingsHooks:
    from convgit.agents.copilot import live

    return live


AGENT = Declaration(
    NAME,
    TITLE,
    order=70,
    reading=_reading,
    resume=_resume,
    writing=_writing,
    live=_live,
    settings=_settings,
)
