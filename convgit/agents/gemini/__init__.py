"""Gemini CLI: its chat files read (``reading``), its hooks (``live``, recorded by
``recording``), and a path handed back as a chat file it resumes (``resume``)."""

NAME = "gemini"
TITLE = "Gemini CLI"
