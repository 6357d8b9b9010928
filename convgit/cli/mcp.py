"""``convgit mcp``: the Model Context Protocol server (``convgit.mcpserver``), over stdio. The
SDK is an optional extra, imported by this command alone."""

from __future__ import annotations

from convgit.base.errors import RefusedError
from convgit.cli.program import command, options


@command("mcp")
def mcp_cmd() -> None:
    """Serve this project's sessions to an agent over MCP (stdio), read-only: list sessions,
    search, show an entry, the tree around it, a diff between entries' files, a file at an
    entry, a restore's dry run. `convgit hooks install AGENT --mcp` registers it; see
    docs/mcp.md."""
    try:
        from convgit.mcpserver import server
    except ImportError as exc:
        if getattr(exc, "name", None) not in ("mcp", None) and not str(exc.name).startswith("mcp"):
            raise
        raise RefusedError(
            "convgit mcp needs the MCP SDK, which is not installed here.",
            "pip install 'convgit[mcp]' (or pip install mcp)",
        ) from None
    from convgit.mcpserver.tools import Place

    server.serve(Place(options.directory, options.store))
