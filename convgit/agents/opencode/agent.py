"""OpenCode, declared: its parts, each imported when first asked for."""

from __future__ import annotations

from typing import TYPE_CHECKING

from convgit.agents.opencode import NAME, TITLE
from convgit.agents.protocol import Declaration, Writing

if TYPE_CHECKING:
    from convgit.agents.protocol import Live, McpServer, OwnHooks, Reading, Resuming


def _reading() -> Reading:
    from convgit.agents.opencode import reading

    return reading


def _resume() -> Resuming:
    from convgit.agents.opencode import resume

    return resume


def _writing() -> Writing:
    from convgit.agents.opencode import writing

    return writing


def _live() -> Live:
    from convgit.agents.opencode import live

    return live


def _hooks() -> OwnHooks:
    from convgit.agents.opencode import hooks

    return hooks


def _mcp() -> McpServer:
    from convgit.agents.mcp import InTable
    from convgit.agents.opencode import mcp

    return InTable(mcp)


AGENT = Declaration(
    NAME,
    TITLE,
    order=60,
    reading=_reading,
    resume=_resume,
    writing=_writing,
    live=_live,
    hooks=_hooks,
    mcp=_mcp,
)
