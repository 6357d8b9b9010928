"""Gemini CLI, declared: its parts, each imported when first asked for."""

from __future__ import annotations

from typing import TYPE_CHECKING

from convgit.agents.gemini import NAME, TITLE
from convgit.agents.protocol import Declaration, Writing

if TYPE_CHECKING:
    from convgit.agents.protocol import Live, McpServer, Reading, Resuming, SettingsHooks


def _reading() -> Reading:
    from convgit.agents.gemini import reading

    return reading


def _resume() -> Resuming:
    from convgit.agents.gemini import resume

    return resume


def _writing() -> Writing:
    from convgit.agents.gemini import writing

    return writing


def _live() -> Live:
    from convgit.agents.gemini import live

    return live


def _settings() -> SettingsHooks:
    from convgit.agents.gemini import live

    return live


def _mcp() -> McpServer:
    from convgit.agents.gemini import mcp
    from convgit.agents.mcp import InTable

    return InTable(mcp)


AGENT = Declaration(
    NAME,
    TITLE,
    order=50,
    reading=_reading,
    resume=_resume,
    writing=_writing,
    live=_live,
    settings=_settings,
    mcp=_mcp,
)
