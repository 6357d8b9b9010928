"""Coding agents, at convgit's edge: one folder per agent (``claude_code``, ``codex``, ``pi``,
``gemini``...) holding everything particular to it and declaring it (its ``agent.py``: a
``protocol.Declaration``), found by ``registry``; beside them what every agent shares: the
contract (``protocol``), reading an agent's file (``reading``, ``recognise``), bringing it into a
session (``importing``), recording it live from its hooks (``hook``, ``live``), handing a path
back to it (``resume``) and installing its hooks (``hooks``, ``settings``)."""
