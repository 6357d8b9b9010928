"""Qwen Code: its chat files read (``reading``), its hooks (``live``), and a path handed back as
a chat file it resumes (``resume``)."""

NAME = "qwen"
TITLE = "Qwen Code"
