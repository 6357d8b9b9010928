"""pi, declared: its parts, each imported when first asked for."""

from __future__ import annotations

from typing import TYPE_CHECKING

from convgit.agents.pi import NAME, TITLE
from convgit.agents.protocol import Declaration

if TYPE_CHECKING:
    from convgit.agents.protocol import Live, McpServer, OwnHooks, Reading, Resuming, Writing


def _reading() -> Reading:
    from convgit.agents.pi import reading

    return reading


def _resume() -> Resuming:
    from convgit.agents.pi import resume

    return resume


def _writing() -> Writing:
    from convgit.agents.pi import writing

    return writing


def _live() -> Live:
    from convgit.agents.pi import live

    return live


def _hooks() -> OwnHooks:
    from convgit.agents.pi import hooks

    return hooks


def _mcp() -> McpServer:
    from convgit.agents.pi import mcp

    return mcp


AGENT = Declaration(
    NAME,
    TITLE,
    order=20,
    reading=_reading,
    resume=_resume,
    writing=_writing,
    live=_live,
    hooks=_hooks,
    mcp=_mcp,
)
