"""Search across a store's sessions (``convgit search``, the MCP server's search): an index that
is never the truth, kept beside the sessions (``index``), brought up to date from the session
files and snapshot records whenever it is asked, and the queries over it (``query``)."""
