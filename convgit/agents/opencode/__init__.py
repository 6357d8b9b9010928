"""OpenCode: its sessions read from ``opencode export`` documents (``reading``), written so by
convgit from its database while it runs (``transcript``), recorded live through a plugin
(``live``, ``hooks``) and handed back to it (``resume``)."""

NAME = "opencode"
TITLE = "OpenCode"
