"""``convgit mcp``: a Model Context Protocol server over stdio, so that an agent can read its own
history (the official ``mcp`` SDK, an optional extra: ``pip install 'convgit[mcp]'``). Imported
by ``convgit.cli.mcp`` alone, so no other command pays for the SDK. ``tools`` holds the
read-only tools as plain functions; ``server`` hands them to the SDK."""
