"""Codex, declared: its parts, each imported when first asked for."""

from __future__ import annotations

from typing import TYPE_CHECKING

from convgit.agents.codex import NAME, TITLE
from convgit.agents.protocol import Declaration, Writing

if TYPE_CHECKING:
    from convgit.agents.protocol import Live, McpServer, OwnHooks, Reading, Resuming, SettingsHooks


def _reading() -> Reading:
    from convgit.agents.codex import reading

    return reading


def _resume() -> Resuming:
    from convgit.agents.codex import resume

    return resume


def _writing() -> Writing:
    from convgit.agents.codex import writing

    return writing


def _live() -> Live:
    from convgit.agents.codex import live

    return live


def _settings() -> SettingsHooks:
    from convgit.agents.codex import live

    return live


def _hooks() -> OwnHooks:
    from convgit.agents.codex import hooks

    return hooks


def _mcp() -> McpServer:
    from convgit.agents.codex import mcp

    return mcp


AGENT = Declaration(
    NAME,
    TITLE,
    order=10,
    reading=_reading,
    resume=_resume,
    writing=_writing,
    live=_live,
    settings=_settings,
    hooks=_hooks,
    mcp=_mcp,
)
