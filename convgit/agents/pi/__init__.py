"""pi: its session files read (``reading``), a path written as one (``export``), and handed back
to it (``resume``)."""

NAME = "pi"
TITLE = "pi"
