"""Gemini CLI, declared: its parts, each imported when first asked for."""

from __future__ import annotations

from typing import TYPE_CHECKING

from convgit.agents.gemini import NAME, TITLE
from convgit.agents.protocol import Declaration

if TYPE_CHECKING:
    from convgit.agents.protocol import Live, Reading, Resuming, SettingsHooks


def _reading() -> Reading:
    from convgit.agents.gemini import reading

    return reading


def _resume() -> Resuming:
    from convgit.agents.gemini import resume

    return resume


def _live() -> Live:
    from convgit.agents.gemini import live

    return live


def _settings() -> SettingsHooks:
    from convgit.agents.gemini import live

    return live


AGENT = Declaration(
    NAME,
    TITLE,
    order=50,
    reading=_reading,
    resume=_resume,
    live=_live,
    settings=_settings,
)
