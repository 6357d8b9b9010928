"""Gemini CLI: its chat files read (``reading``)."""

NAME = "gemini"
TITLE = "Gemini CLI"
