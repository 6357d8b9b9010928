"""The MCP server: ``convgit.mcpserver.tools`` as the SDK's tools (``MCPServer``), every one
read-only (its annotations say so), run over stdio. An expected failure (``ConvgitError``) is
the tool's error in one sentence, for the model to read; the server goes on."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

from convgit.base.errors import ConvgitError
from convgit.mcpserver import tools
from convgit.mcpserver.tools import Place

NAME = "convgit"
INSTRUCTIONS = (
    "convgit keeps this project's coding-agent sessions as two tracks: the conversation (a tree"
    " of entries; the active path is what the model is sent) and the files (a git snapshot per"
    " turn). These tools read both and change nothing: search finds entries in every session"
    " (words, labels, session names, or the turns that changed a file); show_entry, tree_around,"
    " diff and file_at show one; restore_dry_run says what a restore would change."
)
READ_ONLY = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
F = TypeVar("F", bound=Callable[..., str])


def _said(fn: F) -> F:
    """``fn`` with a ``ConvgitError`` turned into the tool's error, in its sentence."""

    @functools.wraps(fn)
    def guarded(*args: Any, **kwargs: Any) -> str:
        try:
            return fn(*args, **kwargs)
        except ConvgitError as exc:
            raise ToolError(str(exc)) from None
        except OSError as exc:
            raise ToolError(f"The file system refused: {exc.strerror or exc}.") from None

    return guarded  # type: ignore[return-value]


def build(place: Place) -> MCPServer[Any]:
    """The server of the store ``place`` names, its tools registered."""
    from convgit import __version__

    server: MCPServer[Any] = MCPServer(
        NAME, instructions=INSTRUCTIONS, version=__version__, log_level="WARNING"
    )

    def tool(fn: F) -> F:
        server.tool(annotations=READ_ONLY)(_said(fn))
        return fn

    @tool
    def list_sessions() -> str:
        """Every session of this project's store: id, name, agent, entries, when it started,
        its active leaf."""
        return tools.list_sessions(place)

    @tool
    def search(
        words: list[str] | str,
        agent: str | None = None,
        session: str | None = None,
        file: str | None = None,
        since: str | None = None,
        until: str | None = None,
        role: str | None = None,
        branch: bool = False,
        limit: int = 20,
        all_stores: bool = False,
    ) -> str:
        """Find entries in every session, newest first: those whose words (prompts, replies,
        tool calls and their arguments, tool results) hold every one of `words` (each looked
        for as written, case aside; one string is one phrase), or whose label or session name
        does. Filters: agent (claude-code, codex, gemini, opencode, pi), session (id, prefix or
        name), file (a path: the turns whose snapshot changed it; words may then be empty),
        since and until (2026-12-01, 2026-12-01T10:30, or 2d, 6h back from now), role (user,
        assistant, tool, note, summary, system), branch (each session's active path only),
        all_stores (every store convgit wrote on this machine)."""
        given = [words] if isinstance(words, str) else words
        return tools.search(
            place, given, agent=agent, session=session, file=file, since=since, until=until,
            role=role, branch=branch, limit=limit, all_stores=all_stores,
        )  # fmt: skip

    @tool
    def show_entry(entry: str, session: str | None = None) -> str:
        """One entry in full (an id or prefix, a label, @ for the active leaf, @~N), where it
        is in the conversation, and its snapshot of the files (default session: the
        current one)."""
        return tools.show_entry(place, entry, session)

    @tool
    def tree_around(entry: str = "@", session: str | None = None, above: int = 10) -> str:
        """The path down to an entry (its last `above` entries, each with ◆ when it has a
        snapshot) and the branches that start below it."""
        return tools.tree_around(place, entry, session, above)

    @tool
    def diff(from_entry: str, to_entry: str | None = None, session: str | None = None) -> str:
        """git's diff of the files from one entry's snapshot to another's (default: to the
        working tree now)."""
        return tools.diff(place, from_entry, to_entry, session)

    @tool
    def file_at(path: str, entry: str = "@", session: str | None = None) -> str:
        """A file's content as an entry's snapshot holds it (the nearest snapshot at or above
        the entry), and whether the working tree has it the same now."""
        return tools.file_at(place, path, entry, session)

    @tool
    def restore_dry_run(
        entry: str, session: str | None = None, paths: list[str] | None = None
    ) -> str:
        """What `convgit restore ENTRY` would change in the working tree (all files, or only
        `paths`); nothing is changed."""
        return tools.restore_dry_run(place, entry, session, paths)

    return server


def serve(place: Place) -> None:
    """Answer on stdin and stdout until the client closes them."""
    build(place).run("stdio")
