"""GitHub Copilot CLI: its session files read (``reading``), its hooks (``live``), and a path
handed back as a session it resumes (``resume``)."""

NAME = "copilot"
TITLE = "GitHub Copilot CLI"
