"""Claude Code: its transcripts read (``reading`` and the modules it uses), its hooks
(``live``), and a path handed back to it (``resume``)."""

NAME = "claude-code"
TITLE = "Claude Code"
