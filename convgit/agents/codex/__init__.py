"""Codex: its rollouts read (``reading``) and a path handed back as a rollout (``resume``)."""

NAME = "codex"
TITLE = "Codex"
